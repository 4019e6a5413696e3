package suites

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	"github.com/vigil-suite/vigil/workload"
)

// A short run on healthy etcd draws every production of the grammar, and
// etcd answers each (a response, or the definite error the production
// asks for: a read below the compact revision, a put on a revoked lease);
// result.json's coverage lists them all and none never drawn. The
// verdicts are logged, not asserted here: TestHealthyEtcdPasses holds
// them (the checks judging every production is the model's business).
func TestEveryProductionDrawnOnEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real etcd")
	}
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fx, dir := startCluster(ctx, t, g, binaries.DefaultEtcdVersion, 3)
	wl := workload.DefaultConfig()
	wl.Duration, wl.CompactEvery = 12*time.Second, 3*time.Second
	out, err := RunEtcd(ctx, fx, EtcdConfig{Common: Common{Out: dir, Seed: 7, Vigil: "test", Checks: check.DefaultConfig()}, Workload: wl})
	g.Expect(err).NotTo(HaveOccurred())
	for _, r := range out.Results {
		t.Logf("%s: %s %s", r.Name, r.Verdict, r.Reason)
	}
	expectEveryProduction(g, out.History)
}
