package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/fixtures/binaries"
)

// cmdFaults lists every fault injector, one per line, name first: what it
// needs and whether this machine can run it with the process fixture. The
// failpoint faults depend on the etcd build: their HERE column reads the
// failpoint list of the cached failpoint build of --etcd-version.
func cmdFaults(fs *flag.FlagSet) action {
	version := fs.String("etcd-version", binaries.DefaultEtcdVersion, "etcd version whose failpoint build the failpoint faults would run against")
	binary := fs.String("etcd-binary", "", "a failpoint build of your own (its failpoints.txt beside it), instead of --etcd-version's")
	output := outputFlag(fs)
	return func([]string) (int, error) { return exitCodeOf(listFaults(*version, *binary, *output == "wide")) }
}

func listFaults(version, binary string, wide bool) error {
	fp, err := failpointsHere(version, binary)
	if err != nil {
		return err
	}
	var rows [][]string
	for _, inj := range chaos.All() {
		// Every other injector acts on local processes, through the client
		// or through vigil's proxies, which the process fixture always offers.
		here, kine := fp.here(inj.Needs()), kineHere(inj)
		if wide {
			rows = append(rows, []string{inj.Name(), inj.Needs().String(), here, kine, inj.Describe()})
		} else {
			rows = append(rows, []string{inj.Name(), short(here), short(kine), inj.Describe()})
		}
	}
	if wide {
		printTable(os.Stdout, true, []string{"FAULT", "NEEDS", "HERE", "KINE", "WHAT"}, rows)
	} else {
		printTable(os.Stdout, false, []string{"FAULT", "HERE", "KINE", "WHAT"}, rows)
		fmt.Println("\n(-o wide: what each fault needs, and why not where it does not apply)")
	}
	return nil
}

// failpointBuild is what vigil knows here of the failpoint build the
// failpoint faults would use.
type failpointBuild struct {
	names   []string // nil: no build
	missing string   // why there is none, as the HERE column says it
	of      string   // "etcd v3.6.16"
}

func failpointsHere(version, binary string) (failpointBuild, error) {
	if binary != "" {
		names, err := binaries.Failpoints(binary)
		if err != nil {
			return failpointBuild{missing: "no: " + binary + " has no " + binaries.FailpointsFile + " beside it"}, nil
		}
		return failpointBuild{names: names, of: binary}, nil
	}
	path, ok, err := binaries.Cached(binaries.Options{Version: version, Failpoints: true})
	if err != nil {
		return failpointBuild{}, usageError("--etcd-version: %v", err)
	}
	if !ok {
		return failpointBuild{missing: fmt.Sprintf("no: needs `vigil build etcd %s --failpoints` first", version)}, nil
	}
	names, err := binaries.Failpoints(path)
	if errors.Is(err, os.ErrNotExist) || len(names) == 0 {
		return failpointBuild{missing: fmt.Sprintf("no: the build of etcd %s lists no failpoints; rebuild it", version)}, nil
	}
	if err != nil {
		return failpointBuild{}, err
	}
	return failpointBuild{names: names, of: "etcd " + version}, nil
}

// kineHere is the KINE column: whether the fault applies to --fixture
// kine, one kine process over SQLite or a database server vigil runs.
func kineHere(inj chaos.Injector) string {
	n := inj.Needs()
	switch {
	case n.Failpoints || n.Failpoint != "":
		return "no: etcd builds only"
	case n.Members > 1 || n.Membership:
		return "no: kine is one process"
	case n.Peers:
		return "no: kine has no peers"
	case n.Docker || n.APIServers:
		return "no"
	case n.Database:
		return "yes, with --kine-backend postgres|mysql"
	case strings.HasPrefix(inj.Name(), "defrag-"):
		return "no: kine refuses Defragment"
	}
	return "yes"
}

// here is the HERE column for an injector with these needs.
func (b failpointBuild) here(n chaos.Needs) string {
	switch {
	case n.APIServers:
		return "yes, with --target kube"
	case n.Docker:
		return "yes, with --fixture docker"
	case !n.Failpoints && n.Failpoint == "":
		return "yes"
	case b.names == nil:
		return b.missing
	case n.Failpoint != "" && !slices.Contains(b.names, n.Failpoint):
		return fmt.Sprintf("no: %s has no failpoint %s", b.of, n.Failpoint)
	}
	return "yes, with --failpoints"
}
