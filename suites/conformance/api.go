package conformance

import (
	"context"
	"strings"
	"testing"
)

// RunEtcd runs every etcd probe against cfg.Endpoints as subtests of t,
// one per probe: a probe that passes passes, one that fails fails with
// its expectation and its requests and answers, one that is skipped or
// unsupported skips with the reason. It is how another module gates its
// own etcd-API server on the probes from `go test`, without vigil's binary:
//
//	func TestMyServerConforms(t *testing.T) {
//		conformance.RunEtcd(t, conformance.EtcdConfig{Endpoints: []string{addr}})
//	}
//
// kubeprobes.RunTest does the same for a Kubernetes-API server.
func RunEtcd(t *testing.T, cfg EtcdConfig) {
	t.Helper()
	results, err := RunEtcdProbes(context.Background(), cfg, EtcdProbes())
	if err != nil {
		t.Fatal(err)
	}
	Subtests(t, results)
}

// Subtests reports each result as a subtest of t, named after its probe:
// a pass passes; a skipped, unsupported or documented probe skips with its
// reason; any other verdict fails with the expectation and the requests
// and answers. No result at all fails t: a gate that ran nothing must not
// read green.
func Subtests(t *testing.T, results []Result) {
	t.Helper()
	if len(results) == 0 {
		// A gate that ran nothing must not read green (a mistyped Only).
		t.Fatal("no conformance probe ran: Only names none")
	}
	for _, r := range results {
		t.Run(r.Name, func(t *testing.T) {
			switch r.Verdict {
			case Pass:
			case Skipped, Unsupported, Documented:
				t.Skipf("%s: %s", r.Verdict, r.Reason)
			default:
				var b strings.Builder
				for _, s := range r.Transcript {
					b.WriteString("\n  " + s.String())
				}
				broke := ""
				if r.Broke != nil {
					broke = "\n" + r.Broke.String()
				}
				t.Errorf("%s: %s\n%s%s%s\nrequests and answers:%s", r.Verdict, r.Title, r.Failure, strings.Join(r.Diff, "\n"), broke, b.String())
			}
		})
	}
}
