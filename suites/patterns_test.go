package suites

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/internal/longtest"
	"github.com/vigil-suite/vigil/reports"
	"github.com/vigil-suite/vigil/workload"
)

// Every placement and timing pattern is sent, and answered, in a run of
// the default shape against a healthy 3-member etcd with faults, and the
// run passes: no pattern makes a healthy server look broken. (That a
// pattern catches what it is for: stale-member-read in
// TestSabotageIsCaught, measured in docs/sabotage.md.)
func TestPatternsEndToEnd(t *testing.T) {
	longtest.Skip(t)
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fx, dir := startCluster(ctx, t, g, binaries.DefaultEtcdVersion, 3)

	wl := workload.DefaultConfig()
	wl.Duration = 20 * time.Second
	wl.CompactEvery = 3 * time.Second // several compactions: the compaction patterns draw from them
	schedule := chaos.Plan(1, []string{"pause-follower", "kill-follower"}, 5*time.Second, wl.Duration)
	g.Expect(schedule.Steps).NotTo(BeEmpty())
	out, err := RunEtcd(ctx, fx, EtcdConfig{Common: Common{Out: dir, Seed: 1, Vigil: "test", Checks: check.DefaultConfig(),
		Schedule: schedule, Logf: t.Logf}, Workload: wl})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.Interrupted).To(BeFalse())
	for _, r := range out.Results {
		if !r.Should {
			g.Expect(r.Verdict).To(Or(Equal(check.Pass), Equal(check.Skipped)), "%s: %s %v", r.Name, r.Reason, r.Violations)
		}
	}
	counts := reports.CountPatterns(out.History)
	t.Logf("patterns: %+v", counts)
	g.Expect(counts).To(HaveLen(len(history.Patterns())))
	for _, c := range counts {
		g.Expect(c.Sent).To(BeNumerically(">", 0), "pattern %s never sent", c.Pattern)
		g.Expect(c.Answered).To(BeNumerically(">", 0), "pattern %s never answered", c.Pattern)
	}
}
