package linearizable

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
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
	benchLinearizable(b, histbuild.GenConfig{Ops: 10000, Clients: 10, Keys: 16, Watches: 1, FailPct: 2, ApplyPct: 50, Seed: 42})
}

// BenchmarkLinearizable10kNoWatch is the same without a watch, with 1% of
// writes of unknown outcome: only reads tell where they went.
func BenchmarkLinearizable10kNoWatch(b *testing.B) {
	benchLinearizable(b, histbuild.GenConfig{Ops: 10000, Clients: 10, Keys: 16, FailPct: 1, ApplyPct: 50, Seed: 42})
}

// BenchmarkLinearizable10k16Clients: 10,000 operations from 16 clients.
func BenchmarkLinearizable10k16Clients(b *testing.B) {
	benchLinearizable(b, histbuild.GenConfig{Ops: 10000, Clients: 16, Keys: 16, Watches: 1, FailPct: 2, ApplyPct: 50, Seed: 42})
}

// BenchmarkLinearizable100k16Clients: 100,000 operations from 16 clients
// over 16 keys, 2% of writes of unknown outcome, one prefix watch. The goal
// is under 60 s and 2 GiB on two cores.
func BenchmarkLinearizable100k16Clients(b *testing.B) {
	benchLinearizable(b, histbuild.GenConfig{Ops: 100000, Clients: 16, Keys: 16, Watches: 1, FailPct: 2, ApplyPct: 50, Seed: 42})
}

// BenchmarkLinearizable100kUnknown5: 5% of the writes of unknown outcome,
// half of them applied, with a watch.
func BenchmarkLinearizable100kUnknown5(b *testing.B) {
	benchLinearizable(b, histbuild.GenConfig{Ops: 100000, Clients: 16, Keys: 16, Watches: 1, FailPct: 5, ApplyPct: 50, Seed: 42})
}

// BenchmarkLinearizable100kUnknown20: 20% of the writes of unknown outcome.
func BenchmarkLinearizable100kUnknown20(b *testing.B) {
	benchLinearizable(b, histbuild.GenConfig{Ops: 100000, Clients: 16, Keys: 16, Watches: 1, FailPct: 20, ApplyPct: 50, Seed: 42})
}

// BenchmarkLinearizable100kUnknown5NoWatch: 5% of unknown outcome and no
// watch: the writes no read saw must be searched for.
func BenchmarkLinearizable100kUnknown5NoWatch(b *testing.B) {
	benchLinearizable(b, histbuild.GenConfig{Ops: 100000, Clients: 16, Keys: 16, FailPct: 5, ApplyPct: 50, Seed: 42})
}

// BenchmarkLinearizable100kUnknown20NoWatch: 20% and no watch.
func BenchmarkLinearizable100kUnknown20NoWatch(b *testing.B) {
	benchLinearizable(b, histbuild.GenConfig{Ops: 100000, Clients: 16, Keys: 16, FailPct: 20, ApplyPct: 50, Seed: 42})
}

func benchLinearizable(b *testing.B, g histbuild.GenConfig) {
	h := histbuild.Generate(g)
	cfg := check.DefaultConfig()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	historyHeap := ms.HeapInuse
	peak := startLinPeakSampler(5 * time.Millisecond)
	b.ResetTimer()
	var r check.Result
	for i := 0; i < b.N; i++ {
		r = Check(h, cfg)
		// A valid history never fails; running out of budget is a figure.
		if r.Verdict == check.Fail || r.Verdict == check.Skipped {
			b.Fatalf("%s %s %+v", r.Verdict, r.Reason, r.Violations)
		}
	}
	b.StopTimer()
	heap, sys := peak.stop()
	Inconclusive := 0.0
	if r.Verdict == check.Unknown {
		Inconclusive = 1
		b.Logf("unknown: %s", r.Reason)
	}
	b.ReportMetric(float64(len(h.Operations)), "ops")
	b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(sys)/(1<<20), "peak-sys-MiB")
	b.ReportMetric(float64(historyHeap)/(1<<20), "history-MiB")
	b.ReportMetric(r.Figures["searches"], "searches")
	b.ReportMetric(r.Figures["search_max_operations"], "max-search-ops")
	b.ReportMetric(Inconclusive, "unknown")
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
