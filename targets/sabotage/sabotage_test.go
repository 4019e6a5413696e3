package sabotage

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// fake is a scripted inner client: a tiny single-copy store for Do, and
// one scripted message list per Watch call.
type fake struct {
	mu      sync.Mutex
	rev     int64
	kvs     map[string]history.KV
	scripts [][]targets.WatchMessage
	watched []history.WatchRequest
	sent    []history.Request // every request Do was given
}

func newFake(scripts ...[]targets.WatchMessage) *fake {
	return &fake{rev: 100, kvs: map[string]history.KV{}, scripts: scripts}
}

func (f *fake) Member() string                        { return "m1" }
func (f *fake) Close() error                          { return nil }
func (f *fake) RequestProgress(context.Context) error { return nil }
func (f *fake) Lease(context.Context, targets.LeaseRequest) (targets.LeaseAnswer, error) {
	return targets.LeaseAnswer{}, nil
}

func (f *fake) Do(_ context.Context, req history.Request) (*history.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, req)
	switch req.Kind {
	case history.OpPut:
		f.rev++
		kv := f.kvs[req.Key]
		if kv.Version == 0 {
			kv.CreateRevision = f.rev
		}
		kv.Key, kv.Value, kv.ModRevision = req.Key, req.Value, f.rev
		kv.Version++
		f.kvs[req.Key] = kv
		return &history.Response{Revision: f.rev, MemberID: 7, RaftTerm: 2}, nil
	case history.OpRange:
		resp := &history.Response{Revision: f.rev, MemberID: 7, RaftTerm: 2}
		if kv, ok := f.kvs[req.Key]; ok {
			resp.KVs, resp.Count = []history.KV{kv}, 1
		}
		return resp, nil
	}
	return nil, fmt.Errorf("fake: %s not scripted", req.Kind)
}

func (f *fake) Watch(ctx context.Context, req history.WatchRequest) <-chan targets.WatchMessage {
	f.mu.Lock()
	f.watched = append(f.watched, req)
	var script []targets.WatchMessage
	if len(f.scripts) > 0 {
		script, f.scripts = f.scripts[0], f.scripts[1:]
	}
	f.mu.Unlock()
	ch := make(chan targets.WatchMessage, len(script))
	for _, m := range script {
		ch <- m
	}
	close(ch)
	return ch
}

// script builds a watch script: a created response, then n responses of
// key a at revisions 11, 12, ...; every other one is a txn that also puts
// key b at the same revision. Every put carries its prev_kv; versions grow.
func script(n int) []targets.WatchMessage {
	out := []targets.WatchMessage{{Response: history.WatchResponse{Revision: 10, Created: true}}}
	ver := map[string]int64{"a": 3, "b": 3}
	val := map[string]string{"a": "a.0", "b": "b.0"}
	put := func(key string, rev int64) history.Event {
		prev := history.KV{Key: key, Value: val[key], CreateRevision: 1, ModRevision: rev - 1, Version: ver[key]}
		ver[key]++
		val[key] = fmt.Sprintf("%s.%d", key, rev)
		return history.Event{Type: history.EventPut, PrevKV: &prev,
			KV: history.KV{Key: key, Value: val[key], CreateRevision: 1, ModRevision: rev, Version: ver[key]}}
	}
	for i := 0; i < n; i++ {
		rev := int64(11 + i)
		evs := []history.Event{put("a", rev)}
		if i%2 == 1 {
			evs = append(evs, put("b", rev))
		}
		out = append(out, targets.WatchMessage{Response: history.WatchResponse{Revision: rev, Events: evs}})
	}
	return out
}

