package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/fixtures/external"
	"github.com/vigil-suite/vigil/fixtures/runs"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/reports"
	"github.com/vigil-suite/vigil/suites"
	"github.com/vigil-suite/vigil/targets/sabotage"
)

type runFlags struct {
	target, fixture, etcdVersion, etcdBinary, endpoints, out, faults, sabotage string
	scheduleFile, net                                                          string
	members                                                                    int
	failpoints                                                                 bool
	seed                                                                       int64
	startTimeout, linTimeout, faultInterval, maxUnavailable                    time.Duration
	workload                                                                   suites.WorkloadConfig
	schedule                                                                   chaos.Schedule
	kube                                                                       kubeFlags         // --target kube (runkube.go)
	etcdSec                                                                    etcdSecurity      // --endpoints over TLS, with auth (etcdsec.go)
	security                                                                   fixtures.Security // etcdSec resolved, for --fixture external
	settings                                                                   fixtures.EtcdSettings
	conform, compress, keepData, tls, auth                                     bool
	command                                                                    string            // --fixture command
	kine                                                                       kineFlags         // --fixture kine (kine.go)
	set                                                                        map[string]string // the flags given, as resolve returns them
}

// defineRunFlags defines vigil run's flags on fs.
func defineRunFlags(fs *flag.FlagSet) *runFlags {
	f := &runFlags{workload: suites.DefaultWorkload()}
	fs.StringVar(&f.target, "target", "etcd", "API family of the system under test: etcd or kube")
	fs.StringVar(&f.fixture, "fixture", "process", "how the system is run: process (local etcd processes), docker (one container per member, see fixtures/containers), kine (kine over SQLite, PostgreSQL or MySQL), command (your server, from --command) or external (your own cluster, see --endpoints)")
	fs.IntVar(&f.members, "members", 3, "cluster size for the process and docker fixtures: 1, 3 or 5")
	fs.StringVar(&f.etcdVersion, "etcd-version", binaries.DefaultEtcdVersion, "etcd version to build from the Go module proxy (e.g. v3.5.17, v3.6.16, v3.7.3, v3.4.25)")
	fs.StringVar(&f.etcdBinary, "etcd-binary", "", "use this etcd binary instead of building one")
	fs.BoolVar(&f.failpoints, "failpoints", false, "run a gofail build of etcd (vigil build etcd VERSION --failpoints) whose failpoints the failpoint:* faults arm; implied by those faults")
	fs.StringVar(&f.endpoints, "endpoints", "", "comma-separated client endpoints of a running cluster (implies --fixture external)")
	fs.DurationVar(&f.workload.Duration, "duration", f.workload.Duration, "how long the workload runs")
	fs.IntVar(&f.workload.Clients, "clients", f.workload.Clients, "concurrent KV clients")
	fs.Float64Var(&f.workload.Rate, "rate", f.workload.Rate, "total KV requests per second (0: as fast as the clients get answers)")
	fs.StringVar(&f.workload.Shape, "workload", suites.ShapeDefault, "the shape of the load: "+strings.Join(suites.Shapes(), ", ")+" (see docs/workload.md)")
	fs.IntVar(&f.workload.Keys, "keys", f.workload.Keys, "distinct keys the workload writes")
	fs.IntVar(&f.workload.Watchers, "watchers", f.workload.Watchers, "concurrent watchers of the key prefix")
	fs.DurationVar(&f.workload.CompactEvery, "compact-every", f.workload.CompactEvery, "period of compactions (0 disables)")
	fs.DurationVar(&f.workload.FinalTimeout, "watch-bound", f.workload.FinalTimeout, "how long open watches get to deliver the final write")
	fs.Int64Var(&f.seed, "seed", 0, "seed of every random choice (0: pick one and print it)")
	fs.StringVar(&f.out, "out", "", "output dir (default runs/<timestamp>-<seed>)")
	fs.StringVar(&f.faults, "faults", "", "comma-separated faults to inject, e.g. kill-leader,pause-follower (see vigil faults)")
	fs.DurationVar(&f.faultInterval, "fault-interval", 10*time.Second, "time between the starts of two faults")
	fs.StringVar(&f.net, "net", "proxy", "how network faults reach the links: proxy (vigil's TCP proxies, no root) or netns (a network namespace per member, iptables; root)")
	fs.StringVar(&f.scheduleFile, "schedule", "", "replay the fault schedule saved by an earlier run (its schedule.json)")
	fs.StringVar(&f.sabotage, "sabotage", "", "inject one named semantic bug into what vigil's clients see, to prove the check it names catches it (see vigil sabotage list)")
	fs.IntVar(&f.settings.SnapshotCount, "snapshot-count", 0, "etcd members' --snapshot-count (0: etcd's default)")
	fs.IntVar(&f.settings.CompactionBatchLimit, "compaction-batch-limit", 0, "etcd members' compaction batch limit, revisions deleted per batch (0: etcd's default)")
	fs.DurationVar(&f.settings.WatchProgressNotifyInterval, "watch-progress-notify-interval", 0, "etcd members' period of progress notifications (0: etcd's default, 10m)")
	fs.BoolVar(&f.compress, "compress", false, "write the history gzipped, as history.jsonl.gz (vigil check reads both)")
	fs.BoolVar(&f.keepData, "keep-data", false, "keep the members' data dirs after a passing run (a failed or interrupted run keeps them always)")
	fs.BoolVar(&f.conform, "conform", false, "run the conformance probes (vigil conform) against the cluster first, and stop if any fails")
	fs.DurationVar(&f.startTimeout, "start-timeout", 90*time.Second, "how long the cluster gets to become healthy")
	fs.DurationVar(&f.linTimeout, "check-timeout", check.DefaultConfig().LinearizabilityTimeout, "budget of the linearizability search; past it the verdict is unknown")
	fs.DurationVar(&f.maxUnavailable, "max-unavailable", check.DefaultConfig().MaxUnavailable, "run/availability: how long clients may go unanswered after the faults around an outage healed")
	f.kube.define(fs)
	f.etcdSec.define(fs)
	fs.BoolVar(&f.tls, "tls", false, "the process fixture's members speak TLS on client and peer links and require client certificates, from a CA made for the run (under <out>/tls)")
	fs.BoolVar(&f.auth, "auth", false, "the process fixture's cluster has etcd's authentication on: user root, a password made for the run (<out>/tls/etcdctl.env says how to reach the cluster)")
	f.kine.define(fs)
	fs.StringVar(&f.command, "command", "", "--fixture command: the command line of your etcd-API server, with {client_port} where it takes the port to serve on 127.0.0.1 and optionally {data_dir}")
	return f
}

