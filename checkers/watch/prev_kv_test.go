package watch

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

// A key's life: a@11 = 1.1, a@12 = 1.2, delete a@13, a@14 = 1.4 (created
// again); b@15 = 1.5. Acknowledged writes, client 1.
func life(b *histbuild.Builder) {
	b.Put(1, 0, 10, "a", "1.1", 11)
	b.Put(1, 11, 20, "a", "1.2", 12)
	b.Del(1, 21, 30, "a", 1, 13)
	b.Put(1, 31, 40, "a", "1.4", 14)
	b.Put(1, 41, 50, "b", "1.5", 15)
}

var lifeEvents = []history.Event{
	histbuild.PutEv("a", "1.1", 11, 11, 1),
	histbuild.WithPrev(histbuild.PutEv("a", "1.2", 11, 12, 2), histbuild.Kv("a", "1.1", 11, 11, 1)),
	histbuild.WithPrev(histbuild.DelEv("a", 13), histbuild.Kv("a", "1.2", 11, 12, 2)),
	histbuild.PutEv("a", "1.4", 14, 14, 1),
	histbuild.PutEv("b", "1.5", 15, 15, 1),
}

func prevWatch() history.WatchRequest {
	return history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", PrevKV: true}
}

func TestWatchPrevKV(t *testing.T) {
	histbuild.RunWatchCases(t, CheckPrevKV, ErrPrevKV, []histbuild.WatchCase{
		{Name: "watch/prev-kv - previous values through updates, a delete and a re-create - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			life(b)
			w := b.Watch(1, 9, 0, prevWatch())
			for i, e := range lifeEvents {
				b.Events(w, 10*i+5, e)
			}
		}},
		{Name: "watch/prev-kv - absent where a compaction above it was requested - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			life(b)
			b.Compact(9, 51, 60, 13, 15, "")
			w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), StartRevision: 12, PrevKV: true})
			b.Events(w, 70, histbuild.PutEv("a", "1.2", 11, 12, 2)) // its prev_kv at 11 is below the compact revision
		}},
		{Name: "watch/prev-kv - a write of unknown outcome no watch saw leaves it undetermined - pass", Want: check.Pass,
			Build: func(b *histbuild.Builder) {
				b.Put(1, 0, 10, "a", "1.1", 11)
				b.DelFail(2, 11, 100, "a") // may have deleted a at 12
				b.Put(1, 20, 30, "a", "1.3", 13)
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), StartRevision: 13, PrevKV: true})
				b.Events(w, 35, histbuild.PutEv("a", "1.3", 13, 13, 1))
			}},
		{Name: "watch/prev-kv - a write of unknown outcome a watch saw counts - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			b.Put(1, 0, 10, "a", "1.1", 11)
			b.PutFail(2, 11, 100, "a", "2.1")
			b.Put(1, 20, 30, "a", "1.3", 13)
			w := b.Watch(1, 9, 0, prevWatch())
			b.Events(w, 15, histbuild.PutEv("a", "1.1", 11, 11, 1))
			b.Events(w, 25, histbuild.WithPrev(histbuild.PutEv("a", "2.1", 11, 12, 2), histbuild.Kv("a", "1.1", 11, 11, 1)))
			b.Events(w, 35, histbuild.WithPrev(histbuild.PutEv("a", "1.3", 11, 13, 3), histbuild.Kv("a", "2.1", 11, 12, 2)))
		}},
		{Name: "watch/prev-kv - external server, absent with a compaction requested only later - fail", Want: check.Fail, Watch: 1, Rev: 12,
			Key: "a", Msg: "no compaction above revision 11 had been requested", Build: func(b *histbuild.Builder) {
				// Others may compact an external server, but an excuse needs
				// a record of a compaction before the event arrived.
				b.H.Meta.Target.Fixture = "external"
				life(b)
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), StartRevision: 11, PrevKV: true})
				b.Events(w, 54, histbuild.PutEv("a", "1.1", 11, 11, 1))
				b.Events(w, 55, histbuild.PutEv("a", "1.2", 11, 12, 2))
				b.Compact(9, 56, 60, 13, 15, "")
			}},
		{Name: "watch/prev-kv - external server, absent after the server showed a compaction above it - pass", Want: check.Pass,
			Build: func(b *histbuild.Builder) {
				b.H.Meta.Target.Fixture = "external"
				life(b)
				// A read at revision 11 answered ErrCompacted at 52: the
				// compact revision was above 11 by then.
				b.Op(2, 51, 52, history.Request{Kind: history.OpRange, Key: histbuild.K("a"), Revision: 11}, nil, history.ErrCompacted)
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), StartRevision: 11, PrevKV: true})
				b.Events(w, 50, histbuild.PutEv("a", "1.1", 11, 11, 1))
				b.Events(w, 55, histbuild.PutEv("a", "1.2", 11, 12, 2))
			}},
		{Name: "watch/prev-kv - absent for an update with nothing compacted - fail", Want: check.Fail, Watch: 1, Rev: 12, Key: "a",
			Msg: "prev_kv absent, but the key held \"1.1\" (mod revision 11)", Build: func(b *histbuild.Builder) {
				life(b)
				w := b.Watch(1, 9, 0, prevWatch())
				b.Events(w, 5, lifeEvents[0])
				b.Events(w, 15, histbuild.PutEv("a", "1.2", 11, 12, 2))
			}},
		{Name: "watch/prev-kv - stale previous value - fail", Want: check.Fail, Watch: 1, Rev: 13, Key: "a",
			Msg: "but the key held \"1.2\" at mod revision 12", Build: func(b *histbuild.Builder) {
				life(b)
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), StartRevision: 13, PrevKV: true})
				b.Events(w, 25, histbuild.WithPrev(histbuild.DelEv("a", 13), histbuild.Kv("a", "1.1", 11, 11, 1)))
			}},
		{Name: "watch/prev-kv - previous value for a key deleted before - fail", Want: check.Fail, Watch: 1, Rev: 14, Key: "a",
			Msg: "did not exist before the event (deleted at revision 13)", Build: func(b *histbuild.Builder) {
				life(b)
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), StartRevision: 14, PrevKV: true})
				b.Events(w, 35, histbuild.WithPrev(histbuild.PutEv("a", "1.4", 14, 14, 1), histbuild.Kv("a", "1.2", 11, 12, 2)))
			}},
		{Name: "watch/prev-kv - previous value of another key - fail", Want: check.Fail, Watch: 1, Rev: 15, Key: "b",
			Msg: "another key's", Build: func(b *histbuild.Builder) {
				life(b)
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("b"), StartRevision: 15, PrevKV: true})
				b.Events(w, 45, histbuild.WithPrev(histbuild.PutEv("b", "1.5", 15, 15, 1), histbuild.Kv("a", "1.4", 14, 14, 1)))
			}},
		{Name: "watch/prev-kv - previous value at another revision than its write - fail", Want: check.Fail, Watch: 1, Rev: 12,
			Key: "a", Msg: "operation 1 wrote that value at revision 11", Build: func(b *histbuild.Builder) {
				life(b)
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), StartRevision: 12, PrevKV: true})
				b.Events(w, 15, histbuild.WithPrev(histbuild.PutEv("a", "1.2", 11, 12, 2), histbuild.Kv("a", "1.1", 11, 10, 1)))
			}},
		{Name: "watch/prev-kv - no watch asked for prev_kv - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {
			life(b)
			w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Events(w, 5, lifeEvents[0])
		}},
	})
}

