package conformance

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/fixtures/kubeapiserver"
	"github.com/vigil-suite/vigil/targets/kube"
)

// startKube starts a 1-member etcd and one kube-apiserver over it, and
// returns the probes' configuration for it (with the etcd compactor).
func startKube(t *testing.T, watchCache bool) KubeConfig {
	t.Helper()
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	etcdBin, err := binaries.Etcd(ctx, binaries.Options{Version: binaries.DefaultEtcdVersion, Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	kubeBin, err := binaries.KubeAPIServer(ctx, binaries.KubeOptions{Progress: os.Stderr})
	if err != nil {
		t.Fatalf("kube-apiserver %s cannot be built here: %v", binaries.DefaultKubeVersion, err)
	}
	fx := kubeapiserver.NewFixture(kubeapiserver.FixtureConfig{Dir: t.TempDir(),
		Etcd:       etcdproc.Config{Binary: etcdBin, Members: 1, Version: binaries.DefaultEtcdVersion},
		APIServers: kubeapiserver.Config{Binary: kubeBin, DisableWatchCache: !watchCache}})
	t.Cleanup(func() { fx.Stop() })
	if err := fx.Start(ctx); err != nil {
		t.Fatal(err)
	}
	s := fx.Servers()
	return KubeConfig{Server: kube.Config{Server: s.URLs()[0], Token: s.Token(), CAFile: s.CAFile()},
		Compact: EtcdCompactor(fx.Endpoints())}
}

// Every Kubernetes probe passes on kube-apiserver, with its watch cache
// and without: the expectations are the API's contract.
func TestKubeProbesPassOnKubeAPIServer(t *testing.T) {
	for _, cache := range []bool{true, false} {
		t.Run(fmt.Sprintf("watch-cache=%v", cache), func(t *testing.T) {
			cfg := startKube(t, cache)
			begin := time.Now()
			res, err := RunKubeProbes(context.Background(), cfg, KubeProbes())
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if r.Verdict != Pass {
					t.Errorf("%s: %s %s%s", r.Name, r.Verdict, r.Reason, r.Failure)
					for _, s := range r.Transcript {
						t.Logf("   %s", stepText(s))
					}
				}
			}
			t.Logf("%d probes in %s", len(res), time.Since(begin).Round(time.Millisecond))
		})
	}
}
