package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/suites/conformance"
)

// cmdConform is `vigil conform`: the deterministic probes against a
// target, compared with a reference etcd vigil starts itself.
func cmdConform(args []string) (int, error) {
	fs := flag.NewFlagSet("vigil conform", flag.ContinueOnError)
	target := fs.String("target", "etcd", "API family: etcd (the Kubernetes probes are not built yet)")
	endpoints := fs.String("endpoints", "", "client endpoint of the server to probe (default: a 1-member etcd vigil starts)")
	etcdVersion := fs.String("etcd-version", binaries.DefaultEtcdVersion, "etcd version vigil starts when no --endpoints are given")
	reference := fs.String("reference", "default", "reference for the differential: none, default (etcd of the target's reported version, else "+binaries.DefaultEtcdVersion+") or an etcd version")
	only := fs.String("only", "", "comma-separated probe names, or areas ending in / (e.g. watch/)")
	out := fs.String("out", "", "output dir (default runs/conform-<timestamp>)")
	list := fs.Bool("list", false, "list the probes and exit")
	repro := fs.String("repro", "", "run this one probe against the target and print a standalone Go program that reproduces it")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitPass, nil
		}
		return exitSetup, usageError("%v", err)
	}
	if fs.NArg() > 0 {
		return exitSetup, usageError("vigil conform takes no arguments, got %q", fs.Args())
	}
	if *target != "etcd" {
		return exitSetup, usageError("--target %s: only the etcd probes exist so far", *target)
	}
	probes := conformance.EtcdProbes()
	if *list {
		for _, p := range probes {
			fmt.Printf("%-42s %s\n", p.Name, p.Title)
		}
		return exitPass, nil
	}
	var onlyList []string
	for _, o := range strings.Split(*only, ",") {
		if o = strings.TrimSpace(o); o != "" {
			onlyList = append(onlyList, o)
		}
	}
	if *repro != "" {
		onlyList, *reference = []string{*repro}, "none"
	}
	if err := checkOnly(onlyList, probes); err != nil {
		return exitSetup, err
	}
	ctx, done, err := startOutput(out, "conform")
	if err != nil {
		return exitSetup, err
	}
	defer done()

	eps := strings.Split(*endpoints, ",")
	targetName := "server at " + *endpoints
	if *endpoints == "" {
		var stopTarget func()
		var err error
		eps, stopTarget, err = startConformEtcd(ctx, *etcdVersion, filepath.Join(*out, "target"))
		if err != nil {
			return exitSetup, setupError(err)
		}
		defer stopTarget()
		targetName = "etcd " + *etcdVersion + " started by vigil"
	}
	cfg := conformance.EtcdConfig{Endpoints: eps, Only: onlyList}
	begin := time.Now()
	results, err := conformance.RunEtcdProbes(ctx, cfg, probes)
	if err != nil {
		return exitSetup, setupError(err)
	}
	fmt.Fprintf(os.Stderr, "%d probes against the target in %s\n", len(results), time.Since(begin).Round(time.Millisecond))

	if *repro != "" {
		fmt.Fprintf(os.Stderr, "%s: %s on the target; the program below replays it (go run . -endpoint HOST:PORT)\n", *repro, results[0].Verdict)
		fmt.Print(results[0].Reproduction())
		return exitPass, nil
	}
	refName := ""
	if *reference != "none" {
		v := *reference
		if v == "default" {
			v = binaries.DefaultEtcdVersion
			if reported := conformance.ServerVersion(ctx, eps[0]); reported != "" {
				v = "v" + strings.TrimPrefix(reported, "v")
			}
		}
		refEps, stopRef, err := startConformEtcd(ctx, v, filepath.Join(*out, "reference"))
		if err != nil {
			return exitSetup, setupError(fmt.Errorf("starting the reference etcd %s (--reference none skips it): %w", v, err))
		}
		ref, err := conformance.RunEtcdProbes(ctx, conformance.EtcdConfig{Endpoints: refEps, Only: onlyList}, probes)
		stopRef()
		if err != nil {
			return exitSetup, setupError(err)
		}
		results = conformance.CompareWithReference(results, ref)
		refName = "etcd " + v + " started by vigil"
	}
	rep := conformance.NewReport(targetName, refName, results)
	if err := rep.Write(*out); err != nil {
		return exitSetup, err
	}
	rep.Table(os.Stdout)
	fmt.Printf("results in %s (result.json with every transcript, junit.xml)\n", *out)
	if ctx.Err() != nil {
		return exitSetup, fmt.Errorf("interrupted")
	}
	if rep.Failed() {
		return exitFail, nil
	}
	return exitPass, nil
}

// checkOnly refuses a --only entry that names no probe.
func checkOnly(only []string, probes []conformance.EtcdProbe) error {
	for _, o := range only {
		found := false
		for _, p := range probes {
			if p.Name == o || strings.HasSuffix(o, "/") && strings.HasPrefix(p.Name, o) {
				found = true
				break
			}
		}
		if !found {
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
