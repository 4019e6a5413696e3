package kubeprobes

import (
	"context"
	"slices"
	"testing"

	"github.com/vigil-suite/vigil/suites/conformance"
)

// RunTest runs every Kubernetes probe against cfg.Server (on ConfigMaps
// and vigil's custom resource, unless cfg.Resources says otherwise) as
// subtests of t, as conformance.RunEtcd does for etcd: it is how another
// module gates its own Kubernetes-API server on the probes from `go test`:
//
//	kubeprobes.RunTest(t, kubeprobes.Config{Server: kube.Config{
//		Server: "https://127.0.0.1:6443", Token: token, CAFile: "ca.pem"}})
func RunTest(t *testing.T, cfg Config) {
	t.Helper()
	results, err := Run(context.Background(), cfg, Probes())
	if err != nil {
		t.Fatal(err)
	}
	conformance.Subtests(t, results)
}

// ProbesFor lists the Kubernetes probes that isolate a chaos-run check, for
// the hint a failed run prints: each behaviour by its prefix ending in "@"
// (every resource), as --only takes it. conformance.EtcdProbesFor lists
// the etcd ones.
func ProbesFor(check string) []string {
	var out []string
	for _, p := range Probes() {
		if slices.Contains(p.Checks, check) {
			out = append(out, p.Name+"@")
		}
	}
	return out
}
