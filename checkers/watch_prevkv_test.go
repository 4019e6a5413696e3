package checkers

import (
	"testing"

	"github.com/vigil-suite/vigil/history"
)

// A key's life: a@11 = 1.1, a@12 = 1.2, delete a@13, a@14 = 1.4 (created
// again); b@15 = 1.5. Acknowledged writes, client 1.
func life(b *hb) {
	b.put(1, 0, 10, "a", "1.1", 11)
	b.put(1, 11, 20, "a", "1.2", 12)
	b.del(1, 21, 30, "a", 1, 13)
	b.put(1, 31, 40, "a", "1.4", 14)
	b.put(1, 41, 50, "b", "1.5", 15)
}

var lifeEvents = []history.Event{
	putEv("a", "1.1", 11, 11, 1),
	withPrev(putEv("a", "1.2", 11, 12, 2), kv("a", "1.1", 11, 11, 1)),
	withPrev(delEv("a", 13), kv("a", "1.2", 11, 12, 2)),
	putEv("a", "1.4", 14, 14, 1),
	putEv("b", "1.5", 15, 15, 1),
}

func prevWatch() history.WatchRequest {
	return history.WatchRequest{Key: testPrefix, End: "/p0", PrevKV: true}
}

func TestWatchPrevKV(t *testing.T) {
	runWatchCases(t, CheckWatchPrevKV, ErrWatchPrevKV, []watchCase{
		{name: "watch/prev-kv - previous values through updates, a delete and a re-create - pass", want: Pass, build: func(b *hb) {
			life(b)
			w := b.watch(1, 9, 0, prevWatch())
			for i, e := range lifeEvents {
				b.events(w, 10*i+5, e)
			}
		}},
		{name: "watch/prev-kv - absent where a compaction above it was requested - pass", want: Pass, build: func(b *hb) {
			life(b)
			b.compact(9, 51, 60, 13, 15, "")
			w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), StartRevision: 12, PrevKV: true})
			b.events(w, 70, putEv("a", "1.2", 11, 12, 2)) // its prev_kv at 11 is below the compact revision
		}},
		{name: "watch/prev-kv - a write of unknown outcome no watch saw leaves it undetermined - pass", want: Pass,
			build: func(b *hb) {
				b.put(1, 0, 10, "a", "1.1", 11)
				b.delFail(2, 11, 100, "a") // may have deleted a at 12
				b.put(1, 20, 30, "a", "1.3", 13)
				w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), StartRevision: 13, PrevKV: true})
				b.events(w, 35, putEv("a", "1.3", 13, 13, 1))
			}},
		{name: "watch/prev-kv - a write of unknown outcome a watch saw counts - pass", want: Pass, build: func(b *hb) {
			b.put(1, 0, 10, "a", "1.1", 11)
			b.putFail(2, 11, 100, "a", "2.1")
			b.put(1, 20, 30, "a", "1.3", 13)
			w := b.watch(1, 9, 0, prevWatch())
			b.events(w, 15, putEv("a", "1.1", 11, 11, 1))
			b.events(w, 25, withPrev(putEv("a", "2.1", 11, 12, 2), kv("a", "1.1", 11, 11, 1)))
			b.events(w, 35, withPrev(putEv("a", "1.3", 11, 13, 3), kv("a", "2.1", 11, 12, 2)))
		}},
		{name: "watch/prev-kv - external server, absent with a compaction requested only later - fail", want: Fail, watch: 1, rev: 12,
			key: "a", msg: "no compaction above revision 11 had been requested", build: func(b *hb) {
				// Others may compact an external server, but an excuse needs
				// a record of a compaction before the event arrived.
				b.h.Meta.Target.Fixture = "external"
				life(b)
				w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), StartRevision: 11, PrevKV: true})
				b.events(w, 54, putEv("a", "1.1", 11, 11, 1))
				b.events(w, 55, putEv("a", "1.2", 11, 12, 2))
				b.compact(9, 56, 60, 13, 15, "")
			}},
		{name: "watch/prev-kv - external server, absent after the server showed a compaction above it - pass", want: Pass,
			build: func(b *hb) {
				b.h.Meta.Target.Fixture = "external"
				life(b)
				// A read at revision 11 answered ErrCompacted at 52: the
				// compact revision was above 11 by then.
				b.op(2, 51, 52, history.Request{Kind: history.OpRange, Key: k("a"), Revision: 11}, nil, history.ErrCompacted)
				w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), StartRevision: 11, PrevKV: true})
				b.events(w, 50, putEv("a", "1.1", 11, 11, 1))
				b.events(w, 55, putEv("a", "1.2", 11, 12, 2))
			}},
		{name: "watch/prev-kv - absent for an update with nothing compacted - fail", want: Fail, watch: 1, rev: 12, key: "a",
			msg: "prev_kv absent, but the key held \"1.1\" (mod revision 11)", build: func(b *hb) {
				life(b)
				w := b.watch(1, 9, 0, prevWatch())
				b.events(w, 5, lifeEvents[0])
				b.events(w, 15, putEv("a", "1.2", 11, 12, 2))
			}},
		{name: "watch/prev-kv - stale previous value - fail", want: Fail, watch: 1, rev: 13, key: "a",
			msg: "but the key held \"1.2\" at mod revision 12", build: func(b *hb) {
				life(b)
				w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), StartRevision: 13, PrevKV: true})
				b.events(w, 25, withPrev(delEv("a", 13), kv("a", "1.1", 11, 11, 1)))
			}},
		{name: "watch/prev-kv - previous value for a key deleted before - fail", want: Fail, watch: 1, rev: 14, key: "a",
			msg: "did not exist before the event (deleted at revision 13)", build: func(b *hb) {
				life(b)
				w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), StartRevision: 14, PrevKV: true})
				b.events(w, 35, withPrev(putEv("a", "1.4", 14, 14, 1), kv("a", "1.2", 11, 12, 2)))
			}},
		{name: "watch/prev-kv - previous value of another key - fail", want: Fail, watch: 1, rev: 15, key: "b",
			msg: "another key's", build: func(b *hb) {
				life(b)
				w := b.watch(1, 9, 0, history.WatchRequest{Key: k("b"), StartRevision: 15, PrevKV: true})
				b.events(w, 45, withPrev(putEv("b", "1.5", 15, 15, 1), kv("a", "1.4", 14, 14, 1)))
			}},
		{name: "watch/prev-kv - previous value at another revision than its write - fail", want: Fail, watch: 1, rev: 12,
			key: "a", msg: "operation 1 wrote that value at revision 11", build: func(b *hb) {
				life(b)
				w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), StartRevision: 12, PrevKV: true})
				b.events(w, 15, withPrev(putEv("a", "1.2", 11, 12, 2), kv("a", "1.1", 11, 10, 1)))
			}},
		{name: "watch/prev-kv - no watch asked for prev_kv - skipped", want: Skipped, build: func(b *hb) {
			life(b)
			w := b.watch(1, 9, 0, prefixWatch())
			b.events(w, 5, lifeEvents[0])
		}},
	})
}

