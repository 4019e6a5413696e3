package main

import (
	"fmt"
	"os"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/suites/bugs"
)

// listBugs is `vigil bugs list`: the catalogue; with wide, also the
// checks each bug trips and each bug's recipe.
func listBugs(wide bool) { bugs.PrintCatalogue(os.Stdout, wide) }

// cmdBugsRun is `vigil bugs run [NUMBER...]`.
func cmdBugsRun(fs *flag.FlagSet) action {
	attempts := fs.Int("attempts", 0, "attempts per release (0: each recipe's own budget)")
	which := fs.String("version", bugs.Both, "which releases: affected, fixed or both")
	out := fs.String("out", "", "output dir (default runs/bugs-<timestamp>)")
	seed := fs.Int64("seed", 1, "seed of the first attempt; attempt n uses seed+n-1")
	return func(pos []string) (int, error) { return runBugs(pos, *attempts, *which, *out, *seed) }
}

// runBugs checks the command line, runs the selected bugs' matrix with
// suites/bugs and prints it.
func runBugs(pos []string, attempts int, which, out string, seed int64) (int, error) {
	numbers, err := bugs.ParseNumbers(pos)
	if err != nil {
		return exitSetup, usageError("%v", err)
	}
	switch which {
	case bugs.Affected, bugs.Fixed, bugs.Both:
	default:
		return exitSetup, usageError("--version must be affected, fixed or both, not %q", which)
	}
	if attempts < 0 {
		return exitSetup, usageError("--attempts must not be negative")
	}
	selected, err := bugs.Select(numbers)
	if err != nil {
		return exitSetup, usageError("%v", err)
	}
	ctx, done, err := startOutput(&out, "bugs")
	if err != nil {
		return exitSetup, err
	}
	defer done()
	fmt.Fprintf(os.Stderr, "vigil %s: %d bug(s), %s release(s), output in %s\n", version, len(selected), which, out)
	r := bugs.NewRunner(bugs.Options{Out: out, Which: which, Attempts: attempts, Seed: seed, Vigil: version, Progress: os.Stderr})
	rows := r.Run(ctx, selected)
	if err := bugs.Write(out, rows); err != nil {
		return exitSetup, err
	}
	fmt.Println()
	bugs.Table(os.Stdout, rows)
	fmt.Printf("matrix in %s (matrix.json, junit.xml; one run dir per attempt)\n", out)
	if ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "vigil: interrupted; the rows above are those finished")
		return exitSetup, nil
	}
	return bugs.ExitCode(rows), nil
}
