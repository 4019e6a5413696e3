package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/containers"
	"github.com/vigil-suite/vigil/targets/kube"
)

// --fixture docker: the same etcd cluster, workload and checks, with each
// member in a container of its own on a private Docker network
// (fixtures/containers); network faults are iptables rules inside the
// containers' namespaces (chaos.DockerNet).

// checkDockerRun refuses, before anything starts, the faults a cluster in
// Docker cannot take.
func checkDockerRun(f *runFlags) error {
	// Every fault asked for, not only those the seeded plan fitted into
	// the run: a refusal must not depend on the seed.
	names := append([]string(nil), f.schedule.Faults...)
	for _, st := range f.schedule.Steps {
		names = append(names, st.Fault)
	}
	for _, name := range names {
		if err := chaos.DockerRefuses(name); err != nil {
			return usageError("--fixture docker: %v", err)
		}
	}
	return nil
}

// checkDockerEngine fails fast, with what to do, when no engine answers.
func checkDockerEngine(ctx context.Context) error {
	return containers.Available(ctx)
}

// newDockerFixture is the containers fixture for a run.
func newDockerFixture(f *runFlags, bin, version string) (fixtures.Fixture, error) {
	extra, err := f.settings.Flags(version)
	if err != nil {
		return nil, err
	}
	return containers.New(containers.Config{Binary: bin, Version: version, Members: f.members, Dir: f.out,
		Failpoints: f.failpoints, ExtraFlags: extra, Logf: func(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }}), nil
}

// dockerLinks is the network the link faults of a docker run act on; nil
// when the schedule has none (then no root is needed).
func dockerLinks(f *runFlags, fx fixtures.Fixture) (chaos.Links, error) {
	c, ok := fx.(chaos.Containers)
	if !ok || !f.schedule.NeedsLinks() {
		return nil, nil
	}
	dn, err := chaos.NewDockerNet(c)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", fixtures.ErrSetup, err)
	}
	return dn, nil
}

// cleanupDocker removes the containers and networks of docker runs whose
// vigil is gone, and with images vigil's cached images. Without an engine
// there is nothing to remove, unless images were asked for: then it says so.
func cleanupDocker(images bool) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := containers.Connect(ctx, 3*time.Second)
	if err != nil {
		if images {
			return 0, err
		}
		return 0, nil
	}
	defer e.Close()
	removed, err := e.Cleanup(ctx, containers.CleanupOptions{Images: images})
	for _, r := range removed {
		fmt.Printf("removed docker %s\n", r)
	}
	if err != nil {
		return len(removed), fmt.Errorf("docker cleanup: %w", err)
	}
	return len(removed), nil
}

// newDockerKubeFixture is --target kube --fixture docker: the etcd members
// and the API servers, each in a container of its own on the run's network.
func newDockerKubeFixture(ctx context.Context, f *runFlags, logf func(string, ...any)) (*containers.KubeFixture, error) {
	if err := checkDockerEngine(ctx); err != nil {
		return nil, err
	}
	etcdBin, kubeBin, ver, err := kubeBinaries(ctx, f)
	if err != nil {
		return nil, err
	}
	extra, err := f.settings.Flags(f.etcdVersion)
	if err != nil {
		return nil, err
	}
	return containers.NewKube(containers.KubeConfig{Dir: f.out, Logf: logf,
		Etcd:   containers.Config{Binary: etcdBin, Members: f.members, Version: f.etcdVersion, Failpoints: f.failpoints, ExtraFlags: extra},
		Binary: kubeBin, Replicas: f.kube.apiservers, Version: ver,
		DisableWatchCache: !f.kube.watchCache, EtcdCompactionInterval: f.kube.compactionInterval,
		FeatureGates: f.kube.featureGates}), nil
}

// dockerKubeServers are the client configs of a started docker kube
// fixture's API servers.
func dockerKubeServers(kfx *containers.KubeFixture) []kube.Config {
	var out []kube.Config
	for _, m := range kfx.Replicas() {
		out = append(out, kube.Config{Server: m.ClientURL, Name: m.Name, Token: kfx.Token(), CAFile: kfx.CAFile()})
	}
	return out
}
