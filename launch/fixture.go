package launch

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	"github.com/vigil-suite/vigil/fixtures/command"
	"github.com/vigil-suite/vigil/fixtures/containers"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/fixtures/external"
	"github.com/vigil-suite/vigil/fixtures/kine"
	"github.com/vigil-suite/vigil/fixtures/kubeapiserver"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/suites"
	"github.com/vigil-suite/vigil/targets/kube"
)

// logf writes a line of progress to stderr.
func logf(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }

// etcdFixture makes the fixture of an etcd run, not started; net is the
// network vigil put on the links (nil: none).
func (o *Options) etcdFixture(ctx context.Context, net fixtures.Network) (fixtures.Fixture, error) {
	switch o.Fixture {
	case "external":
		return external.New(external.Config{Endpoints: strings.Split(o.Endpoints, ","), Security: o.security}), nil
	case "kine":
		return o.Kine.server(ctx, o.Out, net)
	case "command":
		return commandServer(o.Command, o.Out, net)
	case "docker":
		// Before a build of minutes: without an engine there is no point.
		if err := containers.Available(ctx); err != nil {
			return nil, err
		}
	}
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: o.EtcdVersion, Binary: o.EtcdBinary, Failpoints: o.Failpoints, Progress: os.Stderr})
	if err != nil {
		return nil, err
	}
	ver := o.EtcdVersion
	if o.EtcdBinary != "" {
		if v, err := binaries.EtcdVersion(bin); err == nil {
			ver = "v" + strings.TrimPrefix(v, "v")
		}
	}
	if o.Fixture == "docker" {
		extra, err := o.Settings.Flags(ver)
		if err != nil {
			return nil, err
		}
		return containers.New(containers.Config{Binary: bin, Version: ver, Members: o.Members, Dir: o.Out,
			Failpoints: o.Failpoints, ExtraFlags: extra, Logf: logf}), nil
	}
	cfg := etcdproc.Config{Binary: bin, Members: o.Members, Dir: o.Out, Version: ver, Failpoints: o.Failpoints, Settings: o.Settings,
		TLS: o.TLS, Auth: o.Auth}
	if net != nil {
		cfg.Network = net
	}
	return etcdproc.New(cfg), nil
}

// kubeFixture makes the fixture of a Kubernetes run, not started, and the
// function that lists its API servers once it is up.
func (o *Options) kubeFixture(ctx context.Context, net fixtures.Network) (fixtures.Fixture, func() []kube.Config, error) {
	if o.Fixture == "external" {
		return suites.ExternalKube(o.Kube.servers[0]), func() []kube.Config { return o.Kube.servers }, nil
	}
	if o.Fixture == "docker" {
		if err := containers.Available(ctx); err != nil {
			return nil, nil, err
		}
	}
	etcdBin, kubeBin, ver, err := o.kubeBinaries(ctx)
	if err != nil {
		return nil, nil, err
	}
	if o.Fixture == "docker" {
		extra, err := o.Settings.Flags(o.EtcdVersion)
		if err != nil {
			return nil, nil, err
		}
		fx := containers.NewKube(containers.KubeConfig{Dir: o.Out, Logf: logf,
			Etcd:   containers.Config{Binary: etcdBin, Members: o.Members, Version: o.EtcdVersion, Failpoints: o.Failpoints, ExtraFlags: extra},
			Binary: kubeBin, Replicas: o.Kube.APIServers, Version: ver,
			DisableWatchCache: !o.Kube.WatchCache, EtcdCompactionInterval: o.Kube.CompactionInterval,
			FeatureGates: o.Kube.FeatureGates})
		return fx, func() []kube.Config { return serverConfigs(fx.Replicas(), fx.Token(), fx.CAFile()) }, nil
	}
	store, err := storeFixture(ctx, o.Kube.Store, o.Command, o.Endpoints, o.security, o.Kine, o.Out, net)
	if err != nil {
		return nil, nil, err
	}
	fx := kubeapiserver.NewFixture(kubeapiserver.FixtureConfig{Dir: o.Out, Network: net, Logf: logf, Store: store,
		Etcd: etcdproc.Config{Binary: etcdBin, Members: o.Members, Version: o.EtcdVersion, Failpoints: o.Failpoints, Settings: o.Settings},
		APIServers: kubeapiserver.Config{Binary: kubeBin, Replicas: o.Kube.APIServers, Version: ver,
			DisableWatchCache: !o.Kube.WatchCache, EtcdCompactionInterval: o.Kube.CompactionInterval,
			FeatureGates: o.Kube.FeatureGates, EtcdTLS: o.Kube.storeTLS}})
	return fx, func() []kube.Config {
		s := fx.Servers()
		return serverConfigs(s.Replicas(), s.Token(), s.CAFile())
	}, nil
}

