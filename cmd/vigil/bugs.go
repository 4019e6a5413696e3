package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/fixtures/runs"
	"github.com/vigil-suite/vigil/suites/bugs"
)

// listBugs is `vigil bugs list`: the catalogue; with wide, also the
// checks each bug trips and each bug's recipe.
func listBugs(wide bool) {
	var rows [][]string
	for _, b := range bugs.Catalogue() {
		if wide {
			rows = append(rows, []string{fmt.Sprintf("#%d", b.Number), b.Affected, b.Fixed, strings.Join(b.Checks, ","), b.Title})
		} else {
			rows = append(rows, []string{fmt.Sprintf("#%d", b.Number), b.Affected, b.Fixed, b.Title})
		}
	}
	if !wide {
		printTable(os.Stdout, false, []string{"BUG", "AFFECTED", "FIXED", "TITLE"}, rows)
		fmt.Println("\n(-o wide: the checks each bug trips, and its recipe)")
		return
	}
	printTable(os.Stdout, true, []string{"BUG", "AFFECTED", "FIXED", "CHECKS", "TITLE"}, rows)
	fmt.Println()
	for _, b := range bugs.Catalogue() {
		fmt.Printf("#%d recipe: %s\n", b.Number, b.Recipe.Summary())
	}
}

// cmdBugsRun is `vigil bugs run [NUMBER...]`.
func cmdBugsRun(fs *flag.FlagSet) action {
	attempts := fs.Int("attempts", 0, "attempts per release (0: each recipe's own budget)")
	which := fs.String("version", bugs.Both, "which releases: affected, fixed or both")
	out := fs.String("out", "", "output dir (default runs/bugs-<timestamp>)")
	seed := fs.Int64("seed", 1, "seed of the first attempt; attempt n uses seed+n-1")
	return func(pos []string) (int, error) { return runBugs(pos, *attempts, *which, *out, *seed) }
}

func runBugs(pos []string, attempts int, which, out string, seed int64) (int, error) {
	var numbers []int
	for _, a := range pos {
		n, err := strconv.Atoi(strings.TrimPrefix(a, "#"))
		if err != nil {
			return exitSetup, usageError("%q is not a bug number; see vigil bugs list", a)
		}
		numbers = append(numbers, n)
	}
	switch which {
	case bugs.Affected, bugs.Fixed, bugs.Both:
	default:
		return exitSetup, usageError("--version must be affected, fixed or both, not %q", which)
	}
	if attempts < 0 {
		return exitSetup, usageError("--attempts must not be negative")
	}
	selected := bugs.Catalogue()
	if len(numbers) > 0 {
		selected = nil
		for _, n := range numbers {
			b, ok := bugs.Lookup(n)
			if !ok {
				return exitSetup, usageError("no known bug #%d; see vigil bugs list", n)
			}
			selected = append(selected, b)
		}
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
	for _, row := range rows {
		if row.Verdict == bugs.RunError {
			return exitSetup, nil
		}
	}
	for _, row := range rows {
		if !row.Expected() {
			return exitFail, nil
		}
	}
	return exitPass, nil
}

// startOutput makes the output dir of a command that starts servers
// (runs/<kind>-<timestamp> unless given), registers it so that vigil
// cleanup finds what a killed vigil left, and returns a context that
// SIGINT and SIGTERM cancel.
func startOutput(out *string, kind string) (context.Context, func(), error) {
	if *out == "" {
		*out = filepath.Join("runs", kind+"-"+time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return nil, nil, setupError(err)
	}
	unregister := func() {}
	if u, err := runs.Register(*out); err == nil {
		unregister = u
	}
	ctx, stop := stopContext()
	return ctx, func() { stop(); unregister() }, nil
}
