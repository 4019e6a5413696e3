package launch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/fixtures/runs"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/internal/redact"
	"github.com/vigil-suite/vigil/reports"
	"github.com/vigil-suite/vigil/suites"
	"github.com/vigil-suite/vigil/targets/kube"
	"github.com/vigil-suite/vigil/targets/sabotage"
)

// Exit codes of a run: 0 every check passed, 1 a violation was found, 2
// no violation but some check is unknown, 3 usage or setup error.
const (
	ExitPass    = 0
	ExitFail    = 1
	ExitUnknown = 2
	ExitSetup   = 3
)

// Run runs the options (resolved first, if Resolve was not called): it
// makes the output dir, starts the system under test, runs the workload
// with the faults, stops the system, checks the history and writes the
// reports, then prints the verdict table. It returns the exit code; the
// error says why a run could not be made or judged. Canceling ctx
// (Ctrl-C) stops the run: its partial history is written with verdict
// error.
func Run(ctx context.Context, o *Options) (int, error) {
	if err := o.Resolve(); err != nil {
		return ExitSetup, err
	}
	unregister, err := openOut(&o.Out, "run")
	if err != nil {
		return ExitSetup, err
	}
	defer unregister()
	// Saved before the run, so that even a crashed run can be replayed.
	if len(o.schedule.Steps) > 0 {
		if err := o.schedule.Save(filepath.Join(o.Out, chaos.ScheduleFile)); err != nil {
			return ExitSetup, SetupError(err)
		}
	}
	fmt.Fprintf(os.Stderr, "vigil %s: seed %d, output in %s\n", o.Vigil, o.Seed, o.Out)
	setup := suites.Setup{Seed: o.Seed, StartTimeout: o.StartTimeout, Net: o.network()}
	var out *suites.Outcome
	stopped := "cluster"
	if o.Target == "kube" {
		stopped = "API servers and cluster"
		out, err = o.runKube(ctx, setup)
	} else {
		out, err = o.runEtcd(ctx, setup)
	}
	var failed errConformFailed
	if errors.As(err, &failed) {
		return ExitFail, failed.err
	}
	if err != nil {
		return ExitSetup, o.setupFailed(err)
	}
	return o.finish(out, stopped)
}

// network is how faults reach the links: a proxy in front of every
// listener or a namespace per member ("" for none, or a fixture in
// Docker, which has its own network).
func (o *Options) network() string {
	switch {
	case o.Net == "netns":
		return "netns"
	case o.Fixture == "docker" || o.Fixture == "external":
		return ""
	case o.schedule.NeedsLinks():
		return "proxy"
	}
	return ""
}

func (o *Options) runEtcd(ctx context.Context, setup suites.Setup) (*suites.Outcome, error) {
	setup.Fixture = func(ctx context.Context, net fixtures.Network) (fixtures.Fixture, chaos.Links, error) {
		fx, err := o.etcdFixture(ctx, net)
		if err != nil {
			return nil, nil, err
		}
		links, err := o.links(fx)
		return fx, links, err
	}
	return suites.Execute(ctx, setup, func(ctx context.Context, fx fixtures.Fixture, links chaos.Links) (*suites.Outcome, error) {
		if c, ok := fx.(*etcdproc.Cluster); ok && (o.TLS || o.Auth) {
			o.security = c.Security()
		}
		fmt.Fprintf(os.Stderr, "cluster up: %s; running the workload for %s\n", strings.Join(fx.Endpoints(), ","), o.Workload.Duration)
		if o.Conform {
			if ok, err := o.conformFirst(ctx, fx.Endpoints()); err != nil || !ok {
				return nil, errConformFailed{err}
			}
		}
		return suites.RunEtcd(ctx, fx, suites.EtcdConfig{Common: o.common(links), Security: o.security, Workload: o.Workload})
	})
}

