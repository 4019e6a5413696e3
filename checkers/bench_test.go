package checkers

import (
	"testing"
)

// BenchmarkLinearizable10k checks a valid history of 10,000 operations
// from 10 concurrent clients over 16 keys, 2% of its writes with an
// unknown outcome (half of them applied), with one prefix watch as the
// workload runs it.
func BenchmarkLinearizable10k(b *testing.B) {
	benchLinearizable(b, genConfig{ops: 10000, clients: 10, keys: 16, watches: 1, failPct: 2, applyPct: 50, seed: 42})
}

// BenchmarkLinearizable10kNoWatch is the same without a watch, with 1% of
// writes of unknown outcome: the search has only the reads to place them.
func BenchmarkLinearizable10kNoWatch(b *testing.B) {
	benchLinearizable(b, genConfig{ops: 10000, clients: 10, keys: 16, failPct: 1, applyPct: 50, seed: 42})
}

func benchLinearizable(b *testing.B, g genConfig) {
	h := generate(g)
	cfg := DefaultConfig()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := CheckLinearizable(h, cfg); r.Verdict != Pass {
			b.Fatalf("%s %s %+v", r.Verdict, r.Reason, r.Violations)
		}
	}
	b.ReportMetric(float64(len(h.Operations)), "ops")
}

// BenchmarkWatch100k runs the four watch checks over about 100,000 events:
// ten prefix watches over a run of about 10,000 committed changes.
func BenchmarkWatch100k(b *testing.B) {
	h := generate(genConfig{ops: 22000, clients: 10, keys: 16, watches: 10, failPct: 1, applyPct: 50, seed: 42})
	events := 0
	for _, w := range h.Watches {
		events += len(w.Events())
	}
	checks := []Check{
		{Name: NameWatchOrdered, Run: CheckWatchOrdered}, {Name: NameWatchUnique, Run: CheckWatchUnique},
		{Name: NameWatchReliable, Run: CheckWatchReliable}, {Name: NameWatchLiveness, Run: CheckWatchLiveness},
	}
	cfg := DefaultConfig()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range checks {
			if r := c.Run(h, cfg); r.Verdict != Pass {
				b.Fatalf("%s: %s %s %+v", c.Name, r.Verdict, r.Reason, r.Violations)
			}
		}
	}
	b.ReportMetric(float64(events), "events")
}
