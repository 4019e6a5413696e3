package suites

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/kube"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/internal/longtest"
	"github.com/vigil-suite/vigil/workload"
)

// A segmented Kubernetes run over two kube-apiserver replicas, one killed
// now and then: 40 s in 15 s segments, each judged by every Kubernetes
// check as soon as it is complete and dropped, the merged verdicts pass;
// the file holds three segments, each after the first with its context,
// and watches that began in a segment before (judged whole where they
// ended); vigil check judges the file as the run did.
func TestSegmentedKubeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fx := startKube(t, ctx, 2, 1, true)
	dir := t.TempDir()
	wl := workload.DefaultKubeConfig()
	wl.Duration = 40 * time.Second
	schedule := chaos.Plan(11, []string{"kill-apiserver"}, 10*time.Second, wl.Duration)
	out, err := RunKube(ctx, fx, KubeConfig{Common: Common{Out: dir, Seed: 11, Vigil: "test", Checks: check.DefaultConfig(),
		Schedule: schedule, Logf: t.Logf, Segment: 15 * time.Second},
		Workload: wl, Servers: kubeServers(fx), Etcd: fx.Endpoints()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.Interrupted).To(BeFalse())
	g.Expect(out.History).To(BeNil(), "a segmented run keeps no whole history")
	g.Expect(out.Segments).To(Equal(3))
	for _, r := range out.Results {
		if !r.Should {
			g.Expect(r.Verdict).To(Or(Equal(check.Pass), Equal(check.Skipped)), "%s: %s %v", r.Name, r.Reason, r.Violations)
		}
	}

	path := filepath.Join(dir, history.FileFor(""))
	across, contexts := 0, 0
	_, n, err := history.LoadSegments(path, func(h *history.History) error {
		seg := h.Meta.Segment
		if seg.Index > 0 {
			g.Expect(h.Context).NotTo(BeNil(), "segment %d has its context", seg.Index)
			contexts++
		}
		for _, w := range h.KubeWatches {
			if w.Call < seg.Start {
				across++
			}
			if !seg.Last {
				g.Expect(w.End).NotTo(BeNil(), "a watch of segment %d that never ended belongs to a later one", seg.Index)
				g.Expect(w.End.Time).To(BeNumerically("<=", seg.End), "a watch ended after its segment's end belongs to the next")
			}
		}
		_, final := h.Mark(history.MarkFinalWrite)
		g.Expect(final).To(Equal(seg.Last), "only the last segment has the final write")
		return nil
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(Equal(3))
	g.Expect(contexts).To(Equal(2))
	g.Expect(across).To(BeNumerically(">", 0), "some watch spans a boundary")
	again, err := CheckFile(path, check.DefaultConfig(), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.Segments).To(Equal(3))
	for i, r := range again.Results {
		g.Expect(r.Name).To(Equal(out.Results[i].Name))
		g.Expect(r.Verdict).To(Equal(out.Results[i].Verdict), "%s rechecked", r.Name)
	}
}

// --fail-fast in a segmented Kubernetes run: the live judge finds the
// sabotage's dropped event while the run goes on and stops it long before
// its 90 s; the check that owns the guarantee fails.
func TestSegmentedKubeRunFailsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	longtest.Skip(t)
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fx := startKube(t, ctx, 1, 1, true)
	dir := t.TempDir()
	wl := workload.DefaultKubeConfig()
	wl.Duration = 90 * time.Second
	out, err := RunKube(ctx, fx, KubeConfig{Common: Common{Out: dir, Seed: 4, Vigil: "test", Checks: check.DefaultConfig(),
		Sabotage: "kube-drop-event", LiveEvery: time.Second, FailFast: true, Segment: 15 * time.Second},
		Workload: wl, Servers: kubeServers(fx), Etcd: fx.Endpoints()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.Interrupted).To(BeFalse())
	g.Expect(out.StoppedEarly).To(ContainSubstring(kube.NameWatchFromRV))
	g.Expect(out.Digest.End()).To(BeNumerically("<", 60*time.Second), "stopped long before the run's end")
	failed := false
	for _, r := range out.Results {
		if r.Name == kube.NameWatchFromRV {
			failed = r.Verdict == check.Fail
		}
	}
	g.Expect(failed).To(BeTrue(), "kube/watch-from-rv fails")
}
