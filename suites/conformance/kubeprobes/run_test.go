package kubeprobes

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/fixtures/kubeapiserver"
	"github.com/vigil-suite/vigil/suites/conformance"
	"github.com/vigil-suite/vigil/targets/kube"
)

// startKube starts a 1-member etcd and one kube-apiserver over it, and
// returns the probes' configuration for it (with the etcd compactor).
func startKube(t *testing.T, watchCache bool) Config {
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
	return Config{Server: kube.Config{Server: s.URLs()[0], Token: s.Token(), CAFile: s.CAFile()},
		Compact: conformance.EtcdCompactor(fx.Endpoints(), fixtures.Security{})}
}

// knownFailures are the probes kube-apiserver fails, as measured,
// with the words its failure must contain: kube-apiserver without its
// watch cache answers a watch that starts at etcd's compaction revision
// with 500 InternalError ("etcd event received with PrevKv=nil"), where
// the API allows the event or 410 Expired; etcd drops the previous value
// of an event whose previous revision is compacted (etcd-io/etcd#10681)
// and kube-apiserver refuses such events since kubernetes/kubernetes#76675.
var knownFailures = map[bool]map[string]string{
	false: {
		"kube-watch/compaction-edge@configmaps":   "PrevKv=nil",
		"kube-watch/compaction-edge@vigilobjects": "PrevKv=nil",
	},
}

// Every Kubernetes probe passes on kube-apiserver, with its watch cache
// and without, but for the known failures above (which must still fail:
// the day they pass, the README's matrix is out of date). The two modes'
// transcripts agree wherever the contract leaves the server no choice.
func TestKubeProbesOnKubeAPIServer(t *testing.T) {
	results := map[bool][]conformance.Result{}
	for _, cache := range []bool{true, false} {
		t.Run(fmt.Sprintf("watch-cache=%v", cache), func(t *testing.T) {
			cfg := startKube(t, cache)
			begin := time.Now()
			res, err := Run(context.Background(), cfg, Probes())
			if err != nil {
				t.Fatal(err)
			}
			results[cache] = res
			if len(res) < 50 {
				t.Errorf("%d probes; the suite has at least 50", len(res))
			}
			for _, r := range res {
				want, known := knownFailures[cache][r.Name]
				switch {
				case known && (r.Verdict != conformance.Fail || !strings.Contains(r.Failure, want)):
					t.Errorf("%s: %s, where the known failure (%q) was expected: %s%s", r.Name, r.Verdict, want, r.Reason, r.Failure)
				case !known && r.Verdict != conformance.Pass:
					t.Errorf("%s: %s %s%s", r.Name, r.Verdict, r.Reason, r.Failure)
					for _, s := range r.Transcript {
						t.Logf("   %s", s.String())
					}
				}
			}
			t.Logf("%d probes in %s", len(res), time.Since(begin).Round(time.Millisecond))
		})
	}
	if len(results[true]) == 0 || len(results[false]) == 0 {
		return
	}
	for _, r := range conformance.CompareWithReference(results[false], results[true]) {
		if r.Verdict == conformance.Differs {
			t.Errorf("%s: the transcripts with and without the watch cache differ:\n  %s", r.Name, strings.Join(r.Diff, "\n  "))
		}
	}
}

// A project gates its own Kubernetes-API server on the probes with
// RunTest: each probe a subtest (here a family of them, against a real
// kube-apiserver).
func TestKubeProbesAsACIGate(t *testing.T) {
	cfg := startKube(t, true)
	cfg.Only = []string{"kube-write/"}
	RunTest(t, cfg)
}
