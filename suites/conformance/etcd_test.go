package conformance

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
)

// startEtcd starts a 1-member etcd of version for a test.
func startEtcd(t *testing.T, version string) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real etcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: version, Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	c := etcdproc.New(etcdproc.Config{Binary: bin, Members: 1, Dir: t.TempDir(), Version: version})
	t.Cleanup(func() { c.Stop() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return c.Endpoints()
}

// Every probe passes on every etcd release vigil supports: the probes'
// expectations are etcd's behaviour, version differences written in them.
func TestEtcdProbesPassOnEtcd(t *testing.T) {
	for _, v := range etcdVersionsUnderTest() {
		t.Run(v, func(t *testing.T) {
			eps := startEtcd(t, v)
			begin := time.Now()
			res, err := RunEtcdProbes(context.Background(), EtcdConfig{Endpoints: eps}, EtcdProbes())
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if r.Verdict != Pass {
					t.Errorf("%s: %s %s%s", r.Name, r.Verdict, r.Reason, r.Failure)
				}
			}
			t.Logf("%s: %d probes in %s", v, len(res), time.Since(begin).Round(time.Millisecond))
		})
	}
}

// etcdVersionsUnderTest: the default and v3.5.17 always;
// VIGIL_CONFORM_VERSIONS widens it (the README's matrix).
func etcdVersionsUnderTest() []string {
	if v := os.Getenv("VIGIL_CONFORM_VERSIONS"); v != "" {
		return splitComma(v)
	}
	return []string{binaries.DefaultEtcdVersion, "v3.5.17"}
}
