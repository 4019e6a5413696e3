package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/launch"
	"github.com/vigil-suite/vigil/selftest"
)

// cmdSelftest corrupts a passing saved run many times, one small change
// at a time, and reports which corruptions the checks missed.
func cmdSelftest(fset *flag.FlagSet) action {
	perKind := fset.Int("per-kind", 20, "corruptions tried per kind (at most one per place it applies)")
	seed := fset.Uint64("seed", 1, "seed of the choice of places")
	only := fset.StringSlice("only", nil, "kinds to try (comma-separated); default all")
	allChecks := fset.Bool("all-checks", false, "judge every corruption with every check, not only those its owner missed (slower)")
	wide := outputFlag(fset)
	return func(pos []string) (int, error) {
		if len(pos) != 1 {
			return exitSetup, usageError("vigil selftest takes one argument: the output dir of a passing run (or its history.jsonl)")
		}
		h, _, err := launch.LoadSaved(pos[0])
		if err != nil {
			return exitSetup, fmt.Errorf("cannot self-test: %w", err)
		}
		fmt.Fprintf(os.Stderr, "corrupting %s: up to %d corruptions of each kind, each judged by the check that owns it (and by all where it misses)\n", pos[0], *perKind)
		rep, err := selftest.Run(h, selftest.Config{PerKind: *perKind, Seed: *seed, Checks: check.DefaultConfig(), Only: *only,
			AllChecks: *allChecks})
		if err != nil {
			return exitSetup, err
		}
		var rows [][]string
		for _, k := range rep.Kinds {
			rows = append(rows, []string{k.Kind, k.Owner, fmt.Sprint(k.Sites), fmt.Sprint(k.Tried), fmt.Sprint(k.Caught),
				fmt.Sprint(k.ByOwner), fmt.Sprint(k.Argued)})
		}
		printTable(os.Stdout, *wide == "wide", []string{"KIND", "OWNER", "PLACES", "TRIED", "CAUGHT", "BY OWNER", "ARGUED"}, rows)
		var byCheck []string
		for _, name := range slices.Sorted(maps.Keys(rep.ByCheck)) {
			byCheck = append(byCheck, fmt.Sprintf("%s %d", name, rep.ByCheck[name]))
		}
		judged := "(the owner first; the others only where it missed: --all-checks for all)"
		if *allChecks {
			judged = "(every check judged every corruption)"
		}
		fmt.Printf("\ncorruptions each check rejected %s: %s\n", judged, strings.Join(byCheck, ", "))
		for _, m := range rep.Misses {
			fmt.Printf("\nmissed by %s: %s: %s\n", m.Owner, m.Kind, m.What)
			if len(m.Failed) > 0 {
				fmt.Printf("  rejected by %s\n", strings.Join(m.Failed, ", "))
			}
			if len(m.Warned) > 0 {
				fmt.Printf("  warned by %s\n", strings.Join(m.Warned, ", "))
			}
			if m.Argued != "" {
				fmt.Printf("  argued: %s\n", m.Argued)
			}
		}
		if n := rep.Unargued(); n > 0 {
			fmt.Printf("\n%d corruption(s) missed with no argument: each is a weakness of its owner check\n", n)
			return exitFail, nil
		}
		fmt.Println("\nevery corruption was caught by its owner, or its miss is argued")
		return 0, nil
	}
}
