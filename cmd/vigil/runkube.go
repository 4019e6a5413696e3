package main

// vigil run --target kube: the Kubernetes API target. The flags are defined
// here and hooked into parseRunFlags; cmdRunKube wires the kube-apiserver
// fixture (or a server the user runs), the Kubernetes workload and the
// reports.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/fixtures/kubeapiserver"
	"github.com/vigil-suite/vigil/suites"
	"github.com/vigil-suite/vigil/targets/kube"
	"github.com/vigil-suite/vigil/targets/sabotage"
)

// kubeFlags are the flags that only --target kube reads.
type kubeFlags struct {
	version, binary, featureGates, resourceName string
	store                                       string // etcd or kine
	resource                                    kube.Resource
	apiservers                                  int
	watchCache                                  bool
	compactionInterval                          time.Duration
	// A server vigil does not run (--fixture external).
	kubeServer

	workload suites.KubeWorkloadConfig
	servers  []kube.Config // external: the one server, from the flags or the kubeconfig
}

func (k *kubeFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&k.version, "kube-version", binaries.DefaultKubeVersion, "--target kube: Kubernetes version whose kube-apiserver to build from the Go module proxy")
	fs.StringVar(&k.binary, "kube-apiserver-binary", "", "--target kube: use this kube-apiserver binary instead of building one")
	fs.IntVar(&k.apiservers, "apiservers", 1, "--target kube: API server replicas over the etcd cluster: 1 or 2")
	fs.BoolVar(&k.watchCache, "watch-cache", true, "--target kube: run the API servers with their watch cache (false: every read and watch goes to etcd, the differential baseline)")
	fs.DurationVar(&k.compactionInterval, "kube-compaction-interval", 0, "--target kube: the API servers' --etcd-compaction-interval (0: their default, 5m; negative: off)")
	fs.StringVar(&k.resourceName, "resource", "configmaps", "--target kube: the collection the workload works on: configmaps, or crd (a custom resource vigil defines, vigilobjects.vigil.dev)")
	fs.StringVar(&k.featureGates, "feature-gates", "", "--target kube: the API servers' --feature-gates, e.g. WatchList=false")
	fs.StringVar(&k.store, "store", "etcd", "--target kube: what the API servers keep their data in: etcd, or kine (as k3s runs them; see --kine-backend)")
	k.kubeServer.define(fs, " (implies --fixture external)")
}

