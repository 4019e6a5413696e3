package suites

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/watch"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/workload"
)

// --fail-fast against a real etcd: the live judge finds the sabotage's
// dropped event while the run goes on and stops the workload seconds
// after it, long before the run's 60 s; the history is judged in full and
// the check that owns the guarantee fails.
func TestFailFastStopsAtTheFirstViolation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real etcd")
	}
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: binaries.DefaultEtcdVersion, Progress: os.Stderr})
	g.Expect(err).NotTo(HaveOccurred())
	dir := t.TempDir()
	fx := etcdproc.New(etcdproc.Config{Binary: bin, Members: 1, Dir: dir, Version: binaries.DefaultEtcdVersion})
	defer fx.Stop()
	g.Expect(fx.Start(ctx)).To(Succeed())
	wl := workload.DefaultConfig()
	wl.Duration = 60 * time.Second
	out, err := RunEtcd(ctx, fx, EtcdConfig{Common: Common{Out: dir, Seed: 3, Vigil: "test", Checks: check.DefaultConfig(),
		Sabotage: "drop-event", LiveEvery: time.Second, FailFast: true}, Workload: wl})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.Interrupted).To(BeFalse())
	g.Expect(out.StoppedEarly).To(ContainSubstring(watch.NameReliable))
	var injected time.Duration
	for _, f := range out.History.Faults {
		injected = f.Start
	}
	g.Expect(injected).To(BeNumerically(">", 0), "the sabotage injected")
	end := out.History.End()
	t.Logf("injected at %v, the history ends at %v: %s", injected, end, out.StoppedEarly)
	g.Expect(end-injected).To(BeNumerically("<", 15*time.Second), "stopped within seconds of the sabotage")
	for _, r := range out.Results {
		if r.Name == watch.NameReliable {
			g.Expect(r.Verdict).To(Equal(check.Fail))
		}
	}
}
