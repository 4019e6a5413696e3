package kv

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func TestKVConvergence(t *testing.T) {
	final := func(b *histbuild.Builder) {
		id := b.Put(1, 0, 10, "final", "final.0", 20)
		b.Mark(history.MarkFinalWrite, 11, id, 20)
	}
	agree := func(b *histbuild.Builder, skip string) {
		for i, m := range []string{"m1", "m2", "m3"} {
			if m == skip {
				continue
			}
			b.Status(m, 9, 20+10*i, 25+10*i, 20)
			b.HashKV(m, 9, 60+10*i, 65+10*i, 20, 20, 15, 0xabc)
		}
	}
	histbuild.RunKVCases(t, CheckConvergence, ErrConvergence, []histbuild.KvCase{
		{Name: "kv/convergence - every member agrees - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			final(b)
			agree(b, "")
			b.Mark("convergence", 100, 0, 0)
		}},
		{Name: "kv/convergence - disagreement before the final write or before catching up is ignored - pass", Want: check.Pass,
			Build: func(b *histbuild.Builder) {
				b.Status("m1", 9, 1, 2, 3) // before the mark
				final(b)
				b.Status("m2", 9, 12, 13, 18) // lagging at first, agrees later
				agree(b, "")
			}},
		{Name: "kv/convergence - the member comparer's requests after the final write are not its - pass", Want: check.Pass,
			Build: func(b *histbuild.Builder) {
				final(b)
				agree(b, "")
				for i, m := range []string{"m1", "m2"} {
					id := b.HashKV(m, 9, 200+10*i, 205+10*i, 18, 20, 15, uint32(0x100+i))
					b.H.Operations[id-1].Draw = []string{history.DrawMemberCompare, history.CompareBisect}
				}
			}},
		{Name: "kv/convergence - members end at different revisions - fail", Want: check.Fail, Client: 9, Rev: 20,
			Msg: "revision (Status): 19 on m3; 20 on m1, m2", Build: func(b *histbuild.Builder) {
				final(b)
				agree(b, "m3")
				b.Status("m3", 9, 90, 95, 19)
				b.HashKV("m3", 9, 96, 99, 20, 20, 15, 0xabc)
			}},
		{Name: "kv/convergence - hashes differ at one revision - fail", Want: check.Fail, Client: 9, Rev: 20,
			Msg: "HashKV hash at revision 20", Build: func(b *histbuild.Builder) {
				final(b)
				agree(b, "m2")
				b.Status("m2", 9, 90, 95, 20)
				b.HashKV("m2", 9, 96, 99, 20, 20, 15, 0xdef)
			}},
		{Name: "kv/convergence - compact revisions differ - fail", Want: check.Fail, Client: 9, Rev: 20,
			Msg: "compact revision (HashKV)", Build: func(b *histbuild.Builder) {
				final(b)
				agree(b, "m2")
				b.Status("m2", 9, 90, 95, 20)
				b.HashKV("m2", 9, 96, 99, 20, 20, 14, 0xabc)
			}},
		{Name: "kv/convergence - a member never answered - unknown", Want: check.Unknown, Build: func(b *histbuild.Builder) {
			final(b)
			agree(b, "m3")
			b.On("m3", b.Op(9, 90, 95, history.Request{Kind: history.OpStatus}, nil, history.ErrUnknown))
		}},
		{Name: "kv/convergence - no Status or HashKV after the final write - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {
			b.Status("m1", 9, 1, 2, 3)
			final(b)
		}},
		{Name: "kv/convergence - no final-write mark - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {
			agree(b, "")
		}},
	})
}
