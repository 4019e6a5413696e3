package main

import (
	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	"github.com/vigil-suite/vigil/launch"
)

// cmdConform is `vigil conform`: its flags fill launch.ConformOptions.
func cmdConform(fs *flag.FlagSet) action {
	o := launch.DefaultConformOptions()
	fs.StringVar(&o.Target, "target", o.Target, "API family: etcd or kube")
	fs.StringVar(&o.Endpoints, "endpoints", "", "--target etcd: client endpoint of the server to probe (default: a 1-member etcd vigil starts); --target kube --store endpoints: the store under the kube-apiserver vigil starts")
	fs.StringVar(&o.Store, "store", launch.StoreEtcd, "--target kube: what the kube-apiserver vigil starts keeps its data in: etcd, kine (see --kine-backend), command (your server, from --command) or endpoints (one you run, --endpoints); the reference stays over etcd")
	fs.StringVar(&o.Fixture, "fixture", o.Fixture, "--target etcd, when no --endpoints are given: what vigil starts to probe: process (etcd), kine, or command (your server, from --command)")
	fs.StringVar(&o.Command, "command", "", "--fixture command (or --target kube --store command): your etcd-API server's command line, with {client_port} (and optionally {data_dir}); read as a shell reads it (quotes, backslashes, $VAR; a bare program name is found on PATH), and written down with its credentials redacted (docs/kine.md)")
	defineKine(fs, &o.Kine)
	defineHeldTo(fs, &o.Profile, &o.Limitations, "probes")
	// The flag before --limitation, kept for the scripts that use it:
	// its values (none, kine) mean what they meant.
	fs.Var((*listFlag)(&o.Limitations), "limitations", "same as --limitation")
	fs.MarkDeprecated("limitations", "use --limitation (kine and none mean what they meant)")
	fs.StringVar(&o.EtcdVersion, "etcd-version", o.EtcdVersion, "etcd version vigil starts when no server is given (under kube-apiserver too)")
	fs.StringVar(&o.Reference, "reference", o.Reference, "reference for the differential: none, default (etcd of the target's reported version, else "+binaries.DefaultEtcdVersion+"; for kube, kube-apiserver "+binaries.DefaultKubeVersion+") or a version")
	fs.StringVar(&o.Only, "only", "", "comma-separated probe names, areas ending in / (e.g. watch/), or Kubernetes behaviours ending in @ (every resource)")
	fs.StringVar(&o.Out, "out", "", "output dir (default runs/conform-<timestamp>)")
	fs.IntVar(&o.Grammar, "grammar", 0, "--target etcd: also send this many sequences drawn from the etcd API's grammar to the server and the reference (grammar/SEED-N); one that answers otherwise is reduced to the fewest requests that still do (grammar/SEED-N/reduced, with its --repro program)")
	fs.IntVar(&o.GrammarLength, "grammar-length", 80, "the requests in each --grammar sequence")
	fs.Int64Var(&o.Seed, "seed", 1, "the draw of the --grammar sequences")
	fs.BoolVar(&o.List, "list", false, "list the probes and exit")
	fs.StringVar(&o.Repro, "repro", "", "run this one probe against the target (and the reference) and print a standalone Go program that replays it and exits 1 while a server answers otherwise than the reference, 0 once alike")
	fs.StringVar(&o.ReproTest, "repro-test", "", "with --repro: write the reproduction as a Go test file (TestRepro<Probe>, failing while the server breaks the probe) to this file instead of printing the program")
	defineServerFlags(fs, &o.KubeServer, &o.Security, " (default: one vigil starts over etcd)")
	fs.StringVar(&o.KubeVersion, "kube-version", o.KubeVersion, "--target kube: Kubernetes version whose kube-apiserver vigil starts when no --server is given")
	fs.BoolVar(&o.WatchCache, "watch-cache", o.WatchCache, "--target kube: run the kube-apiserver vigil starts (target and reference) with its watch cache")
	fs.StringVar(&o.Resources, "resource", o.Resources, "--target kube: configmaps, crd (vigilobjects.vigil.dev) or all")
	return func([]string) (int, error) {
		o.Given = given(fs)
		ctx, stop := stopContext()
		defer stop()
		return launch.Conform(ctx, o)
	}
}
