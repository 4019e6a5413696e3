package launch

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/reports"
	"github.com/vigil-suite/vigil/suites"
)

// Recheck runs the checkers again on a saved run (its output dir or its
// history file), offline, and writes the verdicts to check/ beside the
// history, so the run's own result stays as it was. It prints the verdict
// table and returns the exit code.
func Recheck(path string, cfg check.Config) (int, error) {
	h, path, err := history.LoadRun(path)
	if err != nil {
		return ExitSetup, fmt.Errorf("cannot check: %w", err)
	}
	if h.Cut != "" {
		// The run was killed while writing it: judge what was recorded.
		fmt.Fprintf(os.Stderr, "vigil: %s\n", h.Cut)
	}
	results := suites.Check(h, cfg)
	r := reports.Summarize(h, results, h.End().Seconds())
	addProbes(&r)
	out := filepath.Join(filepath.Dir(path), "check")
	if err := os.MkdirAll(out, 0o755); err == nil {
		writeReports(out, h, r, results)
	}
	reports.Table(os.Stdout, r)
	return reports.ExitCode(r.Verdict), nil
}
