package launch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/fixtures/kine"
	"github.com/vigil-suite/vigil/fixtures/kubeapiserver"
	"github.com/vigil-suite/vigil/suites/conformance"
	"github.com/vigil-suite/vigil/suites/conformance/kubeprobes"
	etcdtarget "github.com/vigil-suite/vigil/targets/etcd"
	"github.com/vigil-suite/vigil/targets/kube"
	"github.com/vigil-suite/vigil/workload"
)

// ConformOptions are the options of `vigil conform`: the deterministic
// probes against a target, compared with a reference server vigil starts.
type ConformOptions struct {
	Target    string // etcd or kube
	Endpoints string // an etcd-API server the user runs
	Fixture   string // what vigil starts when none is given: process, kine or command
	Command   string
	Kine      KineOptions
	Security  EtcdSecurity
	// Limitations are the --limitation values (names of
	// check.Limitations, kine, none; each may be comma-separated): the
	// documented departures declared for the target. Empty: kine's own
	// with --fixture kine, else none.
	Limitations []string
	// Profile is what the target is held to: etcd (every probe) or
	// kubernetes (the probes of what Kubernetes relies on; the others are
	// reported but fail nothing).
	Profile     string
	EtcdVersion string
	Reference   string // none, default or a version
	Only        string // comma-separated probes, areas (watch/) or behaviours (name@)
	Out         string
	List        bool
	Repro       string // one probe, printed as a standalone program
	ReproTest   string // with Repro: write it as a Go test file here instead

	KubeServer KubeServer
	// Store is what the kube-apiserver vigil starts keeps its data in:
	// etcd (the default), kine (with Kine's options), command (the server
	// of Command) or endpoints (the one at Endpoints); see StoreEtcd.
	Store       string
	KubeVersion string
	WatchCache  bool
	Resources   string // configmaps, crd or all
	// Grammar is how many sequences drawn from the etcd API's grammar
	// run beside the probes (the differential mode), GrammarLength the
	// requests in each, Seed their draw.
	Grammar, GrammarLength int
	Seed                   int64

	Given map[string]string // the options set on the command line

	// storeSec and storeTLS reach the store at Endpoints under the
	// kube-apiserver vigil starts (Store endpoints), as check found them.
	storeSec fixtures.Security
	storeTLS kubeapiserver.EtcdTLS
}

// DefaultConformOptions are the options of a bare `vigil conform`.
func DefaultConformOptions() ConformOptions {
	return ConformOptions{Target: "etcd", Fixture: "process", Profile: check.ProfileEtcd, EtcdVersion: binaries.DefaultEtcdVersion, Reference: "default",
		KubeVersion: binaries.DefaultKubeVersion, WatchCache: true, Resources: "all",
		Kine: defaultKine()}
}

// Conform checks the options, runs the probes against the target and the
// reference, writes result.json and junit.xml, and prints the table (with
// List, the probes; with Repro, the reproduction). It returns the exit code.
func Conform(ctx context.Context, o ConformOptions) (int, error) {
	code, _, err := conform(ctx, o)
	return code, err
}

