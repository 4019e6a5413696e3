package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/fixtures/kubeapiserver"
	"github.com/vigil-suite/vigil/suites/conformance"
	"github.com/vigil-suite/vigil/suites/conformance/kubeprobes"
	"github.com/vigil-suite/vigil/targets/kube"
)

// conformFlags are vigil conform's flags.
type conformFlags struct {
	target, endpoints, fixture, command, limits string
	etcdVersion, reference, only, out, repro    string
	list                                        bool
	kine                                        kineFlags
	kube                                        conformKube
	etcdSec                                     etcdSecurity // --endpoints over TLS, with auth
}

// cmdConform is `vigil conform`: the deterministic probes against a
// target, compared with a reference server vigil starts itself.
func cmdConform(fs *flag.FlagSet) action {
	o := &conformFlags{}
	fs.StringVar(&o.target, "target", "etcd", "API family: etcd or kube")
	fs.StringVar(&o.endpoints, "endpoints", "", "--target etcd: client endpoint of the server to probe (default: a 1-member etcd vigil starts)")
	fs.StringVar(&o.fixture, "fixture", "process", "--target etcd, when no --endpoints are given: what vigil starts to probe: process (etcd), kine, or command (your server, from --command)")
	fs.StringVar(&o.command, "command", "", "--fixture command: your etcd-API server's command line, with {client_port} (and optionally {data_dir})")
	o.kine.define(fs)
	o.etcdSec.define(fs)
	fs.StringVar(&o.limits, "limitations", "", "whose documented departures from etcd to report as documented limitations rather than failures: none or kine (default kine with --fixture kine, else none)")
	fs.StringVar(&o.etcdVersion, "etcd-version", binaries.DefaultEtcdVersion, "etcd version vigil starts when no server is given (under kube-apiserver too)")
	fs.StringVar(&o.reference, "reference", "default", "reference for the differential: none, default (etcd of the target's reported version, else "+binaries.DefaultEtcdVersion+"; for kube, kube-apiserver "+binaries.DefaultKubeVersion+") or a version")
	fs.StringVar(&o.only, "only", "", "comma-separated probe names, areas ending in / (e.g. watch/), or Kubernetes behaviours ending in @ (every resource)")
	fs.StringVar(&o.out, "out", "", "output dir (default runs/conform-<timestamp>)")
	fs.BoolVar(&o.list, "list", false, "list the probes and exit")
	fs.StringVar(&o.repro, "repro", "", "run this one probe against the target and print a standalone Go program that reproduces it")
	k := &o.kube
	k.kubeServer.define(fs, " (default: one vigil starts over etcd)")
	fs.StringVar(&k.version, "kube-version", binaries.DefaultKubeVersion, "--target kube: Kubernetes version whose kube-apiserver vigil starts when no --server is given")
	fs.BoolVar(&k.watchCache, "watch-cache", true, "--target kube: run the kube-apiserver vigil starts (target and reference) with its watch cache")
	fs.StringVar(&k.resources, "resource", "all", "--target kube: configmaps, crd (vigilobjects.vigil.dev) or all")
	return func([]string) (int, error) { return o.run(fs) }
}