func newSaboteur(t *testing.T, mode string, seed int64) (*Saboteur, *history.Recorder) {
	t.Helper()
	rec := history.NewRecorder(history.Meta{}, history.NewClock(), nil)
	s, err := New(Config{Mode: mode, Seed: seed, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	return s, rec
}

func drain(ch <-chan targets.WatchMessage) []targets.WatchMessage {
	var out []targets.WatchMessage
	for m := range ch {
		out = append(out, m)
	}
	return out
}

// watchThrough runs one watch per script through a saboteur of mode and
// returns what came out of each and the one fault it recorded.
func watchThrough(t *testing.T, mode string, seed int64, req history.WatchRequest, scripts ...[]targets.WatchMessage) ([][]targets.WatchMessage, history.Fault) {
	t.Helper()
	s, rec := newSaboteur(t, mode, seed)
	c := s.Wrap(newFake(scripts...), 42)
	var outs [][]targets.WatchMessage
	for range scripts {
		outs = append(outs, drain(c.Watch(context.Background(), req)))
	}
	return outs, onlyFault(t, rec, mode)
}

func onlyFault(t *testing.T, rec *history.Recorder, mode string) history.Fault {
	t.Helper()
	fs := rec.History().Faults
	if len(fs) != 1 {
		t.Fatalf("%d faults recorded, want exactly 1: %+v", len(fs), fs)
	}
	f := fs[0]
	if f.Name != "sabotage:"+mode || f.Details["client"] != "42" || f.Details["what"] == "" || f.End < f.Start {
		t.Fatalf("bad fault record: %+v", f)
	}
	return f
}

type revKey struct {
	rev int64
	key string
}

func events(ms []targets.WatchMessage) []history.Event {
	var out []history.Event
	for _, m := range ms {
		out = append(out, m.Response.Events...)
	}
	return out
}

func detailRev(t *testing.T, f history.Fault) int64 {
	t.Helper()
	r, err := strconv.ParseInt(f.Details["revision"], 10, 64)
	if err != nil {
		t.Fatalf("fault revision %q: %v", f.Details["revision"], err)
	}
	return r
}

var seeds = []int64{1, 2, 3, 4, 5, 6, 7, 8}

func TestModesTable(t *testing.T) {
	ms := Modes()
	if len(ms) != 25 || len(NamesFor(TargetEtcd)) != 18 || len(NamesFor(TargetKube)) != 7 {
		t.Fatalf("%d modes (%d etcd, %d kube), want 18 etcd and 7 kube", len(ms), len(NamesFor(TargetEtcd)), len(NamesFor(TargetKube)))
	}
	for i, m := range ms {
		if m.Name == "" || m.Check == "" || m.Description == "" {
			t.Errorf("incomplete mode %+v", m)
		}
		if i > 0 && ms[i-1].Name >= m.Name {
			t.Errorf("modes not sorted: %s before %s", ms[i-1].Name, m.Name)
		}
		if _, ok := Lookup(m.Name); !ok {
			t.Errorf("Lookup(%q) fails", m.Name)
		}
	}
	if _, err := New(Config{Mode: "nope", Recorder: history.NewRecorder(history.Meta{}, history.NewClock(), nil)}); err == nil {
		t.Error("an unknown mode was accepted")
	}
}

func TestArmingIsSeeded(t *testing.T) {
	rec := history.NewRecorder(history.Meta{}, history.NewClock(), nil)
	at := func(seed int64) time.Duration {
		s, err := New(Config{Mode: "drop-event", Seed: seed, Recorder: rec, Duration: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return s.ArmAt()
	}
	if at(3) != at(3) {
		t.Error("the same seed arms at different times")
	}
	differ := false
	for seed := int64(1); seed < 20; seed++ {
		a := at(seed)
		if a < 2*time.Second || a > 6*time.Second {
			t.Errorf("seed %d arms at %s, outside 20%%..60%% of the run", seed, a)
		}
		differ = differ || a != at(1)
	}
	if !differ {
		t.Error("every seed arms at the same time")
	}
}

func TestDropEvent(t *testing.T) {
	for _, seed := range seeds {
		in := script(8)
		outs, f := watchThrough(t, "drop-event", seed, history.WatchRequest{Key: "a", End: "c"}, in)
		got, want := events(outs[0]), events(in)
		if len(got) != len(want)-1 {
			t.Fatalf("seed %d: %d events out of %d, want one fewer", seed, len(got), len(want))
		}
		seen := map[revKey]bool{}
		for _, ev := range got {
			seen[revKey{ev.Revision(), ev.KV.Key}] = true
		}
		dropped := revKey{detailRev(t, f), f.Details["key"]}
		if seen[dropped] {
			t.Fatalf("seed %d: the fault names %v, which was delivered", seed, dropped)
		}
		first, last := want[0], want[len(want)-1]
		if dropped == (revKey{first.Revision(), first.KV.Key}) || dropped == (revKey{last.Revision(), last.KV.Key}) {
			t.Fatalf("seed %d: dropped the first or last event %v", seed, dropped)
		}
	}
}

func TestDropEventNeverTheLast(t *testing.T) {
	// Two single-event responses: the second may be dropped only if
	// something follows, and nothing does, so nothing is dropped.
	for _, seed := range seeds {
		s, rec := newSaboteur(t, "drop-event", seed)
		in := []targets.WatchMessage{
			{Response: history.WatchResponse{Revision: 11, Events: []history.Event{{Type: history.EventPut, KV: history.KV{Key: "a", ModRevision: 11}}}}},
			{Response: history.WatchResponse{Revision: 12, Events: []history.Event{{Type: history.EventPut, KV: history.KV{Key: "a", ModRevision: 12}}}}},
		}
		out := drain(s.Wrap(newFake(in), 1).Watch(context.Background(), history.WatchRequest{Key: "a"}))
		if len(events(out)) != 2 || len(rec.History().Faults) != 0 {
			t.Fatalf("seed %d: dropped the last event the watch saw: %+v", seed, out)
		}
	}
}

func TestDuplicateEvent(t *testing.T) {
	for _, seed := range seeds {
		in := script(6)
		outs, f := watchThrough(t, "duplicate-event", seed, history.WatchRequest{Key: "a", End: "c"}, in)
		got := events(outs[0])
		if len(got) != len(events(in))+1 {
			t.Fatalf("seed %d: %d events, want one more than %d", seed, len(got), len(events(in)))
		}
		n := 0
		for i := 1; i < len(got); i++ {
			if got[i].Revision() < got[i-1].Revision() {
				t.Fatalf("seed %d: the copy breaks the order", seed)
			}
			if got[i].Revision() == got[i-1].Revision() && got[i].KV.Key == got[i-1].KV.Key {
				n++
				if got[i].KV.Key != f.Details["key"] || got[i].Revision() != detailRev(t, f) {
					t.Fatalf("seed %d: duplicated %s@%d, the fault says %v", seed, got[i].KV.Key, got[i].Revision(), f.Details)
				}
			}
		}
		if n != 1 {
			t.Fatalf("seed %d: %d repeats, want 1", seed, n)
		}
	}
}

func TestReorderEvents(t *testing.T) {
	for _, seed := range seeds {
		in := script(8)
		outs, f := watchThrough(t, "reorder-events", seed, history.WatchRequest{Key: "a", End: "c"}, in)
		got := events(outs[0])
		if len(got) != len(events(in)) {
			t.Fatalf("seed %d: %d events, want %d", seed, len(got), len(events(in)))
		}
		drops := 0
		for i := 1; i < len(got); i++ {
			if got[i].Revision() < got[i-1].Revision() {
				drops++
				if got[i].Revision() != detailRev(t, f) || got[i].KV.Key != f.Details["key"] {
					t.Fatalf("seed %d: late event %s@%d, the fault says %v", seed, got[i].KV.Key, got[i].Revision(), f.Details)
				}
			}
		}
		if drops != 1 {
			t.Fatalf("seed %d: revision drops %d times, want once", seed, drops)
		}
	}
}

func TestReorderEventsGivesUpAtTheEnd(t *testing.T) {
	s, rec := newSaboteur(t, "reorder-events", 1)
	in := []targets.WatchMessage{{Response: history.WatchResponse{Revision: 11,
		Events: []history.Event{{Type: history.EventPut, KV: history.KV{Key: "a", ModRevision: 11}}}}}}
	for range 3 {
		out := drain(s.Wrap(newFake(in), 1).Watch(context.Background(), history.WatchRequest{Key: "a"}))
		if len(events(out)) != 1 {
			t.Fatalf("a held response was lost: %+v", out)
		}
	}
	if len(rec.History().Faults) != 0 {
		t.Fatal("recorded a reorder that never happened")
	}
}

func TestSplitRevision(t *testing.T) {
	for _, seed := range seeds {
		in := script(8)
		outs, f := watchThrough(t, "split-revision", seed, history.WatchRequest{Key: "a", End: "c"}, in)
		out := outs[0]
		if len(events(out)) != len(events(in)) || len(out) != len(in)+1 {
			t.Fatalf("seed %d: %d responses with %d events, want %d with %d", seed, len(out), len(events(out)), len(in)+1, len(events(in)))
		}
		rev := detailRev(t, f)
		carriers := 0
		for _, m := range out {
			for _, ev := range m.Response.Events {
				if ev.Revision() == rev {
					carriers++
					break
				}
			}
		}
		if carriers != 2 {
			t.Fatalf("seed %d: revision %d arrived in %d responses, want 2", seed, rev, carriers)
		}
	}
}

func TestFutureProgress(t *testing.T) {
	for _, seed := range seeds {
		in := script(6)
		outs, f := watchThrough(t, "future-progress", seed, history.WatchRequest{Key: "a", End: "c", ProgressNotify: true}, in)
		var progress int64 = -1
		late := false
		for _, m := range outs[0] {
			if m.Response.Progress {
				progress = m.Response.Revision
				continue
			}
			for _, ev := range m.Response.Events {
				if progress >= 0 && ev.Revision() <= progress {
					late = true
				}
			}
		}
		if !late || progress < detailRev(t, f) {
			t.Fatalf("seed %d: no event at or below the progress notification %d (fault %v)", seed, progress, f.Details)
		}
	}
}

func TestWrongPrevKV(t *testing.T) {
	for _, seed := range seeds {
		in := script(6)
		outs, f := watchThrough(t, "wrong-prev-kv", seed, history.WatchRequest{Key: "a", End: "c", PrevKV: true}, in)
		got, want := events(outs[0]), events(in)
		diff := 0
		for i := range got {
			if *got[i].PrevKV != *want[i].PrevKV {
				diff++
				if got[i].PrevKV.Value != f.Details["value"] || got[i].Revision() != detailRev(t, f) {
					t.Fatalf("seed %d: altered %+v, the fault says %v", seed, got[i], f.Details)
				}
			}
		}
		if diff != 1 {
			t.Fatalf("seed %d: %d prev_kvs altered, want 1", seed, diff)
		}
	}
}

func TestWrongPrevKVNeedsPrevKVWatch(t *testing.T) {
	s, rec := newSaboteur(t, "wrong-prev-kv", 1)
	drain(s.Wrap(newFake(script(6)), 1).Watch(context.Background(), history.WatchRequest{Key: "a", End: "c"}))
	if len(rec.History().Faults) != 0 {
		t.Fatal("altered prev_kv on a watch that did not ask for it")
	}
}

func TestFakeCreate(t *testing.T) {
	for _, seed := range seeds {
		in := script(6)
		outs, f := watchThrough(t, "fake-create", seed, history.WatchRequest{Key: "a", End: "c"}, in)
		got, want := events(outs[0]), events(in)
		n := 0
		for i := range got {
			if got[i].IsCreate {
				n++
				kv := got[i].KV
				if want[i].KV.Version <= 1 || kv.Version != 1 || kv.CreateRevision != kv.ModRevision ||
					kv.Key != f.Details["key"] || kv.ModRevision != detailRev(t, f) {
					t.Fatalf("seed %d: bad fake create %+v of %+v (fault %v)", seed, got[i], want[i], f.Details)
				}
			}
		}
		if n != 1 {
			t.Fatalf("seed %d: %d creates, want 1", seed, n)
		}
	}
}

func TestResumeLate(t *testing.T) {
	for _, seed := range seeds {
		in := script(4)
		// Two watches: the saboteur may let the first opportunity pass.
		outs, f := watchThrough(t, "resume-late", seed, history.WatchRequest{Key: "a", End: "c", StartRevision: 11}, in, in)
		late := 0
		for _, out := range outs {
			got := events(out)
			if got[0].Revision() != 11 {
				late++
				if got[0].Revision() != 12 || detailRev(t, f) != 11 || f.Details["start_revision"] != "11" {
					t.Fatalf("seed %d: started at %d (fault %v)", seed, got[0].Revision(), f.Details)
				}
			}
		}
		if late != 1 {
			t.Fatalf("seed %d: %d late watches, want 1", seed, late)
		}
	}
	// A watch from the current revision is never a candidate.
	s, rec := newSaboteur(t, "resume-late", 1)
	drain(s.Wrap(newFake(script(4)), 1).Watch(context.Background(), history.WatchRequest{Key: "a", End: "c"}))
	if len(rec.History().Faults) != 0 {
		t.Fatal("sabotaged a watch without a start revision")
	}
}

func TestCompactionSilent(t *testing.T) {
	canceled := []targets.WatchMessage{
		{Response: history.WatchResponse{Revision: 90, Created: true}},
		{Response: history.WatchResponse{Revision: 90, Canceled: true, CompactRevision: 50, CancelReason: "compacted"}},
	}
	later := append([]targets.WatchMessage{{Response: history.WatchResponse{Revision: 90, Created: true}}}, script(3)[1:]...)
	s, rec := newSaboteur(t, "compaction-silent", 1)
	fk := newFake(canceled, later)
	out := drain(s.Wrap(fk, 42).Watch(context.Background(), history.WatchRequest{Key: "a", End: "c", StartRevision: 20}))
	f := onlyFault(t, rec, "compaction-silent")
	created := 0
	for _, m := range out {
		if m.Response.Canceled {
			t.Fatalf("the cancel came through: %+v", out)
		}
		if m.Response.Created {
			created++
		}
	}
	if created != 1 || len(events(out)) != len(events(later)) {
		t.Fatalf("want one created response and every event of the second watch, got %+v", out)
	}
	if len(fk.watched) != 2 || fk.watched[1].StartRevision != 50 || detailRev(t, f) != 50 || f.Details["start_revision"] != "20" {
		t.Fatalf("second watch %+v, fault %v", fk.watched, f.Details)
	}
}

func TestOutOfFilter(t *testing.T) {
	cases := []struct {
		name string
		req  history.WatchRequest
		want func(history.Event) bool
	}{
		{"single key", history.WatchRequest{Key: "a"},
			func(ev history.Event) bool { return ev.KV.Key != "a" }},
		{"no put", history.WatchRequest{Key: "a", End: "c", NoPut: true},
			func(ev history.Event) bool { return ev.Type == history.EventPut && ev.KV.Key >= "a" && ev.KV.Key < "c" }},
		{"no delete", history.WatchRequest{Key: "a", End: "c", NoDelete: true},
			func(ev history.Event) bool {
				return ev.Type == history.EventDelete && ev.KV.Key >= "a" && ev.KV.Key < "c"
			}},
		{"prefix", history.WatchRequest{Key: "/p/", End: "/p0"},
			func(ev history.Event) bool { return ev.KV.Key < "/p/" || ev.KV.Key >= "/p0" }},
		{"from key", history.WatchRequest{Key: "b", End: "\x00"},
			func(ev history.Event) bool { return ev.KV.Key < "b" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, seed := range seeds {
				in := script(6)
				outs, f := watchThrough(t, "out-of-filter", seed, c.req, in)
				got := events(outs[0])
				if len(got) != len(events(in))+1 {
					t.Fatalf("seed %d: %d events, want one more than %d", seed, len(got), len(events(in)))
				}
				n := 0
				for i, ev := range got {
					if ev.KV.Key == f.Details["key"] {
						n++
						if !c.want(ev) || ev.Revision() != detailRev(t, f) || (i > 0 && got[i-1].Revision() != ev.Revision()) {
							t.Fatalf("seed %d: injected %+v after %+v (fault %v)", seed, ev, got[i-1], f.Details)
						}
					}
				}
				if n != 1 {
					t.Fatalf("seed %d: the injected key appears %d times", seed, n)
				}
			}
		})
	}
}

func TestOutOfFilterPrefersSpecialWatches(t *testing.T) {
	rec := history.NewRecorder(history.Meta{}, history.NewClock(), nil)
	s, err := New(Config{Mode: "out-of-filter", Seed: 1, Recorder: rec, Duration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	s.armAt, s.skip = 0, 0 // armed now; plain watches only after preferDelay
	plain := s.Wrap(newFake(script(4)), 1)
	drain(plain.Watch(context.Background(), history.WatchRequest{Key: "a", End: "c"}))
	if len(rec.History().Faults) != 0 {
		t.Fatal("a plain range watch was sabotaged before its turn")
	}
	drain(s.Wrap(newFake(script(4)), 2).Watch(context.Background(), history.WatchRequest{Key: "a"}))
	if fs := rec.History().Faults; len(fs) != 1 || fs[0].Details["client"] != "2" {
		t.Fatalf("faults %+v, want one on the single-key watch", fs)
	}
}

// kvThrough runs calls through a saboteur of mode on a fake store.
func kvThrough(t *testing.T, mode string, seed int64, fn func(c targets.Client, f *fake)) history.Fault {
	t.Helper()
	s, rec := newSaboteur(t, mode, seed)
	fk := newFake()
	fn(s.Wrap(fk, 42), fk)
	return onlyFault(t, rec, mode)
}

func do(t *testing.T, c targets.Client, req history.Request) *history.Response {
	t.Helper()
	resp, err := c.Do(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestStaleRead(t *testing.T) {
	get := history.Request{Kind: history.OpRange, Key: "k"}
	for _, seed := range seeds {
		var stale []*history.Response
		f := kvThrough(t, "stale-read", seed, func(c targets.Client, _ *fake) {
			do(t, c, history.Request{Kind: history.OpPut, Key: "k", Value: "v1"})
			if r := do(t, c, get); r.KVs[0].Value != "v1" {
				t.Fatalf("no write acknowledged since: read %+v", r)
			}
			do(t, c, history.Request{Kind: history.OpPut, Key: "k", Value: "v2"})
			// Not yet: the overwrite was acknowledged just now.
			if r := do(t, c, get); r.KVs[0].Value != "v2" {
				t.Fatalf("stale read right after the overwrite: %+v", r)
			}
			time.Sleep(staleMargin + 10*time.Millisecond)
			for range 4 {
				if r := do(t, c, get); r.KVs[0].Value != "v2" {
					stale = append(stale, r)
				}
			}
		})
		if len(stale) != 1 || stale[0].KVs[0].Value != "v1" || stale[0].Revision != 101 {
			t.Fatalf("seed %d: stale answers %+v, want one at revision 101 with v1", seed, stale)
		}
		if f.Details["key"] != "k" || detailRev(t, f) != 101 || f.Details["overwritten_at"] != "102" {
			t.Fatalf("seed %d: fault %v", seed, f.Details)
		}
	}
}

func TestLostWrite(t *testing.T) {
	for _, seed := range seeds {
		var lost []string
		f := kvThrough(t, "lost-write", seed, func(c targets.Client, fk *fake) {
			for i := range 5 {
				v := fmt.Sprint("v", i)
				r := do(t, c, history.Request{Kind: history.OpPut, Key: "k", Value: v})
				if r.Revision == 0 || r.MemberID != 7 {
					t.Fatalf("implausible answer %+v", r)
				}
				if fk.kvs["k"].Value != v {
					lost = append(lost, v)
					if r.Revision != fk.rev {
						t.Fatalf("fabricated revision %d, want the last seen, %d", r.Revision, fk.rev)
					}
				}
			}
		})
		if len(lost) != 1 || f.Details["value"] != lost[0] || f.Details["key"] != "k" {
			t.Fatalf("seed %d: lost %v, fault %v", seed, lost, f.Details)
		}
	}
}

func TestGhostValue(t *testing.T) {
	for _, seed := range seeds {
		var ghosts []history.KV
		f := kvThrough(t, "ghost-value", seed, func(c targets.Client, fk *fake) {
			do(t, c, history.Request{Kind: history.OpPut, Key: "k", Value: "v"})
			for range 4 {
				r := do(t, c, history.Request{Kind: history.OpRange, Key: "k"})
				if r.KVs[0].Value != "v" {
					ghosts = append(ghosts, r.KVs[0])
				}
			}
			if fk.kvs["k"].Value != "v" {
				t.Fatal("the store changed")
			}
		})
		if len(ghosts) != 1 || ghosts[0].Value != f.Details["value"] || ghosts[0].ModRevision != 101 || ghosts[0].Version != 1 {
			t.Fatalf("seed %d: ghosts %+v, fault %v", seed, ghosts, f.Details)
		}
	}
}

// quiet-end closes the stream after a response with events, never the
// first, with neither a cancel response nor an error; the fault names
// the last event the caller saw.
func TestQuietEnd(t *testing.T) {
	for _, seed := range seeds {
		in := script(8)
		outs, f := watchThrough(t, "quiet-end", seed, history.WatchRequest{Key: "a", End: "c"}, in)
		out := outs[0]
		got := events(out)
		if len(got) >= len(events(in)) || len(got) < 2 {
			t.Fatalf("seed %d: %d of %d events delivered, want the stream cut after its second response with events or later",
				seed, len(got), len(events(in)))
		}
		for _, m := range out {
			if m.Err != nil || m.Response.Canceled {
				t.Fatalf("seed %d: the end said something: %+v", seed, m)
			}
		}
		if last := got[len(got)-1]; detailRev(t, f) != last.Revision() || f.Details["key"] != last.KV.Key {
			t.Fatalf("seed %d: fault %v, but the last event delivered is %s at %d", seed, f.Details, last.KV.Key, last.Revision())
		}
	}
}

// A watch that ends by itself before the saboteur's chance leaves it
// unused; one with a single response with events is not cut.
func TestQuietEndNeedsAnEarlierEvent(t *testing.T) {
	for _, seed := range seeds {
		s, rec := newSaboteur(t, "quiet-end", seed)
		out := drain(s.Wrap(newFake(script(1)), 1).Watch(context.Background(), history.WatchRequest{Key: "a"}))
		if len(events(out)) != 1 || len(rec.History().Faults) != 0 {
			t.Fatalf("seed %d: cut a watch with one response with events: %+v", seed, out)
		}
	}
}

// stale-member-read: from the first, every linearizable read of every
// client goes to its member as a serializable one; writes, serializable
// reads and txns that write go as they came. One fault says so.
func TestStaleMemberRead(t *testing.T) {
	s, rec := newSaboteur(t, "stale-member-read", 1)
	fk := newFake()
	a, b := s.Wrap(fk, 42), s.Wrap(fk, 43)
	put := history.Request{Kind: history.OpPut, Key: "k", Value: "v1"}
	get := history.Request{Kind: history.OpRange, Key: "k"}
	prefix := history.Request{Kind: history.OpRange, Key: "a", End: "b", Revision: 100}
	serial := history.Request{Kind: history.OpRange, Key: "k", Serializable: true}
	readTxn := history.Request{Kind: history.OpTxn, Compares: []history.Compare{{Key: "k", Target: "version", Result: ">", Int: 0}},
		Success: []history.Request{get}, Failure: []history.Request{prefix}}
	writeTxn := history.Request{Kind: history.OpTxn, Success: []history.Request{put}, Failure: []history.Request{get}}
	do(t, a, put)
	if r := do(t, a, get); len(r.KVs) != 1 || r.KVs[0].Value != "v1" {
		t.Fatalf("the member's answer is not passed on: %+v", r)
	}
	do(t, b, prefix)
	do(t, b, serial)
	a.Do(context.Background(), readTxn) // the fake answers no txn: what it was sent is what counts
	b.Do(context.Background(), writeTxn)

	serialGet, serialPrefix := get, prefix
	serialGet.Serializable, serialPrefix.Serializable = true, true
	localTxn := readTxn
	localTxn.Success, localTxn.Failure = []history.Request{serialGet}, []history.Request{serialPrefix}
	want := []history.Request{put, serialGet, serialPrefix, serial, localTxn, writeTxn}
	if !reflect.DeepEqual(fk.sent, want) {
		t.Fatalf("sent to the member:\n%+v\nwant\n%+v", fk.sent, want)
	}
	if readTxn.Success[0].Serializable {
		t.Fatal("the caller's request was changed in place")
	}
	f := onlyFault(t, rec, "stale-member-read")
	if f.Details["what"] != localReadWhat || s.Injected() != 1 {
		t.Fatalf("fault %+v (injected %d)", f, s.Injected())
	}
}