// serverConfigs are the client configs of started API servers.
func serverConfigs(replicas []fixtures.Member, token, caFile string) []kube.Config {
	var out []kube.Config
	for _, m := range replicas {
		out = append(out, kube.Config{Server: m.ClientURL, Name: m.Name, Token: token, CAFile: caFile})
	}
	return out
}

// kubeBinaries builds (or finds) the etcd and kube-apiserver of a kube run.
// ver is the Kubernetes version to record, "" for a binary the user gave
// (the fixture then asks the first replica's /version).
func (o *Options) kubeBinaries(ctx context.Context) (etcdBin, kubeBin, ver string, err error) {
	etcdBin, err = binaries.Etcd(ctx, binaries.Options{Version: o.EtcdVersion, Binary: o.EtcdBinary, Failpoints: o.Failpoints, Progress: os.Stderr})
	if err != nil {
		return "", "", "", err
	}
	kubeBin, err = binaries.KubeAPIServer(ctx, binaries.KubeOptions{Version: o.Kube.Version, Binary: o.Kube.Binary, Progress: os.Stderr})
	if err != nil {
		return "", "", "", err
	}
	if o.Kube.Binary == "" {
		ver = o.Kube.Version
	}
	return etcdBin, kubeBin, ver, nil
}

// links is the network the link faults of a docker run act on; nil when
// the schedule has none (then no root is needed) or the fixture is not in
// Docker.
func (o *Options) links(fx fixtures.Fixture) (chaos.Links, error) {
	c, ok := fx.(chaos.Containers)
	if !ok || !o.schedule.NeedsLinks() {
		return nil, nil
	}
	dn, err := chaos.NewDockerNet(c)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", fixtures.ErrSetup, err)
	}
	return dn, nil
}

// server builds (or finds) kine and returns its fixture, not started.
func (k KineOptions) server(ctx context.Context, dir string, net fixtures.Network) (*kine.Server, error) {
	bin, err := binaries.Kine(ctx, binaries.KineOptions{Version: k.Version, Binary: k.Binary, Progress: os.Stderr})
	if err != nil {
		return nil, err
	}
	v := k.Version
	if k.Binary != "" {
		v = "a binary given with --kine-binary"
	}
	return kine.New(kine.Config{Binary: bin, Version: v, Dir: dir, Network: net, Backend: k.Backend, Progress: os.Stderr}), nil
}

// checkCommand reads a --command line (if given) before anything starts:
// one that cannot be read, or names a program not on PATH, is a usage
// error.
func checkCommand(line string) error {
	if line == "" {
		return nil
	}
	if _, err := command.ParseCommand(line); err != nil {
		return Usagef("%v", err)
	}
	return nil
}

// commandServer is --fixture command: any etcd-API server started from
// line, with {client_port} and {data_dir} filled in.
func commandServer(line, dir string, net fixtures.Network) (*command.Server, error) {
	l, err := command.ParseCommand(line)
	if err != nil {
		return nil, Usagef("%v", err)
	}
	return command.New(command.Config{Name: "server-0", Binary: l.Binary, Args: l.Args, Env: l.Env, Dir: dir, Network: net,
		Target: history.Target{Kind: "etcd", Fixture: "command"}}), nil
}