// conform is Conform, also returning the report written (nil with List,
// Repro, or before the probes ran).
func conform(ctx context.Context, o ConformOptions) (int, *conformance.Report, error) {
	probes, res, external, err := o.check()
	if err != nil {
		return ExitSetup, nil, err
	}
	declared, err := o.declared()
	if err != nil {
		return ExitSetup, nil, err
	}
	if o.List {
		for _, p := range probes {
			fmt.Printf("%-50s %-18s %s\n", p.Name, strings.Join(conformance.ProfilesOf(p.Name), ","), p.Title)
		}
		return ExitPass, nil, nil
	}
	var only []string
	for _, s := range strings.Split(o.Only, ",") {
		if s = strings.TrimSpace(s); s != "" {
			only = append(only, s)
		}
	}
	if o.ReproTest != "" && o.Repro == "" {
		return ExitSetup, nil, Usagef("--repro-test FILE writes the reproduction of the probe --repro names: give --repro too")
	}
	if o.Repro != "" {
		only = []string{o.Repro}
		if o.Target == "kube" {
			if o.ReproTest != "" {
				return ExitSetup, nil, Usagef("--repro-test: a Kubernetes probe's reproduction is a program only")
			}
			// Its program replays and prints; it needs no reference.
			o.Reference = "none"
		}
	}
	for _, s := range only {
		if !slices.ContainsFunc(probes, func(p conformance.Info) bool { return conformance.Matches(p.Name, s) }) {
			return ExitSetup, nil, Usagef("--only %q names no probe; vigil conform --list shows them", s)
		}
	}
	unregister, err := openOut(&o.Out, "conform")
	if err != nil {
		return ExitSetup, nil, err
	}
	defer unregister()
	var target probed
	var startRef func() (probed, error)
	if o.Target == "kube" {
		target, startRef, err = o.kubeServers(ctx, res, external, only)
	} else {
		target, startRef, err = o.etcdServers(ctx, only)
	}
	if err != nil {
		return ExitSetup, nil, SetupError(err)
	}
	lims := conformance.LimitationsFor(declared)
	results, refName, err := differential(ctx, target, startRef, lims)
	if err != nil {
		return ExitSetup, nil, err
	}
	if o.Repro != "" {
		if len(results) == 0 {
			return ExitSetup, nil, Usagef("--repro %s: no such probe ran", o.Repro)
		}
		code, err := o.reproduce(conformance.ApplyLimitations(results, lims)[0], refName)
		return code, nil, err
	}
	results = conformance.ApplyProfile(conformance.ApplyLimitations(results, lims), o.Profile)
	o.grammarRepros(results, refName)
	rep := conformance.NewReport(target.name, refName, results)
	rep.Profile, rep.Limitations = o.Profile, declared
	if err := rep.Write(o.Out); err != nil {
		return ExitSetup, nil, err
	}
	rep.Table(os.Stdout)
	fmt.Printf("results in %s (result.json with every transcript, junit.xml)\n", o.Out)
	if ctx.Err() != nil {
		return ExitSetup, &rep, fmt.Errorf("interrupted")
	}
	if rep.Failed() {
		return ExitFail, &rep, nil
	}
	return ExitPass, &rep, nil
}

// declared are the limitations declared for the target, by name, with
// where it states each: --limitation's, or kine's own with --fixture kine.
func (o *ConformOptions) declared() (map[string]string, error) {
	lims, err := resolveLimitations(o.Limitations)
	if err != nil {
		return nil, err
	}
	if lims == nil && o.Fixture == "kine" {
		lims = kine.Documented()
	}
	return lims, nil
}

// reproduce prints the reproduction of r (or, with ReproTest, writes it
// as a test file), saying what it checks against: the reference's answers
// (refName), or the target's own when there was no reference.
func (o ConformOptions) reproduce(r conformance.Result, refName string) (int, error) {
	if o.Target == "kube" {
		fmt.Fprintf(os.Stderr, "%s: %s on the target; the program below replays it (go run . -server URL -token TOKEN -ca-file CA.pem)\n", o.Repro, r.Verdict)
		fmt.Print(r.Reproduction())
		return ExitPass, nil
	}
	// What the reproduction checks, with the words of a program or a test.
	fails, passes := "exits 1", "exits 0"
	if o.ReproTest != "" {
		fails, passes = "fails", "passes"
	}
	checks := fails + ", printing what vigil expected, while a server answers otherwise than " + refName + " did, and " + passes + " once it answers alike"
	switch {
	case refName == "" && r.Verdict == conformance.Pass:
		checks = fails + " when a server answers otherwise than the target did (no reference ran), and " + passes + " when alike"
	case refName == "":
		checks = "only replays and prints, and " + fails + ": no reference ran (--reference none) to learn the right answers from"
	}
	if o.ReproTest != "" {
		name := r.ReproductionTestName()
		if err := os.WriteFile(o.ReproTest, []byte(r.ReproductionTest()), 0o644); err != nil {
			return ExitSetup, err
		}
		fmt.Fprintf(os.Stderr, "%s: %s on the target; %s holds %s, which %s (VIGIL_REPRO_ENDPOINT=HOST:PORT go test -run %s)\n",
			o.Repro, r.Verdict, o.ReproTest, name, checks, name)
		return ExitPass, nil
	}
	fmt.Fprintf(os.Stderr, "%s: %s on the target; the program below replays it and %s (go run . -endpoint HOST:PORT)\n", o.Repro, r.Verdict, checks)
	fmt.Print(r.Reproduction())
	return ExitPass, nil
}

