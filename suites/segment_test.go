package suites

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/watch"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/workload"
)

// A segmented run against a real etcd: each segment is judged alone and
// dropped, the merged verdicts pass, the file holds the segments with
// their own prefixes (the last with the final phase) and the watches that
// spanned a boundary whole in the segment they ended in, and vigil check
// judges the file as the run did. The same run with a dropped event must
// fail watch/reliable: cutting the run does not blunt the check.
func TestSegmentedRunJudgedSegmentBySegment(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real etcd")
	}
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	fx, dir := startCluster(ctx, t, g, binaries.DefaultEtcdVersion, 1)

	run := func(out, sabotage string) *Outcome {
		wl := workload.DefaultConfig()
		wl.Duration, wl.Rate, wl.FinalTimeout = 20*time.Second, 300, 5*time.Second
		o, err := RunEtcd(ctx, fx, EtcdConfig{Common: Common{Out: filepath.Join(dir, out), Seed: 5, Vigil: "test",
			Checks: check.DefaultConfig(), Segment: 8 * time.Second, Sabotage: sabotage}, Workload: wl})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(o.History).To(BeNil(), "a segmented run keeps no whole history")
		g.Expect(o.Segments).To(Equal(3))
		g.Expect(o.Digest).NotTo(BeNil())
		return o
	}

	healthy := run("healthy", "")
	for _, r := range healthy.Results {
		g.Expect(r.Verdict).NotTo(BeElementOf(check.Fail, check.Unknown), "%s: %s %v", r.Name, r.Reason, r.Violations)
	}
	path := filepath.Join(dir, "healthy", history.FileFor(""))
	var segs []history.Segment
	across := 0
	values := map[string]int64{} // a put's value: the one write that wrote it, in the whole run
	_, n, err := history.LoadSegments(path, func(h *history.History) error {
		for _, o := range h.Operations[len(h.Meta.Segment.Carried):] {
			if o.Request.Kind == history.OpPut && !o.Request.IgnoreValue { // that one keeps the key's value
				prev, dup := values[o.Request.Value]
				g.Expect(dup).To(BeFalse(), "value %q written by operations %d and %d", o.Request.Value, prev, o.ID)
				values[o.Request.Value] = o.ID
			}
		}
		segs = append(segs, *h.Meta.Segment)
		_, end := h.Mark(history.MarkEnd)
		g.Expect(end).To(Equal(h.Meta.Segment.Last), "only the last segment has the run's end mark")
		for _, w := range h.Watches {
			if w.Call < h.Meta.Segment.Start {
				across++ // opened in a segment before: judged whole here, where it ended
			}
		}
		_, final := h.Mark(history.MarkFinalWrite)
		g.Expect(final).To(Equal(h.Meta.Segment.Last), "only the last segment has the final write: segment %+v, marks %+v", h.Meta.Segment, h.Marks)
		g.Expect(h.Operations).NotTo(BeEmpty())
		for _, o := range h.Operations {
			if o.Request.Key != "" {
				g.Expect(o.Request.Key).To(HavePrefix(h.Meta.Prefix))
			}
		}
		return nil
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(Equal(3))
	g.Expect(across).To(BeNumerically(">", 0), "some watch spans a boundary")
	g.Expect(segs[0].Prefix).NotTo(Equal(segs[1].Prefix))
	g.Expect(segs[1].Start).To(Equal(segs[0].End))
	g.Expect(segs[2].Last).To(BeTrue())
	again, err := CheckFile(path, check.DefaultConfig(), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.Segments).To(Equal(3))
	for i, r := range again.Results {
		g.Expect(r.Name).To(Equal(healthy.Results[i].Name))
		g.Expect(r.Verdict).To(Equal(healthy.Results[i].Verdict), "%s rechecked", r.Name)
	}

	broken := run("dropped", "drop-event")
	for _, r := range broken.Results {
		if r.Name == watch.NameReliable {
			g.Expect(r.Verdict).To(Equal(check.Fail), "the dropped event is found in its segment")
		}
	}
}