// resolve checks the parsed flags of fs against each other and fills in
// what they imply; it returns the flags set on the command line.
func (f *runFlags) resolve(fs *flag.FlagSet) (map[string]string, error) {
	set := map[string]string{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = fl.Value.String() })
	if f.endpoints != "" {
		if set["fixture"] != "" && f.fixture != "external" {
			return nil, usageError("--endpoints goes with --fixture external, not %q", f.fixture)
		}
		f.fixture = "external"
	}
	switch {
	case f.target == "kube":
		if err := checkKubeFlags(f, set); err != nil {
			return nil, err
		}
	case f.target != "etcd":
		return nil, usageError("--target %q: want etcd or kube", f.target)
	case f.fixture != "process" && f.fixture != "docker" && f.fixture != "external" && f.fixture != "kine" && f.fixture != "command":
		return nil, usageError("--fixture %q: want process, docker, kine, command or external", f.fixture)
	case (f.fixture == "command") != (f.command != ""):
		return nil, usageError("--fixture command and --command go together: --fixture command --command \"/path/to/server --listen 127.0.0.1:{client_port}\"")
	case f.fixture != "kine" && (set["kine-version"] != "" || set["kine-binary"] != "" || set["kine-backend"] != ""):
		return nil, usageError("--kine-version, --kine-binary and --kine-backend go with --fixture kine")
	case f.kine.check() != nil:
		return nil, f.kine.check()
	case (f.fixture == "kine" || f.fixture == "command") && set["members"] != "" && f.members != 1:
		return nil, usageError("--fixture %s runs one process; --members %d does not apply", f.fixture, f.members)
	case f.target == "etcd" && f.etcdSec.given() && f.fixture != "external":
		return nil, usageError("--cacert, --cert, --key, --user and --password reach a cluster you run (--endpoints); " +
			"for TLS and auth in the cluster vigil starts, give --tls and --auth")
	case (f.tls || f.auth) && (f.target != "etcd" || f.fixture != "process"):
		return nil, usageError("--tls and --auth set up the etcd cluster of the process fixture (--target etcd --fixture process); " +
			"for your own cluster give --endpoints with --cacert, --cert, --key, --user and --password")
	case f.fixture == "external" && f.endpoints == "":
		return nil, usageError("--fixture external needs --endpoints host:port[,host:port...]")
	case f.fixture != "external" && f.fixture != "kine" && f.fixture != "command" && f.members != 1 && f.members != 3 && f.members != 5:
		return nil, usageError("--members %d: want 1, 3 or 5", f.members)
	case f.faults != "" && f.scheduleFile != "":
		return nil, usageError("--faults and --schedule exclude each other: a schedule names its faults")
	case f.net != "proxy" && f.net != "netns":
		return nil, usageError("--net %q: want proxy or netns", f.net)
	case f.net == "netns" && f.fixture != "process":
		return nil, usageError("--net netns needs the process fixture")
	case f.faultInterval <= 0:
		return nil, usageError("--fault-interval must be positive")
	case f.sabotage != "" && !knownSabotage(f.sabotage, f.target):
		hint := didYouMean(f.sabotage, sabotage.NamesFor(f.target))
		if hint == "" {
			hint = "; its modes: " + strings.Join(sabotage.NamesFor(f.target), ", ")
		}
		return nil, usageError("--sabotage %q: not a mode of --target %s%s (see vigil sabotage list)", f.sabotage, f.target, hint)
	}
	if err := f.workload.Validate(); err != nil && !strings.Contains(err.Error(), "prefix") {
		return nil, usageError("%v", err)
	}
	if err := sabotageFits(f, set); err != nil {
		return nil, err
	}
	if f.seed == 0 {
		f.seed = rand.Int64N(1<<31) + 1
		set["seed"] = fmt.Sprint(f.seed)
	}
	if f.out == "" {
		f.out = filepath.Join("runs", fmt.Sprintf("%s-%d", time.Now().Format("20060102-150405"), f.seed))
	}
	switch {
	case f.scheduleFile != "":
		s, err := chaos.LoadSchedule(f.scheduleFile)
		if err != nil {
			return nil, usageError("--schedule: %v", err)
		}
		f.schedule = s
	case f.faults != "":
		names, err := chaos.ParseList(f.faults)
		var unknown *chaos.UnknownFault
		if errors.As(err, &unknown) {
			return nil, usageError("--faults: %v%s", unknown, didYouMean(unknown.Name, chaos.Names()))
		}
		if err != nil {
			return nil, usageError("--faults: %v", err)
		}
		f.schedule = chaos.Plan(f.seed, names, f.faultInterval, f.workload.Duration)
		if len(f.schedule.Steps) == 0 {
			return nil, usageError("--duration %s leaves no room for a fault every %s; lengthen the run or shorten --fault-interval", f.workload.Duration, f.faultInterval)
		}
	}
	if f.tls && f.schedule.NeedsPeerLinks() && f.net != "netns" {
		// The proxies tell which member opened a peer connection by its
		// HTTP headers, which TLS hides; namespaces tell by address.
		return nil, usageError("faults on the links between members over --tls need --net netns (partitions): vigil's proxies cannot see which member opened a TLS peer connection")
	}
	if f.schedule.NeedsFailpoints() && !f.failpoints {
		f.failpoints = true
		set["failpoints"] = "true"
	}
	oneProcess := f.fixture == "kine" || f.fixture == "command"
	if oneProcess {
		f.members = 1
	}
	if f.failpoints && (f.fixture == "external" || oneProcess) {
		return nil, usageError("--failpoints (and the failpoint faults) need the process or docker fixture")
	}
	if !f.settings.IsZero() && (f.fixture == "external" || oneProcess) {
		return nil, usageError("--snapshot-count, --compaction-batch-limit and --watch-progress-notify-interval set the members vigil starts: they need the process or docker fixture")
	}
	if f.fixture == "docker" {
		if err := checkDockerRun(f); err != nil {
			return nil, err
		}
	}
	if f.fixture == "external" {
		f.security = f.etcdSec.security(f.kube.insecure)
	}
	f.set = set
	return set, nil
}

