package checkers

import (
	"testing"

	"github.com/vigil-suite/vigil/history"
)

func TestWatchFilter(t *testing.T) {
	runWatchCases(t, CheckWatchFilter, ErrWatchFilter, []watchCase{
		{name: "watch/filter - events inside prefix, single key and filters - pass", want: Pass, build: func(b *hb) {
			w := b.watch(1, 9, 0, prefixWatch())
			b.events(w, 10, putEv("a", "1.1", 11, 11, 1), delEv("b", 12))
			s := b.watch(2, 9, 0, history.WatchRequest{Key: k("a")})
			b.events(s, 10, putEv("a", "1.1", 11, 11, 1))
			f := b.watch(3, 9, 0, history.WatchRequest{Key: testPrefix, End: "/p0", NoDelete: true})
			b.events(f, 10, putEv("a", "1.1", 11, 11, 1))
			r := b.watch(4, 9, 0, history.WatchRequest{Key: k("a"), End: k("c")})
			b.events(r, 10, putEv("b", "1.2", 12, 12, 1))
		}},
		{name: "watch/filter - single-key watch gets another key - fail", want: Fail, watch: 2, rev: 12, key: "ab",
			msg: "outside the watched key a", build: func(b *hb) {
				b.watch(1, 9, 0, prefixWatch())
				w := b.watch(2, 9, 0, history.WatchRequest{Key: k("a")})
				b.events(w, 10, putEv("a", "1.1", 11, 11, 1))
				b.events(w, 20, putEv("ab", "1.2", 12, 12, 1))
			}},
		{name: "watch/filter - range watch gets a key past its end - fail", want: Fail, watch: 1, rev: 11, key: "c",
			msg: "outside the watched range [a, c)", build: func(b *hb) {
				w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), End: k("c")})
				b.events(w, 10, putEv("c", "1.1", 11, 11, 1))
			}},
		{name: "watch/filter - NoPut watch gets a PUT - fail", want: Fail, watch: 1, rev: 12, key: "a", msg: "NoPut",
			build: func(b *hb) {
				w := b.watch(1, 9, 0, history.WatchRequest{Key: testPrefix, End: "/p0", NoPut: true})
				b.events(w, 10, delEv("b", 11))
				b.events(w, 20, putEv("a", "1.1", 12, 12, 1))
			}},
		{name: "watch/filter - NoDelete watch gets a DELETE - fail", want: Fail, watch: 1, rev: 12, key: "a", msg: "NoDelete",
			build: func(b *hb) {
				w := b.watch(1, 9, 0, history.WatchRequest{Key: testPrefix, End: "/p0", NoDelete: true})
				b.events(w, 10, putEv("a", "1.1", 11, 11, 1))
				b.events(w, 20, delEv("a", 12))
			}},
		{name: "watch/filter - no event - skipped", want: Skipped, build: func(b *hb) { b.watch(1, 9, 0, prefixWatch()) }},
	})
}

