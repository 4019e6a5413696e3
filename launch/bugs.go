package launch

import (
	"context"
	"fmt"
	"os"

	"github.com/vigil-suite/vigil/suites/bugs"
)

// BugsOptions are the options of `vigil bugs run`.
type BugsOptions struct {
	Attempts int    // per release; 0: each recipe's own budget
	Which    string // affected, fixed or both releases
	Out      string // default runs/bugs-<timestamp>
	Seed     int64  // of the first attempt; attempt n uses Seed+n-1
	Vigil    string // vigil's version, for the histories
}

// Bugs reproduces the catalogued bugs numbers names (every bug when
// none) on the releases that had them and shows them gone on the fixes,
// writes the matrix and prints it. It returns the exit code.
func Bugs(ctx context.Context, numbers []string, o BugsOptions) (int, error) {
	nums, err := bugs.ParseNumbers(numbers)
	if err != nil {
		return ExitSetup, Usagef("%v", err)
	}
	switch o.Which {
	case bugs.Affected, bugs.Fixed, bugs.Both:
	default:
		return ExitSetup, Usagef("--version must be affected, fixed or both, not %q", o.Which)
	}
	if o.Attempts < 0 {
		return ExitSetup, Usagef("--attempts must not be negative")
	}
	selected, err := bugs.Select(nums)
	if err != nil {
		return ExitSetup, Usagef("%v", err)
	}
	unregister, err := openOut(&o.Out, "bugs")
	if err != nil {
		return ExitSetup, err
	}
	defer unregister()
	fmt.Fprintf(os.Stderr, "vigil %s: %d bug(s), %s release(s), output in %s\n", o.Vigil, len(selected), o.Which, o.Out)
	r := bugs.NewRunner(bugs.Options{Out: o.Out, Which: o.Which, Attempts: o.Attempts, Seed: o.Seed, Vigil: o.Vigil, Progress: os.Stderr})
	rows := r.Run(ctx, selected)
	if err := bugs.Write(o.Out, rows); err != nil {
		return ExitSetup, err
	}
	fmt.Println()
	bugs.Table(os.Stdout, rows)
	fmt.Printf("matrix in %s (matrix.json, junit.xml; one run dir per attempt)\n", o.Out)
	if ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "vigil: interrupted; the rows above are those finished")
		return ExitSetup, nil
	}
	return bugs.ExitCode(rows), nil
}
