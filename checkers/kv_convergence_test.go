package checkers

import (
	"testing"

	"github.com/vigil-suite/vigil/history"
)

func TestKVConvergence(t *testing.T) {
	final := func(b *hb) {
		id := b.put(1, 0, 10, "final", "final.0", 20)
		b.mark(history.MarkFinalWrite, 11, id, 20)
	}
	agree := func(b *hb, skip string) {
		for i, m := range []string{"m1", "m2", "m3"} {
			if m == skip {
				continue
			}
			b.status(m, 9, 20+10*i, 25+10*i, 20)
			b.hashKV(m, 9, 60+10*i, 65+10*i, 20, 20, 15, 0xabc)
		}
	}
	runKVCases(t, CheckKVConvergence, ErrKVConvergence, []kvCase{
		{name: "kv/convergence - every member agrees - pass", want: Pass, build: func(b *hb) {
			final(b)
			agree(b, "")
			b.mark("convergence", 100, 0, 0)
		}},
		{name: "kv/convergence - disagreement before the final write or before catching up is ignored - pass", want: Pass,
			build: func(b *hb) {
				b.status("m1", 9, 1, 2, 3) // before the mark
				final(b)
				b.status("m2", 9, 12, 13, 18) // lagging at first, agrees later
				agree(b, "")
			}},
		{name: "kv/convergence - members end at different revisions - fail", want: Fail, client: 9, rev: 20,
			msg: "revision (Status): 19 on m3; 20 on m1, m2", build: func(b *hb) {
				final(b)
				agree(b, "m3")
				b.status("m3", 9, 90, 95, 19)
				b.hashKV("m3", 9, 96, 99, 20, 20, 15, 0xabc)
			}},
		{name: "kv/convergence - hashes differ at one revision - fail", want: Fail, client: 9, rev: 20,
			msg: "HashKV hash at revision 20", build: func(b *hb) {
				final(b)
				agree(b, "m2")
				b.status("m2", 9, 90, 95, 20)
				b.hashKV("m2", 9, 96, 99, 20, 20, 15, 0xdef)
			}},
		{name: "kv/convergence - compact revisions differ - fail", want: Fail, client: 9, rev: 20,
			msg: "compact revision (HashKV)", build: func(b *hb) {
				final(b)
				agree(b, "m2")
				b.status("m2", 9, 90, 95, 20)
				b.hashKV("m2", 9, 96, 99, 20, 20, 14, 0xabc)
			}},
		{name: "kv/convergence - a member never answered - unknown", want: Unknown, build: func(b *hb) {
			final(b)
			agree(b, "m3")
			b.on("m3", b.op(9, 90, 95, history.Request{Kind: history.OpStatus}, nil, history.ErrUnknown))
		}},
		{name: "kv/convergence - no Status or HashKV after the final write - skipped", want: Skipped, build: func(b *hb) {
			b.status("m1", 9, 1, 2, 3)
			final(b)
		}},
		{name: "kv/convergence - no final-write mark - skipped", want: Skipped, build: func(b *hb) {
			agree(b, "")
		}},
	})
}
