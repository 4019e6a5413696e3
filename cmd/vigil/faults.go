package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/vigil-suite/vigil/chaos"
)

// cmdFaults lists every fault injector, one per line, name first: what it
// needs and whether this machine can run it with the process fixture.
func cmdFaults(args []string) error {
	if len(args) > 0 {
		return usageError("vigil faults takes no arguments")
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAULT\tNEEDS\tHERE\tWHAT")
	for _, inj := range chaos.All() {
		// Every injector so far acts on local processes or through the
		// client, which the process fixture always offers.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", inj.Name(), inj.Needs(), "yes", inj.Describe())
	}
	return tw.Flush()
}
