package sabotage

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	kubecheck "github.com/vigil-suite/vigil/checkers/kube"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets/kube"
)

// kubeFake is a scripted kube.API: a one-copy store of objects with
// resourceVersions for Do (update with a stale RV answers 409), and one
// scripted message list per Watch call.
type kubeFake struct {
	mu      sync.Mutex
	rv      uint64
	objs    map[string]history.Object
	scripts [][]kube.WatchMessage
	calls   []history.KubeRequest
}

func newKubeFake(scripts ...[]kube.WatchMessage) *kubeFake {
	return &kubeFake{rv: 100, objs: map[string]history.Object{}, scripts: scripts}
}

func (f *kubeFake) Server() string { return "kube-0" }
func (f *kubeFake) Close() error   { return nil }

func (f *kubeFake) Do(_ context.Context, req history.KubeRequest) (*history.KubeResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, req)
	rv := func() string { return strconv.FormatUint(f.rv, 10) }
	switch req.Verb {
	case history.KubeCreate, history.KubeUpdate:
		o := *req.Object
		if cur, ok := f.objs[o.Name]; req.Verb == history.KubeUpdate && ok && o.ResourceVersion != "" &&
			o.ResourceVersion != cur.ResourceVersion {
			return nil, &kube.StatusError{Status: history.KubeStatus{Code: 409, Reason: "Conflict"}}
		}
		if req.DryRun {
			// Validated and answered, never stored: no new RV.
			o.ResourceVersion = f.objs[o.Name].ResourceVersion
			return &history.KubeResponse{Code: 200, Object: &o}, nil
		}
		f.rv++
		o.ResourceVersion = rv()
		f.objs[o.Name] = o
		return &history.KubeResponse{Code: 200, Object: &o}, nil
	case history.KubeGet:
		o, ok := f.objs[req.Name]
		if !ok {
			return nil, &kube.StatusError{Status: history.KubeStatus{Code: 404, Reason: "NotFound"}}
		}
		return &history.KubeResponse{Code: 200, Object: &o}, nil
	case history.KubeList:
		resp := &history.KubeResponse{Code: 200, ListRV: rv()}
		for _, o := range f.objs {
			resp.Items = append(resp.Items, o)
		}
		return resp, nil
	}
	return nil, fmt.Errorf("kubeFake: %s not scripted", req.Verb)
}

func (f *kubeFake) Watch(ctx context.Context, req history.KubeWatchRequest) <-chan kube.WatchMessage {
	f.mu.Lock()
	var script []kube.WatchMessage
	if len(f.scripts) > 0 {
		script, f.scripts = f.scripts[0], f.scripts[1:]
	}
	f.mu.Unlock()
	ch := make(chan kube.WatchMessage, len(script))
	for _, m := range script {
		ch <- m
	}
	close(ch)
	return ch
}

func kev(typ, name string, rv int) kube.WatchMessage {
	return kube.WatchMessage{Event: &history.KubeEvent{Type: typ,
		Object: &history.Object{Name: name, ResourceVersion: strconv.Itoa(rv), Value: fmt.Sprintf("v%d", rv)}}}
}

func initialEndBookmark(rv int) kube.WatchMessage {
	return kube.WatchMessage{Event: &history.KubeEvent{Type: history.KubeBookmark,
		Object: &history.Object{ResourceVersion: strconv.Itoa(rv),
			Annotations: map[string]string{history.AnnotationInitialEventsEnd: "true"}}}}
}

// kubeState is a watch's initial state (ADDED o-0..o-2, in key order, RVs
// not increasing) and then n changes at RVs 201, 202, ...
func kubeState(n int, end bool) []kube.WatchMessage {
	out := []kube.WatchMessage{kev(history.KubeAdded, "o-0", 150), kev(history.KubeAdded, "o-1", 120), kev(history.KubeAdded, "o-2", 130)}
	if end {
		out = append(out, initialEndBookmark(200))
	}
	for i := 0; i < n; i++ {
		out = append(out, kev(history.KubeModified, fmt.Sprintf("o-%d", i%3), 201+i))
	}
	return out
}

