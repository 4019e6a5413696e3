package kube

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/checkers/kube/model"
	"github.com/vigil-suite/vigil/history"
)

// TestKubeGeneratedHistoriesPass: simulated runs of a correct server pass
// every check (the checks do not accuse a healthy server), over seeds.
func TestKubeGeneratedHistoriesPass(t *testing.T) {
	seeds := uint64(4)
	if n, err := strconv.Atoi(os.Getenv("VIGIL_KGEN_SEEDS")); err == nil && n > 0 {
		seeds = uint64(n)
	}
	// Each seed also with the write paths of history format 5 (merge
	// patches, dry runs, delete-collections by field selector).
	for seed := uint64(1); seed <= seeds; seed++ {
		for _, wp := range []bool{false, true} {
			h := histbuild.GenKubeHistory(histbuild.KgenConfig{Ops: 4000, Objects: 12, Watches: 3, SelWatches: 2, UnknownPct: 3,
				StateWatches: 2, Streams: 2, Oracle: true, WritePaths: wp, Seed: seed})
			for _, c := range Checks() {
				r := check.Run(c, h, check.DefaultConfig())
				if r.Verdict == check.Fail || r.Verdict == check.Unknown || wp && c.Name == NameWritePaths && r.Verdict != check.Pass {
					t.Errorf("seed %d (write paths %v): %s %s: %s", seed, wp, c.Name, r.Verdict,
						histbuild.ViolationTexts(r.Violations[:min(3, len(r.Violations))]))
				}
			}
		}
	}
}

// TestKubeGeneratedHistoryCaught: the same simulated runs with one event
// dropped, one stale read and one stale update accepted fail the checks
// that guard them.
func TestKubeGeneratedHistoryCaught(t *testing.T) {
	h := histbuild.GenKubeHistory(histbuild.KgenConfig{Ops: 4000, Objects: 12, Watches: 3, SelWatches: 1, UnknownPct: 3, Seed: 9})
	w := h.KubeWatches[0]
	dropped := w.Events[len(w.Events)/2]
	w.Events = append(w.Events[:len(w.Events)/2:len(w.Events)/2], w.Events[len(w.Events)/2+1:]...)
	r := CheckWatchFromRV(h, check.DefaultConfig())
	if r.Verdict != check.Fail || r.Violations[0].Watch != w.ID || fmt.Sprint(r.Violations[0].Revision) != dropped.Object.ResourceVersion {
		t.Errorf("dropping %s: %s %s", model.EventText(dropped), r.Verdict, histbuild.ViolationTexts(r.Violations))
	}
	if r := CheckWatchAgreement(h, check.DefaultConfig()); r.Verdict != check.Fail {
		t.Errorf("kube/watch-agreement missed the dropped event: %s", r.Verdict)
	}

	// A consistent get answered with the state its object had before the
	// last update acknowledged before the get.
	h = histbuild.GenKubeHistory(histbuild.KgenConfig{Ops: 4000, Objects: 12, Watches: 2, UnknownPct: 3, Seed: 9})
	older := map[string]history.Object{}
	var stale *history.KubeOperation
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Request.Verb == history.KubeUpdate && o.Response != nil && i > len(h.KubeOps)/2 {
			older[o.Request.Name] = *o.Request.Object // holds the RV it replaced
		}
		if prev, ok := older[o.Request.Name]; ok && o.Request.Verb == history.KubeGet && o.Response != nil {
			for j := range h.KubeOps[:i] {
				if p := &h.KubeOps[j]; p.Response != nil && p.Response.Object != nil && p.Response.Object.Name == prev.Name &&
					p.Response.Object.ResourceVersion == prev.ResourceVersion && p.Request.Verb.IsWrite() {
					obj := *p.Response.Object
					o.Response.Object, stale = &obj, o
				}
			}
			if stale != nil {
				break
			}
		}
	}
	for _, c := range []check.Check{{Name: NameConsistentRead, Run: CheckConsistentRead}, {Name: NameLinearizable, Run: CheckLinearizable}} {
		r := c.Run(h, check.DefaultConfig())
		if stale == nil || r.Verdict != check.Fail || !slices.Contains(r.Violations[0].Operations, stale.ID) {
			t.Errorf("%s on a stale get: %s %s", c.Name, r.Verdict, histbuild.ViolationTexts(r.Violations))
		}
	}

	// An update accepted on a stale precondition (it overwrote a write it
	// never saw) at the next RV.
	h = histbuild.GenKubeHistory(histbuild.KgenConfig{Ops: 4000, Objects: 12, Watches: 2, UnknownPct: 0, Seed: 9})
	var accepted *history.KubeOperation
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Request.Verb != history.KubeUpdate || o.Status == nil || o.Status.Code != 409 || i < len(h.KubeOps)/2 {
			continue
		}
		// Take the precondition of the last acknowledged update of the
		// object (now stale) and commit just above the head.
		for j := i - 1; j >= 0; j-- {
			p := &h.KubeOps[j]
			if p.Request.Verb == history.KubeUpdate && p.Response != nil && p.Request.Name == o.Request.Name {
				head := maxWriteRV(h)
				obj := *p.Response.Object
				obj.Value, obj.ResourceVersion = o.Request.Object.Value, fmt.Sprint(head+1000)
				o.Request.Object.ResourceVersion = p.Request.Object.ResourceVersion
				o.Status, o.Response, accepted = nil, &history.KubeResponse{Code: 200, Object: &obj}, o
				break
			}
		}
		if accepted != nil {
			break
		}
	}
	r = CheckOptimisticConcurrency(h, check.DefaultConfig())
	if accepted == nil || r.Verdict != check.Fail || !slices.Contains(r.Violations[0].Operations, accepted.ID) {
		t.Errorf("kube/optimistic-concurrency on an accepted stale update: %s %s", r.Verdict, histbuild.ViolationTexts(r.Violations))
	}
}

