package main

import (
	"fmt"
	"os"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/fixtures/binaries"
)

// cmdBuild builds and caches a binary, printing its path.
func cmdBuild(fset *flag.FlagSet) action {
	failpoints := fset.Bool("failpoints", false, "build with gofail failpoints (etcd only)")
	return func(args []string) (int, error) { return exitCodeOf(build(args, *failpoints)) }
}

func build(args []string, failpoints bool) error {
	if len(args) < 1 || len(args) > 2 {
		return usageError("usage: vigil build etcd|kube-apiserver [VERSION] [--failpoints]")
	}
	ctx, stop := stopContext()
	defer stop()
	var path string
	var err error
	switch args[0] {
	case "etcd":
		path, err = binaries.Etcd(ctx, binaries.Options{Version: arg(args, 1), Failpoints: failpoints, Progress: os.Stderr})
	case "kube-apiserver":
		if failpoints {
			return usageError("--failpoints applies to etcd builds only")
		}
		path, err = binaries.KubeAPIServer(ctx, binaries.KubeOptions{Version: arg(args, 1), Progress: os.Stderr})
	default:
		return usageError("vigil build %q: want etcd or kube-apiserver", args[0])
	}
	if err != nil {
		return err
	}
	fmt.Println(path)
	return nil
}

// arg is args[i], or "" when there is none.
func arg(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}
