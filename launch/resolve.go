package launch

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures/kine"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets/kube"
	"github.com/vigil-suite/vigil/targets/sabotage"
	"github.com/vigil-suite/vigil/workload"
)

// resolveHeldTo checks --profile and --limitation. The kubernetes
// profile sends what Kubernetes sends: the kube-like workload unless
// --workload names another, and watches without event filters.
func (o *Options) resolveHeldTo() error {
	if err := resolveProfile(&o.Profile); err != nil {
		return err
	}
	lims, err := resolveLimitations(o.Limitations)
	if err != nil {
		return err
	}
	if lims != nil && o.Target == "kube" {
		return Usagef("--limitation declares departures from the etcd API: it goes with --target etcd")
	}
	o.limitations = lims
	if o.Profile == check.ProfileKubernetes && o.Target == "etcd" {
		if !o.given("workload") {
			o.Workload.Shape = workload.ShapeKubeLike
		}
		o.Workload.NoEventFilters = true
	}
	return nil
}

// resolveSegment settles the run's segment length (Options.Segment):
// --segment as given, else the default for a run longer than
// SegmentAbove, else none.
func (o *Options) resolveSegment() error {
	switch {
	case o.Segment < 0:
		return Usagef("--segment %s: give a length such as 60s, or 0 for none", o.Segment)
	case o.given("segment") && o.Segment > 0 && o.Segment < 10*time.Second:
		return Usagef("--segment %s: a segment must last at least 10s (each holds the writes of the one before and its requests' timeouts)", o.Segment)
	case o.given("segment"):
	case o.Workload.Duration <= SegmentAbove:
		o.Segment = 0
	}
	return nil
}

// Resolve checks the options against each other and fills in what they
// imply: the fixture of --endpoints, a seed, the output dir, the fault
// schedule (planned from Faults or loaded from ScheduleFile), failpoints
// for failpoint faults, and the Kubernetes workload. A bad combination is
// a *UsageError naming what to give instead.
func (o *Options) Resolve() error {
	if o.resolved {
		return nil
	}
	if o.Given == nil {
		o.Given = map[string]string{}
	}
	if o.Endpoints != "" && o.Target != "kube" {
		if o.given("fixture") && o.Fixture != "external" {
			return Usagef("--endpoints goes with --fixture external, not %q", o.Fixture)
		}
		o.Fixture = "external"
	}
	if err := o.checkTarget(); err != nil {
		return err
	}
	if err := checkCommand(o.Command); err != nil {
		return err
	}
	if err := o.checkCommon(); err != nil {
		return err
	}
	if err := o.resolveHistoryFormat(); err != nil {
		return err
	}
	if err := o.resolveSegment(); err != nil {
		return err
	}
	if err := o.resolveHeldTo(); err != nil {
		return err
	}
	if o.Seed == 0 {
		o.Seed = rand.Int64N(1<<31) + 1
		o.Given["seed"] = fmt.Sprint(o.Seed)
	}
	if o.Out == "" {
		o.Out = filepath.Join("runs", fmt.Sprintf("%s-%d", time.Now().Format("20060102-150405"), o.Seed))
	}
	if err := o.planFaults(); err != nil {
		return err
	}
	if o.Target == "kube" && o.Kube.Store == StoreEndpoints {
		if left := processFaults(append(o.schedule.Faults, stepFaults(o.schedule)...)); len(left) > 0 {
			return Usagef("--store endpoints: %s need the store's process, which vigil did not start; give --store command --command \"...\" for them, or only client-side faults (client-reset, watch-drop, compact-storm, ...)", strings.Join(left, ", "))
		}
	}
	oneProcess := o.Fixture == "kine" || o.Fixture == "command"
	if oneProcess {
		o.Members = 1
	}
	switch {
	case o.Failpoints && (o.Fixture == "external" || oneProcess):
		return Usagef("--failpoints (and the failpoint faults) need the process or docker fixture")
	case !o.Settings.IsZero() && (o.Fixture == "external" || oneProcess):
		return Usagef("--snapshot-count, --compaction-batch-limit and --watch-progress-notify-interval set the members vigil starts: they need the process or docker fixture")
	case o.Fixture == "docker":
		if err := o.checkDocker(); err != nil {
			return err
		}
	case o.Target == "etcd" && o.Fixture == "external" && o.schedule.NeedsLinks():
		return Usagef("network faults need the process, docker, kine or command fixture")
	case o.Fixture == "external":
		o.security = o.Security.Resolved()
	}
	if o.Target == "kube" {
		if err := o.resolveKube(); err != nil {
			return err
		}
	}
	o.resolved = true
	return nil
}

