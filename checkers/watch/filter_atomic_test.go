package watch

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func TestWatchFilter(t *testing.T) {
	histbuild.RunWatchCases(t, CheckFilter, ErrFilter, []histbuild.WatchCase{
		{Name: "watch/filter - events inside prefix, single key and filters - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Events(w, 10, histbuild.PutEv("a", "1.1", 11, 11, 1), histbuild.DelEv("b", 12))
			s := b.Watch(2, 9, 0, history.WatchRequest{Key: histbuild.K("a")})
			b.Events(s, 10, histbuild.PutEv("a", "1.1", 11, 11, 1))
			f := b.Watch(3, 9, 0, history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", NoDelete: true})
			b.Events(f, 10, histbuild.PutEv("a", "1.1", 11, 11, 1))
			r := b.Watch(4, 9, 0, history.WatchRequest{Key: histbuild.K("a"), End: histbuild.K("c")})
			b.Events(r, 10, histbuild.PutEv("b", "1.2", 12, 12, 1))
		}},
		{Name: "watch/filter - single-key watch gets another key - fail", Want: check.Fail, Watch: 2, Rev: 12, Key: "ab",
			Msg: "outside the watched key a", Build: func(b *histbuild.Builder) {
				b.Watch(1, 9, 0, histbuild.PrefixWatch())
				w := b.Watch(2, 9, 0, history.WatchRequest{Key: histbuild.K("a")})
				b.Events(w, 10, histbuild.PutEv("a", "1.1", 11, 11, 1))
				b.Events(w, 20, histbuild.PutEv("ab", "1.2", 12, 12, 1))
			}},
		{Name: "watch/filter - range watch gets a key past its end - fail", Want: check.Fail, Watch: 1, Rev: 11, Key: "c",
			Msg: "outside the watched range [a, c)", Build: func(b *histbuild.Builder) {
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), End: histbuild.K("c")})
				b.Events(w, 10, histbuild.PutEv("c", "1.1", 11, 11, 1))
			}},
		{Name: "watch/filter - NoPut watch gets a PUT - fail", Want: check.Fail, Watch: 1, Rev: 12, Key: "a", Msg: "NoPut",
			Build: func(b *histbuild.Builder) {
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", NoPut: true})
				b.Events(w, 10, histbuild.DelEv("b", 11))
				b.Events(w, 20, histbuild.PutEv("a", "1.1", 12, 12, 1))
			}},
		{Name: "watch/filter - NoDelete watch gets a DELETE - fail", Want: check.Fail, Watch: 1, Rev: 12, Key: "a", Msg: "NoDelete",
			Build: func(b *histbuild.Builder) {
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", NoDelete: true})
				b.Events(w, 10, histbuild.PutEv("a", "1.1", 11, 11, 1))
				b.Events(w, 20, histbuild.DelEv("a", 12))
			}},
		{Name: "watch/filter - no event - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) { b.Watch(1, 9, 0, histbuild.PrefixWatch()) }},
	})
}

