package reports

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// soak makes a synthetic etcd soak run one segment at a time, as a
// segmented run records it, shaped as longRun: 8 clients; ranges, puts,
// deletes, a compaction every 8 s, a status call now and then; latencies
// of a few ms, ten times that while a fault is on, when some calls go
// unanswered; a fault every 15 s for 5 s; watches open all run long
// delivering every write in 20 ms batches, a progress notification every
// 10 s. Only the faults are kept from one segment to the next.
type soak struct {
	d             time.Duration
	rate, watches int
	rnd           *rand.Rand
	from          time.Duration // the next segment's start
	rev           int64
	faults        []history.Fault
	batch         []history.Event
	batchAt       time.Duration
	keys          []string
}

func newSoak(d time.Duration, rate, watches int) *soak {
	s := &soak{d: d, rate: rate, watches: watches, rnd: rand.New(rand.NewSource(1)), rev: 1}
	names := []string{"kill-leader", "pause-follower", "isolate-follower", "watch-drop", "compact-storm"}
	for at, i := 10*time.Second, 0; at+5*time.Second < d; at, i = at+15*time.Second, i+1 {
		s.faults = append(s.faults, history.Fault{ID: int64(i + 1), Name: names[i%len(names)], Targets: []string{fmt.Sprintf("m%d", i%3)}, Start: at, End: at + 5*time.Second})
	}
	for i := range 16 {
		s.keys = append(s.keys, fmt.Sprintf("/vigil/1/k%03d", i))
	}
	return s
}

func (s *soak) faulted(at time.Duration) bool {
	i := int((at - 10*time.Second) / (15 * time.Second))
	return i >= 0 && i < len(s.faults) && at < s.faults[i].End
}

// next is the segment of length seg after the last one, nil past the run.
func (s *soak) next(seg time.Duration) *history.History {
	from, to := s.from, min(s.from+seg, s.d)
	if from >= s.d {
		return nil
	}
	s.from = to
	h := history.New(history.Meta{Vigil: "test", Seed: 1, Prefix: "/vigil/1/",
		Target: history.Target{Kind: "etcd", Version: "v3.6.16", Fixture: "process", Members: 3}})
	for i := range s.faults {
		if f := s.faults[i]; f.Start < to && f.End >= from {
			h.Add(history.Record{Fault: &f})
		}
	}
	for w := 1; w <= s.watches; w++ {
		h.Add(history.Record{Watch: &history.Watch{ID: int64(w), Client: 100 + w, Request: history.WatchRequest{Key: "/vigil/1/", End: "/vigil/10"}}})
		if from == 0 {
			h.Add(history.Record{WatchResponse: &history.WatchResponse{Watch: int64(w), Time: time.Millisecond, Revision: 1, Created: true}})
		}
	}
	flush := func() {
		for w := 1; w <= s.watches && len(s.batch) > 0; w++ {
			at := s.batchAt + time.Duration(s.rnd.ExpFloat64()*float64(2*time.Millisecond))
			h.Add(history.Record{WatchResponse: &history.WatchResponse{Watch: int64(w), Time: at, Revision: s.batch[len(s.batch)-1].KV.ModRevision, Events: s.batch}})
		}
		s.batch = nil
	}
	rate := time.Duration(s.rate)
	for i := int((from*rate + time.Second - 1) / time.Second); ; i++ {
		call := time.Duration(i) * time.Second / rate
		if call >= to {
			break
		}
		lat := time.Duration(float64(2*time.Millisecond) * math.Exp(s.rnd.NormFloat64()))
		if s.faulted(call) {
			lat *= 10
		}
		o, ev := synthOp(s.rnd, i, s.rate, s.keys[s.rnd.Intn(len(s.keys))], call, lat, s.faulted(call), &s.rev)
		if ev != nil {
			if o.Return-s.batchAt > 20*time.Millisecond {
				flush()
				s.batchAt = o.Return
			}
			s.batch = append(s.batch, *ev)
		}
		h.Add(history.Record{Op: &o})
	}
	for w := 1; w <= s.watches; w++ {
		for at := (from/(10*time.Second) + 1) * 10 * time.Second; at < to; at += 10 * time.Second {
			h.Add(history.Record{WatchResponse: &history.WatchResponse{Watch: int64(w), Time: at, Revision: s.rev, Progress: true}})
		}
	}
	if to == s.d {
		flush()
		for w := 1; w <= s.watches; w++ {
			h.Add(history.Record{WatchEnd: &history.WatchEnd{Watch: int64(w), Time: s.d, Reason: history.EndClient}})
		}
		h.Add(history.Record{Mark: &history.Mark{Name: history.MarkEnd, Time: s.d}})
	}
	return h
}

// BenchmarkDigest digests synthetic soak runs of 1, 10 and 60 minutes at
// 550 calls and about 1,500 watch events a second, in segments of 60 s,
// and reports what the digest keeps (the live heap it adds, after a
// collection with every segment dropped) and the size of the page drawn
// from it. VIGIL_BENCH_HOURS=4 adds a run of that many hours.
func BenchmarkDigest(b *testing.B) {
	lengths := []time.Duration{time.Minute, 10 * time.Minute, time.Hour}
	if hours := os.Getenv("VIGIL_BENCH_HOURS"); hours != "" {
		var n int
		fmt.Sscan(hours, &n)
		lengths = append(lengths, time.Duration(n)*time.Hour)
	}
	for _, d := range lengths {
		b.Run(fmt.Sprintf("%dm", int(d.Minutes())), func(b *testing.B) {
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				s := newSoak(d, 550, 6)
				dg := NewDigest()
				ops, events := 0, 0
				for h := s.next(time.Minute); h != nil; h = s.next(time.Minute) {
					ops += len(h.Operations)
					for _, w := range h.Watches {
						for _, r := range w.Responses {
							events += len(r.Events)
						}
					}
					dg.Add(h, nil)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				plots := int64(len(dg.slots)) * 0
				for i := range dg.slots {
					plots += slotBytes(&dg.slots[i])
				}
				dir := b.TempDir()
				r := SummarizeDigest(dg, nil, d.Seconds())
				if err := WritePageDigest(dir, dg, r); err != nil {
					b.Fatal(err)
				}
				st, err := os.Stat(filepath.Join(dir, PageFile))
				if err != nil {
					b.Fatal(err)
				}
				if st.Size() > 5<<20 {
					b.Errorf("%s: report.html is %d bytes, over 5 MB", d, st.Size())
				}
				b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)), "retained_B")
				b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse)), "heapinuse_B")
				b.ReportMetric(float64(plots), "slots_B")
				b.ReportMetric(float64(len(dg.slots)), "slots")
				b.ReportMetric(float64(st.Size()), "page_B")
				b.ReportMetric(float64(ops), "ops")
				b.ReportMetric(float64(events), "events")
				runtime.KeepAlive(dg)
				runtime.KeepAlive(s)
			}
		})
	}
}

// slotBytes is about what a slot holds, its histograms' bins included.
func slotBytes(s *slot) int64 {
	const summaryB, binB = 40, 8
	n := int64(160) + int64(cap(s.kinds))*summaryB + int64(cap(s.lag.bins))*binB
	for k := range s.kinds {
		n += int64(cap(s.kinds[k].bins)) * binB
	}
	return n
}