// run checks the flags set on fs against each other, then probes.
func (o *conformFlags) run(fs *flag.FlagSet) (int, error) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var probes []conformance.Info
	switch o.target {
	case "etcd":
		for _, f := range []string{"server", "token", "ca-file", "kubeconfig", "context", "in-cluster", "kube-version", "watch-cache", "resource"} {
			if set[f] {
				return exitSetup, usageError("--%s goes with --target kube", f)
			}
		}
		switch {
		case o.fixture != "process" && o.fixture != "kine" && o.fixture != "command":
			return exitSetup, usageError("--fixture %q: want process (etcd), kine or command", o.fixture)
		case o.fixture != "process" && o.endpoints != "":
			return exitSetup, usageError("--fixture %s starts a server to probe; --endpoints probes a server you run: give one of them", o.fixture)
		case (o.fixture == "command") != (o.command != ""):
			return exitSetup, usageError("--fixture command and --command go together")
		case o.kine.check() != nil:
			return exitSetup, o.kine.check()
		case o.limits != "" && o.limits != "none" && o.limits != "kine":
			return exitSetup, usageError("--limitations %q: want none or kine", o.limits)
		case o.fixture != "kine" && (set["kine-version"] || set["kine-binary"] || set["kine-backend"]):
			return exitSetup, usageError("--kine-version, --kine-binary and --kine-backend go with --fixture kine")
		case o.endpoints == "" && (o.etcdSec.given() || set["insecure-skip-tls-verify"]):
			return exitSetup, usageError("--cacert, --cert, --key, --user, --password and --insecure-skip-tls-verify reach a server you run: they go with --endpoints")
		}
		for _, p := range conformance.EtcdProbes() {
			probes = append(probes, p.Info)
		}
	case "kube":
		if o.etcdSec.given() {
			return exitSetup, usageError("--cacert, --cert, --key, --user and --password reach etcd members; for a Kubernetes API server use --ca-file, --token or --kubeconfig")
		}
		if set["endpoints"] {
			return exitSetup, usageError("--endpoints names etcd members; for a Kubernetes API server use --server URL (or --kubeconfig FILE)")
		}
		if err := o.kube.check(); err != nil {
			return exitSetup, err
		}
		probes = kubeprobes.Infos(o.kube.res)
	default:
		return exitSetup, usageError("--target %q: etcd or kube", o.target)
	}
	if o.list {
		for _, p := range probes {
			fmt.Printf("%-50s %s\n", p.Name, p.Title)
		}
		return exitPass, nil
	}
	var onlyList []string
	for _, o := range strings.Split(o.only, ",") {
		if o = strings.TrimSpace(o); o != "" {
			onlyList = append(onlyList, o)
		}
	}
	if o.repro != "" {
		onlyList, o.reference = []string{o.repro}, "none"
	}
	if err := checkOnly(onlyList, probes); err != nil {
		return exitSetup, err
	}
	ctx, done, err := startOutput(&o.out, "conform")
	if err != nil {
		return exitSetup, err
	}
	defer done()

	var target probed
	var startRef func() (probed, error)
	if o.target == "kube" {
		target, startRef, err = o.kube.servers(ctx, o.out, o.etcdVersion, o.reference, onlyList)
	} else {
		start := func(dir string) ([]string, string, func(), error) {
			eps, stop, err := startConformEtcd(ctx, o.etcdVersion, dir)
			return eps, "etcd " + o.etcdVersion + " started by vigil", stop, err
		}
		if o.fixture == "command" {
			start = func(dir string) ([]string, string, func(), error) { return startConformCommand(ctx, o.command, dir) }
		}
		if o.fixture == "kine" {
			start = func(dir string) ([]string, string, func(), error) { return startConformKine(ctx, o.kine, dir) }
			if o.reference == "default" {
				// kine's Status reports an etcd version it emulates; the
				// reference is the etcd vigil tests by default instead.
				o.reference = binaries.DefaultEtcdVersion
			}
		}
		sec := o.etcdSec.security(o.kube.insecure)
		target, startRef, err = etcdServers(ctx, o.out, o.endpoints, sec, start, o.reference, onlyList)
	}
	if err != nil {
		return exitSetup, setupError(err)
	}
	var lims []conformance.Limitation
	if o.limits == "kine" || o.limits == "" && o.fixture == "kine" {
		lims = conformance.KineLimitations()
	}
	results, refName, err := differential(ctx, target, startRef, lims)
	if err != nil {
		return exitSetup, err
	}
	if o.repro != "" {
		if len(results) == 0 {
			return exitSetup, usageError("--repro %s: no such probe ran", o.repro)
		}
		how := "go run . -endpoint HOST:PORT"
		if o.target == "kube" {
			how = "go run . -server URL -token TOKEN -ca-file CA.pem"
		}
		fmt.Fprintf(os.Stderr, "%s: %s on the target; the program below replays it (%s)\n", o.repro, results[0].Verdict, how)
		fmt.Print(results[0].Reproduction())
		return exitPass, nil
	}
	results = conformance.ApplyLimitations(results, lims)
	rep := conformance.NewReport(target.name, refName, results)
	if err := rep.Write(o.out); err != nil {
		return exitSetup, err
	}
	rep.Table(os.Stdout)
	fmt.Printf("results in %s (result.json with every transcript, junit.xml)\n", o.out)
	if ctx.Err() != nil {
		return exitSetup, fmt.Errorf("interrupted")
	}
	if rep.Failed() {
		return exitFail, nil
	}
	return exitPass, nil

}

