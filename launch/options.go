// Package launch turns the options of one vigil run into a checked run:
// it checks the options against each other and fills in what they imply,
// plans the fault schedule, builds or finds the binaries, makes the
// fixture (etcd processes or containers, kine, your own server, a
// kube-apiserver over etcd, or a system you run), runs the suites'
// pipeline on it and writes the reports. It does the same for the
// conformance probes. cmd/vigil binds its flags to Options and
// ConformOptions; a Go program can fill them itself.
package launch

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	"github.com/vigil-suite/vigil/fixtures/kine"
	"github.com/vigil-suite/vigil/fixtures/kubeapiserver"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/suites"
	"github.com/vigil-suite/vigil/targets/kube"
	"github.com/vigil-suite/vigil/workload"
)

// Options are the options of one run, as `vigil run` takes them. Zero
// values mean the defaults of DefaultOptions where those differ.
type Options struct {
	Target  string // etcd or kube
	Fixture string // process, docker, kine, command or external

	Members     int
	EtcdVersion string
	EtcdBinary  string
	Failpoints  bool
	Endpoints   string // comma-separated: a cluster the user runs
	Settings    fixtures.EtcdSettings
	TLS, Auth   bool // the process fixture's own cluster over TLS, with auth
	Security    EtcdSecurity
	Command     string // --fixture command's command line
	Kine        KineOptions
	Kube        KubeOptions

	Workload      workload.Config
	Seed          int64
	Out           string
	Faults        string // comma-separated fault names
	FaultInterval time.Duration
	ScheduleFile  string
	Net           string // proxy or netns
	Sabotage      string

	StartTimeout, CheckTimeout, MaxUnavailable time.Duration
	Conform, KeepData                          bool
	// HistoryFormat is how the history is written as the run goes: zst
	// (the default), jsonl or gz (history.Format). Compress is the old
	// --compress: gz.
	HistoryFormat string
	Compress      bool
	// FailFast stops the workload at the first violation the live judge
	// finds; JudgeEvery is the period of its passes (0: none, no live
	// judging; DefaultOptions sets suites.LiveEvery).
	FailFast   bool
	JudgeEvery time.Duration
	// Segment cuts a run longer than SegmentAbove (or any run, when
	// --segment is given) into segments of this length, each judged as
	// soon as it is complete and then dropped from memory (0: never).
	Segment time.Duration
	// Profile is what the target is held to: etcd (the whole API, the
	// default) or kubernetes (what Kubernetes relies on; the checks
	// outside it are reported but decide nothing).
	Profile string
	// Limitations are the --limitation values: documented departures
	// declared for the target (names of check.Limitations, kine, none;
	// each may be comma-separated). Empty: the fixture's own (kine's).
	Limitations []string

	// Given holds the options set on the command line by their flag names,
	// with their values: what a default means can depend on it, and the
	// history and result.json record it (credentials redacted, by
	// internal/redact, where each is written).
	Given map[string]string
	// Vigil is vigil's version, recorded in every history.
	Vigil string

	// Filled by Resolve.
	resolved      bool
	historyFormat history.Format
	schedule      chaos.Schedule
	security      fixtures.Security // the security reaching the system under test
	limitations   map[string]string // declared; nil: the fixture's own
}

// KubeOptions are the options only --target kube reads.
type KubeOptions struct {
	Version, Binary, FeatureGates, ResourceName string
	Store                                       string // etcd or kine
	APIServers                                  int
	WatchCache                                  bool
	CompactionInterval                          time.Duration
	Server                                      KubeServer // a server the user runs

	resource kube.Resource
	workload workload.KubeConfig
	servers  []kube.Config         // external: the one server, from the options or the kubeconfig
	storeTLS kubeapiserver.EtcdTLS // --store endpoints over TLS: how the API servers reach it
}

// KineOptions are the options of --fixture kine and --store kine.
type KineOptions struct {
	Version, Binary, Backend string
}