// checkKubeFlags validates a --target kube run; it takes the place of the
// etcd target's checks in parseRunFlags. set holds the flags given.
func checkKubeFlags(f *runFlags, set map[string]string) error {
	k := &f.kube
	external := k.named()
	if external && set["fixture"] == "" {
		f.fixture = "external"
	}
	switch {
	case f.endpoints != "":
		return usageError("--endpoints names etcd members; for a Kubernetes API server use --server URL (or --kubeconfig FILE)")
	case f.fixture != "process" && f.fixture != "docker" && f.fixture != "external":
		return usageError("--fixture %q: want process, docker or external", f.fixture)
	case f.fixture == "external" && !external:
		return usageError("--fixture external needs --server URL with --token and --ca-file (or --insecure-skip-tls-verify), or --kubeconfig FILE")
	case f.fixture != "external" && external:
		return usageError("--server and --kubeconfig name a server you run; they go with --fixture external, not %q", f.fixture)
	case f.fixture != "external" && k.credentials():
		return usageError("--token, --ca-file and --insecure-skip-tls-verify are for --fixture external; vigil makes its own for the API servers it runs")
	case f.fixture != "external" && k.store != "kine" && f.members != 1 && f.members != 3 && f.members != 5:
		return usageError("--members %d: want 1, 3 or 5", f.members)
	case k.store != "etcd" && k.store != "kine":
		return usageError("--store %q: want etcd or kine", k.store)
	case k.store == "kine" && f.fixture != "process":
		return usageError("--store kine runs kine under the API servers vigil starts: it needs the process fixture, not %q", f.fixture)
	case k.store == "kine" && set["members"] != "" && f.members != 1:
		return usageError("--store kine is one kine process; --members %d does not apply", f.members)
	case k.store != "kine" && (set["kine-version"] != "" || set["kine-binary"] != "" || set["kine-backend"] != ""):
		return usageError("--kine-version, --kine-binary and --kine-backend go with --fixture kine or --store kine")
	case f.kine.check() != nil:
		return f.kine.check()
	case k.apiservers != 1 && k.apiservers != 2:
		return usageError("--apiservers %d: want 1 or 2", k.apiservers)
	case f.fixture == "external" && (set["apiservers"] != "" || set["watch-cache"] != "" || set["kube-compaction-interval"] != "" ||
		set["feature-gates"] != "" || set["kube-version"] != "" || set["kube-apiserver-binary"] != ""):
		return usageError("--apiservers, --watch-cache, --kube-compaction-interval, --feature-gates, --kube-version and --kube-apiserver-binary configure the API servers vigil runs; not with --fixture external")
	case f.faults != "" && f.scheduleFile != "":
		return usageError("--faults and --schedule exclude each other: a schedule names its faults")
	case f.net != "proxy" && f.net != "netns":
		return usageError("--net %q: want proxy or netns", f.net)
	case f.net == "netns" && f.fixture != "process":
		return usageError("--net netns needs the process fixture")
	case f.faultInterval <= 0:
		return usageError("--fault-interval must be positive")
	case f.sabotage != "" && !knownSabotage(f.sabotage, sabotage.TargetKube):
		return usageError("--sabotage %q: not a mode of --target kube; its modes: %s (see vigil sabotage list)",
			f.sabotage, strings.Join(sabotage.NamesFor(sabotage.TargetKube), ", "))
	}
	if k.store == "kine" {
		f.members = 1
	}
	r, ok := kube.ResourceNamed(k.resourceName)
	if !ok {
		return usageError("--resource %q: want configmaps or crd", k.resourceName)
	}
	k.resource = r
	server, err := k.config()
	if err != nil {
		return err
	}
	if server != nil {
		k.servers = []kube.Config{*server}
	}

	// The workload flags, where given, size the Kubernetes workload;
	// otherwise its own defaults (lighter than the etcd workload's) hold.
	w := suites.DefaultKubeWorkload()
	w.Duration = f.workload.Duration
	if set["clients"] != "" {
		w.Writers = f.workload.Clients
	}
	if set["rate"] != "" {
		w.Rate = f.workload.Rate
	}
	if set["keys"] != "" {
		w.Objects = f.workload.Keys
	}
	if set["watchers"] != "" {
		// Two thirds informers, the rest streaming-list watchers.
		w.Informers = f.workload.Watchers - f.workload.Watchers/3
		w.Streamers = f.workload.Watchers / 3
	}
	if err := sabotageFits(f, set); err != nil {
		return err
	}
	if set["compact-every"] != "" {
		w.CompactEvery = f.workload.CompactEvery
	}
	if set["watch-bound"] != "" {
		w.FinalTimeout = f.workload.FinalTimeout
	}
	if set["start-timeout"] == "" {
		// etcd, then one or two API servers (each ready in about 15 s, more
		// on a loaded machine).
		f.startTimeout = 3 * time.Minute
	}
	w.Namespace = "checked-later" // RunKube picks the run's namespace
	if err := w.Validate(); err != nil {
		return usageError("%v", err)
	}
	w.Namespace = ""
	k.workload = w
	return nil
}

