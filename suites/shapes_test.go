package suites

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/workload"
)

// Every workload shape sends what it says, and a healthy etcd passes every
// check under it (a shape that made a check misjudge would be a vigil bug).
func TestWorkloadShapesOnHealthyEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real etcd")
	}
	for _, shape := range workload.Shapes()[1:] {
		t.Run(shape, func(t *testing.T) {
			g := NewWithT(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			fx, dir := startCluster(ctx, t, g, binaries.DefaultEtcdVersion, 3)

			wl := workload.DefaultConfig()
			wl.Shape, wl.Duration = shape, 6*time.Second
			out, err := RunEtcd(ctx, fx, EtcdConfig{Common: Common{Out: dir, Seed: 9, Vigil: "test", Checks: check.DefaultConfig()}, Workload: wl})
			g.Expect(err).NotTo(HaveOccurred())
			for _, r := range out.Results {
				if r.Verdict == check.Unknown && strings.Contains(r.Reason, "gathered nothing this check judges") {
					continue // a shape that sends few of a check's requests may give it no evidence: honest, not a false alarm
				}
				g.Expect(r.Verdict).To(Or(Equal(check.Pass), Equal(check.Skipped)), "%s: %s %v", r.Name, r.Reason, r.Violations)
			}
			expectShape(g, shape, wl.Clients, out.History)
		})
	}
}

// expectShape checks that the workload's own clients sent the shape's mix.
func expectShape(g Gomega, shape string, clients int, h *history.History) {
	kinds := map[history.OpKind]int{}
	modCompares, pinnedPages, compactions := 0, 0, 0
	for _, o := range h.Operations {
		if o.Client >= clients && o.Request.Kind != history.OpCompact {
			continue // the control client's reads and final write are every shape's
		}
		kinds[o.Request.Kind]++
		if o.Request.Kind == history.OpCompact {
			compactions++
		}
		for _, c := range o.Request.Compares {
			if c.Target == "mod" {
				modCompares++
			}
		}
		if o.Request.Kind == history.OpRange && o.Request.Limit > 0 && o.Request.Revision > 0 {
			pinnedPages++
		}
	}
	switch shape {
	case workload.ShapeWriteHeavy:
		g.Expect(kinds[history.OpPut]).To(BeNumerically(">", 1000))
		g.Expect(kinds[history.OpRange] + kinds[history.OpDelete] + kinds[history.OpTxn]).To(BeZero())
	case workload.ShapeChurn:
		g.Expect(kinds[history.OpDelete]).To(BeNumerically(">", kinds[history.OpPut]/2))
		g.Expect(kinds[history.OpRange] + kinds[history.OpTxn]).To(BeZero())
	case workload.ShapeDeleteHeavy:
		g.Expect(kinds[history.OpDelete]).To(BeNumerically(">", kinds[history.OpPut]))
		g.Expect(compactions).To(BeNumerically(">=", 4), "compaction at least every second")
	case workload.ShapeKubeLike:
		g.Expect(modCompares).To(BeNumerically(">", kinds[history.OpTxn]*9/10))
		g.Expect(kinds[history.OpPut]+kinds[history.OpDelete]).To(BeZero(), "the storage layer writes in txns only")
		g.Expect(pinnedPages).To(BeNumerically(">", 50))
	case workload.ShapeFutureWatch:
		for _, w := range h.Watches {
			g.Expect(w.Resumes != 0 || w.Request.StartRevision > 0).To(BeTrue(), "watch %d opened at the head, not ahead of it", w.ID)
		}
	}
}
