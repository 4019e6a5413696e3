package main

import (
	"fmt"
	"os"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	"github.com/vigil-suite/vigil/reports"
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

// listFaults prints the table of vigil faults; chaos says what applies.
func listFaults(version, binary string, wide bool) error {
	fp, err := chaos.FindFailpointBuild(version, binary)
	if err != nil {
		return usageError("--etcd-version: %v", err)
	}
	var rows [][]string
	for _, inj := range chaos.All() {
		here, kine := fp.AppliesHere(inj.Needs()), chaos.AppliesToKine(inj)
		if wide {
			rows = append(rows, []string{inj.Name(), inj.Needs().String(), here, kine, inj.Describe()})
		} else {
			rows = append(rows, []string{inj.Name(), reports.FirstClause(here), reports.FirstClause(kine), inj.Describe()})
		}
	}
	if wide {
		reports.Listing(os.Stdout, true, []string{"FAULT", "NEEDS", "HERE", "KINE", "WHAT"}, rows)
	} else {
		reports.Listing(os.Stdout, false, []string{"FAULT", "HERE", "KINE", "WHAT"}, rows)
		fmt.Println("\n(-o wide: what each fault needs, and why not where it does not apply)")
	}
	return nil
}