func (o *Options) runKube(ctx context.Context, setup suites.Setup) (*suites.Outcome, error) {
	var servers func() []kube.Config // the API servers, once the fixture is up
	setup.Fixture = func(ctx context.Context, net fixtures.Network) (fixtures.Fixture, chaos.Links, error) {
		fx, list, err := o.kubeFixture(ctx, net)
		if err != nil {
			return nil, nil, err
		}
		servers = list
		links, err := o.links(fx)
		return fx, links, err
	}
	return suites.Execute(ctx, setup, func(ctx context.Context, fx fixtures.Fixture, links chaos.Links) (*suites.Outcome, error) {
		var etcd, urls []string
		if o.Fixture != "external" {
			etcd = fx.Endpoints()
		}
		for _, s := range servers() {
			urls = append(urls, s.Server)
		}
		fmt.Fprintf(os.Stderr, "API servers up: %s; running the Kubernetes workload for %s\n", strings.Join(urls, ","), o.Kube.workload.Duration)
		return suites.RunKube(ctx, fx, suites.KubeConfig{Common: o.common(links), Workload: o.Kube.workload, Servers: servers(),
			Etcd: etcd, EtcdSecurity: o.security, Resource: o.Kube.resource, DeleteNamespace: o.Fixture == "external"})
	})
}

// common is what the suites' run of either target takes from the options.
func (o *Options) common(links chaos.Links) suites.Common {
	return suites.Common{Out: o.Out, HistoryFormat: o.historyFormat, Seed: o.Seed, Vigil: o.Vigil, Flags: o.Given, Checks: o.checkConfig(),
		Sabotage: o.Sabotage, Schedule: o.schedule, Links: links, Logf: logf, Progress: os.Stderr,
		LiveEvery: o.liveEvery(), FailFast: o.FailFast, Segment: o.Segment, Profile: o.Profile, Limitations: o.limitations}
}

// liveEvery is the live judge's period as the suites take it: negative
// for none.
func (o *Options) liveEvery() time.Duration {
	if o.JudgeEvery <= 0 {
		return -1
	}
	return o.JudgeEvery
}

// errConformFailed: Conform found a probe failing (err nil) or could not
// run the probes; the workload was not run.
type errConformFailed struct{ err error }

func (e errConformFailed) Error() string {
	if e.err == nil {
		return "conformance probes failed"
	}
	return e.err.Error()
}

// finish writes the reports of a run whose system under test (named by
// stopped) is already stopped, prints the verdict table, and returns the
// exit code. An interrupted run gets verdict error and its partial history.
func (o *Options) finish(out *suites.Outcome, stopped string) (int, error) {
	if out.Interrupted {
		r := summarize(out, nil)
		r.Verdict, r.Reason = reports.VerdictError, "interrupted before the workload finished; the partial history is in "+history.FileFor(o.historyFormat)
		writeReports(o.Out, out, r, nil)
		o.tidy(r.Verdict)
		fmt.Fprintf(os.Stderr, "vigil: interrupted; %s stopped, partial history in %s\n", stopped, o.Out)
		return ExitSetup, nil
	}
	r := summarize(out, out.Results)
	r.StoppedEarly = out.StoppedEarly
	addProbes(&r)
	if err := writeReports(o.Out, out, r, out.Results); err != nil {
		return ExitSetup, err
	}
	o.tidy(r.Verdict)
	reports.Table(os.Stdout, r)
	if o.Sabotage != "" {
		reportSabotage(o.Sabotage, out.Faults(), out.Results)
	}
	if out.StoppedEarly != "" {
		fmt.Println(out.StoppedEarly)
	}
	fmt.Printf("results in %s (report.html to look at)\n", o.Out)
	return reports.ExitCode(r.Verdict), nil
}

// summarize is a run's result from its outcome: its whole history, or
// the digest of a segmented run's segments.
func summarize(out *suites.Outcome, results []check.Result) reports.Result {
	if out.Digest != nil {
		r := reports.SummarizeDigest(out.Digest, results, out.Elapsed.Seconds())
		r.Segments = out.Segments
		return r
	}
	return reports.Summarize(out.History, results, out.Elapsed.Seconds())
}

