package checkers

import (
	"errors"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/history"
)

// watchCase is one hand-built history judged by one check.
type watchCase struct {
	name  string
	build func(b *hb)
	want  Verdict
	// On fail: the first violation names this watch and revision (and key
	// when set), and its message holds msg.
	watch int64
	rev   int64
	key   string
	msg   string
}

func runWatchCases(t *testing.T, run func(*history.History, Config) Result, sentinel error, cases []watchCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newHB()
			c.build(b)
			r := run(b.h, DefaultConfig())
			if r.Verdict != c.want {
				t.Fatalf("verdict %s (%s), want %s; violations %+v", r.Verdict, r.Reason, c.want, r.Violations)
			}
			if c.want != Fail {
				return
			}
			v := r.Violations[0]
			if !errors.Is(v, sentinel) {
				t.Errorf("violation does not wrap %v", sentinel)
			}
			if v.Watch != c.watch || v.Revision != c.rev || (c.key != "" && v.Key != k(c.key)) {
				t.Errorf("violation names watch %d revision %d key %s, want %d %d %s: %s",
					v.Watch, v.Revision, v.Key, c.watch, c.rev, c.key, v.Message)
			}
			if !strings.Contains(v.Message, c.msg) {
				t.Errorf("message %q lacks %q", v.Message, c.msg)
			}
		})
	}
}

func TestWatchOrdered(t *testing.T) {
	runWatchCases(t, CheckWatchOrdered, ErrWatchOrdered, []watchCase{
		{name: "watch/ordered - increasing revisions across responses - pass", want: Pass, build: func(b *hb) {
			w := b.watch(1, 1, 0, prefixWatch())
			b.events(w, 10, putEv("a", "v1", 11, 11, 1), putEv("b", "w1", 12, 12, 1))
			b.events(w, 20, putEv("a", "v2", 11, 13, 2))
		}},
		{name: "watch/ordered - one txn's events share a revision - pass", want: Pass, build: func(b *hb) {
			w := b.watch(1, 1, 0, prefixWatch())
			b.events(w, 10, putEv("a", "v1", 11, 11, 1), putEv("b", "w1", 11, 11, 1))
		}},
		{name: "watch/ordered - reordered event - fail", want: Fail, watch: 2, rev: 12, key: "b", msg: "after PUT", build: func(b *hb) {
			b.watch(1, 1, 0, prefixWatch())
			w := b.watch(2, 1, 0, prefixWatch())
			b.events(w, 10, putEv("a", "v1", 11, 11, 1))
			b.events(w, 20, putEv("a", "v2", 11, 13, 2))
			b.events(w, 30, putEv("b", "w1", 12, 12, 1))
		}},
		{name: "watch/ordered - no event - skipped", want: Skipped, build: func(b *hb) {
			b.watch(1, 1, 0, prefixWatch())
		}},
	})
}

func TestWatchUnique(t *testing.T) {
	runWatchCases(t, CheckWatchUnique, ErrWatchUnique, []watchCase{
		{name: "watch/unique - same key at different revisions, keys at one revision - pass", want: Pass, build: func(b *hb) {
			w := b.watch(1, 1, 0, prefixWatch())
			b.events(w, 10, putEv("a", "v1", 11, 11, 1), putEv("b", "w1", 11, 11, 1))
			b.events(w, 20, putEv("a", "v2", 11, 12, 2))
		}},
		{name: "watch/unique - same change on two watches - pass", want: Pass, build: func(b *hb) {
			b.watch(1, 1, 0, prefixWatch())
			b.watch(2, 1, 0, prefixWatch())
			b.events(1, 10, putEv("a", "v1", 11, 11, 1))
			b.events(2, 10, putEv("a", "v1", 11, 11, 1))
		}},
		{name: "watch/unique - duplicated event - fail", want: Fail, watch: 1, rev: 11, key: "a", msg: "twice", build: func(b *hb) {
			w := b.watch(1, 1, 0, prefixWatch())
			b.events(w, 10, putEv("a", "v1", 11, 11, 1))
			b.events(w, 20, putEv("b", "w1", 12, 12, 1))
			b.events(w, 30, putEv("a", "v1", 11, 11, 1))
		}},
	})
}

