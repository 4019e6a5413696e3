package watch

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func TestWatchResumable(t *testing.T) {
	compacted := "etcdserver: mvcc: required revision has been compacted"
	// a@11, b@12, a@13, b@14 by client 1 on m1; compaction to 13 by client
	// 9 on m1, acknowledged at time 50.
	base := func(b *histbuild.Builder) {
		b.On("m1", b.Put(1, 0, 10, "a", "1.1", 11))
		b.On("m1", b.Put(1, 11, 20, "b", "1.2", 12))
		b.On("m1", b.Put(1, 21, 30, "a", "1.3", 13))
		b.On("m1", b.Put(1, 31, 40, "b", "1.4", 14))
		b.On("m1", b.Compact(9, 41, 50, 13, 14, ""))
	}
	ev := map[int64]history.Event{11: histbuild.PutEv("a", "1.1", 11, 11, 1), 12: histbuild.PutEv("b", "1.2", 12, 12, 1),
		13: histbuild.PutEv("a", "1.3", 11, 13, 2), 14: histbuild.PutEv("b", "1.4", 12, 14, 2)}
	open := func(b *histbuild.Builder, id int64, call int, start, resumes int64, member string) int64 {
		return b.WatchAt(history.Watch{ID: id, Client: 20 + int(id), Member: member, Call: histbuild.DurationOf(call), Resumes: resumes,
			Request: history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", StartRevision: start}})
	}
	cancelFor := func(b *histbuild.Builder, w int64, t int, compactRev int64) {
		b.Created(w, t, 14)
		b.Wresp(history.WatchResponse{Watch: w, Time: histbuild.DurationOf(t + 1), Canceled: true, CancelReason: compacted,
			CompactRevision: compactRev})
		b.EndWith(w, t+2, history.EndServer, compacted)
	}
	histbuild.RunWatchCases(t, CheckResumable, ErrResumable, []histbuild.WatchCase{
		{Name: "watch/resumable - starts with the first change at its start revision - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			base(b)
			w := open(b, 1, 5, 12, 0, "m2")
			b.Events(w, 25, ev[12])
			b.Events(w, 35, ev[13], ev[14])
		}},
		{Name: "watch/resumable - resumed watch continues its predecessor - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			base(b)
			w := open(b, 1, 5, 11, 0, "m2")
			b.Events(w, 12, ev[11])
			b.End(w, 13, history.EndClient)
			r := open(b, 2, 14, 12, 1, "m2")
			b.Events(r, 25, ev[12])
		}},
		{Name: "watch/resumable - start below the compaction is canceled with the compact revision - pass", Want: check.Pass,
			Build: func(b *histbuild.Builder) {
				base(b)
				cancelFor(b, open(b, 1, 60, 12, 0, "m1"), 61, 13)
			}},
		{Name: "watch/resumable - a lagging member may serve a compacted start from its own history - pass", Want: check.Pass,
			Excused: map[string]int{"member_lag": 1},
			Build: func(b *histbuild.Builder) {
				base(b)
				w := open(b, 1, 60, 12, 0, "m3") // nothing shows m3 applied the compaction
				b.Events(w, 61, ev[12])
				b.Events(w, 62, ev[13], ev[14])
			}},
		{Name: "watch/resumable - a watch called while the compaction ran may start - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			base(b)
			w := open(b, 1, 45, 12, 0, "m1")
			b.Events(w, 46, ev[12], ev[13], ev[14])
		}},
		{Name: "watch/resumable - first event skips a committed change - fail", Want: check.Fail, Watch: 1, Rev: 12, Key: "b",
			Msg: "skipped the PUT of b at revision 12, committed by operation 2", Build: func(b *histbuild.Builder) {
				base(b)
				w := open(b, 1, 5, 12, 0, "m2")
				b.Events(w, 35, ev[13], ev[14])
			}},
		{Name: "watch/resumable - resumed watch leaves a gap - fail", Want: check.Fail, Watch: 2, Rev: 12, Key: "b",
			Msg: "(it resumes watch 1)", Build: func(b *histbuild.Builder) {
				base(b)
				w := open(b, 1, 5, 11, 0, "m2")
				b.Events(w, 12, ev[11])
				b.End(w, 13, history.EndClient)
				r := open(b, 2, 14, 12, 1, "m2")
				b.Events(r, 35, ev[13])
			}},
		{Name: "watch/resumable - only a progress notification vouches past a change - fail", Want: check.Fail, Watch: 1, Rev: 13,
			Key: "a", Msg: "a progress notification at 14 first", Build: func(b *histbuild.Builder) {
				base(b)
				w := open(b, 1, 5, 13, 0, "m2")
				b.Progress(w, 45, 14)
			}},
		{Name: "watch/resumable - event below the start revision - fail", Want: check.Fail, Watch: 1, Rev: 11, Key: "a",
			Msg: "below its start", Build: func(b *histbuild.Builder) {
				base(b)
				w := open(b, 1, 5, 12, 0, "m2")
				b.Events(w, 12, ev[11])
			}},
		{Name: "watch/resumable - start below an applied compaction silently started later - fail", Want: check.Fail, Watch: 1,
			Rev: 12, Msg: "was not canceled for compaction", Build: func(b *histbuild.Builder) {
				base(b)
				b.On("m2", b.Get(2, 55, 58, "a", 14)) // m2 applied everything up to the compaction
				w := open(b, 1, 60, 12, 0, "m2")
				b.Events(w, 61, ev[13], ev[14])
			}},
		{Name: "watch/resumable - canceled with a compact revision that does not cover the start - fail", Want: check.Fail,
			Watch: 1, Rev: 13, Msg: "which does not compact its start", Build: func(b *histbuild.Builder) {
				base(b)
				cancelFor(b, open(b, 1, 60, 13, 0, "m1"), 61, 13)
			}},
		{Name: "watch/resumable - no start revision - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {
			base(b)
			w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Events(w, 12, ev[11])
		}},
	})
}
