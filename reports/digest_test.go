package reports

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// segments cuts h at the given times, as a segmented run records it: each
// segment has the operations, calls and watches called in it, the watch
// responses and events received in it, the marks made in it, every watch
// open across its start (again, with the same id) and every fault that
// overlaps it (whole, with the same id).
func segments(h *history.History, cuts ...time.Duration) []*history.History {
	bounds := append(append([]time.Duration{-1 << 62}, cuts...), 1<<62)
	var out []*history.History
	for s := 0; s+1 < len(bounds); s++ {
		from, to := bounds[s], bounds[s+1]
		in := func(t time.Duration) bool { return t >= from && t < to }
		g := &history.History{Meta: h.Meta, Cut: h.Cut}
		for _, o := range h.Operations {
			if in(o.Call) {
				g.Operations = append(g.Operations, o)
			}
		}
		for _, c := range h.Calls {
			if in(c.Call) {
				g.Calls = append(g.Calls, c)
			}
		}
		for _, o := range h.KubeOps {
			if in(o.Call) {
				g.KubeOps = append(g.KubeOps, o)
			}
		}
		for _, m := range h.Marks {
			if in(m.Time) {
				g.Marks = append(g.Marks, m)
			}
		}
		for _, f := range h.Faults {
			if f.Start < to && f.End >= from {
				g.Faults = append(g.Faults, f)
			}
		}
		for _, w := range h.Watches {
			if w.Call >= to || (w.End != nil && w.End.Time < from) {
				continue
			}
			c := &history.WatchStream{Watch: w.Watch}
			for _, r := range w.Responses {
				if in(r.Time) {
					c.Responses = append(c.Responses, r)
				}
			}
			if w.End != nil && in(w.End.Time) {
				c.End = w.End
			}
			g.Watches = append(g.Watches, c)
		}
		for _, w := range h.KubeWatches {
			if w.Call >= to || (w.End != nil && w.End.Time < from) {
				continue
			}
			c := &history.KubeWatchStream{KubeWatch: w.KubeWatch}
			for _, e := range w.Events {
				if in(e.Time) {
					c.Events = append(c.Events, e)
				}
			}
			if w.End != nil && in(w.End.Time) {
				c.End = w.End
			}
			g.KubeWatches = append(g.KubeWatches, c)
		}
		out = append(out, g)
	}
	return out
}

// bucketCounts are the page's buckets as numbers: per bucket, the count,
// slowest and histogram of each kind's latency, the failed and unanswered
// calls, the 410s and lists, the lags and the progress notifications.
func bucketCounts(d *Digest) []string {
	t := d.timeline()
	var out []string
	for i, s := range d.buckets(t) {
		line := fmt.Sprintf("%d: failed %+v unanswered %+v gone %d lists %d lag %d/%v/%v progress %d", i, s.failed, s.unanswered, s.gone, s.lists, s.lag.n, s.lag.max, s.lag.bins, s.progress)
		for k := range s.kinds {
			if s.kinds[k].n > 0 {
				line += fmt.Sprintf(" %s %d/%v/%v", d.kinds[k], s.kinds[k].n, s.kinds[k].max, s.kinds[k].bins)
			}
		}
		out = append(out, line)
	}
	return out
}

