package checkers

import (
	"testing"

	"github.com/vigil-suite/vigil/history"
)

func TestWatchResumable(t *testing.T) {
	compacted := "etcdserver: mvcc: required revision has been compacted"
	// a@11, b@12, a@13, b@14 by client 1 on m1; compaction to 13 by client
	// 9 on m1, acknowledged at time 50.
	base := func(b *hb) {
		b.on("m1", b.put(1, 0, 10, "a", "1.1", 11))
		b.on("m1", b.put(1, 11, 20, "b", "1.2", 12))
		b.on("m1", b.put(1, 21, 30, "a", "1.3", 13))
		b.on("m1", b.put(1, 31, 40, "b", "1.4", 14))
		b.on("m1", b.compact(9, 41, 50, 13, 14, ""))
	}
	ev := map[int64]history.Event{11: putEv("a", "1.1", 11, 11, 1), 12: putEv("b", "1.2", 12, 12, 1),
		13: putEv("a", "1.3", 11, 13, 2), 14: putEv("b", "1.4", 12, 14, 2)}
	open := func(b *hb, id int64, call int, start, resumes int64, member string) int64 {
		return b.watchAt(history.Watch{ID: id, Client: 20 + int(id), Member: member, Call: durationOf(call), Resumes: resumes,
			Request: history.WatchRequest{Key: testPrefix, End: "/p0", StartRevision: start}})
	}
	cancelFor := func(b *hb, w int64, t int, compactRev int64) {
		b.created(w, t, 14)
		b.wresp(history.WatchResponse{Watch: w, Time: durationOf(t + 1), Canceled: true, CancelReason: compacted,
			CompactRevision: compactRev})
		b.endWith(w, t+2, history.EndServer, compacted)
	}
	runWatchCases(t, CheckWatchResumable, ErrWatchResumable, []watchCase{
		{name: "watch/resumable - starts with the first change at its start revision - pass", want: Pass, build: func(b *hb) {
			base(b)
			w := open(b, 1, 5, 12, 0, "m2")
			b.events(w, 25, ev[12])
			b.events(w, 35, ev[13], ev[14])
		}},
		{name: "watch/resumable - resumed watch continues its predecessor - pass", want: Pass, build: func(b *hb) {
			base(b)
			w := open(b, 1, 5, 11, 0, "m2")
			b.events(w, 12, ev[11])
			b.end(w, 13, history.EndClient)
			r := open(b, 2, 14, 12, 1, "m2")
			b.events(r, 25, ev[12])
		}},
		{name: "watch/resumable - start below the compaction is canceled with the compact revision - pass", want: Pass,
			build: func(b *hb) {
				base(b)
				cancelFor(b, open(b, 1, 60, 12, 0, "m1"), 61, 13)
			}},
		{name: "watch/resumable - a lagging member may serve a compacted start from its own history - pass", want: Pass,
			build: func(b *hb) {
				base(b)
				w := open(b, 1, 60, 12, 0, "m3") // nothing shows m3 applied the compaction
				b.events(w, 61, ev[12])
				b.events(w, 62, ev[13], ev[14])
			}},
		{name: "watch/resumable - a watch called while the compaction ran may start - pass", want: Pass, build: func(b *hb) {
			base(b)
			w := open(b, 1, 45, 12, 0, "m1")
			b.events(w, 46, ev[12], ev[13], ev[14])
		}},
		{name: "watch/resumable - first event skips a committed change - fail", want: Fail, watch: 1, rev: 12, key: "b",
			msg: "skipped the PUT of b at revision 12, committed by operation 2", build: func(b *hb) {
				base(b)
				w := open(b, 1, 5, 12, 0, "m2")
				b.events(w, 35, ev[13], ev[14])
			}},
		{name: "watch/resumable - resumed watch leaves a gap - fail", want: Fail, watch: 2, rev: 12, key: "b",
			msg: "(it resumes watch 1)", build: func(b *hb) {
				base(b)
				w := open(b, 1, 5, 11, 0, "m2")
				b.events(w, 12, ev[11])
				b.end(w, 13, history.EndClient)
				r := open(b, 2, 14, 12, 1, "m2")
				b.events(r, 35, ev[13])
			}},
		{name: "watch/resumable - only a progress notification vouches past a change - fail", want: Fail, watch: 1, rev: 13,
			key: "a", msg: "a progress notification at 14 first", build: func(b *hb) {
				base(b)
				w := open(b, 1, 5, 13, 0, "m2")
				b.progress(w, 45, 14)
			}},
		{name: "watch/resumable - event below the start revision - fail", want: Fail, watch: 1, rev: 11, key: "a",
			msg: "below its start", build: func(b *hb) {
				base(b)
				w := open(b, 1, 5, 12, 0, "m2")
				b.events(w, 12, ev[11])
			}},
		{name: "watch/resumable - start below an applied compaction silently started later - fail", want: Fail, watch: 1,
			rev: 12, msg: "was not canceled for compaction", build: func(b *hb) {
				base(b)
				b.on("m2", b.get(2, 55, 58, "a", 14)) // m2 applied everything up to the compaction
				w := open(b, 1, 60, 12, 0, "m2")
				b.events(w, 61, ev[13], ev[14])
			}},
		{name: "watch/resumable - canceled with a compact revision that does not cover the start - fail", want: Fail,
			watch: 1, rev: 13, msg: "which does not compact its start", build: func(b *hb) {
				base(b)
				cancelFor(b, open(b, 1, 60, 13, 0, "m1"), 61, 13)
			}},
		{name: "watch/resumable - no start revision - skipped", want: Skipped, build: func(b *hb) {
			base(b)
			w := b.watch(1, 9, 0, prefixWatch())
			b.events(w, 12, ev[11])
		}},
	})
}