func TestWatchIsCreate(t *testing.T) {
	runWatchCases(t, CheckWatchIsCreate, ErrWatchIsCreate, []watchCase{
		{name: "watch/is-create - create, update, delete and create again - pass", want: Pass, build: func(b *hb) {
			life(b)
			w := b.watch(1, 9, 0, prefixWatch())
			for i, e := range lifeEvents {
				b.events(w, 10*i+5, e)
			}
		}},
		{name: "watch/is-create - a write of unknown outcome may have deleted the key - pass", want: Pass, build: func(b *hb) {
			b.put(1, 0, 10, "a", "1.1", 11)
			b.delFail(2, 11, 100, "a")
			b.put(1, 20, 30, "a", "1.3", 13)
			w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), StartRevision: 13})
			b.events(w, 35, putEv("a", "1.3", 13, 13, 1))
		}},
		{name: "watch/is-create - an update reported as a create - fail", want: Fail, watch: 1, rev: 12, key: "a",
			msg: "as a create (is_create true, create revision 12, version 1), but the key existed before it", build: func(b *hb) {
				life(b)
				w := b.watch(1, 9, 0, prefixWatch())
				b.events(w, 5, lifeEvents[0])
				b.events(w, 15, putEv("a", "1.2", 12, 12, 1))
			}},
		{name: "watch/is-create - a create after a delete reported as an update - fail", want: Fail, watch: 1, rev: 14, key: "a",
			msg: "did not exist before it (deleted at revision 13)", build: func(b *hb) {
				life(b)
				w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), StartRevision: 14})
				b.events(w, 35, putEv("a", "1.4", 11, 14, 3))
			}},
		{name: "watch/is-create - a DELETE marked as a create - fail", want: Fail, watch: 1, rev: 13, key: "a",
			msg: "marked as a create", build: func(b *hb) {
				life(b)
				w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), StartRevision: 13})
				e := delEv("a", 13)
				e.IsCreate = true
				b.events(w, 25, e)
			}},
		{name: "watch/is-create - fields that disagree - fail", want: Fail, watch: 1, rev: 11, key: "a",
			msg: "fields disagree", build: func(b *hb) {
				life(b)
				w := b.watch(1, 9, 0, prefixWatch())
				e := putEv("a", "1.1", 11, 11, 1)
				e.KV.Version = 2
				b.events(w, 5, e)
			}},
		{name: "watch/is-create - no event - skipped", want: Skipped, build: func(b *hb) {
			life(b)
			b.watch(1, 9, 0, prefixWatch())
		}},
	})
}

// The first events of a new watch may race its creation in etcd: a missing
// prev_kv there is watch/prev-kv-at-creation's (a warning), not
// watch/prev-kv's.
func TestWatchPrevKVAtCreation(t *testing.T) {
	first := func(b *hb) {
		life(b)
		w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a"), StartRevision: 12, PrevKV: true})
		b.events(w, 15, putEv("a", "1.2", 11, 12, 2)) // its first event, prev_kv missing
	}
	later := func(b *hb) {
		life(b)
		w := b.watch(1, 9, 0, prevWatch())
		b.events(w, 5, lifeEvents[0])
		b.events(w, 15, putEv("a", "1.2", 11, 12, 2))
	}
	runWatchCases(t, CheckWatchPrevKVAtCreation, ErrWatchPrevKVAtCreation, []watchCase{
		{name: "watch/prev-kv-at-creation - missing on the first event of a watch - fail", want: Fail, watch: 1, rev: 12, key: "a",
			msg: "in its first response with events (response 0) without prev_kv", build: first},
		{name: "watch/prev-kv-at-creation - missing later is not this check's - pass", want: Pass, build: later},
	})
	runWatchCases(t, CheckWatchPrevKV, ErrWatchPrevKV, []watchCase{
		{name: "watch/prev-kv - missing on the first event is left to prev-kv-at-creation - pass", want: Pass, build: first},
	})
}