// probed is a server the probes run against: its name in the report, the
// probes run there, and how to stop it (nil for a server the user runs).
type probed struct {
	name string
	run  func(context.Context) ([]conformance.Result, error)
	stop func()
}

// differential runs the probes against the target and, unless startRef is
// nil, against the reference server it starts, marking every probe whose
// transcript differs; it returns the results and the reference's name.
func differential(ctx context.Context, target probed, startRef func() (probed, error), lims []conformance.Limitation) ([]conformance.Result, string, error) {
	if target.stop != nil {
		defer target.stop()
	}
	begin := time.Now()
	results, err := target.run(ctx)
	if err != nil {
		return nil, "", setupError(err)
	}
	fmt.Fprintf(os.Stderr, "%d probes against the target in %s\n", len(results), time.Since(begin).Round(time.Millisecond))
	if startRef == nil {
		return results, "", nil
	}
	ref, err := startRef()
	if err != nil {
		return nil, "", setupError(err)
	}
	refResults, err := ref.run(ctx)
	ref.stop()
	if err != nil {
		return nil, "", setupError(err)
	}
	return conformance.CompareWithReference(results, refResults, lims...), ref.name, nil
}

// etcdServers is the etcd target (the server start starts if no endpoints
// are given) and, unless reference is none, how to start the reference
// etcd: the target's reported version by default.
// sec reaches the target at endpoints; the servers vigil starts need none.
func etcdServers(ctx context.Context, out, endpoints string, sec fixtures.Security, start func(dir string) ([]string, string, func(), error), reference string, only []string) (probed, func() (probed, error), error) {
	probesAt := func(eps []string, sec fixtures.Security) func(context.Context) ([]conformance.Result, error) {
		return func(ctx context.Context) ([]conformance.Result, error) {
			return conformance.RunEtcdProbes(ctx, conformance.EtcdConfig{Endpoints: eps, Only: only, Security: sec}, conformance.EtcdProbes())
		}
	}
	eps := strings.Split(endpoints, ",")
	target := probed{name: "server at " + endpoints}
	if endpoints == "" {
		var err error
		eps, target.name, target.stop, err = start(filepath.Join(out, "target"))
		if err != nil {
			return probed{}, nil, err
		}
	}
	target.run = probesAt(eps, sec)
	if reference == "none" {
		return target, nil, nil
	}
	return target, func() (probed, error) {
		v := reference
		if v == "default" {
			v = binaries.DefaultEtcdVersion
			if reported := conformance.ServerVersion(ctx, eps[0], sec); reported != "" {
				v = "v" + strings.TrimPrefix(reported, "v")
			}
		}
		refEps, stop, err := startConformEtcd(ctx, v, filepath.Join(out, "reference"))
		if err != nil {
			return probed{}, fmt.Errorf("starting the reference etcd %s (--reference none skips it): %w", v, err)
		}
		return probed{name: "etcd " + v + " started by vigil", run: probesAt(refEps, fixtures.Security{}), stop: stop}, nil
	}, nil
}

// conformKube holds `vigil conform --target kube`'s flags.
type conformKube struct {
	kubeServer
	version, resources string
	watchCache         bool
	res                []kube.Resource
	external           *kube.Config
}

func (k *conformKube) check() error {
	switch k.resources {
	case "all", "":
		k.res = []kube.Resource{kube.ConfigMaps, kube.VigilObjects}
	default:
		r, ok := kube.ResourceNamed(k.resources)
		if !ok {
			return usageError("--resource %q: configmaps, crd or all", k.resources)
		}
		k.res = []kube.Resource{r}
	}
	if !k.named() && k.credentials() {
		return usageError("--token, --ca-file and --insecure-skip-tls-verify go with --server")
	}
	var err error
	k.external, err = k.config()
	return err
}

