package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/vigil-suite/vigil/fixtures/binaries"
)

// cmdBuild builds and caches a binary, printing its path.
func cmdBuild(args []string) error {
	fset := flag.NewFlagSet("vigil build", flag.ContinueOnError)
	failpoints := fset.Bool("failpoints", false, "build with gofail failpoints")
	// Accept the flag after the positional arguments too, as the usage shows it.
	var pos []string
	for _, a := range args {
		if a == "--failpoints" || a == "-failpoints" {
			*failpoints = true
		} else {
			pos = append(pos, a)
		}
	}
	if err := fset.Parse(pos); err != nil {
		if err == flag.ErrHelp {
			return nil
		}
		return usageError("%v", err)
	}
	if fset.NArg() < 1 || fset.NArg() > 2 {
		return usageError("usage: vigil build etcd|kube-apiserver [VERSION] [--failpoints]")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var path string
	var err error
	switch fset.Arg(0) {
	case "etcd":
		path, err = binaries.Etcd(ctx, binaries.Options{Version: fset.Arg(1), Failpoints: *failpoints, Progress: os.Stderr})
	case "kube-apiserver":
		if *failpoints {
			return usageError("--failpoints applies to etcd builds only")
		}
		path, err = binaries.KubeAPIServer(ctx, binaries.KubeOptions{Version: fset.Arg(1), Progress: os.Stderr})
	default:
		return usageError("vigil build %q: want etcd or kube-apiserver", fset.Arg(0))
	}
	if err != nil {
		return err
	}
	fmt.Println(path)
	return nil
}