func kubeDrain(ch <-chan kube.WatchMessage) []kube.WatchMessage {
	var out []kube.WatchMessage
	for m := range ch {
		out = append(out, m)
	}
	return out
}

// kubeWatchThrough runs one watch per script through a saboteur of mode
// and returns what came out of each and the faults it recorded.
func kubeWatchThrough(t *testing.T, mode string, seed int64, req history.KubeWatchRequest, scripts ...[]kube.WatchMessage) ([][]kube.WatchMessage, []history.Fault) {
	t.Helper()
	s, rec := newSaboteur(t, mode, seed)
	c := s.WrapKube(newKubeFake(scripts...), 42)
	var outs [][]kube.WatchMessage
	for range scripts {
		outs = append(outs, kubeDrain(c.Watch(context.Background(), req)))
	}
	return outs, rec.History().Faults
}

func rvsOf(ms []kube.WatchMessage) []string {
	var out []string
	for _, m := range ms {
		if m.Event != nil && m.Event.Object != nil {
			out = append(out, m.Event.Object.ResourceVersion)
		}
	}
	return out
}

// The dropped change comes after the watch's initial state and its first
// two changes, is not the last, and the fault names it.
func TestKubeDropEvent(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name string
		req  history.KubeWatchRequest
		in   []kube.WatchMessage
	}{
		{"from RV unset", history.KubeWatchRequest{}, kubeState(8, false)},
		{"streaming list", history.KubeWatchRequest{SendInitialEvents: &yes, ResourceVersionMatch: "NotOlderThan", AllowBookmarks: true}, kubeState(8, true)},
		{"from an RV", history.KubeWatchRequest{ResourceVersion: "200"}, kubeState(8, false)[3:]},
	} {
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("%s/seed-%d", tc.name, seed), func(t *testing.T) {
				outs, faults := kubeWatchThrough(t, "kube-drop-event", seed, tc.req, tc.in)
				if len(faults) != 1 {
					t.Fatalf("%d faults, want 1: %+v", len(faults), faults)
				}
				f := faults[0]
				got := outs[0]
				if len(got) != len(tc.in)-1 {
					t.Fatalf("%d messages out of %d, want one dropped: %v", len(got), len(tc.in), rvsOf(got))
				}
				rv, _ := strconv.Atoi(f.Details["revision"])
				if rv < 203 || rv >= 208 {
					t.Fatalf("dropped RV %d: want a change after the first two (201, 202) and before the last (208)", rv)
				}
				for _, m := range got {
					if m.Event.Object.ResourceVersion == f.Details["revision"] {
						t.Fatalf("the fault names RV %d, which was delivered", rv)
					}
				}
				if want := fmt.Sprintf("o-%d", (rv-201)%3); f.Details["key"] != want {
					t.Fatalf("fault key %q, want %q", f.Details["key"], want)
				}
			})
		}
	}
}

// A held change that nothing follows is delivered, and the injection goes
// to a later watch.
func TestKubeDropEventNeverTheLast(t *testing.T) {
	live := kubeState(3, false)[3:]
	outs, faults := kubeWatchThrough(t, "kube-drop-event", 1, history.KubeWatchRequest{ResourceVersion: "200"},
		live, kubeState(6, false)[3:])
	if len(outs[0]) != len(live) {
		t.Fatalf("first watch: %v, want all of %d", rvsOf(outs[0]), len(live))
	}
	if len(faults) != 1 || len(outs[1]) != 5 {
		t.Fatalf("second watch: %v with faults %+v, want one change dropped", rvsOf(outs[1]), faults)
	}
}

// A watch whose initial state is all it got (no change after it) is never
// sabotaged.
func TestKubeDropEventNotInTheInitialState(t *testing.T) {
	state := kubeState(0, false)
	for i := 0; i < 5; i++ {
		state = append(state, kev(history.KubeAdded, fmt.Sprintf("n-%d", i), 300+i))
	}
	outs, faults := kubeWatchThrough(t, "kube-drop-event", 1, history.KubeWatchRequest{}, state)
	if len(faults) != 0 || len(outs[0]) != len(state) {
		t.Fatalf("got %v with faults %+v, want the state untouched", rvsOf(outs[0]), faults)
	}
}

