package kv

import (
	"slices"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

// readAt records the comparer's read of the whole prefix at revision at on
// member m, answered with kvs.
func readAt(b *histbuild.Builder, m string, t int, at int64, role string, kvs ...history.KV) int64 {
	id := b.On(m, b.Op(20, t, t+1, history.Request{Kind: history.OpRange, Key: histbuild.TestPrefix,
		End: history.PrefixEnd(histbuild.TestPrefix), Revision: at, Serializable: true},
		&history.Response{Revision: at + 5, KVs: kvs, Count: int64(len(kvs))}, ""))
	b.H.Operations[id-1].Draw = []string{history.DrawMemberCompare, role}
	return id
}

// hashAt records HashKV(at) on m with compact revision 5.
func hashAt(b *histbuild.Builder, m string, t int, at int64, hash uint32) int64 {
	id := b.HashKV(m, 20, t, t+1, at, at+5, 5, hash)
	b.H.Operations[id-1].Draw = []string{history.DrawMemberCompare, history.CompareBisect}
	return id
}

var ms3 = []string{"m1", "m2", "m3"}

func TestMemberAgreement(t *testing.T) {
	k3 := func(v string, mod, ver int64) history.KV { return histbuild.Kv("k003", v, 2, mod, ver) }
	// Revision 21 is client 3's put of k003 = "3.7" (answered by m1); m2
	// did not apply it: its hash differs from 21 on, and it reads k003 as
	// it was at 20.
	diverged := func(b *histbuild.Builder) {
		b.Put(3, 10, 20, "k003", "3.5", 18)
		b.On("m1", b.Put(3, 100, 110, "k003", "3.7", 21)) // operation 2
		for i, m := range ms3 {
			hashAt(b, m, 200+i*10, 20, 0xaaaa)
			h := uint32(0xbbbb)
			if m == "m2" {
				h = 0xcccc
			}
			hashAt(b, m, 300+i*10, 21, h)
			hashAt(b, m, 400+i*10, 30, h+1)
		}
		for i, m := range ms3 {
			readAt(b, m, 500+i*10, 20, history.CompareDivergence, k3("3.5", 18, 2))
			if m == "m2" {
				readAt(b, m, 600+i*10, 21, history.CompareDivergence, k3("3.5", 18, 2))
			} else {
				readAt(b, m, 600+i*10, 21, history.CompareDivergence, k3("3.7", 21, 3))
			}
		}
	}
	histbuild.RunKVCases(t, CheckMemberAgreement, ErrMemberAgreement, []histbuild.KvCase{
		{Name: "kv/member-agreement - members agree at every revision - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			b.Put(3, 10, 20, "k003", "3.5", 18)
			for i, m := range ms3 {
				hashAt(b, m, 100+i*10, 18, 0xaaaa)
				hashAt(b, m, 200+i*10, 20, 0xbbbb)
				readAt(b, m, 300+i*10, 18, history.CompareRound, k3("3.5", 18, 2))
			}
		}},
		{Name: "kv/member-agreement - different hashes under different compact revisions are not compared - pass", Want: check.Pass,
			Build: func(b *histbuild.Builder) {
				hashAt(b, "m1", 100, 20, 0xaaaa)
				hashAt(b, "m2", 110, 20, 0xaaaa)
				b.HashKV("m3", 20, 120, 121, 20, 25, 9, 0xdddd) // compacted to 9 meanwhile
			}},
		{Name: "kv/member-agreement - a member parts at one write - fail naming it", Want: check.Fail, Client: 3, Rev: 21, Key: "k003", Op: 2,
			Msg:   `revision 21 was taken by operation 2 (client 3's put of k003 = "3.7", acknowledged at revision 21 by m1)`,
			Build: func(b *histbuild.Builder) { diverged(b) }},
		{Name: "kv/member-agreement - the reads at the divergence say what each member holds - fail", Want: check.Fail, Client: 3, Rev: 21,
			Msg:   `m1, m3 hold what operation 2 wrote at 21: k003 = "3.7" (mod 21); m2 holds nothing new at 21: k003 = "3.5" (mod 18), as at 20`,
			Build: func(b *histbuild.Builder) { diverged(b) }},
		{Name: "kv/member-agreement - without reads, the write acknowledged at the revision is named - fail", Want: check.Fail, Client: 3, Rev: 21,
			Key: "k003", Msg: "revision 21 was taken by operation 2", Build: func(b *histbuild.Builder) {
				b.Put(3, 10, 20, "k003", "3.5", 18)
				b.On("m1", b.Put(3, 100, 110, "k003", "3.7", 21))
				for i, m := range ms3 {
					hashAt(b, m, 200+i*10, 20, 0xaaaa)
					hashAt(b, m, 300+i*10, 21, map[bool]uint32{true: 0xcccc, false: 0xbbbb}[m == "m2"])
				}
			}},
		{Name: "kv/member-agreement - hashes differ with no agreement just below - fail with the bounds", Want: check.Fail, Rev: 30,
			Msg: "having last agreed at 20: they parted at a revision in 21..30", Build: func(b *histbuild.Builder) {
				for i, m := range ms3 {
					hashAt(b, m, 200+i*10, 20, 0xaaaa)
					hashAt(b, m, 300+i*10, 30, map[bool]uint32{true: 0xcccc, false: 0xbbbb}[m == "m2"])
				}
			}},
		{Name: "kv/member-agreement - hashes differ at the lowest revision compared - fail", Want: check.Fail, Rev: 30,
			Msg: "the lowest revision they were compared at: they parted at or below it", Build: func(b *histbuild.Builder) {
				for i, m := range ms3 {
					hashAt(b, m, 300+i*10, 30, map[bool]uint32{true: 0xcccc, false: 0xbbbb}[m == "m2"])
				}
			}},
		{Name: "kv/member-agreement - reads at one revision differ, no hashes - fail citing the write", Want: check.Fail, Client: 20,
			Rev: 21, Key: "k003", Op: 2, Msg: `reads of every key under the prefix at revision 21 differ from member to member: m1, m3 (operation`,
			Build: func(b *histbuild.Builder) {
				b.Put(3, 10, 20, "k003", "3.5", 18)
				b.Put(3, 100, 110, "k003", "3.7", 21)
				for i, m := range ms3 {
					if m == "m2" {
						readAt(b, m, 600+i*10, 21, history.CompareRound, k3("3.5", 18, 2))
					} else {
						readAt(b, m, 600+i*10, 21, history.CompareRound, k3("3.7", 21, 3))
					}
				}
			}},
		{Name: "kv/member-agreement - one member asked - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {
			hashAt(b, "m1", 100, 20, 0xaaaa)
			hashAt(b, "m1", 110, 30, 0xbbbb)
		}},
	})
}