func cmdRun(fs *flag.FlagSet) action {
	f := defineRunFlags(fs)
	return func([]string) (int, error) {
		set, err := f.resolve(fs)
		if err != nil {
			return exitSetup, err
		}
		return runEtcdOrKube(f, set)
	}
}

func runEtcdOrKube(f *runFlags, set map[string]string) (int, error) {
	if f.target == "kube" {
		return cmdRunKube(f, set)
	}
	ctx, done, err := startRun(f)
	if err != nil {
		return exitSetup, err
	}
	defer done()
	// Network faults need vigil on the links: a proxy in front of every
	// listener, or a namespace per member. Docker has its own network.
	setup := suites.Setup{Seed: f.seed, StartTimeout: f.startTimeout}
	switch {
	case f.net == "netns":
		setup.Net = "netns"
	case f.fixture == "docker":
	case f.schedule.NeedsLinks():
		if f.fixture != "process" && f.fixture != "kine" && f.fixture != "command" {
			return exitSetup, setupFailed(f, usageError("network faults need the process, kine or command fixture"))
		}
		setup.Net = "proxy"
	}
	setup.Fixture = func(ctx context.Context, net fixtures.Network) (fixtures.Fixture, chaos.Links, error) {
		fx, err := newFixture(ctx, f, net)
		if err != nil || f.fixture != "docker" {
			return fx, nil, err
		}
		links, err := dockerLinks(f, fx)
		return fx, links, err
	}
	out, err := suites.Execute(ctx, setup, func(ctx context.Context, fx fixtures.Fixture, links chaos.Links) (*suites.Outcome, error) {
		if c, ok := fx.(*etcdproc.Cluster); ok && (f.tls || f.auth) {
			f.security = c.Security()
		}
		fmt.Fprintf(os.Stderr, "cluster up: %s; running the workload for %s\n", strings.Join(fx.Endpoints(), ","), f.workload.Duration)
		if f.conform {
			if ok, err := conformFirst(ctx, f, fx.Endpoints()); err != nil || !ok {
				return nil, errConformFailed{err}
			}
		}
		return suites.RunEtcd(ctx, fx, suites.Config{Out: f.out, Seed: f.seed, Vigil: version, Flags: redacted(set), Security: f.security,
			Workload: f.workload, Checks: f.checkConfig(), Progress: os.Stderr, Schedule: f.schedule, Links: links, Sabotage: f.sabotage,
			Logf: func(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }})
	})
	var failed errConformFailed
	if errors.As(err, &failed) {
		return exitFail, failed.err
	}
	if err != nil {
		return exitSetup, setupFailed(f, err)
	}
	return finishRun(f, out, "cluster")
}