// checkTarget checks the options that depend on the target.
func (o *Options) checkTarget() error {
	switch o.Target {
	case "kube":
		return o.checkKube()
	case "etcd":
	default:
		return Usagef("--target %q: want etcd or kube", o.Target)
	}
	kineGiven := o.given("kine-version") || o.given("kine-binary") || o.given("kine-backend")
	switch {
	case o.Fixture != "process" && o.Fixture != "docker" && o.Fixture != "external" && o.Fixture != "kine" && o.Fixture != "command":
		return Usagef("--fixture %q: want process, docker, kine, command or external", o.Fixture)
	case (o.Fixture == "command") != (o.Command != ""):
		return Usagef("--fixture command and --command go together: --fixture command --command \"/path/to/server --listen 127.0.0.1:{client_port}\"")
	case o.Fixture != "kine" && kineGiven:
		return Usagef("--kine-version, --kine-binary and --kine-backend go with --fixture kine")
	case o.Kine.check() != nil:
		return o.Kine.check()
	case (o.Fixture == "kine" || o.Fixture == "command") && o.given("members") && o.Members != 1:
		return Usagef("--fixture %s runs one process; --members %d does not apply", o.Fixture, o.Members)
	case o.Security.given() && o.Fixture != "external":
		return Usagef("--cacert, --cert, --key, --user and --password reach a cluster you run (--endpoints); " +
			"for TLS and auth in the cluster vigil starts, give --tls and --auth")
	case (o.TLS || o.Auth) && o.Fixture != "process":
		return Usagef("--tls and --auth set up the etcd cluster of the process fixture (--target etcd --fixture process); " +
			"for your own cluster give --endpoints with --cacert, --cert, --key, --user and --password")
	case o.Fixture == "external" && o.Endpoints == "":
		return Usagef("--fixture external needs --endpoints host:port[,host:port...]")
	case o.Fixture != "external" && o.Fixture != "kine" && o.Fixture != "command" && o.Members != 1 && o.Members != 3 && o.Members != 5:
		return Usagef("--members %d: want 1, 3 or 5", o.Members)
	}
	if err := o.Workload.Validate(); err != nil {
		return Usagef("%v", err)
	}
	return nil
}

// checkCommon checks the options both targets read.
func (o *Options) checkCommon() error {
	switch {
	case o.Faults != "" && o.ScheduleFile != "":
		return Usagef("--faults and --schedule exclude each other: a schedule names its faults")
	case o.Net != "proxy" && o.Net != "netns":
		return Usagef("--net %q: want proxy or netns", o.Net)
	case o.Net == "netns" && o.Fixture != "process":
		return Usagef("--net netns needs the process fixture")
	case o.FaultInterval <= 0:
		return Usagef("--fault-interval must be positive")
	case o.Sabotage == "":
		return nil
	}
	if m, ok := sabotage.Lookup(o.Sabotage); !ok || m.Target != o.Target {
		names := sabotage.NamesFor(o.Target)
		hint := didYouMean(o.Sabotage, names)
		if hint == "" {
			hint = "; its modes: " + strings.Join(names, ", ")
		}
		return Usagef("--sabotage %q: not a mode of --target %s%s (see vigil sabotage list)", o.Sabotage, o.Target, hint)
	}
	return o.sabotageFits()
}

// sabotageFits checks that the run can prove its sabotage mode. A mode
// that needs frequent compactions gets them unless --compact-every was
// given; a run shorter than the mode needs is refused.
func (o *Options) sabotageFits() error {
	m, _ := sabotage.Lookup(o.Sabotage)
	if m.CompactEvery > 0 && !o.given("compact-every") && o.Workload.CompactEvery > m.CompactEvery {
		o.Workload.CompactEvery = m.CompactEvery
		o.Given["compact-every"] = m.CompactEvery.String()
		fmt.Fprintf(os.Stderr, "--sabotage %s: compacting every %v (it needs watches that start below a compaction)\n",
			m.Name, m.CompactEvery)
	}
	if err := m.Fits(o.Workload.Duration, o.Workload.CompactEvery); err != nil {
		return Usagef("%v", err)
	}
	members := o.Members
	switch {
	case o.Fixture == "kine" || o.Fixture == "command":
		members = 1
	case o.Fixture == "external" && o.Endpoints != "":
		members = len(strings.Split(o.Endpoints, ","))
	}
	if err := m.FitsMembers(members); err != nil {
		return Usagef("%v; give --members 3", err)
	}
	return nil
}