// check checks the options against each other; it returns the probes of
// the target, the Kubernetes resources to probe and the Kubernetes server
// the user named (nil: vigil starts one).
func (o *ConformOptions) check() ([]conformance.Info, []kube.Resource, *kube.Config, error) {
	given := func(name string) bool { _, ok := o.Given[name]; return ok }
	if err := resolveProfile(&o.Profile); err != nil {
		return nil, nil, nil, err
	}
	if err := checkCommand(o.Command); err != nil {
		return nil, nil, nil, err
	}
	if o.Target == "kube" && len(o.Limitations) > 0 {
		return nil, nil, nil, Usagef("--limitation declares departures from the etcd API: it goes with --target etcd")
	}
	switch {
	case o.Grammar < 0 || o.Grammar > 0 && o.GrammarLength < 1:
		return nil, nil, nil, Usagef("--grammar must be 0 or more and --grammar-length at least 1")
	case o.Grammar > 0 && o.Target == "kube":
		return nil, nil, nil, Usagef("--grammar draws from the etcd API's grammar: it goes with --target etcd")
	case o.Grammar > 0 && o.Only != "":
		return nil, nil, nil, Usagef("--grammar sequences run beside every probe: leave --only out")
	}
	var probes []conformance.Info
	switch o.Target {
	case "etcd":
		for _, f := range []string{"server", "token", "ca-file", "kubeconfig", "context", "in-cluster", "kube-version", "watch-cache", "resource", "store"} {
			if given(f) {
				return nil, nil, nil, Usagef("--%s goes with --target kube", f)
			}
		}
		switch {
		case o.Fixture != "process" && o.Fixture != "kine" && o.Fixture != "command":
			return nil, nil, nil, Usagef("--fixture %q: want process (etcd), kine or command", o.Fixture)
		case o.Fixture != "process" && o.Endpoints != "":
			return nil, nil, nil, Usagef("--fixture %s starts a server to probe; --endpoints probes a server you run: give one of them", o.Fixture)
		case (o.Fixture == "command") != (o.Command != ""):
			return nil, nil, nil, Usagef("--fixture command and --command go together")
		case o.Kine.check() != nil:
			return nil, nil, nil, o.Kine.check()
		case o.Fixture != "kine" && (given("kine-version") || given("kine-binary") || given("kine-backend")):
			return nil, nil, nil, Usagef("--kine-version, --kine-binary and --kine-backend go with --fixture kine")
		case o.Endpoints == "" && (o.Security.given() || o.Security.InsecureSkipVerify):
			return nil, nil, nil, Usagef("--cacert, --cert, --key, --user, --password and --insecure-skip-tls-verify reach a server you run: they go with --endpoints")
		}
		for _, p := range conformance.EtcdProbes() {
			probes = append(probes, p.Info)
		}
		return probes, nil, nil, nil
	case "kube":
	default:
		return nil, nil, nil, Usagef("--target %q: etcd or kube", o.Target)
	}
	if o.Security.given() && o.Store != StoreEndpoints {
		return nil, nil, nil, Usagef("--cacert, --cert, --key, --user and --password reach etcd members you run (--store endpoints --endpoints HOST:PORT); for a Kubernetes API server use --ca-file, --token or --kubeconfig")
	}
	if o.Store == StoreEndpoints {
		var err error
		if o.storeSec, o.storeTLS, err = storeSecurity(o.Security); err != nil {
			return nil, nil, nil, err
		}
	}
	switch {
	case o.Store == "":
		o.Store = StoreEtcd
	case o.Store != StoreEtcd && o.Store != StoreKine && o.Store != StoreCommand && o.Store != StoreEndpoints:
		return nil, nil, nil, Usagef("--store %q: want etcd, kine, command or endpoints", o.Store)
	case o.Store != StoreKine && (given("kine-version") || given("kine-binary") || given("kine-backend")):
		return nil, nil, nil, Usagef("--kine-version, --kine-binary and --kine-backend go with --fixture kine or --store kine")
	case o.Store == StoreKine && o.Kine.check() != nil:
		return nil, nil, nil, o.Kine.check()
	}
	switch {
	case o.Endpoints != "" && o.Store != StoreEndpoints:
		return nil, nil, nil, Usagef("--endpoints names etcd members: under the kube-apiserver vigil starts with --store endpoints; for a Kubernetes API server use --server URL (or --kubeconfig FILE)")
	case (o.Store == StoreEndpoints) != (o.Endpoints != ""):
		return nil, nil, nil, Usagef("--store endpoints and --endpoints go together")
	case (o.Store == StoreCommand) != (o.Command != ""):
		return nil, nil, nil, Usagef("--store command and --command go together")
	case o.Store != StoreEtcd && o.KubeServer.named():
		return nil, nil, nil, Usagef("--store puts a server under the kube-apiserver vigil starts; --server names one you run")
	}
	res := []kube.Resource{kube.ConfigMaps, kube.VigilObjects}
	if o.Resources != "all" && o.Resources != "" {
		r, ok := kube.ResourceNamed(o.Resources)
		if !ok {
			return nil, nil, nil, Usagef("--resource %q: configmaps, crd or all", o.Resources)
		}
		res = []kube.Resource{r}
	}
	if !o.KubeServer.named() && o.KubeServer.credentials() {
		return nil, nil, nil, Usagef("--token, --ca-file and --insecure-skip-tls-verify go with --server")
	}
	external, err := o.KubeServer.config()
	if err != nil {
		return nil, nil, nil, err
	}
	return kubeprobes.Infos(res), res, external, nil
}