func TestWatchAtomic(t *testing.T) {
	txn := func(b *histbuild.Builder) { b.Txn2(1, 0, 10, "a", "1.1", "b", "1.1b", 11) }
	histbuild.RunWatchCases(t, CheckAtomic, ErrAtomic, []histbuild.WatchCase{
		{Name: "watch/atomic - a txn's events in one response - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			txn(b)
			w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Events(w, 20, histbuild.PutEv("a", "1.1", 11, 11, 1), histbuild.PutEv("b", "1.1b", 11, 11, 1))
			b.Events(w, 30, histbuild.PutEv("a", "1.2", 11, 12, 2))
		}},
		{Name: "watch/atomic - a single-key watch sees its part of a txn - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			txn(b)
			w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("b")})
			b.Events(w, 20, histbuild.PutEv("b", "1.1b", 11, 11, 1))
		}},
		{Name: "watch/atomic - only a fragmented watch, which may split - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {
			txn(b)
			w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", Fragment: true})
			b.Events(w, 20, histbuild.PutEv("a", "1.1", 11, 11, 1))
			b.Events(w, 21, histbuild.PutEv("b", "1.1b", 11, 11, 1))
		}},
		{Name: "watch/atomic - a fragmented watch beside a whole one may split - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			txn(b)
			w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Events(w, 20, histbuild.PutEv("a", "1.1", 11, 11, 1), histbuild.PutEv("b", "1.1b", 11, 11, 1))
			f := b.Watch(2, 9, 0, history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", Fragment: true})
			b.Events(f, 20, histbuild.PutEv("a", "1.1", 11, 11, 1))
			b.Events(f, 21, histbuild.PutEv("b", "1.1b", 11, 11, 1))
		}},
		{Name: "watch/atomic - a repeated event is not a split (watch/unique) - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			txn(b)
			w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Events(w, 20, histbuild.PutEv("a", "1.1", 11, 11, 1), histbuild.PutEv("b", "1.1b", 11, 11, 1))
			b.Events(w, 21, histbuild.PutEv("a", "1.1", 11, 11, 1))
		}},
		{Name: "watch/atomic - a txn split over two responses - fail", Want: check.Fail, Watch: 2, Rev: 11, Key: "b",
			Msg: "in two responses: PUT a in response 0, then PUT b in response 1", Build: func(b *histbuild.Builder) {
				txn(b)
				w1 := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Events(w1, 20, histbuild.PutEv("a", "1.1", 11, 11, 1), histbuild.PutEv("b", "1.1b", 11, 11, 1))
				w := b.Watch(2, 9, 0, histbuild.PrefixWatch())
				b.Events(w, 20, histbuild.PutEv("a", "1.1", 11, 11, 1))
				b.Events(w, 21, histbuild.PutEv("b", "1.1b", 11, 11, 1))
			}},
		{Name: "watch/atomic - split of a revision no acknowledged write explains - fail", Want: check.Fail, Watch: 1, Rev: 11,
			Key: "b", Msg: "revision 11 in two responses", Build: func(b *histbuild.Builder) {
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Events(w, 20, histbuild.PutEv("a", "1.1", 11, 11, 1), histbuild.PutEv("c", "1.1c", 11, 11, 1))
				b.Events(w, 21, histbuild.PutEv("b", "1.1b", 11, 11, 1))
			}},
		{Name: "watch/atomic - no revision with two changes - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {
			b.Put(1, 0, 10, "a", "1.1", 11)
			w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Events(w, 20, histbuild.PutEv("a", "1.1", 11, 11, 1))
		}},
	})
}

func TestWatchBookmarkable(t *testing.T) {
	histbuild.RunWatchCases(t, CheckBookmarkable, ErrBookmarkable, []histbuild.WatchCase{
		{Name: "watch/bookmarkable - progress between events - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), ProgressNotify: true})
			b.Progress(w, 5, 10)
			b.Events(w, 10, histbuild.PutEv("a", "1.1", 11, 11, 1))
			b.Progress(w, 20, 15) // changes to other keys moved the store on
			b.Progress(w, 21, 15)
			b.Events(w, 30, histbuild.PutEv("a", "1.2", 11, 16, 2))
		}},
		{Name: "watch/bookmarkable - event at or below a progress revision - fail", Want: check.Fail, Watch: 1, Rev: 14, Key: "a",
			Msg: "after a progress notification at revision 15", Build: func(b *histbuild.Builder) {
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), ProgressNotify: true})
				b.Events(w, 10, histbuild.PutEv("a", "1.1", 11, 11, 1))
				b.Progress(w, 20, 15)
				b.Events(w, 30, histbuild.PutEv("a", "1.2", 11, 14, 2))
			}},
		{Name: "watch/bookmarkable - progress revision decreases - fail", Want: check.Fail, Watch: 1, Rev: 12,
			Msg: "after one at revision 15", Build: func(b *histbuild.Builder) {
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), ProgressNotify: true})
				b.Progress(w, 20, 15)
				b.Progress(w, 30, 12)
			}},
		{Name: "watch/bookmarkable - progress below the last event - fail", Want: check.Fail, Watch: 1, Rev: 12, Key: "a",
			Msg: "after the event PUT a at revision 13", Build: func(b *histbuild.Builder) {
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), ProgressNotify: true})
				b.Events(w, 10, histbuild.PutEv("a", "1.1", 11, 13, 1))
				b.Progress(w, 20, 12)
			}},
		{Name: "watch/bookmarkable - no progress notification - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {
			w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Events(w, 10, histbuild.PutEv("a", "1.1", 11, 11, 1))
		}},
	})
}