// A run digested in segments, a fault spanning each cut and the finding in
// one segment only, reports what the whole history does: the same
// result.json (stats, availability, faults, findings), the same buckets
// on the page and the same page.
func TestDigestOfSegments(t *testing.T) {
	etcd, err := history.Load(savedRun)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := history.Load("../checkers/kube/testdata/kube-v1.36.3-faults.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	long := longRun(3*time.Minute, 200, 3)
	for _, c := range []struct {
		name string
		h    *history.History
		cuts []time.Duration
	}{
		{"saved etcd run", etcd, []time.Duration{10 * time.Second, 20 * time.Second}},
		{"saved kube run", kube, []time.Duration{15 * time.Second}},
		// Faults at 25-30 s and 70-75 s span the cuts.
		{"3 minutes", long, []time.Duration{27 * time.Second, 72500 * time.Millisecond, 122 * time.Second}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := c.h
			op := h.Operations[len(h.Operations)/10]
			if len(h.KubeOps) > 0 {
				op = history.Operation{ID: h.KubeOps[len(h.KubeOps)/10].ID, Call: h.KubeOps[len(h.KubeOps)/10].Call}
			}
			bad := check.Result{Name: "watch/reliable", Verdict: check.Fail, Violations: []check.Violation{{Message: "watch 1 missed it", Operations: []int64{op.ID}}}}
			good := check.Result{Name: "watch/reliable", Verdict: check.Pass}
			whole := Summarize(h, []check.Result{bad}, 30)

			segs := segments(h, c.cuts...)
			d := NewDigest()
			spanning := 0
			for i, g := range segs {
				res := []check.Result{good}
				if i == countBelow(c.cuts, op.Call) {
					res = []check.Result{bad}
				}
				if i > 0 {
					for _, f := range g.Faults {
						if slices.ContainsFunc(segs[i-1].Faults, func(e history.Fault) bool { return e.ID == f.ID }) {
							spanning++
						}
					}
				}
				d.Add(g, res)
			}
			if c.name == "3 minutes" && spanning != 2 {
				t.Fatalf("%d faults span a cut, want 2", spanning)
			}
			parts := SummarizeDigest(d, []check.Result{bad}, 30)
			a, _ := json.MarshalIndent(whole, "", " ")
			b, _ := json.MarshalIndent(parts, "", " ")
			if string(a) != string(b) {
				os.WriteFile(filepath.Join(t.TempDir(), "whole.json"), a, 0o644)
				t.Errorf("result of %d segments differs from the whole history's:\n%s", len(segs), firstDiff(string(a), string(b)))
			}
			if len(whole.Findings) != 1 {
				t.Errorf("%d findings, want 1", len(whole.Findings))
			}
			if !reflect.DeepEqual(d.faults, h.Faults) {
				t.Errorf("faults %v, want %v", d.faults, h.Faults)
			}
			w := NewDigest()
			w.Add(h, nil)
			if x, y := bucketCounts(w), bucketCounts(d); !slices.Equal(x, y) {
				for i := range x {
					if i >= len(y) || x[i] != y[i] {
						t.Fatalf("%d buckets, %d of the segments'; first difference:\n%s\n%s", len(x), len(y), x[i], y[min(i, len(y)-1)])
					}
				}
			}
			if w.lagWatches != d.lagWatches || w.lagWatches == 0 {
				t.Errorf("%d watches with a lag, %d in segments", w.lagWatches, d.lagWatches)
			}
			dw, ds := t.TempDir(), t.TempDir()
			if err := WritePage(dw, h, whole); err != nil {
				t.Fatal(err)
			}
			if err := WritePageDigest(ds, d, parts); err != nil {
				t.Fatal(err)
			}
			pw, _ := os.ReadFile(filepath.Join(dw, PageFile))
			ps, _ := os.ReadFile(filepath.Join(ds, PageFile))
			// The same page but for the directory's name in the command line.
			dirs := regexp.MustCompile(`--schedule=\S+`)
			if !slices.Equal(dirs.ReplaceAll(pw, nil), dirs.ReplaceAll(ps, nil)) {
				t.Errorf("the page of the segments differs from the whole history's")
			}
		})
	}
}

func firstDiff(a, b string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("at %d:\n%s\n---\n%s", i, a[max(i-300, 0):min(i+200, len(a))], b[max(i-300, 0):min(i+200, len(b))])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(a), len(b))
}

// countBelow counts the cuts at or before t: the index of t's segment.
func countBelow(cuts []time.Duration, t time.Duration) int {
	n := 0
	for _, c := range cuts {
		if c <= t {
			n++
		}
	}
	return n
}

// The digest's p50 and p99 of each bucket and kind are the exact
// nearest-rank ones within histRelErr, its slowest exactly the slowest.
func TestDigestQuantiles(t *testing.T) {
	h := longRun(2*time.Minute, 300, 1)
	d := NewDigest()
	d.Add(h, nil)
	tl := d.timeline()
	bs := d.buckets(tl)
	exact := map[string][][]float64{}
	for _, c := range facts.Calls(h) {
		if !c.Ok || c.Failed {
			continue
		}
		if exact[c.Kind] == nil {
			exact[c.Kind] = make([][]float64, tl.n)
		}
		i := tl.bucket(c.Start)
		exact[c.Kind][i] = append(exact[c.Kind][i], max(float64(c.Ret-c.Start)/1e6, 0.01))
	}
	checked := 0
	for kind, byBucket := range exact {
		k := d.kindID[kind]
		for i, vs := range byBucket {
			if len(vs) == 0 {
				continue
			}
			slices.Sort(vs)
			s := &bs[i].kinds[k]
			for _, q := range []float64{0.5, 0.99, 1} {
				want := vs[max(int(math.Ceil(q*float64(len(vs))))-1, 0)]
				got := s.quantile(q)
				if q == 1 && got != want || math.Abs(got-want) > want*histRelErr {
					t.Fatalf("%s, bucket %d, q%v: %v, want %v", kind, i, q, got, want)
				}
				checked++
			}
		}
	}
	if checked < 3*120*3 {
		t.Errorf("checked %d quantiles", checked)
	}
}