// The write that took the revision failed on the member its client asked
// (a txn whose range at a future revision that member refused, etcd
// issue 18667), while the others applied it; that member gave revision 22
// to the next write. The members' reads name the txn, and say it failed.
func TestMemberAgreementNamesAFailedWrite(t *testing.T) {
	b := histbuild.New()
	b.Put(1, 10, 20, "k001", "1.1", 21)
	txn := b.On("m2", b.Op(2, 100, 110, history.Request{Kind: history.OpTxn, Success: []history.Request{
		{Kind: history.OpPut, Key: histbuild.K("k002"), Value: "2.1"},
		{Kind: history.OpRange, Key: histbuild.K("k001"), Revision: 99}}}, nil, history.ErrFutureRevision))
	next := b.On("m2", b.Put(4, 120, 130, "k004", "4.1", 22))
	k1 := histbuild.Kv("k001", "1.1", 21, 21, 1)
	for i, m := range ms3 {
		hashAt(b, m, 200+i*10, 21, 0xaaaa)
		hashAt(b, m, 300+i*10, 22, map[bool]uint32{true: 0xcccc, false: 0xbbbb}[m == "m2"])
		readAt(b, m, 400+i*10, 21, history.CompareDivergence, k1)
		if m == "m2" {
			readAt(b, m, 500+i*10, 22, history.CompareDivergence, k1, histbuild.Kv("k004", "4.1", 22, 22, 1))
		} else {
			readAt(b, m, 500+i*10, 22, history.CompareDivergence, k1, histbuild.Kv("k002", "2.1", 22, 22, 1))
		}
	}
	r := CheckMemberAgreement(b.H, check.DefaultConfig())
	if r.Verdict != check.Fail || len(r.Violations) != 1 {
		t.Fatalf("verdict %s, violations %+v", r.Verdict, r.Violations)
	}
	v := r.Violations[0]
	t.Logf("%s\nwant: %s\ngot:  %s\noperations: %v", v.Message, v.Want, v.Got, v.Operations)
	if v.Operations[0] != txn || !slices.Contains(v.Operations, next) {
		t.Errorf("cites %v, want the txn %d first and the put %d", v.Operations, txn, next)
	}
	for _, want := range []string{
		`revision 22 was taken by operation 2 (client 2's txn, which failed with "future-revision" on m2)`,
		`m1, m3 hold what operation 2 wrote at 22`,
		`m2 holds what operation 3 (client 4's put of k004 = "4.1", acknowledged at revision 22 by m2) wrote at 22`,
	} {
		if !strings.Contains(v.Message, want) {
			t.Errorf("message lacks %q:\n%s", want, v.Message)
		}
	}
}