// The regressed event follows a change (not an initial event) and carries
// an RV below it.
func TestKubeRVRegression(t *testing.T) {
	yes := true
	for _, seed := range seeds {
		outs, faults := kubeWatchThrough(t, "rv-regression", seed,
			history.KubeWatchRequest{SendInitialEvents: &yes, ResourceVersionMatch: "NotOlderThan", AllowBookmarks: true},
			kubeState(8, true))
		if len(faults) != 1 {
			t.Fatalf("seed %d: %d faults, want 1", seed, len(faults))
		}
		rvs := rvsOf(outs[0])
		// rvs: 3 initial items, the bookmark, then the changes.
		bad := -1
		for i := 5; i < len(rvs); i++ {
			p, _ := strconv.Atoi(rvs[i-1])
			c, _ := strconv.Atoi(rvs[i])
			if c <= p {
				if bad >= 0 {
					t.Fatalf("seed %d: more than one regression: %v", seed, rvs)
				}
				bad = i
			}
		}
		if bad < 0 || rvs[bad] != faults[0].Details["revision"] {
			t.Fatalf("seed %d: RVs %v, fault %v: want one regression after the bookmark, the one the fault names", seed, rvs, faults[0].Details)
		}
	}
}

// One of the first two streaming lists loses its initial-events-end
// bookmark, and nothing else.
func TestKubeMissingInitialEventsEnd(t *testing.T) {
	yes := true
	for _, seed := range seeds {
		in := kubeState(2, true)
		outs, faults := kubeWatchThrough(t, "missing-initial-events-end", seed,
			history.KubeWatchRequest{SendInitialEvents: &yes, ResourceVersionMatch: "NotOlderThan", AllowBookmarks: true}, in, in, in)
		if len(faults) != 1 || faults[0].Details["revision"] != "200" {
			t.Fatalf("seed %d: faults %+v, want one naming the bookmark's RV 200", seed, faults)
		}
		lost := 0
		for i, out := range outs {
			bookmarks := 0
			for _, m := range out {
				if m.Event.Type == history.KubeBookmark {
					bookmarks++
				}
			}
			switch {
			case bookmarks == 0 && len(out) == len(in)-1:
				lost++
				if i == 2 {
					t.Fatalf("seed %d: the third streaming list lost its bookmark; want one of the first two", seed)
				}
			case bookmarks != 1 || len(out) != len(in):
				t.Fatalf("seed %d: watch %d delivered %d of %d messages, %d bookmarks", seed, i, len(out), len(in), bookmarks)
			}
		}
		if lost != 1 {
			t.Fatalf("seed %d: %d streaming lists lost their bookmark, want 1", seed, lost)
		}
	}
}