// probed is a server the probes run against: its name in the report, the
// probes run there, and how to stop it (nil for a server the user runs).
// An etcd server also runs other probes (replays, to reduce a grammar
// sequence that differs) and has the grammar sequences it was sent.
type probed struct {
	name    string
	run     func(context.Context) ([]conformance.Result, error)
	stop    func()
	probes  func(context.Context, []conformance.EtcdProbe) ([]conformance.Result, error)
	grammar *conformance.GrammarSequences
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
		return nil, "", SetupError(err)
	}
	fmt.Fprintf(os.Stderr, "%d probes against the target in %s\n", len(results), time.Since(begin).Round(time.Millisecond))
	if startRef == nil {
		return results, "", nil
	}
	ref, err := startRef()
	if err != nil {
		return nil, "", SetupError(err)
	}
	defer ref.stop()
	refResults, err := ref.run(ctx)
	if err != nil {
		return nil, "", SetupError(err)
	}
	results = conformance.CompareWithReference(results, refResults, lims...)
	return append(results, reduceGrammar(ctx, target, ref, results, lims)...), ref.name, nil
}

// grammarRefusals asks the target at eps which grammar productions it
// refuses, under a prefix of its own (workload.Refusals), and says what
// it found on stderr.
func grammarRefusals(ctx context.Context, eps []string, sec fixtures.Security, run int64) map[string]string {
	c, err := etcdtarget.Dial(eps[0], 5*time.Second, sec)
	if err != nil {
		fmt.Fprintf(os.Stderr, "asking the target what it refuses: %v; the grammar sequences draw from everything\n", err)
		return nil
	}
	defer c.Close()
	refused := workload.Refusals(ctx, c, fmt.Sprintf("/vigil-conform/forms-%d/", run))
	var prods []string
	for pr := range refused {
		if strings.Contains(pr, "=") {
			prods = append(prods, pr)
		}
	}
	if len(prods) > 0 {
		slices.Sort(prods)
		fmt.Fprintf(os.Stderr, "the target refuses %d production(s) of the grammar; no grammar sequence sends them: %s\n", len(prods), strings.Join(prods, ", "))
	}
	return refused
}