func TestWatchReliable(t *testing.T) {
	// writes: a@11, b@12, a@13 (delete), b@14; final write at 14.
	writes := func(b *hb) {
		b.put(1, 0, 10, "a", "v1", 11)
		b.put(1, 20, 30, "b", "w1", 12)
		b.del(1, 40, 50, "a", 1, 13)
		id := b.put(1, 60, 70, "b", "w2", 14)
		b.mark(history.MarkFinalWrite, 75, id, 14)
	}
	all := []history.Event{putEv("a", "v1", 11, 11, 1), putEv("b", "w1", 12, 12, 1), delEv("a", 13), putEv("b", "w2", 12, 14, 2)}
	runWatchCases(t, CheckWatchReliable, ErrWatchReliable, []watchCase{
		{name: "watch/reliable - every change delivered - pass", want: Pass, build: func(b *hb) {
			writes(b)
			w := b.watch(1, 9, 0, prefixWatch())
			b.created(w, 1, 10)
			b.events(w, 15, all[0])
			b.events(w, 35, all[1])
			b.events(w, 55, all[2], all[3])
			b.end(w, 90, history.EndClient)
		}},
		{name: "watch/reliable - missing event - fail", want: Fail, watch: 1, rev: 12, key: "b", msg: "committed by operation 2",
			build: func(b *hb) {
				writes(b)
				w := b.watch(1, 9, 0, prefixWatch())
				b.events(w, 15, all[0])
				b.events(w, 55, all[2], all[3])
				b.end(w, 90, history.EndClient)
			}},
		{name: "watch/reliable - failed write not delivered, filters and single key respected - pass", want: Pass,
			build: func(b *hb) {
				writes(b)
				b.putFail(2, 80, 85, "a", "v9")
				w := b.watch(1, 9, 0, history.WatchRequest{Key: testPrefix, End: "/p0", NoDelete: true})
				b.events(w, 15, all[0])
				b.events(w, 35, all[1])
				b.events(w, 55, all[3])
				b.end(w, 90, history.EndClient)
				w2 := b.watch(2, 9, 0, history.WatchRequest{Key: k("b")})
				b.events(w2, 35, all[1])
				b.events(w2, 55, all[3])
				b.end(w2, 90, history.EndClient)
			}},
		{name: "watch/reliable - watch resumed after an error - pass", want: Pass, build: func(b *hb) {
			writes(b)
			w := b.watch(1, 9, 0, prefixWatch())
			b.events(w, 15, all[0])
			b.events(w, 35, all[1])
			b.end(w, 38, history.EndError)
			b.h.Add(history.Record{Watch: &history.Watch{ID: 2, Client: 9, Call: 39, Resumes: 1,
				Request: history.WatchRequest{Key: testPrefix, End: "/p0", StartRevision: 13}}})
			b.events(2, 55, all[2], all[3])
			b.end(2, 90, history.EndClient)
		}},
		{name: "watch/reliable - progress notification vouches for a missed change - fail", want: Fail, watch: 1, rev: 13,
			key: "a", msg: "DELETE", build: func(b *hb) {
				writes(b)
				w := b.watch(1, 9, 0, history.WatchRequest{Key: k("a")})
				b.events(w, 15, all[0])
				b.progress(w, 56, 14)
				b.end(w, 90, history.EndClient)
			}},
		{name: "watch/reliable - watch open at the final write stalled - fail", want: Fail, watch: 1, rev: 13, key: "a",
			msg: "final write", build: func(b *hb) {
				writes(b)
				w := b.watch(1, 9, 0, prefixWatch())
				b.events(w, 15, all[0])
				b.events(w, 35, all[1])
				b.end(w, 90, history.EndClient)
			}},
		{name: "watch/reliable - watch closed by the client after the final write and resumed elsewhere - pass", want: Pass,
			build: func(b *hb) {
				writes(b)
				w := b.watch(1, 9, 0, prefixWatch())
				b.events(w, 15, all[0])
				b.events(w, 35, all[1])
				b.end(w, 80, history.EndClient)
				b.h.Add(history.Record{Watch: &history.Watch{ID: 2, Client: 9, Call: 81, Resumes: 1,
					Request: history.WatchRequest{Key: testPrefix, End: "/p0", StartRevision: 13}}})
				b.events(2, 85, all[2], all[3])
				b.end(2, 90, history.EndClient)
			}},
		{name: "watch/reliable - watch closed by the client after the final write, resumed, but missed a change before - fail", want: Fail,
			watch: 1, rev: 12, key: "b", msg: "committed by operation 2", build: func(b *hb) {
				writes(b)
				w := b.watch(1, 9, 0, prefixWatch())
				b.events(w, 15, all[0])
				b.events(w, 55, all[2])
				b.end(w, 80, history.EndClient)
				b.h.Add(history.Record{Watch: &history.Watch{ID: 2, Client: 9, Call: 81, Resumes: 1,
					Request: history.WatchRequest{Key: testPrefix, End: "/p0", StartRevision: 14}}})
				b.events(2, 85, all[3])
				b.end(2, 90, history.EndClient)
			}},
		{name: "watch/reliable - watch open at the final write observed nothing - fail", want: Fail, watch: 1, rev: 11, key: "a",
			msg: "no event at all", build: func(b *hb) {
				writes(b)
				w := b.watch(1, 9, 0, prefixWatch())
				b.created(w, 1, 10)
			}},
		{name: "watch/reliable - watch canceled by the server before reaching the final write - pass", want: Pass,
			build: func(b *hb) {
				writes(b)
				w := b.watch(1, 9, 0, prefixWatch())
				b.events(w, 15, all[0])
				b.wresp(history.WatchResponse{Watch: w, Time: 80, Canceled: true, CancelReason: "leader lost"})
				b.end(w, 80, history.EndServer)
			}},
		{name: "watch/reliable - a committed change delivered with another value - fail", want: Fail, watch: 1, rev: 12,
			key: "b", msg: "delivered PUT b = \"9.9\" at revision 12 (response 1), but operation 2 committed PUT b = \"w1\"",
			build: func(b *hb) {
				writes(b)
				w := b.watch(1, 9, 0, prefixWatch())
				b.events(w, 15, all[0])
				b.events(w, 35, putEv("b", "9.9", 12, 12, 1))
				b.events(w, 55, all[2], all[3])
			}},
		{name: "watch/reliable - progress notification below the start revision vouches for nothing before it - pass", want: Pass,
			build: func(b *hb) {
				writes(b)
				w := b.watch(1, 9, 0, history.WatchRequest{Key: testPrefix, End: "/p0", StartRevision: 14})
				b.progress(w, 12, 10)
				b.events(w, 65, all[3])
				b.end(w, 90, history.EndClient)
			}},
		{name: "watch/reliable - watch from its start revision misses the change there - fail", want: Fail, watch: 1, rev: 13, key: "a",
			msg: "DELETE", build: func(b *hb) {
				writes(b)
				w := b.watch(1, 9, 0, history.WatchRequest{Key: testPrefix, End: "/p0", StartRevision: 13})
				b.progress(w, 12, 10)
				b.events(w, 65, all[3])
				b.end(w, 90, history.EndClient)
			}},
		{name: "watch/reliable - no watch - skipped", want: Skipped, build: writes},
	})
}