func TestWatchIsCreate(t *testing.T) {
	histbuild.RunWatchCases(t, CheckIsCreate, ErrIsCreate, []histbuild.WatchCase{
		{Name: "watch/is-create - create, update, delete and create again - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			life(b)
			w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			for i, e := range lifeEvents {
				b.Events(w, 10*i+5, e)
			}
		}},
		{Name: "watch/is-create - a write of unknown outcome may have deleted the key - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			b.Put(1, 0, 10, "a", "1.1", 11)
			b.DelFail(2, 11, 100, "a")
			b.Put(1, 20, 30, "a", "1.3", 13)
			w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), StartRevision: 13})
			b.Events(w, 35, histbuild.PutEv("a", "1.3", 13, 13, 1))
		}},
		{Name: "watch/is-create - an update reported as a create - fail", Want: check.Fail, Watch: 1, Rev: 12, Key: "a",
			Msg: "as a create (is_create true, create revision 12, version 1), but the key existed before it", Build: func(b *histbuild.Builder) {
				life(b)
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Events(w, 5, lifeEvents[0])
				b.Events(w, 15, histbuild.PutEv("a", "1.2", 12, 12, 1))
			}},
		{Name: "watch/is-create - a create after a delete reported as an update - fail", Want: check.Fail, Watch: 1, Rev: 14, Key: "a",
			Msg: "did not exist before it (deleted at revision 13)", Build: func(b *histbuild.Builder) {
				life(b)
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), StartRevision: 14})
				b.Events(w, 35, histbuild.PutEv("a", "1.4", 11, 14, 3))
			}},
		{Name: "watch/is-create - a DELETE marked as a create - fail", Want: check.Fail, Watch: 1, Rev: 13, Key: "a",
			Msg: "marked as a create", Build: func(b *histbuild.Builder) {
				life(b)
				w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), StartRevision: 13})
				e := histbuild.DelEv("a", 13)
				e.IsCreate = true
				b.Events(w, 25, e)
			}},
		{Name: "watch/is-create - fields that disagree - fail", Want: check.Fail, Watch: 1, Rev: 11, Key: "a",
			Msg: "fields disagree", Build: func(b *histbuild.Builder) {
				life(b)
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				e := histbuild.PutEv("a", "1.1", 11, 11, 1)
				e.KV.Version = 2
				b.Events(w, 5, e)
			}},
		{Name: "watch/is-create - no event though writes it covers came after the watch opened - unknown", Want: check.Unknown,
			Build: func(b *histbuild.Builder) {
				life(b)
				b.Watch(1, 9, 0, histbuild.PrefixWatch())
			}},
		{Name: "watch/is-create - no event, and no write after the watch opened - skipped", Want: check.Skipped,
			Build: func(b *histbuild.Builder) {
				life(b)
				b.Watch(1, 9, 60, histbuild.PrefixWatch())
			}},
		{Name: "watch/is-create - no event, and the writes after it are outside its range - skipped", Want: check.Skipped,
			Build: func(b *histbuild.Builder) {
				life(b)
				b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("z")})
			}},
	})
}

