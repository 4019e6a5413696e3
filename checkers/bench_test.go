package checkers

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// The kv/linearizable benchmarks check valid histories the simulator makes
// (gen_test.go): puts, gets, prefix reads with and without limits, reads at
// past and future revisions, compare-and-swap txns (a third of them writing
// a second key), deletes and compactions, with clients whose requests
// overlap in time. Each reports, besides time and allocations, the peak of
// the heap in use and of the memory obtained from the OS while it ran
// (sampled every 5 ms, the history itself included), the heap the history
// alone holds, and how much the check had to search.

// BenchmarkLinearizable10k: 10,000 operations from 10 clients over 16
// keys, 2% of the writes of unknown outcome (half of them applied), with
// one prefix watch as the workload runs it.
func BenchmarkLinearizable10k(b *testing.B) {
	benchLinearizable(b, genConfig{ops: 10000, clients: 10, keys: 16, watches: 1, failPct: 2, applyPct: 50, seed: 42})
}

// BenchmarkLinearizable10kNoWatch is the same without a watch, with 1% of
// writes of unknown outcome: only reads tell where they went.
func BenchmarkLinearizable10kNoWatch(b *testing.B) {
	benchLinearizable(b, genConfig{ops: 10000, clients: 10, keys: 16, failPct: 1, applyPct: 50, seed: 42})
}

// BenchmarkLinearizable10k16Clients: 10,000 operations from 16 clients.
func BenchmarkLinearizable10k16Clients(b *testing.B) {
	benchLinearizable(b, genConfig{ops: 10000, clients: 16, keys: 16, watches: 1, failPct: 2, applyPct: 50, seed: 42})
}

// BenchmarkLinearizable100k16Clients: 100,000 operations from 16 clients
// over 16 keys, 2% of writes of unknown outcome, one prefix watch. The goal
// is under 60 s and 2 GiB on two cores.
func BenchmarkLinearizable100k16Clients(b *testing.B) {
	benchLinearizable(b, genConfig{ops: 100000, clients: 16, keys: 16, watches: 1, failPct: 2, applyPct: 50, seed: 42})
}

// BenchmarkLinearizable100kUnknown5: 5% of the writes of unknown outcome,
// half of them applied, with a watch.
func BenchmarkLinearizable100kUnknown5(b *testing.B) {
	benchLinearizable(b, genConfig{ops: 100000, clients: 16, keys: 16, watches: 1, failPct: 5, applyPct: 50, seed: 42})
}

// BenchmarkLinearizable100kUnknown20: 20% of the writes of unknown outcome.
func BenchmarkLinearizable100kUnknown20(b *testing.B) {
	benchLinearizable(b, genConfig{ops: 100000, clients: 16, keys: 16, watches: 1, failPct: 20, applyPct: 50, seed: 42})
}

// BenchmarkLinearizable100kUnknown5NoWatch: 5% of unknown outcome and no
// watch: the writes no read saw must be searched for.
func BenchmarkLinearizable100kUnknown5NoWatch(b *testing.B) {
	benchLinearizable(b, genConfig{ops: 100000, clients: 16, keys: 16, failPct: 5, applyPct: 50, seed: 42})
}

// BenchmarkLinearizable100kUnknown20NoWatch: 20% and no watch.
func BenchmarkLinearizable100kUnknown20NoWatch(b *testing.B) {
	benchLinearizable(b, genConfig{ops: 100000, clients: 16, keys: 16, failPct: 20, applyPct: 50, seed: 42})
}

func benchLinearizable(b *testing.B, g genConfig) {
	h := generate(g)
	cfg := DefaultConfig()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	historyHeap := ms.HeapInuse
	peak := startLinPeakSampler(5 * time.Millisecond)
	b.ResetTimer()
	var r Result
	for i := 0; i < b.N; i++ {
		r = CheckLinearizable(h, cfg)
		// A valid history never fails; running out of budget is a figure.
		if r.Verdict == Fail || r.Verdict == Skipped {
			b.Fatalf("%s %s %+v", r.Verdict, r.Reason, r.Violations)
		}
	}
	b.StopTimer()
	heap, sys := peak.stop()
	unknown := 0.0
	if r.Verdict == Unknown {
		unknown = 1
		b.Logf("unknown: %s", r.Reason)
	}
	b.ReportMetric(float64(len(h.Operations)), "ops")
	b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(sys)/(1<<20), "peak-sys-MiB")
	b.ReportMetric(float64(historyHeap)/(1<<20), "history-MiB")
	b.ReportMetric(r.Figures["searches"], "searches")
	b.ReportMetric(r.Figures["search_max_operations"], "max-search-ops")
	b.ReportMetric(unknown, "unknown")
}

// linPeakSampler samples the heap in use and the memory obtained from the OS
// until stopped, keeping the highest of each.
type linPeakSampler struct {
	done      chan struct{}
	wg        sync.WaitGroup
	heap, sys uint64
}

func startLinPeakSampler(every time.Duration) *linPeakSampler {
	p := &linPeakSampler{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			p.sample()
			select {
			case <-p.done:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

func (p *linPeakSampler) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	p.heap, p.sys = max(p.heap, ms.HeapInuse), max(p.sys, ms.Sys)
}

func (p *linPeakSampler) stop() (heap, sys uint64) {
	close(p.done)
	p.wg.Wait()
	p.sample()
	return p.heap, p.sys
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
