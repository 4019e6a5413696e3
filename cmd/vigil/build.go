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
		return usageError("usage: vigil build etcd [VERSION] [--failpoints]")
	}
	if fset.Arg(0) != "etcd" {
		return usageError("vigil build %q: this version builds etcd only", fset.Arg(0))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	path, err := binaries.Etcd(ctx, binaries.Options{Version: fset.Arg(1), Failpoints: *failpoints, Progress: os.Stderr})
	if err != nil {
		return err
	}
	fmt.Println(path)
	return nil
}
