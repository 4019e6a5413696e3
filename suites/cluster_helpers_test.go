package suites

import (
	"context"
	"os"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
)

// startCluster builds (once) and starts a real etcd cluster of version for
// a test, stopped when the test ends; dir is the run's output dir.
func startCluster(ctx context.Context, t *testing.T, g Gomega, version string, members int) (fx *etcdproc.Cluster, dir string) {
	t.Helper()
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: version, Progress: os.Stderr})
	g.Expect(err).NotTo(HaveOccurred())
	dir = t.TempDir()
	fx = etcdproc.New(etcdproc.Config{Binary: bin, Members: members, Dir: dir, Version: version})
	t.Cleanup(func() { fx.Stop() })
	g.Expect(fx.Start(ctx)).To(Succeed())
	return fx, dir
}
