// Package vigiltest runs vigil from a Go test, the way a CI gate of an
// implementation wants it: a checked workload against an etcd-API or
// Kubernetes API server the test started, with each check reported as a
// subtest that passes, fails with the violations and the records that
// prove them, or skips with its reason. A project's `go test` is then its
// conformance gate:
//
//	func TestMyServer(t *testing.T) {
//		endpoints := startMyServer(t)
//		vigiltest.RunEtcd(t, endpoints, vigiltest.Options{Duration: 20 * time.Second})
//	}
//
// The run's files (history.jsonl.zst, result.json, junit.xml) are kept, and
// their place logged, when the test fails.
package vigiltest

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/external"
	"github.com/vigil-suite/vigil/reports"
	"github.com/vigil-suite/vigil/suites"
	"github.com/vigil-suite/vigil/targets/kube"
	"github.com/vigil-suite/vigil/workload"
)

// Version is what the runs record as vigil's version.
const Version = "vigiltest"

// Options shape one run. The zero value is a 10 s default workload.
type Options struct {
	// Duration is how long the workload runs; default 10 s.
	Duration time.Duration
	// Seed drives every random choice; default: derived from the test's
	// name, so a test runs the same workload every time.
	Seed int64
	// Out is where the run's files go; default a temporary dir, removed
	// when the test passes and kept (its path logged) when it fails.
	Out string
	// Workload and KubeWorkload replace the default workloads of RunEtcd
	// and RunKube; Duration still applies when set.
	Workload     *workload.Config
	KubeWorkload *workload.KubeConfig
	// Checks configures the checkers; nil for the defaults.
	Checks *check.Config
	// Sabotage injects one semantic bug into what vigil's clients see
	// (`vigil sabotage list` names the modes and the check each trips), to
	// prove the gate catches it.
	Sabotage string
}

// RunEtcd runs the etcd workload against the etcd-API server at endpoints
// ("host:port" or URLs), checks the history, and reports every check as a
// subtest of t. A run that cannot be made fails t. It returns the outcome
// for further assertions (see the matchers).
func RunEtcd(t *testing.T, endpoints []string, opts Options) *suites.Outcome {
	t.Helper()
	wl := workload.DefaultConfig()
	if opts.Workload != nil {
		wl = *opts.Workload
	}
	wl.Duration = duration(opts, wl.Duration)
	ctx, cancel := testContext(t)
	defer cancel()
	fx := external.New(external.Config{Endpoints: endpoints})
	return run(ctx, t, opts, fx, func(dir string, seed int64, checks check.Config) (*suites.Outcome, error) {
		return suites.RunEtcd(ctx, fx, suites.EtcdConfig{Common: suites.Common{Out: dir, Seed: seed, Vigil: Version, Checks: checks, Sabotage: opts.Sabotage}, Workload: wl})
	})
}

// RunKube runs the Kubernetes workload against the API server server
// names (URL and credentials, or kube.FromRest(restConfig) for a client-go
// rest.Config; the run makes a namespace of its own and deletes it after),
// checks the history, and reports every check as a subtest of t.
func RunKube(t *testing.T, server kube.Config, opts Options) *suites.Outcome {
	t.Helper()
	wl := workload.DefaultKubeConfig()
	if opts.KubeWorkload != nil {
		wl = *opts.KubeWorkload
	}
	wl.Duration = duration(opts, wl.Duration)
	ctx, cancel := testContext(t)
	defer cancel()
	fx := suites.ExternalKube(server)
	return run(ctx, t, opts, fx, func(dir string, seed int64, checks check.Config) (*suites.Outcome, error) {
		return suites.RunKube(ctx, fx, suites.KubeConfig{Common: suites.Common{Out: dir, Seed: seed, Vigil: Version, Checks: checks, Sabotage: opts.Sabotage},
			Workload: wl, Servers: []kube.Config{server}, DeleteNamespace: true})
	})
}

func duration(opts Options, def time.Duration) time.Duration {
	if opts.Duration > 0 {
		return opts.Duration
	}
	if def <= 0 || def > 10*time.Second {
		return 10 * time.Second
	}
	return def
}

// testContext ends a minute before the test's deadline, so that a run cut
// short still reports.
func testContext(t *testing.T) (context.Context, context.CancelFunc) {
	if d, ok := t.Deadline(); ok {
		return context.WithDeadline(context.Background(), d.Add(-time.Minute))
	}
	return context.WithCancel(context.Background())
}

// run starts fx, makes the run in its dir, writes its reports and reports
// each check as a subtest.
func run(ctx context.Context, t *testing.T, opts Options, fx fixtures.Fixture,
	do func(dir string, seed int64, checks check.Config) (*suites.Outcome, error)) *suites.Outcome {
	t.Helper()
	dir := opts.Out
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "vigiltest-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("vigil's run files are in %s", dir)
				return
			}
			os.RemoveAll(dir)
		})
	}
	seed := opts.Seed
	if seed == 0 {
		h := fnv.New32a()
		h.Write([]byte(t.Name()))
		seed = int64(h.Sum32()%(1<<30)) + 1
	}
	checks := check.DefaultConfig()
	if opts.Checks != nil {
		checks = *opts.Checks
	}
	if err := fx.Start(ctx); err != nil {
		t.Fatalf("vigil: the server is not reachable: %v", err)
	}
	out, err := do(dir, seed, checks)
	if err != nil {
		t.Fatalf("vigil: the run could not be made: %v", err)
	}
	if out.Interrupted {
		t.Fatalf("vigil: the run was cut short (the test's deadline); its partial history is in %s", dir)
	}
	r := reports.Summarize(out.History, out.Results, out.Elapsed.Seconds())
	if err := reports.WriteJSON(dir, r); err == nil {
		reports.WriteJUnit(dir, r)
	}
	calls, events := r.Stats.Operations, r.Stats.WatchEvents
	if k := r.Stats.Kube; k != nil {
		calls, events = len(out.History.KubeOps), 0
		for _, n := range k.Events {
			events += n
		}
	}
	t.Logf("vigil: seed %d, verdict %s, %d calls, %d watch events; files in %s", seed, r.Verdict, calls, events, dir)
	for _, c := range out.Results {
		t.Run(c.Name, func(t *testing.T) { reportCheck(t, c) })
	}
	return out
}

// reportCheck turns one check's verdict into the subtest's: a MUST
// check's failure fails it with the violations; a SHOULD check's failure
// is logged as a warning; unknown fails it (the gate cannot say pass);
// skipped and documented limitations skip it with the reason.
func reportCheck(t *testing.T, c check.Result) {
	switch {
	case c.Verdict == check.Fail && c.Should:
		t.Logf("WARNING (a SHOULD): %d violation(s)\n%s", len(c.Violations), reports.ViolationsText(c))
	case c.Verdict == check.Fail:
		t.Errorf("%d violation(s) of %s\n%s", len(c.Violations), c.Name, reports.ViolationsText(c))
	case c.Verdict == check.Unknown:
		t.Errorf("unknown: %s", c.Reason)
	case c.Verdict == check.Skipped:
		t.Skip(c.Reason)
	case c.Verdict == check.Documented:
		t.Skip(fmt.Sprintf("documented limitation: %s", c.Reason))
	}
}