// stale-list serves the last consistent list only once a write with a
// higher RV was acknowledged after it, and well before the call.
func TestKubeStaleList(t *testing.T) {
	s, rec := newSaboteur(t, "stale-list", 1)
	f := newKubeFake()
	c := s.WrapKube(f, 42)
	ctx := context.Background()
	do := func(req history.KubeRequest) *history.KubeResponse {
		t.Helper()
		resp, err := c.Do(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	create := func(name string) *history.KubeResponse {
		return do(history.KubeRequest{Verb: history.KubeCreate, Object: &history.Object{Name: name, Value: name}})
	}
	create("a")
	first := do(history.KubeRequest{Verb: history.KubeList})
	time.Sleep(2 * staleMargin)
	if again := do(history.KubeRequest{Verb: history.KubeList}); again.ListRV != first.ListRV || len(rec.History().Faults) != 0 {
		t.Fatalf("no write since the list, yet it was sabotaged: %+v", rec.History().Faults)
	}
	w := create("b")
	if l := do(history.KubeRequest{Verb: history.KubeList}); len(l.Items) != 2 || len(rec.History().Faults) != 0 {
		t.Fatalf("the list right after the write (inside the margin) was sabotaged")
	}
	create("c")
	time.Sleep(2 * staleMargin)
	// A selector or a page is not what the mode serves old.
	do(history.KubeRequest{Verb: history.KubeList, LabelSelector: "x=y"})
	do(history.KubeRequest{Verb: history.KubeList, Limit: 1})
	if len(rec.History().Faults) != 0 {
		t.Fatalf("a list with a selector or a limit was sabotaged")
	}
	stale := do(history.KubeRequest{Verb: history.KubeList})
	fs := rec.History().Faults
	if len(fs) != 1 || len(stale.Items) != 2 || fs[0].Details["revision"] != stale.ListRV {
		t.Fatalf("got list RV %s with %d items, faults %+v: want the 2-item list of RV %s served again",
			stale.ListRV, len(stale.Items), fs, w.Object.ResourceVersion)
	}
	if stale.ListRV != w.Object.ResourceVersion {
		t.Fatalf("served list RV %s, want %s (the list after b's create)", stale.ListRV, w.Object.ResourceVersion)
	}
	if l := do(history.KubeRequest{Verb: history.KubeList}); len(l.Items) != 3 {
		t.Fatalf("a second list was sabotaged too")
	}
}

// conflict-not-detected turns a 409 into an accepted update, applied for
// real, once.
func TestKubeConflictNotDetected(t *testing.T) {
	s, rec := newSaboteur(t, "conflict-not-detected", 1)
	f := newKubeFake()
	c := s.WrapKube(f, 42)
	ctx := context.Background()
	cr, _ := c.Do(ctx, history.KubeRequest{Verb: history.KubeCreate, Object: &history.Object{Name: "a", Value: "1"}})
	old := cr.Object.ResourceVersion
	c.Do(ctx, history.KubeRequest{Verb: history.KubeUpdate, Name: "a", Object: &history.Object{Name: "a", ResourceVersion: old, Value: "2"}})
	resp, err := c.Do(ctx, history.KubeRequest{Verb: history.KubeUpdate, Name: "a", Object: &history.Object{Name: "a", ResourceVersion: old, Value: "3"}})
	if err != nil || resp.Object.Value != "3" {
		t.Fatalf("stale update: %v %+v, want it accepted", err, resp)
	}
	fs := rec.History().Faults
	if len(fs) != 1 || fs[0].Details["key"] != "a" || fs[0].Details["revision"] != resp.Object.ResourceVersion {
		t.Fatalf("faults %+v", fs)
	}
	if _, err := c.Do(ctx, history.KubeRequest{Verb: history.KubeUpdate, Name: "a", Object: &history.Object{Name: "a", ResourceVersion: old, Value: "4"}}); kube.StatusOf(err) == nil {
		t.Fatalf("a second stale update was accepted too: %v", err)
	}
}

// A bookmark (or an ERROR) that comes while a change is held lets the held
// change through first: the stream stays in RV order, bookmarks included.
func TestKubeDropEventKeepsBookmarksInOrder(t *testing.T) {
	for _, seed := range seeds {
		live := kubeState(6, false)[3:]
		bm := kube.WatchMessage{Event: &history.KubeEvent{Type: history.KubeBookmark, Object: &history.Object{ResourceVersion: "203"}}}
		in := append(append(append([]kube.WatchMessage(nil), live[:3]...), bm), live[3:]...)
		outs, faults := kubeWatchThrough(t, "kube-drop-event", seed, history.KubeWatchRequest{ResourceVersion: "200"}, in)
		rvs := rvsOf(outs[0])
		for i := 1; i < len(rvs); i++ {
			p, _ := strconv.Atoi(rvs[i-1])
			c, _ := strconv.Atoi(rvs[i])
			if c < p {
				t.Fatalf("seed %d: %v out of RV order", seed, rvs)
			}
		}
		if len(faults) > 1 || len(rvs) != len(in)-len(faults) {
			t.Fatalf("seed %d: %v with faults %+v", seed, rvs, faults)
		}
		if len(faults) == 1 && faults[0].Details["revision"] == "203" {
			t.Fatalf("seed %d: dropped 203, the change the bookmark vouches for", seed)
		}
	}
}

// kube-quiet-end closes a watch with timeoutSeconds cleanly after a change
// past its initial state, and leaves watches without a timeout alone.
func TestKubeQuietEnd(t *testing.T) {
	yes := true
	for _, seed := range seeds {
		req := history.KubeWatchRequest{SendInitialEvents: &yes, ResourceVersionMatch: "NotOlderThan", AllowBookmarks: true,
			TimeoutSeconds: 10}
		outs, faults := kubeWatchThrough(t, "kube-quiet-end", seed, req, kubeState(8, true))
		if len(faults) != 1 {
			t.Fatalf("seed %d: %d faults, want 1", seed, len(faults))
		}
		out := outs[0]
		rvs := rvsOf(out)
		// 3 initial items and the bookmark, then at least two changes (the
		// first lets the watch vouch for something), not all eight.
		if len(rvs) < 6 || len(rvs) >= 12 {
			t.Fatalf("seed %d: RVs %v: want the stream cut after its second change and before its end", seed, rvs)
		}
		for _, m := range out {
			if m.Err != nil || m.Refused != nil || m.Event.Type == history.KubeError {
				t.Fatalf("seed %d: the end said something: %+v", seed, m)
			}
		}
		if faults[0].Details["revision"] != rvs[len(rvs)-1] {
			t.Fatalf("seed %d: fault %v, last RV delivered %s", seed, faults[0].Details, rvs[len(rvs)-1])
		}

		outs, faults = kubeWatchThrough(t, "kube-quiet-end", seed, history.KubeWatchRequest{ResourceVersion: "100"},
			kubeState(8, false))
		if len(faults) != 0 || len(rvsOf(outs[0])) != 11 {
			t.Fatalf("seed %d: cut a watch without timeoutSeconds: %v, %v", seed, rvsOf(outs[0]), faults)
		}
	}
}

// dry-run-applied makes one dry run for real; kube/write-paths catches
// it when a later read shows the dry run's value. The same calls without
// the sabotage pass.
func TestKubeDryRunApplied(t *testing.T) {
	for _, mode := range []string{"dry-run-applied", "stale-list"} {
		s, rec := newSaboteur(t, mode, 1)
		c := s.WrapKube(newKubeFake(), 42)
		h := history.New(history.Meta{Target: history.Target{Kind: "kube"}})
		id, now := int64(0), 0
		do := func(req history.KubeRequest) *history.KubeResponse {
			resp, err := c.Do(context.Background(), req)
			if err != nil {
				t.Fatalf("%s: %v", req.Verb, err)
			}
			id, now = id+1, now+10
			o := history.KubeOperation{ID: id, Client: 1, Call: time.Duration(now), Return: time.Duration(now + 5), Request: req, Response: resp}
			if err := h.Add(history.Record{KubeOp: &o}); err != nil {
				t.Fatal(err)
			}
			return resp
		}
		do(history.KubeRequest{Verb: history.KubeCreate, Object: &history.Object{Name: "a", Value: "v1"}})
		dry := do(history.KubeRequest{Verb: history.KubeUpdate, Name: "a", DryRun: true, Object: &history.Object{Name: "a", Value: "v-dry"}})
		got := do(history.KubeRequest{Verb: history.KubeGet, Name: "a"})
		r := kubecheck.CheckWritePaths(h, check.DefaultConfig())
		faults := rec.History().Faults
		switch mode {
		case "dry-run-applied":
			if got.Object.Value != "v-dry" || len(faults) != 1 || faults[0].Details["key"] != "a" {
				t.Fatalf("the dry run was not applied: get %+v, faults %+v", got.Object, faults)
			}
			if dry.Object.ResourceVersion == got.Object.ResourceVersion {
				t.Fatalf("the dry run's answer shows the RV it was applied at (%s): it must look like a dry run's", got.Object.ResourceVersion)
			}
			if r.Verdict != check.Fail || !strings.Contains(r.Violations[0].Message, "[dry-run]") {
				t.Fatalf("kube/write-paths: %s %+v, want a dry-run violation", r.Verdict, r.Violations)
			}
		default:
			if got.Object.Value != "v1" || r.Verdict != check.Pass {
				t.Fatalf("without the sabotage: get %+v, kube/write-paths %s %+v", got.Object, r.Verdict, r.Violations)
			}
		}
	}
}