// The first events of a new watch may race its creation in etcd: a missing
// prev_kv there is watch/prev-kv-at-creation's (a warning), not
// watch/prev-kv's.
func TestWatchPrevKVAtCreation(t *testing.T) {
	first := func(b *histbuild.Builder) {
		life(b)
		w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), StartRevision: 12, PrevKV: true})
		b.Events(w, 15, histbuild.PutEv("a", "1.2", 11, 12, 2)) // its first event, prev_kv missing
	}
	later := func(b *histbuild.Builder) {
		life(b)
		w := b.Watch(1, 9, 0, prevWatch())
		b.Events(w, 5, lifeEvents[0])
		b.Events(w, 15, histbuild.PutEv("a", "1.2", 11, 12, 2))
	}
	histbuild.RunWatchCases(t, CheckPrevKVAtCreation, ErrPrevKVAtCreation, []histbuild.WatchCase{
		{Name: "watch/prev-kv-at-creation - missing on the first event of a watch - fail", Want: check.Fail, Watch: 1, Rev: 12, Key: "a",
			Msg: "in its first response with events (response 0) without prev_kv", Build: first},
		{Name: "watch/prev-kv-at-creation - missing later is not this check's - pass", Want: check.Pass, Build: later},
	})
	histbuild.RunWatchCases(t, CheckPrevKV, ErrPrevKV, []histbuild.WatchCase{
		{Name: "watch/prev-kv - missing on the first event is left to prev-kv-at-creation - pass", Want: check.Pass, Build: first},
	})
}

// TestPrevKVExcuses: the figures say what was excused and why, and a pass
// that rests on excuses more than on judged events says so.
func TestPrevKVExcuses(t *testing.T) {
	b := histbuild.New()
	life(b)
	b.Compact(9, 51, 60, 13, 15, "")
	w := b.Watch(1, 9, 0, history.WatchRequest{Key: histbuild.K("a"), StartRevision: 12, PrevKV: true})
	b.Events(w, 70, histbuild.PutEv("a", "1.2", 11, 12, 2)) // prev_kv at 11 compacted: excused
	r := CheckPrevKV(b.H, check.DefaultConfig())
	if r.Verdict != check.Pass || r.Excused["compacted"] != 1 || r.Judged != 0 || !r.MostlyExcused() {
		t.Fatalf("%s judged %d excused %v, want a pass on one compaction excuse, mostly excused", r.Verdict, r.Judged, r.Excused)
	}

	whole := histbuild.New()
	life(whole)
	w = whole.Watch(1, 9, 0, prevWatch())
	for i, e := range lifeEvents {
		whole.Events(w, 10*i+5, e)
	}
	r = CheckPrevKV(whole.H, check.DefaultConfig())
	if r.Verdict != check.Pass || r.Judged != len(lifeEvents) || r.Excuses() != 0 || r.MostlyExcused() {
		t.Fatalf("%s judged %d excused %v, want every event judged", r.Verdict, r.Judged, r.Excused)
	}
}
