package launch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	"github.com/vigil-suite/vigil/fixtures/external"
	"github.com/vigil-suite/vigil/internal/redact"
	"github.com/vigil-suite/vigil/reports"
)

// CertifyOptions are the options of `vigil certify`: one etcd-API server,
// started from Command, running at Endpoints, or kine (Fixture kine),
// held to what Kubernetes needs, directly and under a kube-apiserver
// vigil starts over it.
type CertifyOptions struct {
	Command   string // a server vigil starts ({client_port}, {data_dir})
	Endpoints string // or one the user runs
	// Security reaches the server at Endpoints over TLS or with auth.
	Security EtcdSecurity
	// Fixture is kine for kine over Kine.Backend, which vigil starts
	// with its database in each phase, as --fixture kine and --store
	// kine do; empty with Command or Endpoints.
	Fixture string
	Kine    KineOptions
	Out     string
	// Duration is each run's with faults (the etcd API run and the
	// Kubernetes run); FaultInterval the pause between their faults.
	Duration, FaultInterval time.Duration
	Seed                    int64
	// Reference is the differential's: default (etcd of the server's
	// reported line; kube-apiserver over etcd) or none.
	Reference string
	// Limitations are the --limitation values, declared in the etcd API
	// phases (1 and 2); the Kubernetes phases take none.
	Limitations []string
	KubeVersion string
	Vigil       string
	Given       map[string]string
}

// DefaultCertifyOptions are the options of a bare `vigil certify`.
func DefaultCertifyOptions() CertifyOptions {
	return CertifyOptions{Duration: 30 * time.Second, FaultInterval: 5 * time.Second, Reference: "default",
		KubeVersion: binaries.DefaultKubeVersion, Kine: defaultKine(), Given: map[string]string{}}
}

// The faults of certify's runs, for a server vigil starts from
// --command; each server keeps those that apply to it (certified.faults).
var (
	certifyEtcdFaults = []string{"kill-leader", "restart-leader", "pause-leader", "client-reset", "watch-drop", "compact-storm"}
	certifyKubeFaults = []string{"kill-leader", "pause-leader", "client-reset", "watch-drop", "compact-storm", "restart-apiserver"}
)

// certifyFaults is the faults a run of target (etcd or kube) gets, and
// those left out with why.
func (c *CertifyOptions) certifyFaults(target string) (use []string, left map[string]string) {
	all := certifyEtcdFaults
	if target == "kube" {
		all = certifyKubeFaults
	}
	return c.certifiedServer().faults(all)
}

// certifyPhases are the phases' titles, in order, with their estimates.
func (c *CertifyOptions) phaseTitles() []string {
	d := c.Duration.Round(time.Second)
	return []string{
		"etcd API probes, kubernetes profile, against a reference etcd",
		fmt.Sprintf("etcd API run with faults (%s)", d),
		"Kubernetes probes through kube-apiserver over the server",
		fmt.Sprintf("Kubernetes run with faults through kube-apiserver (%s)", d),
	}
}

// estimate is how long certify should take on 2 cores: measured figures
// per phase, plus kube-apiserver's build when it is not cached.
func (c *CertifyOptions) estimate() (time.Duration, string) {
	// Measured on etcd v3.6.16: probes 5 s, a run's start and judging
	// 5-30 s, kube-apiserver ready in ~15 s, the 128 Kubernetes probes in
	// ~20 s (14-19 s alone, v1.36.3 over 1 etcd member), their reference
	// as long again.
	t := 10*time.Second + (c.Duration + 10*time.Second) + 75*time.Second + (c.Duration + 30*time.Second)
	if c.Reference == "none" {
		t -= 35 * time.Second
	}
	note := ""
	if c.Fixture == "kine" {
		// Measured: kine and its database take longer to start and to
		// judge than etcd (more violations), about a minute in all.
		t += time.Minute
		if _, ok, _ := binaries.KineCached(binaries.KineOptions{Version: c.Kine.Version}); !ok && c.Kine.Binary == "" {
			t += 2 * time.Minute
			note += ", with kine " + c.Kine.Version + "'s first build (~2 min)"
		}
	}
	if _, ok, _ := binaries.KubeCached(binaries.KubeOptions{Version: c.KubeVersion}); !ok {
		t += 3 * time.Minute
		note += ", with kube-apiserver " + c.KubeVersion + "'s first build (~3 min, then cached)"
	}
	return t, note
}

