package reports

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// longRun is a synthetic etcd run of d at rate calls per second, shaped as
// a soak run (checkers/internal/histbuild is internal to checkers): 8
// clients; ranges, puts, deletes, a compaction every 8 s and a status
// call now and then; latencies of a few ms, ten times that while a fault is
// on, when some calls also go unanswered; a fault every 15 s for 5 s;
// watches delivering every write, with a progress notification every 10 s.
func longRun(d time.Duration, rate, watches int) *history.History {
	rnd := rand.New(rand.NewSource(1))
	h := history.New(history.Meta{Vigil: "test", Seed: 1, Prefix: "/vigil/1/",
		Target: history.Target{Kind: "etcd", Version: "v3.6.16", Fixture: "process", Members: 3}})
	names := []string{"kill-leader", "pause-follower", "isolate-follower", "watch-drop", "compact-storm"}
	var faults []history.Fault
	for at, i := 10*time.Second, 0; at+5*time.Second < d; at, i = at+15*time.Second, i+1 {
		f := history.Fault{ID: int64(i + 1), Name: names[i%len(names)], Targets: []string{fmt.Sprintf("m%d", i%3)}, Start: at, End: at + 5*time.Second}
		faults = append(faults, f)
		h.Add(history.Record{Fault: &f})
	}
	faulted := func(at time.Duration) bool {
		i := int((at - 10*time.Second) / (15 * time.Second))
		return i >= 0 && i < len(faults) && at < faults[i].End
	}
	for w := 1; w <= watches; w++ {
		h.Add(history.Record{Watch: &history.Watch{ID: int64(w), Client: 100 + w, Request: history.WatchRequest{Key: "/vigil/1/", End: "/vigil/10"}}})
		h.Add(history.Record{WatchResponse: &history.WatchResponse{Watch: int64(w), Time: time.Millisecond, Revision: 1, Created: true}})
	}
	keys := make([]string, 16)
	for i := range keys {
		keys[i] = fmt.Sprintf("/vigil/1/k%03d", i)
	}
	// Each watch gets the writes acknowledged in each 20 ms as one response.
	var batch []history.Event
	var batchAt time.Duration
	flush := func() {
		for w := 1; w <= watches && len(batch) > 0; w++ {
			at := batchAt + time.Duration(rnd.ExpFloat64()*float64(2*time.Millisecond))
			h.Add(history.Record{WatchResponse: &history.WatchResponse{Watch: int64(w), Time: at, Revision: batch[len(batch)-1].KV.ModRevision, Events: batch}})
		}
		batch = nil
	}
	rev, n := int64(1), int(d.Seconds()*float64(rate))
	for i := 0; i < n; i++ {
		call := time.Duration(i) * time.Second / time.Duration(rate)
		lat := time.Duration(float64(2*time.Millisecond) * math.Exp(rnd.NormFloat64()))
		if faulted(call) {
			lat *= 10
		}
		o, ev := synthOp(rnd, i, rate, keys[rnd.Intn(len(keys))], call, lat, faulted(call), &rev)
		if ev != nil {
			if o.Return-batchAt > 20*time.Millisecond {
				flush()
				batchAt = o.Return
			}
			batch = append(batch, *ev)
		}
		h.Add(history.Record{Op: &o})
	}
	flush()
	for w := 1; w <= watches; w++ {
		for at := 10 * time.Second; at < d; at += 10 * time.Second {
			h.Add(history.Record{WatchResponse: &history.WatchResponse{Watch: int64(w), Time: at, Revision: rev, Progress: true}})
		}
		h.Add(history.Record{WatchEnd: &history.WatchEnd{Watch: int64(w), Time: d, Reason: history.EndClient}})
	}
	h.Add(history.Record{Mark: &history.Mark{Name: history.MarkEnd, Time: d}})
	return h
}

// longResult is h's result with one finding, a watch missing an event
// half-way, so that the page marks a finding.
func longResult(h *history.History) Result {
	w := h.Watches[0]
	ri := len(w.Responses) / 2
	op := h.Operations[len(h.Operations)/2]
	return Summarize(h, []check.Result{{Name: "watch/reliable", Verdict: check.Fail, Violations: []check.Violation{{
		Message:    fmt.Sprintf("watch 1 missed the PUT at revision %d", op.Response.Revision),
		Operations: []int64{op.ID}, Events: []history.EventAt{{Watch: w.ID, Response: ri}}}}}}, h.End().Seconds())
}

