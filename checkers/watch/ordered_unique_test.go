package watch

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func TestWatchOrdered(t *testing.T) {
	histbuild.RunWatchCases(t, CheckOrdered, ErrOrdered, []histbuild.WatchCase{
		{Name: "watch/ordered - increasing revisions across responses - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			w := b.Watch(1, 1, 0, histbuild.PrefixWatch())
			b.Events(w, 10, histbuild.PutEv("a", "v1", 11, 11, 1), histbuild.PutEv("b", "w1", 12, 12, 1))
			b.Events(w, 20, histbuild.PutEv("a", "v2", 11, 13, 2))
		}},
		{Name: "watch/ordered - one txn's events share a revision - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			w := b.Watch(1, 1, 0, histbuild.PrefixWatch())
			b.Events(w, 10, histbuild.PutEv("a", "v1", 11, 11, 1), histbuild.PutEv("b", "w1", 11, 11, 1))
		}},
		{Name: "watch/ordered - reordered event - fail", Want: check.Fail, Watch: 2, Rev: 12, Key: "b", Msg: "after PUT", Build: func(b *histbuild.Builder) {
			b.Watch(1, 1, 0, histbuild.PrefixWatch())
			w := b.Watch(2, 1, 0, histbuild.PrefixWatch())
			b.Events(w, 10, histbuild.PutEv("a", "v1", 11, 11, 1))
			b.Events(w, 20, histbuild.PutEv("a", "v2", 11, 13, 2))
			b.Events(w, 30, histbuild.PutEv("b", "w1", 12, 12, 1))
		}},
		{Name: "watch/ordered - no event - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {
			b.Watch(1, 1, 0, histbuild.PrefixWatch())
		}},
	})
}

func TestWatchUnique(t *testing.T) {
	histbuild.RunWatchCases(t, CheckUnique, ErrUnique, []histbuild.WatchCase{
		{Name: "watch/unique - same key at different revisions, keys at one revision - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			w := b.Watch(1, 1, 0, histbuild.PrefixWatch())
			b.Events(w, 10, histbuild.PutEv("a", "v1", 11, 11, 1), histbuild.PutEv("b", "w1", 11, 11, 1))
			b.Events(w, 20, histbuild.PutEv("a", "v2", 11, 12, 2))
		}},
		{Name: "watch/unique - same change on two watches - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			b.Watch(1, 1, 0, histbuild.PrefixWatch())
			b.Watch(2, 1, 0, histbuild.PrefixWatch())
			b.Events(1, 10, histbuild.PutEv("a", "v1", 11, 11, 1))
			b.Events(2, 10, histbuild.PutEv("a", "v1", 11, 11, 1))
		}},
		{Name: "watch/unique - duplicated event - fail", Want: check.Fail, Watch: 1, Rev: 11, Key: "a", Msg: "twice", Build: func(b *histbuild.Builder) {
			w := b.Watch(1, 1, 0, histbuild.PrefixWatch())
			b.Events(w, 10, histbuild.PutEv("a", "v1", 11, 11, 1))
			b.Events(w, 20, histbuild.PutEv("b", "w1", 12, 12, 1))
			b.Events(w, 30, histbuild.PutEv("a", "v1", 11, 11, 1))
		}},
	})
}