// Reads that differ at or above the revision the hashes parted at are the
// same divergence: one violation, counting them.
func TestMemberAgreementOneViolationPerDivergence(t *testing.T) {
	b := histbuild.New()
	b.Put(3, 10, 20, "k003", "3.5", 18)
	put := b.On("m1", b.Put(3, 100, 110, "k003", "3.7", 21))
	for i, m := range ms3 {
		hashAt(b, m, 200+i*10, 20, 0xaaaa)
		hashAt(b, m, 300+i*10, 21, map[bool]uint32{true: 0xcccc, false: 0xbbbb}[m == "m2"])
		for j, at := range []int64{25, 30} {
			kv := histbuild.Kv("k003", "3.7", 2, 21, 3)
			if m == "m2" {
				kv = histbuild.Kv("k003", "3.5", 2, 18, 2)
			}
			readAt(b, m, 400+i*10+j*100, at, history.CompareRound, kv)
		}
	}
	r := CheckMemberAgreement(b.H, check.DefaultConfig())
	if r.Verdict != check.Fail || len(r.Violations) != 1 || r.Figures["reads_differing_after_divergence"] != 2 {
		t.Fatalf("verdict %s, figures %v, violations %+v", r.Verdict, r.Figures, r.Violations)
	}
	if v := r.Violations[0]; v.Operations[0] != put || !strings.Contains(v.Message, "2 read(s) at one revision differ") {
		t.Errorf("violation %v: %s", v.Operations, v.Message)
	}
}

// With no read and no acknowledged write at the revision, the writes that
// may have taken it are listed: one of unknown outcome called before any
// answer showed the revision.
func TestMemberAgreementListsWritesThatMayHaveTakenIt(t *testing.T) {
	b := histbuild.New()
	b.Put(1, 10, 20, "k001", "1.1", 20)
	maybe := b.PutFail(2, 30, 90, "k002", "2.1")
	b.PutFail(2, 5000, 5100, "k002", "2.2") // called after revision 21 was seen: not it
	for i, m := range ms3 {
		hashAt(b, m, 200+i*10, 20, 0xaaaa)
		hashAt(b, m, 300+i*10, 21, map[bool]uint32{true: 0xcccc, false: 0xbbbb}[m == "m2"])
	}
	r := CheckMemberAgreement(b.H, check.DefaultConfig())
	if r.Verdict != check.Fail {
		t.Fatalf("verdict %s", r.Verdict)
	}
	v := r.Violations[0]
	want := `it may have been taken by operation 2 (client 2's put of k002 = "2.1", of unknown outcome)`
	if v.Operations[0] != maybe || !strings.Contains(v.Message, want) || strings.Contains(v.Message, "operation 3") {
		t.Errorf("violation %v: %s\nwant it to name operation %d only: %s", v.Operations, v.Message, maybe, want)
	}
}

// The evidence counts HashKV and ranges at a revision, and says there is
// nothing to compare with one member.
func TestMemberAgreementEvidence(t *testing.T) {
	b := histbuild.New()
	hashAt(b, "m1", 100, 20, 0xaaaa)
	if e := memberAnswers(b.H); e.Asked != 0 || !strings.Contains(e.Why, "fewer than two members") {
		t.Errorf("one member: %+v", e)
	}
	hashAt(b, "m2", 110, 20, 0xaaaa)
	b.On("m2", b.Op(20, 120, 121, history.Request{Kind: history.OpHashKV, Revision: 20}, nil, history.ErrUnknown))
	if e := memberAnswers(b.H); e.Asked != 3 || e.Answered != 2 {
		t.Errorf("two members: %+v", e)
	}
}