func TestWatchLiveness(t *testing.T) {
	writes := func(b *hb) {
		b.put(1, 0, 10, "a", "v1", 11)
		id := b.put(1, 20, 30, "a", "v2", 12)
		b.mark(history.MarkFinalWrite, 35, id, 12)
	}
	e1, e2 := putEv("a", "v1", 11, 11, 1), putEv("a", "v2", 11, 12, 2)
	runWatchCases(t, CheckWatchLiveness, ErrWatchLiveness, []watchCase{
		{name: "watch/liveness - watch reached the final write - pass", want: Pass, build: func(b *hb) {
			writes(b)
			w := b.watch(1, 9, 0, prefixWatch())
			b.events(w, 15, e1)
			b.events(w, 40, e2)
			b.end(w, 50, history.EndClient)
		}},
		{name: "watch/liveness - watch on another key reached it by progress - pass", want: Pass, build: func(b *hb) {
			writes(b)
			w := b.watch(1, 9, 0, history.WatchRequest{Key: k("z"), ProgressNotify: true})
			b.progress(w, 40, 12)
			b.end(w, 50, history.EndClient)
		}},
		{name: "watch/liveness - broken watch resumed and the resumption reached it - pass", want: Pass, build: func(b *hb) {
			writes(b)
			w := b.watch(1, 9, 0, prefixWatch())
			b.events(w, 15, e1)
			b.end(w, 38, history.EndError)
			b.h.Add(history.Record{Watch: &history.Watch{ID: 2, Client: 9, Call: 39, Resumes: 1,
				Request: history.WatchRequest{Key: testPrefix, End: "/p0", StartRevision: 12}}})
			b.events(2, 45, e2)
			b.end(2, 50, history.EndClient)
		}},
		{name: "watch/liveness - watch open at the final write never reached it - fail", want: Fail, watch: 1, rev: 12,
			msg: "reached only revision 11", build: func(b *hb) {
				writes(b)
				w := b.watch(1, 9, 0, prefixWatch())
				b.events(w, 15, e1)
				b.end(w, 50, history.EndClient)
			}},
		{name: "watch/liveness - no final-write mark - skipped", want: Skipped, build: func(b *hb) {
			b.put(1, 0, 10, "a", "v1", 11)
			w := b.watch(1, 9, 0, prefixWatch())
			b.events(w, 15, e1)
		}},
	})
}

