package watch

import (
	"runtime"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
)

// BenchmarkWatchChecks1M runs every watch check on a simulated valid run
// of about a million watch events: 34,000 revisions, 24 prefix watches
// (prev_kv, progress notifications, past start revisions, resumptions),
// single-key and filtered watches, writes of unknown outcome and a
// compaction. Besides time and allocations it reports the peak heap in
// use while the checks ran, above what the history itself holds.
func BenchmarkWatchChecks1M(b *testing.B) {
	h := histbuild.GenWatchHistory(histbuild.WgenConfig{Revisions: 34000, Keys: 16, PrefixWatches: 24, UnknownPct: 1, Seed: 42})
	events := 0
	for _, w := range h.Watches {
		for _, r := range w.Responses {
			events += len(r.Events)
		}
	}
	checks, cfg := Checks(), check.DefaultConfig()
	runtime.GC()
	base := histbuild.HeapInUse()
	peak := histbuild.NewPeakSampler()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range checks {
			if r := c.Run(h, cfg); r.Verdict != check.Pass {
				b.Fatalf("%s: %s %s %v", c.Name, r.Verdict, r.Reason, r.Violations)
			}
		}
	}
	b.StopTimer()
	top := peak.Stop()
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(float64(base)/(1<<20), "history-MB")
	b.ReportMetric(float64(top-min(top, base))/(1<<20), "peak-heap-above-history-MB")
}

// BenchmarkWatch100k runs the four watch checks over about 100,000 events:
// ten prefix watches over a run of about 10,000 committed changes.
func BenchmarkWatch100k(b *testing.B) {
	h := histbuild.Generate(histbuild.GenConfig{Ops: 22000, Clients: 10, Keys: 16, Watches: 10, FailPct: 1, ApplyPct: 50, Seed: 42})
	events := 0
	for _, w := range h.Watches {
		events += len(w.Events())
	}
	checks := []check.Check{
		{Name: NameOrdered, Run: CheckOrdered}, {Name: NameUnique, Run: CheckUnique},
		{Name: NameReliable, Run: CheckReliable}, {Name: NameLiveness, Run: CheckLiveness},
	}
	cfg := check.DefaultConfig()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range checks {
			if r := c.Run(h, cfg); r.Verdict != check.Pass {
				b.Fatalf("%s: %s %s %+v", c.Name, r.Verdict, r.Reason, r.Violations)
			}
		}
	}
	b.ReportMetric(float64(events), "events")
}
