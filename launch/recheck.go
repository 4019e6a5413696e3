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
// history, so the run's own result stays as it was. A segmented history
// is judged one segment at a time, as the run judged it. It prints the
// verdict table and returns the exit code.
func Recheck(path string, cfg check.Config) (int, error) {
	path, err := history.RunFile(path)
	if err != nil {
		return ExitSetup, fmt.Errorf("cannot check: %w", err)
	}
	out, err := suites.CheckFile(path, cfg, func(seg *history.History) {
		if seg.Cut != "" {
			fmt.Fprintf(os.Stderr, "vigil: segment %d: %s\n", seg.Meta.Segment.Index, seg.Cut)
		}
	})
	if err != nil {
		return ExitSetup, fmt.Errorf("cannot check: %w", err)
	}
	if out.History != nil && out.History.Cut != "" {
		// The run was killed while writing it: judge what was recorded.
		fmt.Fprintf(os.Stderr, "vigil: %s\n", out.History.Cut)
	}
	r := summarize(out, out.Results)
	addProbes(&r)
	dir := filepath.Join(filepath.Dir(path), "check")
	if err := os.MkdirAll(dir, 0o755); err == nil {
		writeReports(dir, out, r, out.Results)
	}
	reports.Table(os.Stdout, r)
	return reports.ExitCode(r.Verdict), nil
}