// errConformFailed: vigil run --conform found a probe failing (err nil)
// or could not run the probes; the workload was not run.
type errConformFailed struct{ err error }

func (e errConformFailed) Error() string {
	if e.err == nil {
		return "conformance probes failed"
	}
	return e.err.Error()
}

// finishRun writes the reports of a run whose system under test (named by
// stopped) is already stopped, prints the verdict table, and returns the
// exit code. An interrupted run gets verdict error and its partial history.
func finishRun(f *runFlags, out *suites.Outcome, stopped string) (int, error) {
	if out.Interrupted {
		r := reports.Summarize(out.History, nil, out.Elapsed.Seconds())
		r.Verdict, r.Reason = reports.VerdictError, "interrupted before the workload finished; the partial history is in history.jsonl"
		writeReports(f.out, r)
		tidyRun(f, r.Verdict)
		writePage(f.out, out.History, r)
		fmt.Fprintf(os.Stderr, "vigil: interrupted; %s stopped, partial history in %s\n", stopped, f.out)
		return exitSetup, nil
	}
	r := reports.Summarize(out.History, out.Results, out.Elapsed.Seconds())
	addProbes(&r)
	if err := writeReports(f.out, r); err != nil {
		return exitSetup, err
	}
	writeVisualization(f.out, out.Results)
	tidyRun(f, r.Verdict)
	writePage(f.out, out.History, r)
	reports.Table(os.Stdout, r)
	if f.sabotage != "" {
		reportSabotage(f.sabotage, out.History, out.Results)
	}
	fmt.Printf("results in %s (report.html to look at)\n", f.out)
	return reports.ExitCode(r.Verdict), nil
}