// servers is the Kubernetes target (a kube-apiserver vigil starts if none
// is named) and, unless reference is none, how to start the reference
// kube-apiserver, with the same watch-cache setting.
func (k *conformKube) servers(ctx context.Context, out, etcdVersion, reference string, only []string) (probed, func() (probed, error), error) {
	cache := map[bool]string{true: "on", false: "off"}[k.watchCache]
	start := func(version, dir string) (probed, error) {
		srv, compact, stop, err := startConformKube(ctx, etcdVersion, version, k.watchCache, filepath.Join(out, dir))
		if err != nil {
			return probed{}, err
		}
		return probed{name: fmt.Sprintf("kube-apiserver %s (watch cache %s) over etcd %s, started by vigil", version, cache, etcdVersion),
			run: k.probesAt(kubeprobes.Config{Server: srv, Compact: compact, Resources: k.res, Only: only}), stop: stop}, nil
	}
	var target probed
	if k.external != nil {
		target = probed{name: "Kubernetes API server at " + k.external.Server,
			run: k.probesAt(kubeprobes.Config{Server: *k.external, Resources: k.res, Only: only})}
	} else {
		var err error
		if target, err = start(k.version, "target"); err != nil {
			return probed{}, nil, err
		}
	}
	if reference == "none" {
		return target, nil, nil
	}
	return target, func() (probed, error) {
		v := reference
		if v == "default" {
			v = binaries.DefaultKubeVersion
		}
		ref, err := start(v, "reference")
		if err != nil {
			return probed{}, fmt.Errorf("starting the reference kube-apiserver %s (--reference none skips it): %w", v, err)
		}
		return ref, nil
	}, nil
}

func (k *conformKube) probesAt(cfg kubeprobes.Config) func(context.Context) ([]conformance.Result, error) {
	return func(ctx context.Context) ([]conformance.Result, error) {
		return kubeprobes.Run(ctx, cfg, kubeprobes.Probes())
	}
}

// startConformKube builds (if needed) and starts a 1-member etcd with one
// kube-apiserver over it in dir; compact compacts that etcd.
func startConformKube(ctx context.Context, etcdVersion, kubeVersion string, watchCache bool, dir string) (kube.Config, func(context.Context, int64) error, func(), error) {
	etcdBin, err := binaries.Etcd(ctx, binaries.Options{Version: etcdVersion, Progress: os.Stderr})
	if err != nil {
		return kube.Config{}, nil, nil, err
	}
	kubeBin, err := binaries.KubeAPIServer(ctx, binaries.KubeOptions{Version: kubeVersion, Progress: os.Stderr})
	if err != nil {
		return kube.Config{}, nil, nil, err
	}
	fx := kubeapiserver.NewFixture(kubeapiserver.FixtureConfig{Dir: dir,
		Etcd:       etcdproc.Config{Binary: etcdBin, Members: 1, Version: etcdVersion},
		APIServers: kubeapiserver.Config{Binary: kubeBin, Version: kubeVersion, DisableWatchCache: !watchCache}})
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	fmt.Fprintf(os.Stderr, "starting etcd %s and kube-apiserver %s in %s\n", etcdVersion, kubeVersion, dir)
	if err := fx.Start(sctx); err != nil {
		fx.Stop()
		return kube.Config{}, nil, nil, err
	}
	s := fx.Servers()
	srv := kube.Config{Server: s.URLs()[0], Token: s.Token(), CAFile: s.CAFile()}
	return srv, conformance.EtcdCompactor(fx.Endpoints()), func() { fx.Stop() }, nil
}

// checkOnly refuses a --only entry that names no probe.
func checkOnly(only []string, probes []conformance.Info) error {
	for _, o := range only {
		if !slices.ContainsFunc(probes, func(p conformance.Info) bool { return conformance.Matches(p.Name, o) }) {
			return usageError("--only %q names no probe; vigil conform --list shows them", o)
		}
	}
	return nil
}

// startConformEtcd builds (if needed) and starts a 1-member etcd in dir.
func startConformEtcd(ctx context.Context, version, dir string) ([]string, func(), error) {
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: version, Progress: os.Stderr})
	if err != nil {
		return nil, nil, err
	}
	c := etcdproc.New(etcdproc.Config{Binary: bin, Members: 1, Dir: dir, Version: version})
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := c.Start(sctx); err != nil {
		c.Stop()
		return nil, nil, err
	}
	return c.Endpoints(), func() { c.Stop() }, nil
}