func TestRunAll(t *testing.T) {
	h := generate(genConfig{ops: 2000, clients: 10, keys: 8, watches: 3, seed: 11})
	rs := Run(h, DefaultConfig())
	if len(rs) != len(All()) {
		t.Fatalf("%d results for %d checks", len(rs), len(All()))
	}
	// The generated history may have nothing for some checks to judge (no
	// serializable read, Status or HashKV, start revision, progress
	// notification or prev_kv): those may skip. watch_gen_test.go covers
	// them.
	mayskip := map[string]bool{NameKVSerializableSane: true, NameKVConvergence: true, NameWatchAtomic: true,
		NameWatchResumable: true, NameWatchBookmarkable: true, NameWatchPrevKV: true,
		NameWatchPrevKVAtCreation: true, NameWatchProgressBeforeStart: true}
	for i, r := range rs {
		ok := r.Verdict == Pass || r.Verdict == Skipped && mayskip[r.Name]
		if r.Name != All()[i].Name || !ok {
			t.Errorf("%s: %s %s %+v", r.Name, r.Verdict, r.Reason, r.Violations)
		}
	}
	if Overall(rs) != Pass {
		t.Errorf("overall %s", Overall(rs))
	}
}

func TestRunCheckPanicIsUnknown(t *testing.T) {
	r := RunCheck(Check{Name: "x", Run: func(*history.History, Config) Result { panic("boom") }}, newHB().h, DefaultConfig())
	if r.Verdict != Unknown || !strings.Contains(r.Reason, "boom") {
		t.Fatalf("%+v", r)
	}
}

func TestRunEmptyHistoryIsSkippedNotPassed(t *testing.T) {
	for _, r := range Run(newHB().h, DefaultConfig()) {
		if r.Verdict != Skipped || r.Reason == "" {
			t.Errorf("%s: %s (%q), want skipped with a reason", r.Name, r.Verdict, r.Reason)
		}
	}
}