// etcdServers is the etcd target (one vigil starts if no endpoints are
// given) and, unless the reference is none, how to start the reference
// etcd: the target's reported version by default.
func (o *ConformOptions) etcdServers(ctx context.Context, only []string) (probed, func() (probed, error), error) {
	run := time.Now().UnixNano() // the grammar sequences' lease ids, alike on both servers
	// The productions the target refuses, asked of it before its grammar
	// sequences run (the target runs first): neither server is sent them.
	var refused map[string]string
	probesAt := func(isTarget bool, eps []string, sec fixtures.Security, fresh func(context.Context, string) ([]string, error)) probed {
		gs := conformance.GrammarProbes(o.Seed, o.Grammar, o.GrammarLength, run)
		gs.Refused = func() map[string]string { return refused }
		return probed{grammar: gs,
			run: func(ctx context.Context) ([]conformance.Result, error) {
				probes := conformance.EtcdProbes()
				if len(only) == 0 {
					probes = append(probes, gs.Probes...)
				}
				if isTarget && len(only) == 0 && o.Grammar > 0 {
					refused = grammarRefusals(ctx, eps, sec, run)
				}
				return conformance.RunEtcdProbes(ctx, conformance.EtcdConfig{Endpoints: eps, Only: only, Security: sec, Fresh: fresh}, probes)
			},
			probes: func(ctx context.Context, probes []conformance.EtcdProbe) ([]conformance.Result, error) {
				return conformance.RunEtcdProbes(ctx, conformance.EtcdConfig{Endpoints: eps, Security: sec}, probes)
			}}
	}
	resolved := o.Security.Resolved()
	eps := strings.Split(o.Endpoints, ",")
	target := probed{name: "server at " + o.Endpoints}
	reference := o.Reference
	var fresh func(context.Context, string) ([]string, error)
	if o.Endpoints == "" {
		resolved = fixtures.Security{} // the server vigil starts needs none
		var err error
		var srv fixtures.Fixture
		if srv, target.name, err = o.etcdTarget(ctx, filepath.Join(o.Out, "target")); err != nil {
			return probed{}, nil, err
		}
		if o.Fixture == "kine" && reference == "default" {
			// kine's Status reports an etcd version it emulates; the
			// reference is the etcd vigil tests by default instead.
			reference = binaries.DefaultEtcdVersion
		}
		// A first use of kine may install a database server: minutes.
		if err := startFixture(ctx, srv, 5*time.Minute); err != nil {
			return probed{}, nil, err
		}
		eps, target.stop = srv.Endpoints(), func() { srv.Stop() }
		// A probe that leaves the server unable to serve gets it replaced
		// by a fresh one in a dir of its own: the broken one's data dir and
		// log stay for whoever debugs it.
		n := 0
		fresh = func(ctx context.Context, why string) ([]string, error) {
			srv.Stop()
			n++
			dir := filepath.Join(o.Out, fmt.Sprintf("target-fresh-%d", n))
			fmt.Fprintf(os.Stderr, "%s; starting a fresh server in %s\n", why, dir)
			next, _, err := o.etcdTarget(ctx, dir)
			if err == nil {
				err = startFixture(ctx, next, 5*time.Minute)
			}
			if err != nil {
				return nil, err
			}
			srv, eps = next, next.Endpoints() // the reference's version is asked of the current server
			return eps, nil
		}
	}
	at := probesAt(true, eps, resolved, fresh)
	target.run, target.probes, target.grammar = at.run, at.probes, at.grammar
	if reference == "none" {
		return target, nil, nil
	}
	return target, func() (probed, error) {
		v := reference
		if v == "default" {
			v = binaries.DefaultEtcdVersion
			if reported := conformance.ServerVersion(ctx, eps[0], resolved); reported != "" {
				v = "v" + strings.TrimPrefix(reported, "v")
			}
		}
		// The reported release may not build here (not on the module
		// proxy): the nearest of its line stands in, and the report says
		// so. A version asked for with --reference is taken as it is.
		bin, used, note, err := v, v, "", error(nil)
		if reference == "default" {
			bin, used, note, err = referenceEtcd(ctx, v)
		} else {
			bin, err = binaries.Etcd(ctx, binaries.Options{Version: v, Progress: os.Stderr})
		}
		if err != nil {
			return probed{}, fmt.Errorf("starting the reference etcd %s (--reference none skips it): %w", v, err)
		}
		name := "etcd " + used + " started by vigil"
		if note != "" {
			fmt.Fprintf(os.Stderr, "vigil: %s\n", note)
			name += " (" + note + ")"
		}
		ref := etcdproc.New(etcdproc.Config{Binary: bin, Members: 1, Dir: filepath.Join(o.Out, "reference"), Version: used})
		if err := startFixture(ctx, ref, 60*time.Second); err != nil {
			return probed{}, fmt.Errorf("starting the reference etcd %s (--reference none skips it): %w", used, err)
		}
		at := probesAt(false, ref.Endpoints(), fixtures.Security{}, nil)
		at.name, at.stop = name, func() { ref.Stop() }
		return at, nil
	}, nil
}

// etcdTarget is the server --fixture names, in dir, not started, and its
// name in the report.
func (o *ConformOptions) etcdTarget(ctx context.Context, dir string) (fixtures.Fixture, string, error) {
	switch o.Fixture {
	case "command":
		srv, err := commandServer(o.Command, dir, nil)
		return srv, "the server of --command, started by vigil", err
	case "kine":
		srv, err := o.Kine.server(ctx, dir, nil)
		return srv, "kine " + o.Kine.Version + " over " + o.Kine.Backend + ", started by vigil", err
	}
	srv, err := etcdServer(ctx, o.EtcdVersion, dir)
	return srv, "etcd " + o.EtcdVersion + " started by vigil", err
}

// etcdServer builds (if needed) a 1-member etcd in dir, not started.
func etcdServer(ctx context.Context, version, dir string) (fixtures.Fixture, error) {
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: version, Progress: os.Stderr})
	if err != nil {
		return nil, err
	}
	return etcdproc.New(etcdproc.Config{Binary: bin, Members: 1, Dir: dir, Version: version}), nil
}

// startFixture starts fx within timeout, stopping it again if it fails.
func startFixture(ctx context.Context, fx fixtures.Fixture, timeout time.Duration) error {
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := fx.Start(sctx); err != nil {
		fx.Stop()
		return err
	}
	return nil
}