// writeReports writes result.json and junit.xml into dir, then the
// pages for people: kv/linearizable's view (when it failed) and
// report.html. A verdict does not depend on the pages, so a failure to
// draw one is said, not returned.
func writeReports(dir string, out *suites.Outcome, r reports.Result, results []check.Result) error {
	if err := writeResult(dir, r); err != nil {
		return err
	}
	switch path, what, err := reports.WriteVisualization(dir, results); {
	case err != nil:
		fmt.Fprintf(os.Stderr, "vigil: %v\n", err)
	case path != "":
		fmt.Fprintf(os.Stderr, "linearizability view: %s (%s)\n", path, what)
	}
	page := func() error { return reports.WritePage(dir, out.History, r) }
	if out.Digest != nil {
		page = func() error { return reports.WritePageDigest(dir, out.Digest, r) }
	}
	if err := page(); err != nil {
		fmt.Fprintf(os.Stderr, "vigil: writing %s: %v\n", reports.PageFile, err)
	}
	return nil
}

// writeResult writes result.json and junit.xml.
func writeResult(dir string, r reports.Result) error {
	if err := reports.WriteJSON(dir, r); err != nil {
		return err
	}
	return reports.WriteJUnit(dir, r)
}

// openOut makes the output dir *out (runs/<kind>-<time> when empty) and
// registers it, so that vigil cleanup finds what a killed vigil left
// there; the function it returns removes the entry.
func openOut(out *string, kind string) (func(), error) {
	if *out == "" {
		*out = runs.DefaultOut(kind)
	}
	unregister, err := runs.Open(*out)
	if err != nil {
		return nil, SetupError(err)
	}
	return unregister, nil
}

// tidy shrinks a finished run's output dir: after a passing run the
// members' data dirs (most of a run's bytes) are removed unless KeepData.
// A failed run keeps its data for triage. (The history is compressed as it
// is written.) What cannot be tidied is said, not fatal.
func (o *Options) tidy(verdict string) {
	if o.KeepData || verdict != string(check.Pass) {
		return
	}
	dirs, _ := filepath.Glob(filepath.Join(o.Out, "members", "*", "data"))
	var freed int64
	for _, d := range dirs {
		filepath.WalkDir(d, func(_ string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				if info, err := e.Info(); err == nil {
					freed += info.Size()
				}
			}
			return nil
		})
		if err := os.RemoveAll(d); err != nil {
			fmt.Fprintf(os.Stderr, "vigil: %v\n", err)
		}
	}
	if len(dirs) > 0 {
		fmt.Fprintf(os.Stderr, "removed the members' data dirs (%d MB) of the passing run; --keep-data keeps them\n", freed>>20)
	}
}

// setupFailed writes a result.json saying why the run could not be made,
// so a CI job finds the reason next to the logs.
func (o *Options) setupFailed(err error) error {
	err = SetupError(err)
	r := reports.Result{Format: reports.ResultFormat, Vigil: o.Vigil, Flags: redact.Flags(o.Given), Verdict: reports.VerdictError,
		Reason: redact.Text(err.Error()), SetupFailed: true, Seed: o.Seed, Target: history.Target{Kind: o.Target, Fixture: o.Fixture},
		Checks: []check.Result{}, Profile: o.Profile, Limitations: o.limitations}
	writeResult(o.Out, r)
	return err
}

// reportSabotage says after the table whether the sabotage was injected and
// what the check it names made of it.
func reportSabotage(mode string, faults []history.Fault, results []check.Result) {
	m, _ := sabotage.Lookup(mode)
	verdict := check.Verdict("not run")
	for _, r := range results {
		if r.Name == m.Check {
			verdict = r.Verdict
		}
	}
	n := 0
	for _, f := range faults {
		if f.Name == sabotage.FaultName(mode) {
			n++
			fmt.Printf("sabotage %s at %.2fs (client %s): %s\n", mode, f.Start.Seconds(), f.Details["client"], f.Details["what"])
		}
	}
	if n == 0 {
		fmt.Printf("sabotage %s: no opportunity arose, nothing was injected\n", mode)
	}
	fmt.Printf("sabotage %s must trip %s: %s\n", mode, m.Check, verdict)
}