func TestWatchAtomic(t *testing.T) {
	txn := func(b *hb) { b.txn2(1, 0, 10, "a", "1.1", "b", "1.1b", 11) }
	runWatchCases(t, CheckWatchAtomic, ErrWatchAtomic, []watchCase{
		{name: "watch/atomic - a txn's events in one response - pass", want: Pass, build: func(b *hb) {
			txn(b)
			w := b.watch(1, 9, 0, prefixWatch())
			b.events(w, 20, putEv("a", "1.1", 11, 11, 1), putEv("b", "1.1b", 11, 11, 1))
			b.events(w, 30, putEv("a", "1.2", 11, 12, 2))
		}},
		{name: "watch/atomic - a single-key watch sees its part of a txn - pass", want: Pass, build: func(b *hb) {
			txn(b)
			w := b.watch(1, 9, 0, history.WatchRequest{Key: k("b")})
			b.events(w, 20, putEv("b", "1.1b", 11, 11, 1))
		}},
		{name: "watch/atomic - only a fragmented watch, which may split - skipped", want: Skipped, build: func(b *hb) {
			txn(b)
			w := b.watch(1, 9, 0, history.WatchRequest{Key: testPrefix, End: "/p0", Fragment: true})
			b.events(w, 20, putEv("a", "1.1", 11, 11, 1))
			b.events(w, 21, putEv("b", "1.1b", 11, 11, 1))
		}},
		{name: "watch/atomic - a fragmented watch beside a whole one may split - pass", want: Pass, build: func(b *hb) {
			txn(b)
			w := b.watch(1, 9, 0, prefixWatch())
			b.events(w, 20, putEv("a", "1.1", 11, 11, 1), putEv("b", "1.1b", 11, 11, 1))
			f := b.watch(2, 9, 0, history.WatchRequest{Key: testPrefix, End: "/p0", Fragment: true})
			b.events(f, 20, putEv("a", "1.1", 11, 11, 1))
			b.events(f, 21, putEv("b", "1.1b", 11, 11, 1))
		}},
		{name: "watch/atomic - a repeated event is not a split (watch/unique) - pass", want: Pass, build: func(b *hb) {
			txn(b)
			w := b.watch(1, 9, 0, prefixWatch())
			b.events(w, 20, putEv("a", "1.1", 11, 11, 1), putEv("b", "1.1b", 11, 11, 1))
			b.events(w, 21, putEv("a", "1.1", 11, 11, 1))
		}},
		{name: "watch/atomic - a txn split over two responses - fail", want: Fail, watch: 2, rev: 11, key: "b",
			msg: "in two responses: PUT a in response 0, then PUT b in response 1", build: func(b *hb) {
				txn(b)
				w1 := b.watch(1, 9, 0, prefixWatch())
				b.events(w1, 20, putEv("a", "1.1", 11, 11, 1), putEv("b", "1.1b", 11, 11, 1))
				w := b.watch(2, 9, 0, prefixWatch())
				b.events(w, 20, putEv("a", "1.1", 11, 11, 1))
				b.events(w, 21, putEv("b", "1.1b", 11, 11, 1))
			}},
		{name: "watch/atomic - split of a revision no acknowledged write explains - fail", want: Fail, watch: 1, rev: 11,
			key: "b", msg: "revision 11 in two responses", build: func(b *hb) {
				w := b.watch(1, 9, 0, prefixWatch())
				b.events(w, 20, putEv("a", "1.1", 11, 11, 1), putEv("c", "1.1c", 11, 11, 1))
				b.events(w, 21, putEv("b", "1.1b", 11, 11, 1))
			}},
		{name: "watch/atomic - no revision with two changes - skipped", want: Skipped, build: func(b *hb) {
			b.put(1, 0, 10, "a", "1.1", 11)
			w := b.watch(1, 9, 0, prefixWatch())
			b.events(w, 20, putEv("a", "1.1", 11, 11, 1))
		}},
	})
}

func TestWatchBookmarkable(t *testing.T) {
	runWatchCases(t, CheckWatchBookmarkable, ErrWatchBookmarkable, []watchCase{
		{name: "watch/bookmarkable - progress between events - pass", want: Pass, build: func(b *hb) {
			w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), ProgressNotify: true})
			b.progress(w, 5, 10)
			b.events(w, 10, putEv("a", "1.1", 11, 11, 1))
			b.progress(w, 20, 15) // changes to other keys moved the store on
			b.progress(w, 21, 15)
			b.events(w, 30, putEv("a", "1.2", 11, 16, 2))
		}},
		{name: "watch/bookmarkable - event at or below a progress revision - fail", want: Fail, watch: 1, rev: 14, key: "a",
			msg: "after a progress notification at revision 15", build: func(b *hb) {
				w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), ProgressNotify: true})
				b.events(w, 10, putEv("a", "1.1", 11, 11, 1))
				b.progress(w, 20, 15)
				b.events(w, 30, putEv("a", "1.2", 11, 14, 2))
			}},
		{name: "watch/bookmarkable - progress revision decreases - fail", want: Fail, watch: 1, rev: 12,
			msg: "after one at revision 15", build: func(b *hb) {
				w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), ProgressNotify: true})
				b.progress(w, 20, 15)
				b.progress(w, 30, 12)
			}},
		{name: "watch/bookmarkable - progress below the last event - fail", want: Fail, watch: 1, rev: 12, key: "a",
			msg: "after the event PUT a at revision 13", build: func(b *hb) {
				w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), ProgressNotify: true})
				b.events(w, 10, putEv("a", "1.1", 11, 13, 1))
				b.progress(w, 20, 12)
			}},
		{name: "watch/bookmarkable - no progress notification - skipped", want: Skipped, build: func(b *hb) {
			w := b.watch(1, 9, 0, prefixWatch())
			b.events(w, 10, putEv("a", "1.1", 11, 11, 1))
		}},
	})
}

