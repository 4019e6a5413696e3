package kv

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func TestKVReadYourWrites(t *testing.T) {
	histbuild.RunKVCases(t, CheckReadYourWrites, ErrReadYourWrites, []histbuild.KvCase{
		{Name: "kv/read-your-writes - a read older than the client's own put, on the member that took it - fail", Want: check.Fail,
			Client: 1, Rev: 11, Key: "a", Op: 3, Msg: "(on member m1, the one that answered the earlier operation) returned a at mod revision 11 (\"1.1\"), but its own put 2 acknowledged a at revision 12 before it was called",
			Build: func(b *histbuild.Builder) {
				b.On("m1", b.Put(1, 0, 10, "a", "1.1", 11))
				b.On("m1", b.Put(1, 11, 20, "a", "1.2", 12))
				b.On("m1", b.Sget(1, 21, 30, "a", 12, histbuild.Kv("a", "1.1", 11, 11, 1)))
			}},
		{Name: "kv/read-your-writes - the same on another member is still reported - fail", Want: check.Fail,
			Client: 1, Rev: 11, Key: "a", Op: 2, Msg: "(on member m2, another than the one that answered the earlier operation (m1): across members)",
			Build: func(b *histbuild.Builder) {
				b.On("m1", b.Put(1, 11, 20, "a", "1.2", 12))
				b.On("m2", b.Sget(1, 21, 30, "a", 11, histbuild.Kv("a", "1.1", 11, 11, 1)))
			}},
		{Name: "kv/read-your-writes - a txn's put counts as the client's write - fail", Want: check.Fail,
			Client: 1, Rev: 5, Key: "b", Op: 2, Msg: "its own txn 1 acknowledged b at revision 12",
			Build: func(b *histbuild.Builder) {
				b.Txn2(1, 0, 10, "a", "1.1", "b", "1.2", 12)
				b.Sget(1, 11, 20, "b", 12, histbuild.Kv("b", "0.9", 5, 5, 1))
			}},
		{Name: "kv/read-your-writes - a put in the branch a txn took, even its else branch, counts - fail", Want: check.Fail,
			Client: 1, Rev: 5, Key: "b", Op: 2, Build: func(b *histbuild.Builder) {
				b.Op(1, 0, 10, history.Request{Kind: history.OpTxn,
					Compares: []history.Compare{{Key: histbuild.K("b"), Target: "mod", Result: "=", Int: 3}},
					Success:  []history.Request{{Kind: history.OpRange, Key: histbuild.K("b")}},
					Failure:  []history.Request{{Kind: history.OpPut, Key: histbuild.K("b"), Value: "1.2"}}},
					&history.Response{Revision: 12, Responses: []history.Response{{Revision: 12}}}, "")
				b.Sget(1, 11, 20, "b", 12, histbuild.Kv("b", "0.9", 5, 5, 1))
			}},
		{Name: "kv/read-your-writes - only header revisions regress across members, the data is the client's own - pass", Want: check.Pass,
			Build: func(b *histbuild.Builder) {
				b.On("m1", b.Put(1, 0, 10, "a", "1.1", 11))
				b.On("m1", b.Put(2, 11, 20, "b", "2.1", 12))
				b.On("m1", b.Sget(1, 21, 30, "a", 12, histbuild.Kv("a", "1.1", 11, 11, 1)))
				b.On("m2", b.Sget(1, 31, 40, "a", 11, histbuild.Kv("a", "1.1", 11, 11, 1)))
			}},
		{Name: "kv/read-your-writes - the member may have restarted in between - skipped", Want: check.Skipped,
			Build: func(b *histbuild.Builder) {
				b.On("m1", b.Put(1, 11, 20, "a", "1.2", 12))
				b.Fault("kill-leader", 22, 25)
				b.On("m1", b.Sget(1, 30, 40, "a", 11, histbuild.Kv("a", "1.1", 11, 11, 1)))
			}},
		{Name: "kv/read-your-writes - a fault that restarts no member excuses nothing - fail", Want: check.Fail,
			Client: 1, Rev: 11, Key: "a", Op: 2,
			Build: func(b *histbuild.Builder) {
				b.On("m1", b.Put(1, 11, 20, "a", "1.2", 12))
				b.Fault("watch-drop", 22, 25)
				b.On("m1", b.Sget(1, 30, 40, "a", 11, histbuild.Kv("a", "1.1", 11, 11, 1)))
			}},
		{Name: "kv/read-your-writes - a read called before the put returned may be older - pass", Want: check.Pass,
			Build: func(b *histbuild.Builder) {
				b.Put(1, 0, 10, "a", "1.1", 11)
				b.Put(1, 11, 20, "a", "1.2", 12)
				b.Sget(1, 19, 30, "a", 11, histbuild.Kv("a", "1.1", 11, 11, 1))
			}},
		{Name: "kv/read-your-writes - another client's put is not the reader's own - pass", Want: check.Pass,
			Build: func(b *histbuild.Builder) {
				b.Put(1, 0, 10, "a", "1.1", 11)
				b.Put(2, 0, 10, "b", "2.1", 12)
				b.Put(2, 11, 20, "a", "2.2", 13)
				b.Sget(1, 21, 30, "a", 12, histbuild.Kv("a", "1.1", 11, 11, 1))
			}},
		{Name: "kv/read-your-writes - a read at a past revision asks for the past - skipped", Want: check.Skipped,
			Build: func(b *histbuild.Builder) {
				b.Put(1, 0, 10, "a", "1.1", 11)
				b.Put(1, 11, 20, "a", "1.2", 12)
				b.SgetAt(1, 21, 30, "a", 11, 12, "", histbuild.Kv("a", "1.1", 11, 11, 1))
			}},
		{Name: "kv/read-your-writes - no serializable read - skipped", Want: check.Skipped,
			Build: func(b *histbuild.Builder) { b.Put(1, 0, 10, "a", "1.1", 11) }},
	})
}