// planFaults loads the schedule or plans one from the seed and the faults
// named, and turns on what the faults need.
func (o *Options) planFaults() error {
	switch {
	case o.ScheduleFile != "":
		s, err := chaos.LoadSchedule(o.ScheduleFile)
		if err != nil {
			return Usagef("--schedule: %v", err)
		}
		o.schedule = s
	case o.Faults != "":
		names, err := chaos.ParseList(o.Faults)
		var unknown *chaos.UnknownFault
		if errors.As(err, &unknown) {
			return Usagef("--faults: %v%s", unknown, didYouMean(unknown.Name, chaos.Names()))
		}
		if err != nil {
			return Usagef("--faults: %v", err)
		}
		o.schedule = chaos.Plan(o.Seed, names, o.FaultInterval, o.Workload.Duration)
		if len(o.schedule.Steps) == 0 {
			return Usagef("--duration %s leaves no room for a fault every %s; lengthen the run or shorten --fault-interval", o.Workload.Duration, o.FaultInterval)
		}
	}
	if o.TLS && o.schedule.NeedsPeerLinks() && o.Net != "netns" {
		// The proxies tell which member opened a peer connection by its
		// HTTP headers, which TLS hides; namespaces tell by address.
		return Usagef("faults on the links between members over --tls need --net netns (partitions): vigil's proxies cannot see which member opened a TLS peer connection")
	}
	if o.schedule.NeedsFailpoints() && !o.Failpoints {
		o.Failpoints = true
		o.Given["failpoints"] = "true"
	}
	return nil
}

// stepFaults names the faults of a schedule's steps.
func stepFaults(s chaos.Schedule) []string {
	var out []string
	for _, st := range s.Steps {
		out = append(out, st.Fault)
	}
	return out
}

// checkDocker refuses, before anything starts, the faults a cluster in
// Docker cannot take.
func (o *Options) checkDocker() error {
	// Every fault asked for, not only those the seeded plan fitted into
	// the run: a refusal must not depend on the seed.
	names := append([]string(nil), o.schedule.Faults...)
	for _, st := range o.schedule.Steps {
		names = append(names, st.Fault)
	}
	for _, name := range names {
		if err := chaos.DockerRefuses(name); err != nil {
			return Usagef("--fixture docker: %v", err)
		}
	}
	return nil
}

// check validates the kine backend.
func (k KineOptions) check() error {
	if !slices.Contains(kine.Backends(), k.Backend) {
		return Usagef("--kine-backend %q: want %s", k.Backend, strings.Join(kine.Backends(), ", "))
	}
	return nil
}