// DefaultSegment is the default --segment: each segment is then a run of
// vigil run's default length, judged in its memory. Runs of SegmentAbove
// or less are not cut unless --segment is given: they fit in memory whole,
// and a whole history lets a watch live through the run.
const (
	DefaultSegment = 30 * time.Second
	SegmentAbove   = 2 * time.Minute
)

// DefaultOptions are the options of a bare `vigil run`.
func DefaultOptions() Options {
	c := check.DefaultConfig()
	return Options{Target: "etcd", Fixture: "process", Members: 3, EtcdVersion: binaries.DefaultEtcdVersion,
		Workload: workload.DefaultConfig(), FaultInterval: 10 * time.Second, Net: "proxy",
		StartTimeout: 90 * time.Second, CheckTimeout: c.LinearizabilityTimeout, MaxUnavailable: c.MaxUnavailable,
		JudgeEvery:    suites.LiveEvery,
		Segment:       DefaultSegment,
		Kine:          defaultKine(),
		Kube:          KubeOptions{Version: binaries.DefaultKubeVersion, ResourceName: "configmaps", Store: "etcd", APIServers: 1, WatchCache: true},
		HistoryFormat: string(history.DefaultFormat), Given: map[string]string{}}
}

// defaultKine is kine's release vigil tests, over SQLite.
func defaultKine() KineOptions {
	return KineOptions{Version: binaries.DefaultKineVersion, Backend: kine.BackendSQLite}
}

// Schedule is the fault schedule Resolve planned or loaded.
func (o *Options) Schedule() chaos.Schedule { return o.schedule }

// checkConfig is the checkers' configuration the options ask for.
func (o *Options) checkConfig() check.Config {
	c := check.DefaultConfig()
	c.LinearizabilityTimeout, c.MaxUnavailable = o.CheckTimeout, o.MaxUnavailable
	return c
}

// given reports whether the option of flag name was set.
func (o *Options) given(name string) bool { _, ok := o.Given[name]; return ok }

// UsageError is a bad combination of options: what is wrong and what to
// give instead.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// Usagef makes a UsageError.
func Usagef(format string, a ...any) error { return &UsageError{msg: fmt.Sprintf(format, a...)} }

// SetupError marks err as a failure to set up the system under test.
func SetupError(err error) error {
	if errors.Is(err, fixtures.ErrSetup) {
		return err
	}
	return fmt.Errorf("%w: %v", fixtures.ErrSetup, err)
}

// EtcdSecurity reaches an etcd cluster over TLS or with etcd's
// authentication, named as etcdctl names them; unset, each falls back to
// etcdctl's environment variable (ETCDCTL_CACERT, ...).
type EtcdSecurity struct {
	CACert, Cert, Key, User, Password string
	InsecureSkipVerify                bool
}

// Resolved is the security as the fixtures take it, the environment
// filling in what is unset.
func (e EtcdSecurity) Resolved() fixtures.Security {
	or := func(v, env string) string {
		if v == "" {
			return os.Getenv(env)
		}
		return v
	}
	insecure := e.InsecureSkipVerify
	if !insecure {
		insecure, _ = strconv.ParseBool(os.Getenv("ETCDCTL_INSECURE_SKIP_TLS_VERIFY"))
	}
	return fixtures.Security{CACert: or(e.CACert, "ETCDCTL_CACERT"), Cert: or(e.Cert, "ETCDCTL_CERT"),
		Key: or(e.Key, "ETCDCTL_KEY"), InsecureSkipVerify: insecure, User: or(e.User, "ETCDCTL_USER"),
		Password: or(e.Password, "ETCDCTL_PASSWORD")}
}

// given reports whether any of the options (not the environment) is set.
func (e EtcdSecurity) given() bool {
	return e.CACert != "" || e.Cert != "" || e.Key != "" || e.User != "" || e.Password != ""
}
