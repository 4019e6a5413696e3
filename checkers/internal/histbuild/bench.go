package histbuild

import (
	"runtime/metrics"
	"sync"
	"time"
)

func HeapInUse() uint64 {
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

func NewPeakSampler() *peakSampler {
	p := &peakSampler{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			v := HeapInUse()
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

func (p *peakSampler) Stop() uint64 {
	close(p.done)
	p.wg.Wait()
	return p.peak
}