// checkKube validates a --target kube run; it takes the place of the etcd
// target's checks.
func (o *Options) checkKube() error {
	k := &o.Kube
	external := k.Server.named()
	if external && !o.given("fixture") {
		o.Fixture = "external"
	}
	kineGiven := o.given("kine-version") || o.given("kine-binary") || o.given("kine-backend")
	apiFlags := []string{"apiservers", "watch-cache", "kube-compaction-interval", "feature-gates", "kube-version", "kube-apiserver-binary"}
	switch {
	case o.Endpoints != "" && k.Store != StoreEndpoints:
		return Usagef("--endpoints names etcd members: under the API servers vigil starts with --store endpoints; for a Kubernetes API server use --server URL (or --kubeconfig FILE)")
	case k.Store == StoreEndpoints && o.Endpoints == "":
		return Usagef("--store endpoints needs --endpoints HOST:PORT: the etcd-API server you run, under the API servers vigil starts")
	case (k.Store == StoreCommand) != (o.Command != ""):
		return Usagef("--store command and --command go together: --store command --command \"/path/to/server --listen 127.0.0.1:{client_port} --data {data_dir}\"")
	case o.Fixture != "process" && o.Fixture != "docker" && o.Fixture != "external":
		return Usagef("--fixture %q: want process, docker or external", o.Fixture)
	case o.Fixture == "external" && !external:
		return Usagef("--fixture external needs --server URL with --token and --ca-file (or --insecure-skip-tls-verify), or --kubeconfig FILE")
	case o.Fixture != "external" && external:
		return Usagef("--server and --kubeconfig name a server you run; they go with --fixture external, not %q", o.Fixture)
	case o.Fixture != "external" && k.Server.credentials():
		return Usagef("--token, --ca-file and --insecure-skip-tls-verify are for --fixture external; vigil makes its own for the API servers it runs")
	case o.Fixture != "external" && k.Store == StoreEtcd && o.Members != 1 && o.Members != 3 && o.Members != 5:
		return Usagef("--members %d: want 1, 3 or 5", o.Members)
	case k.Store != StoreEtcd && k.Store != StoreKine && k.Store != StoreCommand && k.Store != StoreEndpoints:
		return Usagef("--store %q: want etcd, kine, command (your server, from --command) or endpoints (one you run, --endpoints)", k.Store)
	case k.Store != StoreEtcd && o.Fixture != "process":
		return Usagef("--store %s puts it under the API servers vigil starts: it needs the process fixture, not %q", k.Store, o.Fixture)
	case k.Store != StoreEtcd && o.given("members") && o.Members != 1:
		return Usagef("--store %s is one server; --members %d does not apply", k.Store, o.Members)
	case k.Store != "kine" && kineGiven:
		return Usagef("--kine-version, --kine-binary and --kine-backend go with --fixture kine or --store kine")
	case o.Kine.check() != nil:
		return o.Kine.check()
	case k.APIServers != 1 && k.APIServers != 2:
		return Usagef("--apiservers %d: want 1 or 2", k.APIServers)
	case o.Fixture == "external" && slices.ContainsFunc(apiFlags, o.given):
		return Usagef("--apiservers, --watch-cache, --kube-compaction-interval, --feature-gates, --kube-version and --kube-apiserver-binary configure the API servers vigil runs; not with --fixture external")
	case o.Security.given() && k.Store != StoreEndpoints:
		return Usagef("--cacert, --cert, --key, --user and --password reach etcd members you run (--store endpoints --endpoints HOST:PORT); for a Kubernetes API server use --ca-file, --token or --kubeconfig")
	case o.TLS || o.Auth:
		return Usagef("--tls and --auth set up the etcd cluster of the process fixture (--target etcd --fixture process); " +
			"for your own cluster give --endpoints with --cacert, --cert, --key, --user and --password")
	}
	if k.Store != StoreEtcd {
		o.Members = 1
	}
	if k.Store == StoreEndpoints {
		var err error
		if o.security, k.storeTLS, err = storeSecurity(o.Security); err != nil {
			return err
		}
	}
	r, ok := kube.ResourceNamed(k.ResourceName)
	if !ok {
		return Usagef("--resource %q: want configmaps or crd", k.ResourceName)
	}
	k.resource = r
	server, err := k.Server.config()
	if err != nil {
		return err
	}
	if server != nil {
		k.servers = []kube.Config{*server}
	}
	return nil
}

// resolveKube sizes the Kubernetes workload: the workload options, where
// given, override its own defaults (lighter than the etcd workload's).
func (o *Options) resolveKube() error {
	w := workload.DefaultKubeConfig()
	w.Duration = o.Workload.Duration
	if o.given("clients") {
		w.Writers = o.Workload.Clients
	}
	if o.given("rate") {
		w.Rate = o.Workload.Rate
	}
	if o.given("keys") {
		w.Objects = o.Workload.Keys
	}
	if o.given("watchers") {
		// Two thirds informers, the rest streaming-list watchers.
		w.Informers = o.Workload.Watchers - o.Workload.Watchers/3
		w.Streamers = o.Workload.Watchers / 3
	}
	if o.given("compact-every") {
		w.CompactEvery = o.Workload.CompactEvery
	}
	if o.given("watch-bound") {
		w.FinalTimeout = o.Workload.FinalTimeout
	}
	if !o.given("start-timeout") {
		// etcd, then one or two API servers (each ready in about 15 s, more
		// on a loaded machine).
		o.StartTimeout = 3 * time.Minute
	}
	if err := w.Validate(); err != nil {
		return Usagef("%v", err)
	}
	o.Kube.workload = w
	return nil
}

// resolveHistoryFormat checks --history-format and the old --compress,
// which now means gz (written compressed as the run goes, as zst is).
func (o *Options) resolveHistoryFormat() error {
	f, err := history.ParseFormat(o.HistoryFormat)
	if err != nil {
		return Usagef("--history-format %q: want zst (the default), jsonl (plain, to grep) or gz", o.HistoryFormat)
	}
	if o.Compress {
		if o.given("history-format") && f != history.FormatGzip {
			return Usagef("--compress is --history-format gz; it does not go with --history-format %s", f)
		}
		f = history.FormatGzip
	}
	o.historyFormat = f
	return nil
}