func TestWatchReliable(t *testing.T) {
	// writes: a@11, b@12, a@13 (delete), b@14; final write at 14.
	writes := func(b *histbuild.Builder) {
		b.Put(1, 0, 10, "a", "v1", 11)
		b.Put(1, 20, 30, "b", "w1", 12)
		b.Del(1, 40, 50, "a", 1, 13)
		id := b.Put(1, 60, 70, "b", "w2", 14)
		b.Mark(history.MarkFinalWrite, 75, id, 14)
	}
	all := []history.Event{histbuild.PutEv("a", "v1", 11, 11, 1), histbuild.PutEv("b", "w1", 12, 12, 1), histbuild.DelEv("a", 13), histbuild.PutEv("b", "w2", 12, 14, 2)}
	histbuild.RunWatchCases(t, CheckReliable, ErrReliable, []histbuild.WatchCase{
		{Name: "watch/reliable - every change delivered - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			writes(b)
			w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Created(w, 1, 10)
			b.Events(w, 15, all[0])
			b.Events(w, 35, all[1])
			b.Events(w, 55, all[2], all[3])
			b.End(w, 90, history.EndClient)
		}},
		{Name: "watch/reliable - missing event - fail", Want: check.Fail, Watch: 1, Rev: 12, Key: "b", Msg: "committed by operation 2",
			Build: func(b *histbuild.Builder) {
				writes(b)
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Events(w, 15, all[0])
				b.Events(w, 55, all[2], all[3])
				b.End(w, 90, history.EndClient)
			}},
		{Name: "watch/reliable - failed write not delivered, filters and single key respected - pass", Want: check.Pass,
			Build: func(b *histbuild.Builder) {
				writes(b)
				b.PutFail(2, 80, 85, "a", "v9")
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", NoDelete: true})
				b.Events(w, 15, all[0])
				b.Events(w, 35, all[1])
				b.Events(w, 55, all[3])
				b.End(w, 90, history.EndClient)
				w2 := b.Watch(2, 9, 0, history.WatchRequest{Key: histbuild.K("b")})
				b.Events(w2, 35, all[1])
				b.Events(w2, 55, all[3])
				b.End(w2, 90, history.EndClient)
			}},
		{Name: "watch/reliable - watch resumed after an error - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			writes(b)
			w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Events(w, 15, all[0])
			b.Events(w, 35, all[1])
			b.End(w, 38, history.EndError)
			b.H.Add(history.Record{Watch: &history.Watch{ID: 2, Client: 9, Call: 39, Resumes: 1,
				Request: history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", StartRevision: 13}}})
			b.Events(2, 55, all[2], all[3])
			b.End(2, 90, history.EndClient)
		}},
		{Name: "watch/reliable - progress notification vouches for a missed change - fail", Want: check.Fail, Watch: 1, Rev: 13,
			Key: "a", Msg: "DELETE", Build: func(b *histbuild.Builder) {
				writes(b)
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a")})
				b.Events(w, 15, all[0])
				b.Progress(w, 56, 14)
				b.End(w, 90, history.EndClient)
			}},
		{Name: "watch/reliable - watch open at the final write stalled - fail", Want: check.Fail, Watch: 1, Rev: 13, Key: "a",
			Msg: "final write", Build: func(b *histbuild.Builder) {
				writes(b)
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Events(w, 15, all[0])
				b.Events(w, 35, all[1])
				b.End(w, 90, history.EndClient)
			}},
		{Name: "watch/reliable - watch closed by the client after the final write and resumed elsewhere - pass", Want: check.Pass,
			Build: func(b *histbuild.Builder) {
				writes(b)
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Events(w, 15, all[0])
				b.Events(w, 35, all[1])
				b.End(w, 80, history.EndClient)
				b.H.Add(history.Record{Watch: &history.Watch{ID: 2, Client: 9, Call: 81, Resumes: 1,
					Request: history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", StartRevision: 13}}})
				b.Events(2, 85, all[2], all[3])
				b.End(2, 90, history.EndClient)
			}},
		{Name: "watch/reliable - watch closed by the client after the final write, resumed, but missed a change before - fail", Want: check.Fail,
			Watch: 1, Rev: 12, Key: "b", Msg: "committed by operation 2", Build: func(b *histbuild.Builder) {
				writes(b)
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Events(w, 15, all[0])
				b.Events(w, 55, all[2])
				b.End(w, 80, history.EndClient)
				b.H.Add(history.Record{Watch: &history.Watch{ID: 2, Client: 9, Call: 81, Resumes: 1,
					Request: history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", StartRevision: 14}}})
				b.Events(2, 85, all[3])
				b.End(2, 90, history.EndClient)
			}},
		{Name: "watch/reliable - watch open at the final write observed nothing - fail", Want: check.Fail, Watch: 1, Rev: 11, Key: "a",
			Msg: "no event at all", Build: func(b *histbuild.Builder) {
				writes(b)
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Created(w, 1, 10)
			}},
		{Name: "watch/reliable - watch canceled by the server before reaching the final write - pass", Want: check.Pass,
			Build: func(b *histbuild.Builder) {
				writes(b)
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Events(w, 15, all[0])
				b.Wresp(history.WatchResponse{Watch: w, Time: 80, Canceled: true, CancelReason: "leader lost"})
				b.End(w, 80, history.EndServer)
			}},
		{Name: "watch/reliable - a committed change delivered with another value - fail", Want: check.Fail, Watch: 1, Rev: 12,
			Key: "b", Msg: "delivered PUT b = \"9.9\" at revision 12 (response 1), but operation 2 committed PUT b = \"w1\"",
			Build: func(b *histbuild.Builder) {
				writes(b)
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Events(w, 15, all[0])
				b.Events(w, 35, histbuild.PutEv("b", "9.9", 12, 12, 1))
				b.Events(w, 55, all[2], all[3])
			}},
		{Name: "watch/reliable - progress notification below the start revision vouches for nothing before it - pass", Want: check.Pass,
			Build: func(b *histbuild.Builder) {
				writes(b)
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", StartRevision: 14})
				b.Progress(w, 12, 10)
				b.Events(w, 65, all[3])
				b.End(w, 90, history.EndClient)
			}},
		{Name: "watch/reliable - watch from its start revision misses the change there - fail", Want: check.Fail, Watch: 1, Rev: 13, Key: "a",
			Msg: "DELETE", Build: func(b *histbuild.Builder) {
				writes(b)
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", StartRevision: 13})
				b.Progress(w, 12, 10)
				b.Events(w, 65, all[3])
				b.End(w, 90, history.EndClient)
			}},
		{Name: "watch/reliable - no watch - skipped", Want: check.Skipped, Build: writes},
	})
}

func TestWatchLiveness(t *testing.T) {
	writes := func(b *histbuild.Builder) {
		b.Put(1, 0, 10, "a", "v1", 11)
		id := b.Put(1, 20, 30, "a", "v2", 12)
		b.Mark(history.MarkFinalWrite, 35, id, 12)
	}
	e1, e2 := histbuild.PutEv("a", "v1", 11, 11, 1), histbuild.PutEv("a", "v2", 11, 12, 2)
	histbuild.RunWatchCases(t, CheckLiveness, ErrLiveness, []histbuild.WatchCase{
		{Name: "watch/liveness - watch reached the final write - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			writes(b)
			w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Events(w, 15, e1)
			b.Events(w, 40, e2)
			b.End(w, 50, history.EndClient)
		}},
		{Name: "watch/liveness - watch on another key reached it by progress - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			writes(b)
			w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("z"), ProgressNotify: true})
			b.Progress(w, 40, 12)
			b.End(w, 50, history.EndClient)
		}},
		{Name: "watch/liveness - broken watch resumed and the resumption reached it - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			writes(b)
			w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Events(w, 15, e1)
			b.End(w, 38, history.EndError)
			b.H.Add(history.Record{Watch: &history.Watch{ID: 2, Client: 9, Call: 39, Resumes: 1,
				Request: history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", StartRevision: 12}}})
			b.Events(2, 45, e2)
			b.End(2, 50, history.EndClient)
		}},
		{Name: "watch/liveness - a watch opened beyond the final write owes nothing up to it - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			writes(b)
			w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Events(w, 15, e1)
			b.Events(w, 40, e2)
			b.End(w, 50, history.EndClient)
			f := b.Watch(2, 9, 0, history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", StartRevision: 100})
			b.End(f, 50, history.EndClient)
		}},
		{Name: "watch/liveness - a watch opened at the final write's revision never reached it - fail", Want: check.Fail, Watch: 2, Rev: 12,
			Msg: "reached only revision 0", Build: func(b *histbuild.Builder) {
				writes(b)
				w := b.Watch(2, 9, 0, history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", StartRevision: 12})
				b.End(w, 50, history.EndClient)
			}},
		{Name: "watch/liveness - watch open at the final write never reached it - fail", Want: check.Fail, Watch: 1, Rev: 12,
			Msg: "reached only revision 11", Build: func(b *histbuild.Builder) {
				writes(b)
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Events(w, 15, e1)
				b.End(w, 50, history.EndClient)
			}},
		{Name: "watch/liveness - no final-write mark - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {
			b.Put(1, 0, 10, "a", "v1", 11)
			w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Events(w, 15, e1)
		}},
	})
}
