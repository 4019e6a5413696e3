package main

import (
	"fmt"
	"os"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
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
			return exitSetup, usageError("vigil selftest takes one argument: the output dir of a passing run (or its history file)")
		}
		h, _, err := history.LoadRun(pos[0])
		if err != nil {
			return exitSetup, fmt.Errorf("cannot self-test: %w", err)
		}
		warnCut(h)
		fmt.Fprintf(os.Stderr, "corrupting %s: up to %d corruptions of each kind, each judged by the check that owns it (and by all where it misses)\n", pos[0], *perKind)
		rep, err := selftest.Run(h, selftest.Config{PerKind: *perKind, Seed: *seed, Checks: check.DefaultConfig(), Only: *only,
			AllChecks: *allChecks})
		if err != nil {
			return exitSetup, err
		}
		rep.Print(os.Stdout, *wide == "wide")
		if rep.Unargued() > 0 {
			return exitFail, nil
		}
		return exitPass, nil
	}
}