// writePage writes report.html; a run's verdict does not depend on it,
// so a failure to draw it is said, not fatal.
func writePage(dir string, h *history.History, r reports.Result) {
	if err := reports.WritePage(dir, h, r); err != nil {
		fmt.Fprintf(os.Stderr, "vigil: writing %s: %v\n", reports.PageFile, err)
	}
}

// tidyRun shrinks a finished run's output dir: the history gzipped with
// --compress, and after a passing run the members' data dirs (most of a
// run's bytes) removed unless --keep-data. A failed run keeps its data for
// triage. What cannot be tidied is said, not fatal.
func tidyRun(f *runFlags, verdict string) {
	if f.compress {
		if _, err := history.Compress(filepath.Join(f.out, history.FileName)); err != nil {
			fmt.Fprintf(os.Stderr, "vigil: %v\n", err)
		}
	}
	if f.keepData || verdict != string(check.Pass) {
		return
	}
	dirs, _ := filepath.Glob(filepath.Join(f.out, "members", "*", "data"))
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

// startRun makes the output dir, saves the fault schedule (before the run,
// so that even a crashed run can be replayed) and registers the run so that
// vigil cleanup finds it if vigil is killed. SIGINT and SIGTERM cancel the
// context it returns: the workload stops, the history is closed, the
// system under test is stopped. done undoes the registration.
func startRun(f *runFlags) (ctx context.Context, done func(), err error) {
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return nil, nil, setupError(err)
	}
	if len(f.schedule.Steps) > 0 {
		if err := f.schedule.Save(filepath.Join(f.out, chaos.ScheduleFile)); err != nil {
			return nil, nil, setupError(err)
		}
	}
	ctx, stop := stopContext()
	fmt.Fprintf(os.Stderr, "vigil %s: seed %d, output in %s\n", version, f.seed, f.out)
	unregister := func() {}
	if u, err := runs.Register(f.out); err == nil {
		unregister = u
	}
	return ctx, func() { unregister(); stop() }, nil
}

func newFixture(ctx context.Context, f *runFlags, net fixtures.Network) (fixtures.Fixture, error) {
	switch f.fixture {
	case "external":
		return external.New(external.Config{Endpoints: strings.Split(f.endpoints, ","),
			Security: f.security}), nil
	case "kine":
		return f.kine.newKine(ctx, f.out, net)
	case "command":
		return newCommandFixture(f.command, f.out, net)
	}
	if f.fixture == "docker" {
		// Before a build of minutes: without an engine there is no point.
		if err := checkDockerEngine(ctx); err != nil {
			return nil, err
		}
	}
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: f.etcdVersion, Binary: f.etcdBinary, Failpoints: f.failpoints, Progress: os.Stderr})
	if err != nil {
		return nil, err
	}
	ver := f.etcdVersion
	if f.etcdBinary != "" {
		if v, err := binaries.EtcdVersion(bin); err == nil {
			ver = "v" + strings.TrimPrefix(v, "v")
		}
	}
	if f.fixture == "docker" {
		return newDockerFixture(f, bin, ver)
	}
	cfg := etcdproc.Config{Binary: bin, Members: f.members, Dir: f.out, Version: ver, Failpoints: f.failpoints, Settings: f.settings,
		TLS: f.tls, Auth: f.auth}
	if net != nil {
		cfg.Network = net
	}
	return etcdproc.New(cfg), nil
}

// setupFailed writes a result.json saying why the run could not be made,
// so a CI job finds the reason next to the logs.
func setupFailed(f *runFlags, err error) error {
	err = setupError(err)
	r := reports.Result{Format: reports.ResultFormat, Vigil: version, Flags: redacted(f.set), Verdict: reports.VerdictError,
		Reason: err.Error(), SetupFailed: true, Seed: f.seed, Target: history.Target{Kind: f.target, Fixture: f.fixture},
		Checks: []check.Result{}}
	writeReports(f.out, r)
	return err
}

func writeReports(dir string, r reports.Result) error {
	if err := reports.WriteJSON(dir, r); err != nil {
		return err
	}
	return reports.WriteJUnit(dir, r)
}

// checkConfig is the checkers' configuration the run's flags ask for.
func (f *runFlags) checkConfig() check.Config {
	c := check.DefaultConfig()
	c.LinearizabilityTimeout, c.MaxUnavailable = f.linTimeout, f.maxUnavailable
	return c
}
