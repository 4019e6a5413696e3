package checkers_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/suites"
)

// BenchmarkCheckSegmented judges synthetic segmented runs of 1, 10 and 60
// minutes at about the default rate (550 operations a second, four prefix
// watches: ~12,000 watch events a minute of a single segment's keys, plus
// writes of unknown outcome) the way vigil check does: read from a zstd
// history file one 60 s segment at a time, every check on each, the
// results merged, the reports' digest fed. It reports the time per run
// and the peak live heap while checking: time should grow with the run,
// the peak stay that of one segment. VIGIL_BENCH_MINUTES=240 adds a
// 4-hour run.
func BenchmarkCheckSegmented(b *testing.B) {
	lengths := []int{1, 10, 60}
	if m := os.Getenv("VIGIL_BENCH_MINUTES"); m != "" {
		var n int
		fmt.Sscan(m, &n)
		lengths = append(lengths, n)
	}
	for _, minutes := range lengths {
		b.Run(fmt.Sprintf("%dmin", minutes), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "history.jsonl.zst")
			ops := writeSegmented(b, path, minutes)
			runtime.GC()
			b.ResetTimer()
			var peak uint64
			for i := 0; i < b.N; i++ {
				p := histbuild.NewPeakSampler()
				out, err := suites.CheckFile(path, check.DefaultConfig(), nil)
				peak = max(peak, p.Stop())
				if err != nil {
					b.Fatal(err)
				}
				if out.Segments != minutes {
					b.Fatalf("%d segments judged, want %d", out.Segments, minutes)
				}
				for _, r := range out.Results {
					if r.Verdict == check.Fail || r.Verdict == check.Unknown {
						b.Fatalf("%s: %s %s %v", r.Name, r.Verdict, r.Reason, r.Violations)
					}
				}
			}
			b.StopTimer()
			st, _ := os.Stat(path)
			b.ReportMetric(float64(ops), "operations")
			b.ReportMetric(float64(st.Size())/(1<<20), "file-MB")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}

// writeSegmented writes a segmented history of the given minutes: each a
// segment generated alone (a valid run by construction), stretched to 60 s
// and placed after the one before. It returns the operations written.
func writeSegmented(b *testing.B, path string, minutes int) int {
	b.Helper()
	w, err := history.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	meta := history.Meta{Format: history.FormatVersion, Prefix: histbuild.TestPrefix, Seed: 1}
	if err := w.Write(history.Record{Meta: &meta}); err != nil {
		b.Fatal(err)
	}
	ops := 0
	for k := range minutes {
		h := histbuild.Generate(histbuild.GenConfig{Ops: 33000, Clients: 8, Keys: 16, Watches: 4, FailPct: 1, ApplyPct: 50, Seed: int64(k + 1)})
		start := time.Duration(k) * time.Minute
		stretch(h, start, float64(time.Minute)/float64(h.End()+1))
		ops += len(h.Operations)
		seg := history.Segment{Index: k, Start: start, Prefix: histbuild.TestPrefix}
		recs := []history.Record{{Mark: &history.Mark{Name: history.MarkSegment, Time: start, Segment: &seg}}}
		recs = append(recs, h.Records()[1:]...)
		end := seg
		end.End, end.Last = start+time.Minute, k == minutes-1
		recs = append(recs, history.Record{Mark: &history.Mark{Name: history.MarkSegmentEnd, Time: end.End, Segment: &end}})
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return ops
}

// stretch maps every time t of h to start + t*f.
func stretch(h *history.History, start time.Duration, f float64) {
	at := func(t *time.Duration) { *t = start + time.Duration(float64(*t)*f) }
	for i := range h.Operations {
		at(&h.Operations[i].Call)
		at(&h.Operations[i].Return)
	}
	for _, w := range h.Watches {
		at(&w.Call)
		for i := range w.Responses {
			at(&w.Responses[i].Time)
		}
		if w.End != nil {
			at(&w.End.Time)
		}
	}
	for i := range h.Marks {
		at(&h.Marks[i].Time)
	}
	for i := range h.Faults {
		at(&h.Faults[i].Start)
		at(&h.Faults[i].End)
	}
	for i := range h.Calls {
		at(&h.Calls[i].Call)
		at(&h.Calls[i].Return)
	}
}