func TestWatchProgressBeforeStart(t *testing.T) {
	runWatchCases(t, CheckWatchProgressBeforeStart, ErrWatchProgressBeforeStart, []watchCase{
		{name: "watch/progress-before-start - future watch notified at its start revision minus one - pass", want: Pass, build: func(b *hb) {
			w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), ProgressNotify: true, StartRevision: 20})
			b.progress(w, 5, 19)
			b.events(w, 10, putEv("a", "1.1", 11, 20, 1))
		}},
		{name: "watch/progress-before-start - future watch notified below its start revision (etcd #20221) - fail", want: Fail, watch: 1, rev: 18,
			msg: "asked to start at revision 20 but received a progress notification at revision 18", build: func(b *hb) {
				w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), ProgressNotify: true, StartRevision: 20})
				b.progress(w, 5, 18)
				b.events(w, 10, putEv("a", "1.1", 11, 20, 1))
			}},
		{name: "watch/progress-before-start - no watch with a start revision notified - skipped", want: Skipped, build: func(b *hb) {
			w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), ProgressNotify: true})
			b.progress(w, 5, 18)
		}},
	})
}

func TestWatchCancelReason(t *testing.T) {
	compacted := "etcdserver: mvcc: required revision has been compacted"
	runWatchCases(t, CheckWatchCancelReason, ErrWatchCancelReason, []watchCase{
		{name: "watch/cancel-reason - client close, compaction cancel, network error - pass", want: Pass, build: func(b *hb) {
			w := b.watch(1, 9, 0, prefixWatch())
			b.end(w, 50, history.EndClient)
			c := b.watch(2, 9, 0, history.WatchRequest{Key: testPrefix, End: "/p0", StartRevision: 3})
			b.wresp(history.WatchResponse{Watch: c, Time: 5, Canceled: true, CancelReason: compacted, CompactRevision: 7})
			b.endWith(c, 6, history.EndServer, compacted)
			e := b.watch(3, 9, 0, prefixWatch())
			b.wresp(history.WatchResponse{Watch: e, Time: 7, Error: "rpc error: code = Unavailable"})
			b.endWith(e, 8, history.EndError, "rpc error: code = Unavailable")
			b.mark(history.MarkEnd, 60, 0, 0)
		}},
		{name: "watch/cancel-reason - run cut short leaves watches open - skipped", want: Skipped, build: func(b *hb) {
			b.watch(1, 9, 0, prefixWatch())
		}},
		{name: "watch/cancel-reason - server cancel without a reason - fail", want: Fail, watch: 2, rev: 30,
			msg: "with no cancel reason, compact revision or error", build: func(b *hb) {
				b.watch(1, 9, 0, prefixWatch())
				b.end(1, 50, history.EndClient)
				w := b.watch(2, 9, 0, prefixWatch())
				b.wresp(history.WatchResponse{Watch: w, Time: 5, Revision: 30, Canceled: true})
				b.end(w, 6, history.EndServer)
			}},
		{name: "watch/cancel-reason - stream closed silently - fail", want: Fail, watch: 1, rev: 11,
			msg: "without a cancel reason or an error", build: func(b *hb) {
				w := b.watch(1, 9, 0, prefixWatch())
				b.events(w, 10, putEv("a", "1.1", 11, 11, 1))
				b.endWith(w, 20, history.EndError, stoppedSilently)
			}},
		{name: "watch/cancel-reason - watch never ended though the workload finished - fail", want: Fail, watch: 2, rev: 11,
			msg: "never ended", build: func(b *hb) {
				b.watch(1, 9, 0, prefixWatch())
				b.end(1, 50, history.EndClient)
				w := b.watch(2, 9, 0, prefixWatch())
				b.events(w, 10, putEv("a", "1.1", 11, 11, 1))
				b.mark(history.MarkEnd, 60, 0, 0)
			}},
		{name: "watch/cancel-reason - no watch - skipped", want: Skipped, build: func(b *hb) { b.put(1, 0, 10, "a", "1.1", 11) }},
	})
}