// maxWriteRV is the highest RV an acknowledged write of h was answered with.
func maxWriteRV(h *history.History) int64 {
	var top int64
	for i := range h.KubeOps {
		if o := &h.KubeOps[i]; o.Request.Verb.IsWrite() && o.Response != nil {
			top = max(top, model.ObjRV(o.Response.Object))
		}
	}
	return top
}

// BenchmarkKubeChecks100k runs every Kubernetes check on a simulated run
// of 100,000 operations and about a million watch events.
func BenchmarkKubeChecks100k(b *testing.B) {
	h := histbuild.GenKubeHistory(histbuild.KgenConfig{Ops: 100000, Objects: 64, Watches: 44, SelWatches: 12,
		UnknownPct: 1, StateWatches: 2, Streams: 2, Oracle: true, Seed: 42})
	events := 0
	for _, w := range h.KubeWatches {
		events += len(w.Events)
	}
	cfg := check.DefaultConfig()
	runtime.GC()
	base := histbuild.HeapInUse()
	peak := histbuild.NewPeakSampler()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range Checks() { // a fresh list: the shared model is built again
			if r := check.Run(c, h, cfg); r.Verdict == check.Fail || r.Verdict == check.Unknown {
				b.Fatalf("%s: %s %s", c.Name, r.Verdict, histbuild.ViolationTexts(r.Violations[:min(3, len(r.Violations))]))
			}
		}
	}
	b.StopTimer()
	top := peak.Stop()
	b.ReportMetric(float64(len(h.KubeOps)), "ops")
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(float64(base)/(1<<20), "history-MB")
	b.ReportMetric(float64(top-min(top, base))/(1<<20), "peak-heap-above-history-MB")
}

// TestKubeGeneratedWritePathsCaught: a simulated run with the write paths,
// with a read showing a dry run's value, fails kube/write-paths; with the
// DELETED of a delete-collection's object taken out of a watch, it fails
// kube/watch-from-rv.
func TestKubeGeneratedWritePathsCaught(t *testing.T) {
	gen := func() *history.History {
		return histbuild.GenKubeHistory(histbuild.KgenConfig{Ops: 4000, Objects: 12, Watches: 2, UnknownPct: 0, WritePaths: true, Seed: 5})
	}
	h := gen()
	var dry, get *history.KubeOperation
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		switch {
		case dry == nil && o.Request.DryRun && o.Response != nil && i > len(h.KubeOps)/2:
			dry = o
		case dry != nil && o.Request.Verb == history.KubeGet && o.Request.Name == dry.Request.Name && o.Response != nil:
			get = o
		}
		if get != nil {
			break
		}
	}
	if get == nil {
		t.Fatal("no dry run followed by a get of its object")
	}
	seen := *get.Response.Object
	seen.Value = dry.Request.Object.Value
	get.Response = &history.KubeResponse{Code: 200, Object: &seen}
	if r := CheckWritePaths(h, check.DefaultConfig()); r.Verdict != check.Fail || !slices.Contains(r.Violations[0].Operations, dry.ID) {
		t.Errorf("a get showing dry run %d's value: %s %s", dry.ID, r.Verdict, histbuild.ViolationTexts(r.Violations))
	}

	h = gen()
	dc := map[string]bool{} // names a delete-collection deleted
	for i := range h.KubeOps {
		if o := &h.KubeOps[i]; o.Request.Verb == history.KubeDeleteCollection && o.Response != nil && len(o.Response.Items) == 1 {
			dc[o.Response.Items[0].Name] = true
		}
	}
	w := h.KubeWatches[0]
	cut := -1
	for i := len(w.Events) / 2; i < len(w.Events)-1 && cut < 0; i++ {
		if e := w.Events[i]; e.Type == history.KubeDeleted && dc[e.Object.Name] {
			cut = i
		}
	}
	if cut < 0 {
		t.Fatal("no DELETED of a delete-collection's object")
	}
	dropped := w.Events[cut]
	w.Events = append(w.Events[:cut:cut], w.Events[cut+1:]...)
	if r := CheckWatchFromRV(h, check.DefaultConfig()); r.Verdict != check.Fail || r.Violations[0].Watch != w.ID {
		t.Errorf("dropping %s: %s %s", model.EventText(dropped), r.Verdict, histbuild.ViolationTexts(r.Violations))
	}
}