func TestKVMonotonicReads(t *testing.T) {
	histbuild.RunKVCases(t, CheckMonotonicReads, ErrMonotonicReads, []histbuild.KvCase{
		{Name: "kv/monotonic-reads - a later read returns an older value than an earlier one - fail", Want: check.Fail,
			Client: 1, Rev: 11, Key: "a", Op: 4, Msg: "its range 3 had returned a at mod revision 12 before it was called",
			Build: func(b *histbuild.Builder) {
				b.Put(2, 0, 10, "a", "2.1", 11)
				b.Put(2, 11, 20, "a", "2.2", 12)
				b.On("m1", b.Get(1, 21, 30, "a", 12, histbuild.Kv("a", "2.2", 11, 12, 2)))
				b.On("m1", b.Sget(1, 31, 40, "a", 12, histbuild.Kv("a", "2.1", 11, 11, 1)))
			}},
		{Name: "kv/monotonic-reads - two overlapping reads may return in either order: nothing to judge - skipped", Want: check.Skipped,
			Build: func(b *histbuild.Builder) {
				b.Put(2, 0, 10, "a", "2.1", 11)
				b.Put(2, 11, 20, "a", "2.2", 12)
				b.Get(1, 21, 35, "a", 12, histbuild.Kv("a", "2.2", 11, 12, 2))
				b.Sget(1, 30, 40, "a", 11, histbuild.Kv("a", "2.1", 11, 11, 1))
			}},
		{Name: "kv/monotonic-reads - only the header revision goes back - pass", Want: check.Pass,
			Build: func(b *histbuild.Builder) {
				b.Put(2, 0, 10, "a", "2.1", 11)
				b.Put(2, 11, 20, "b", "2.2", 12)
				b.On("m1", b.Sget(1, 21, 30, "a", 12, histbuild.Kv("a", "2.1", 11, 11, 1)))
				b.On("m2", b.Sget(1, 31, 40, "a", 11, histbuild.Kv("a", "2.1", 11, 11, 1)))
			}},
		{Name: "kv/monotonic-reads - another client's read is not the reader's: nothing to judge - skipped", Want: check.Skipped,
			Build: func(b *histbuild.Builder) {
				b.Put(2, 0, 10, "a", "2.1", 11)
				b.Put(2, 11, 20, "a", "2.2", 12)
				b.Get(3, 21, 30, "a", 12, histbuild.Kv("a", "2.2", 11, 12, 2))
				b.Sget(1, 31, 40, "a", 11, histbuild.Kv("a", "2.1", 11, 11, 1))
			}},
	})
}

// TestSerializableEvidence: serializable reads the run sent and never got
// answered leave the checks of serializable reads unknown; a run that
// sent none, or a target that refuses them, skips them.
func TestSerializableEvidence(t *testing.T) {
	sentUnanswered := histbuild.New()
	sentUnanswered.Put(1, 0, 10, "a", "1.1", 11)
	id := sentUnanswered.Sget(1, 11, 20, "a", 11)
	sentUnanswered.H.Operations[id-1].Response, sentUnanswered.H.Operations[id-1].Error = nil, "context deadline exceeded"
	sentUnanswered.H.Operations[id-1].Code = history.ErrUnknown
	none := histbuild.New()
	none.Put(1, 0, 10, "a", "1.1", 11)
	refused := histbuild.New()
	refused.Put(1, 0, 10, "a", "1.1", 11)
	refused.H.Meta.Refuses = map[string]string{"serializable": "not supported"}
	for _, c := range []check.Check{{Name: NameSerializableSane, Run: CheckSerializableSane},
		{Name: NameReadYourWrites, Run: CheckReadYourWrites}, {Name: NameMonotonicReads, Run: CheckMonotonicReads}} {
		for _, tc := range []struct {
			name string
			b    *histbuild.Builder
			want check.Verdict
		}{{"sent, none answered", sentUnanswered, check.Unknown}, {"none sent", none, check.Skipped}, {"refused", refused, check.Skipped}} {
			if r := c.Run(tc.b.H, check.DefaultConfig()); r.Verdict != tc.want {
				t.Errorf("%s, %s: %s (%s), want %s", c.Name, tc.name, r.Verdict, r.Reason, tc.want)
			}
		}
	}
}
