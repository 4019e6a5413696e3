package checkers

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// watchChecks are every watch/* check, in report order.
func watchChecks() []Check {
	var out []Check
	for _, c := range All() {
		if len(c.Name) > 6 && c.Name[:6] == "watch/" {
			out = append(out, c)
		}
	}
	return out
}

// BenchmarkWatchChecks1M runs every watch check on a simulated valid run
// of about a million watch events: 34,000 revisions, 24 prefix watches
// (prev_kv, progress notifications, past start revisions, resumptions),
// single-key and filtered watches, writes of unknown outcome and a
// compaction. Besides time and allocations it reports the peak heap in
// use while the checks ran, above what the history itself holds.
func BenchmarkWatchChecks1M(b *testing.B) {
	h := genWatchHistory(wgenConfig{revisions: 34000, keys: 16, prefixWatches: 24, unknownPct: 1, seed: 42})
	events := 0
	for _, w := range h.Watches {
		for _, r := range w.Responses {
			events += len(r.Events)
		}
	}
	checks, cfg := watchChecks(), DefaultConfig()
	runtime.GC()
	base := heapInUse()
	peak := newPeakSampler()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range checks {
			if r := c.Run(h, cfg); r.Verdict != Pass {
				b.Fatalf("%s: %s %s %v", c.Name, r.Verdict, r.Reason, r.Violations)
			}
		}
	}
	b.StopTimer()
	top := peak.stop()
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(float64(base)/(1<<20), "history-MB")
	b.ReportMetric(float64(top-min(top, base))/(1<<20), "peak-heap-above-history-MB")
}

func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// peakSampler polls the live heap every millisecond (tests may read the
// clock; checkers may not).
type peakSampler struct {
	mu   sync.Mutex
	peak uint64
	done chan struct{}
	wg   sync.WaitGroup
}

func newPeakSampler() *peakSampler {
	p := &peakSampler{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			v := heapInUse()
			p.mu.Lock()
			p.peak = max(p.peak, v)
			p.mu.Unlock()
			select {
			case <-p.done:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

func (p *peakSampler) stop() uint64 {
	close(p.done)
	p.wg.Wait()
	return p.peak
}