func (c *CertifyOptions) check() error {
	given := func(name string) bool { _, ok := c.Given[name]; return ok }
	switch {
	case c.Fixture != "" && c.Fixture != "kine":
		return Usagef("--fixture %q: certify starts kine (--fixture kine); for your own server give --command \"...\", for one you run --endpoints HOST:PORT", c.Fixture)
	case c.Fixture == "kine" && (c.Command != "" || c.Endpoints != ""):
		return Usagef("--fixture kine starts kine itself: it goes without --command and --endpoints (give one of the three)")
	case c.Fixture != "kine" && (given("kine-version") || given("kine-binary") || given("kine-backend")):
		return Usagef("--kine-version, --kine-binary and --kine-backend go with --fixture kine")
	case c.Fixture == "kine" && c.Kine.check() != nil:
		return c.Kine.check()
	case c.Fixture == "" && (c.Command == "") == (c.Endpoints == ""):
		return Usagef("give one of --command \"/path/to/server ... {client_port} ... {data_dir}\" (a server vigil starts), --endpoints HOST:PORT (one you run) or --fixture kine [--kine-backend sqlite|postgres|mysql]")
	case c.Duration < 5*time.Second:
		return Usagef("--duration %s: at least 5s", c.Duration)
	case c.FaultInterval <= 0 || c.FaultInterval >= c.Duration:
		return Usagef("--fault-interval %s: positive and shorter than --duration", c.FaultInterval)
	case c.Reference != "default" && c.Reference != "none":
		return Usagef("--reference %q: default or none", c.Reference)
	case strings.Contains(c.Endpoints, ","):
		return Usagef("--endpoints: certify takes one server")
	case c.Endpoints == "" && (c.Security.given() || c.Security.InsecureSkipVerify):
		return Usagef("--cacert, --cert, --key, --user, --password and --insecure-skip-tls-verify reach a server you run: they go with --endpoints (a server vigil starts serves plain gRPC on loopback)")
	}
	if err := checkCommand(c.Command); err != nil {
		return err
	}
	_, err := resolveLimitations(c.Limitations)
	return err
}

// Certify runs the four phases against the server, decides, writes
// certify.json, certify.html and junit.xml in Out, and returns the exit
// code: ExitPass ready, ExitFail not ready, ExitUnknown inconclusive,
// ExitSetup a setup error (the server could not be started or reached).
func Certify(ctx context.Context, c CertifyOptions) (int, error) {
	if err := c.check(); err != nil {
		return ExitSetup, err
	}
	if c.Seed == 0 {
		c.Seed = time.Now().UnixNano()%(1<<31) + 1
	}
	unregister, err := openOut(&c.Out, "certify")
	if err != nil {
		return ExitSetup, err
	}
	defer unregister()
	begin := time.Now()
	est, note := c.estimate()
	titles := c.phaseTitles()
	step := func(i int) {
		logf("\n[%d/%d] %s… (%s elapsed)", i+1, len(titles)+1, titles[i], time.Since(begin).Round(time.Second))
	}
	logf("vigil certify: %d phases, about %s on 2 cores%s; seed %d, output in %s", len(titles)+1, est.Round(time.Minute), note, c.Seed, c.Out)

	// A server at --endpoints is checked before anything starts: an
	// unreachable one is a setup error, not a server that is not ready.
	if c.Endpoints != "" {
		cl := external.New(external.Config{Endpoints: []string{c.Endpoints}, Security: c.Security.Resolved()})
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := cl.Start(sctx)
		cancel()
		cl.Stop()
		if err != nil {
			return c.finish(begin, []Phase{{Key: "etcd-probes", Title: titles[0], SetupFailed: true, Error: err.Error()}})
		}
	}
	run := []func() Phase{
		func() Phase { return c.probePhase(ctx, titles[0], "etcd") },
		func() Phase { return c.runPhase(ctx, titles[1], "etcd") },
		func() Phase { return c.probePhase(ctx, titles[2], "kube") },
		func() Phase { return c.runPhase(ctx, titles[3], "kube") },
	}
	var phases []Phase
	for i, phase := range run {
		step(i)
		phases = append(phases, phase())
		// Interrupted (Ctrl-C), or the server never came up: the phases
		// so far decide (Decide makes missing ones inconclusive).
		if ctx.Err() != nil || phases[0].SetupFailed {
			break
		}
	}
	return c.finish(begin, phases)
}

// finish decides, writes the certificate and prints the verdict.
func (c *CertifyOptions) finish(begin time.Time, phases []Phase) (int, error) {
	logf("\n[%d/%d] the verdict… (%s elapsed)", len(c.phaseTitles())+1, len(c.phaseTitles())+1, time.Since(begin).Round(time.Second))
	cert := Certificate{Format: 1, Profile: check.ProfileKubernetes, Server: c.server(), Vigil: c.Vigil, Seed: c.Seed,
		Flags: redact.Flags(c.Given), Phases: phases, Limitations: c.Limitations}
	coverSkipped(phases)
	for _, p := range phases {
		cert.Requirements = append(cert.Requirements, p.Requirements...)
	}
	cert.Verdict, cert.Exit, cert.Reason = Decide(phases)
	cert.Ready = cert.Exit == ExitPass
	cert.DurationS = time.Since(begin).Seconds()
	if err := cert.write(c.Out); err != nil {
		return ExitSetup, err
	}
	cert.summary(os.Stdout)
	fmt.Printf("certificate in %s (certify.html to look at, certify.json, junit.xml)\n", c.Out)
	if cert.Exit == ExitSetup {
		return ExitSetup, SetupError(errors.New(cert.Reason))
	}
	return cert.Exit, nil
}

func (c *CertifyOptions) server() string { return c.certifiedServer().String() }

// readResult reads a run's result.json.
func readResult(dir string) (*reports.Result, error) {
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		return nil, err
	}
	var r reports.Result
	return &r, json.Unmarshal(b, &r)
}