// cmdRunKube is vigil run --target kube, after parseRunFlags.
func cmdRunKube(f *runFlags, set map[string]string) (int, error) {
	ctx, done, err := startRun(f)
	if err != nil {
		return exitSetup, err
	}
	defer done()
	setup := suites.Setup{Seed: f.seed, StartTimeout: f.startTimeout}
	switch {
	case f.fixture != "process":
	case f.net == "netns":
		setup.Net = "netns"
	case f.schedule.NeedsLinks():
		setup.Net = "proxy"
	}
	logf := func(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }
	// servers lists the API servers once the fixture is up.
	var servers func() []kube.Config
	setup.Fixture = func(ctx context.Context, net fixtures.Network) (fixtures.Fixture, chaos.Links, error) {
		switch f.fixture {
		case "external":
			servers = func() []kube.Config { return f.kube.servers }
			return suites.ExternalKube(f.kube.servers[0]), nil, nil
		case "docker":
			dfx, err := newDockerKubeFixture(ctx, f, logf)
			if err != nil {
				return nil, nil, err
			}
			servers = func() []kube.Config { return dockerKubeServers(dfx) }
			links, err := dockerLinks(f, dfx)
			return dfx, links, err
		}
		kfx, err := newKubeFixture(ctx, f, net, logf)
		if err != nil {
			return nil, nil, err
		}
		servers = func() []kube.Config {
			s := kfx.Servers()
			var out []kube.Config
			for _, m := range s.Replicas() {
				out = append(out, kube.Config{Server: m.ClientURL, Name: m.Name, Token: s.Token(), CAFile: s.CAFile()})
			}
			return out
		}
		return kfx, nil, nil
	}
	out, err := suites.Execute(ctx, setup, func(ctx context.Context, fx fixtures.Fixture, links chaos.Links) (*suites.Outcome, error) {
		var etcd, urls []string
		if f.fixture != "external" {
			etcd = fx.Endpoints()
		}
		for _, s := range servers() {
			urls = append(urls, s.Server)
		}
		fmt.Fprintf(os.Stderr, "API servers up: %s; running the Kubernetes workload for %s\n", strings.Join(urls, ","), f.kube.workload.Duration)
		return suites.RunKube(ctx, fx, suites.KubeConfig{Out: f.out, Seed: f.seed, Vigil: version, Flags: redacted(set),
			Workload: f.kube.workload, Checks: f.checkConfig(), Servers: servers(), Etcd: etcd, Resource: f.kube.resource,
			DeleteNamespace: f.fixture == "external", Schedule: f.schedule, Links: links, Sabotage: f.sabotage,
			Progress: os.Stderr, Logf: logf})
	})
	if err != nil {
		return exitSetup, setupFailed(f, err)
	}
	return finishRun(f, out, "API servers and cluster")
}

// newKubeFixture builds (or finds) etcd and kube-apiserver and returns the
// fixture that runs them.
func newKubeFixture(ctx context.Context, f *runFlags, net fixtures.Network, logf func(string, ...any)) (*kubeapiserver.Fixture, error) {
	etcdBin, kubeBin, ver, err := kubeBinaries(ctx, f)
	if err != nil {
		return nil, err
	}
	var store kubeapiserver.Store
	if f.kube.store == "kine" {
		abs, err := filepath.Abs(f.out)
		if err != nil {
			return nil, err
		}
		if store, err = f.kine.newKine(ctx, abs, net); err != nil {
			return nil, err
		}
	}
	return kubeapiserver.NewFixture(kubeapiserver.FixtureConfig{Dir: f.out, Network: net, Logf: logf, Store: store,
		Etcd: etcdproc.Config{Binary: etcdBin, Members: f.members, Version: f.etcdVersion, Failpoints: f.failpoints, Settings: f.settings},
		APIServers: kubeapiserver.Config{Binary: kubeBin, Replicas: f.kube.apiservers, Version: ver,
			DisableWatchCache: !f.kube.watchCache, EtcdCompactionInterval: f.kube.compactionInterval,
			FeatureGates: f.kube.featureGates}}), nil
}

// kubeBinaries builds (or finds) the etcd and kube-apiserver of a kube run.
// ver is the Kubernetes version to record, "" for a binary the user gave
// (the fixture then asks the first replica's /version).
func kubeBinaries(ctx context.Context, f *runFlags) (etcdBin, kubeBin, ver string, err error) {
	etcdBin, err = binaries.Etcd(ctx, binaries.Options{Version: f.etcdVersion, Binary: f.etcdBinary, Failpoints: f.failpoints, Progress: os.Stderr})
	if err != nil {
		return "", "", "", err
	}
	kubeBin, err = binaries.KubeAPIServer(ctx, binaries.KubeOptions{Version: f.kube.version, Binary: f.kube.binary, Progress: os.Stderr})
	if err != nil {
		return "", "", "", err
	}
	if f.kube.binary == "" {
		ver = f.kube.version
	}
	return etcdBin, kubeBin, ver, nil
}