// A soak run's page stays small: 10 minutes at 600 calls per second with
// a fault every 15 s (360,000 calls, 290,000 watch events) make a
// report.html under 5 MB with every fault listed and the finding marked,
// and an hour at 100 calls per second (as many calls, 239 faults) one
// larger only by its faults, the plots having reached their buckets' cap.
func TestLongRunPageIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds long histories")
	}
	var sizes []int
	for _, c := range []struct {
		d    time.Duration
		rate int
	}{{10 * time.Minute, 600}, {time.Hour, 100}} {
		h := longRun(c.d, c.rate, 2)
		dir := t.TempDir()
		if err := WritePage(dir, h, longResult(h)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, PageFile))
		if err != nil {
			t.Fatal(err)
		}
		page := string(b)
		sizes = append(sizes, len(b))
		t.Logf("%s: %d calls, %d faults: report.html %d bytes, %d SVG paths", c.d, len(h.Operations), len(h.Faults), len(b), strings.Count(page, "<path"))
		if len(b) > 5<<20 {
			t.Errorf("%s: report.html is %d bytes, over 5 MB", c.d, len(b))
		}
		for _, want := range []string{">finding 1<", "call latency", "throughput", "watch delivery lag", "the " + fmt.Sprint(len(h.Faults)) + " fault(s)"} {
			if !strings.Contains(page, want) {
				t.Errorf("%s: the page lacks %q", c.d, want)
			}
		}
		for _, f := range h.Faults {
			if !strings.Contains(page, fmt.Sprintf("<td>%.1f</td><td>%.1f</td>", f.Start.Seconds(), f.End.Seconds())) {
				t.Fatalf("%s: fault %d (%s at %s) is not listed", c.d, f.ID, f.Name, f.Start)
			}
		}
	}
	// Each fault costs a row in the table and a band on each plot (at
	// most: bands closer than a point are merged, rows past 500 not
	// shown); the plots, of 600 buckets each, do not grow.
	if grew := sizes[1] - sizes[0]; grew > (239-39)*3<<10 {
		t.Errorf("six times the run made the page %d bytes larger", grew)
	}
}

// BenchmarkWritePageLong draws the page of the 10-minute synthetic run.
func BenchmarkWritePageLong(b *testing.B) {
	h := longRun(10*time.Minute, 600, 2)
	r := longResult(h)
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if err := WritePage(dir, h, r); err != nil {
			b.Fatal(err)
		}
	}
	st, _ := os.Stat(filepath.Join(dir, PageFile))
	b.ReportMetric(float64(st.Size()), "page_bytes")
}

// synthOp is the i-th call of a synthetic run at rate calls a second, on
// key, called at call and answered lat later: a compaction every 8 s, else
// mostly puts, deletes and reads, one in a hundred unanswered while a
// fault is on. A put or delete takes the next revision (*rev) and returns
// the event a watch of its key gets.
func synthOp(rnd *rand.Rand, i, rate int, key string, call, lat time.Duration, faulted bool, rev *int64) (history.Operation, *history.Event) {
	o := history.Operation{ID: int64(i + 1), Client: i % 8, Call: call, Return: call + lat}
	switch x := rnd.Intn(1000); {
	case i%(8*rate) == 0:
		o.Request = history.Request{Kind: history.OpCompact, Revision: *rev - 10}
	case x < 2:
		o.Request = history.Request{Kind: history.OpStatus}
	case x < 400:
		o.Request = history.Request{Kind: history.OpPut, Key: key, Value: "v"}
	case x < 450:
		o.Request = history.Request{Kind: history.OpDelete, Key: key}
	default:
		o.Request = history.Request{Kind: history.OpRange, Key: key}
	}
	switch {
	case faulted && rnd.Intn(100) == 0:
		o.Error, o.Code, o.Return = "context deadline exceeded", history.ErrUnknown, call+2*time.Second
	case o.Request.Kind == history.OpPut || o.Request.Kind == history.OpDelete:
		*rev++
		o.Response = &history.Response{Revision: *rev}
		ev := history.Event{Type: history.EventPut, KV: history.KV{Key: key, Value: "v", ModRevision: *rev, CreateRevision: *rev, Version: 1}}
		if o.Request.Kind == history.OpDelete {
			o.Response.Deleted = 1
			ev = history.Event{Type: history.EventDelete, KV: history.KV{Key: key, ModRevision: *rev}}
		}
		return o, &ev
	default:
		o.Response = &history.Response{Revision: *rev}
	}
	return o, nil
}