func TestWatchProgressBeforeStart(t *testing.T) {
	histbuild.RunWatchCases(t, CheckProgressBeforeStart, ErrProgressBeforeStart, []histbuild.WatchCase{
		{Name: "watch/progress-before-start - future watch notified at its start revision minus one - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), ProgressNotify: true, StartRevision: 20})
			b.Progress(w, 5, 19)
			b.Events(w, 10, histbuild.PutEv("a", "1.1", 11, 20, 1))
		}},
		{Name: "watch/progress-before-start - future watch notified below its start revision (etcd #20221) - fail", Want: check.Fail, Watch: 1, Rev: 18,
			Msg: "asked to start at revision 20 but received a progress notification at revision 18", Build: func(b *histbuild.Builder) {
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), ProgressNotify: true, StartRevision: 20})
				b.Progress(w, 5, 18)
				b.Events(w, 10, histbuild.PutEv("a", "1.1", 11, 20, 1))
			}},
		{Name: "watch/progress-before-start - no watch with a start revision notified - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {
			w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), ProgressNotify: true})
			b.Progress(w, 5, 18)
		}},
	})
}

func TestWatchCancelReason(t *testing.T) {
	compacted := "etcdserver: mvcc: required revision has been compacted"
	histbuild.RunWatchCases(t, CheckCancelReason, ErrCancelReason, []histbuild.WatchCase{
		{Name: "watch/cancel-reason - client close, compaction cancel, network error - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.End(w, 50, history.EndClient)
			c := b.Watch(2, 9, 0, history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", StartRevision: 3})
			b.Wresp(history.WatchResponse{Watch: c, Time: 5, Canceled: true, CancelReason: compacted, CompactRevision: 7})
			b.EndWith(c, 6, history.EndServer, compacted)
			e := b.Watch(3, 9, 0, histbuild.PrefixWatch())
			b.Wresp(history.WatchResponse{Watch: e, Time: 7, Error: "rpc error: code = Unavailable"})
			b.EndWith(e, 8, history.EndError, "rpc error: code = Unavailable")
			b.Mark(history.MarkEnd, 60, 0, 0)
		}},
		{Name: "watch/cancel-reason - run cut short leaves watches open - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {
			b.Watch(1, 9, 0, histbuild.PrefixWatch())
		}},
		{Name: "watch/cancel-reason - server cancel without a reason - fail", Want: check.Fail, Watch: 2, Rev: 30,
			Msg: "with no cancel reason, compact revision or error", Build: func(b *histbuild.Builder) {
				b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.End(1, 50, history.EndClient)
				w := b.Watch(2, 9, 0, histbuild.PrefixWatch())
				b.Wresp(history.WatchResponse{Watch: w, Time: 5, Revision: 30, Canceled: true})
				b.End(w, 6, history.EndServer)
			}},
		{Name: "watch/cancel-reason - stream closed silently - fail", Want: check.Fail, Watch: 1, Rev: 11,
			Msg: "without a cancel reason or an error", Build: func(b *histbuild.Builder) {
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Events(w, 10, histbuild.PutEv("a", "1.1", 11, 11, 1))
				b.EndWith(w, 20, history.EndError, history.QuietClose)
			}},
		{Name: "watch/cancel-reason - watch never ended though the workload finished - fail", Want: check.Fail, Watch: 2, Rev: 11,
			Msg: "never ended", Build: func(b *histbuild.Builder) {
				b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.End(1, 50, history.EndClient)
				w := b.Watch(2, 9, 0, histbuild.PrefixWatch())
				b.Events(w, 10, histbuild.PutEv("a", "1.1", 11, 11, 1))
				b.Mark(history.MarkEnd, 60, 0, 0)
			}},
		{Name: "watch/cancel-reason - canceled at creation as unsupported - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", Fragment: true})
			b.Wresp(history.WatchResponse{Watch: w, Time: 5, Canceled: true, CancelReason: "fragment is not supported"})
			b.EndWith(w, 6, history.EndServer, "fragment is not supported")
			b.Mark(history.MarkEnd, 60, 0, 0)
		}},
		{Name: "watch/cancel-reason - stream closed silently during a fault - fail", Want: check.Fail, Watch: 1, Rev: 11,
			Msg: "which does not explain it", Build: func(b *histbuild.Builder) {
				b.Fault("kill-leader", 5, 30)
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Events(w, 10, histbuild.PutEv("a", "1.1", 11, 11, 1))
				b.EndWith(w, 20, history.EndError, history.QuietClose)
			}},
		{Name: "watch/cancel-reason - no watch - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) { b.Put(1, 0, 10, "a", "1.1", 11) }},
	})
}
