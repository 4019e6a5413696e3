package bugs

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/reports"
)

// Verdicts of a matrix row.
const (
	// Reproduced: on the affected release, one of the bug's checks failed.
	Reproduced = "reproduced"
	// NotReproduced: on the affected release, the budget was spent and none
	// of the bug's checks failed.
	NotReproduced = "not reproduced"
	// Clean: on the fixed release, every attempt passed every check.
	Clean = "clean"
	// FailsWhenFixed: on the fixed release a MUST check failed. It is a
	// finding to read, not a false alarm by default: a fixed release can
	// have another real bug (etcd v3.5.5 still has #15220). Failed names
	// the checks; the attempt's run dir has the evidence.
	FailsWhenFixed = "fails on fixed release"
	// OtherFailure: on the affected release, only checks that are not the
	// bug's failed. A finding to read, like FailsWhenFixed.
	OtherFailure = "other failure"
	// Unknown: some attempt's verdict was unknown (a check ran out of its
	// budget) and nothing failed.
	Unknown = "unknown"
	// RunError: the row could not be run (a release that cannot be built).
	RunError = "error"
)

// Row is one bug on one release.
type Row struct {
	Bug     int      `json:"bug"`
	Title   string   `json:"title"`
	Release string   `json:"release"`
	Role    string   `json:"role"` // affected or fixed
	Checks  []string `json:"checks"`
	Verdict string   `json:"verdict"`
	// Attempts made; Reproduced says whether one of them failed one of
	// Checks.
	Attempts   int  `json:"attempts"`
	Reproduced bool `json:"reproduced"`
	// Detected: in the attempt that reproduced it, from the start of the
	// workload to the first violation of one of Checks.
	Detected time.Duration `json:"detected_ns,omitempty"`
	// WallToDetection: from the first attempt's start to the end of the
	// attempt that reproduced it (builds excluded, cluster starts and
	// checks included).
	WallToDetection time.Duration `json:"wall_to_detection_ns,omitempty"`
	Wall            time.Duration `json:"wall_ns"`
	// Failed lists every MUST check that failed in any attempt.
	Failed   []string `json:"failed,omitempty"`
	Unknowns int      `json:"unknown_attempts,omitempty"`
	Dirs     []string `json:"dirs,omitempty"`
	Error    string   `json:"error,omitempty"`
	// Patched shows the patch the release was built with ("": none).
	Patched string `json:"patched,omitempty"`
}

func (row *Row) add(res AttemptResult) {
	row.Attempts++
	row.Dirs = append(row.Dirs, res.Dir)
	if res.Verdict == check.Unknown {
		row.Unknowns++
	}
	for _, c := range res.Failed {
		if !slices.Contains(row.Failed, c) {
			row.Failed = append(row.Failed, c)
		}
	}
	if res.Matched && !row.Reproduced {
		row.Reproduced, row.Detected = true, res.Detected
	}
	sort.Strings(row.Failed)
}

func (row *Row) verdict() string {
	switch {
	case row.Error != "" && row.Attempts == 0:
		return RunError
	case row.Role == Fixed && len(row.Failed) > 0:
		return FailsWhenFixed
	case row.Role == Fixed && row.Unknowns > 0:
		return Unknown
	case row.Role == Fixed:
		return Clean
	case row.Reproduced:
		return Reproduced
	case len(row.Failed) > 0:
		return OtherFailure
	case row.Unknowns > 0:
		return Unknown
	}
	return NotReproduced
}

// Expected reports whether the row is what the catalogue expects:
// reproduced on the affected release, clean on the fixed one.
func (row Row) Expected() bool {
	return row.Role == Affected && row.Verdict == Reproduced || row.Role == Fixed && row.Verdict == Clean
}

// ExitCode is vigil bugs run's exit code for a matrix: 3 if a row could
// not be run (its release did not build), else 1 if a row is not what the
// catalogue expects, else 0.
func ExitCode(rows []Row) int {
	for _, row := range rows {
		if row.Verdict == RunError {
			return 3
		}
	}
	for _, row := range rows {
		if !row.Expected() {
			return 1
		}
	}
	return 0
}

// Table prints the matrix for people.
func Table(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BUG\tRELEASE\tATTEMPTS\tDETECTED\tWALL\tFAILED CHECKS\tVERDICT")
	for _, r := range rows {
		det := "-"
		if r.Reproduced {
			det = r.Detected.Round(100 * time.Millisecond).String()
		}
		failed := strings.Join(r.Failed, ",")
		if failed == "" {
			failed = "-"
		}
		v := r.Verdict
		if r.Error != "" {
			v += ": " + r.Error
		}
		release := r.Release
		if r.Patched != "" {
			release += " patched"
		}
		fmt.Fprintf(tw, "#%d\t%s (%s)\t%d\t%s\t%s\t%s\t%s\n", r.Bug, release, r.Role, r.Attempts, det,
			r.Wall.Round(time.Second), failed, v)
	}
	tw.Flush()
	for _, r := range rows {
		if r.Patched != "" {
			fmt.Fprintf(w, "\n#%d %s was built with this patch:\n%s", r.Bug, r.Release, r.Patched)
		}
	}
}

// Write saves matrix.json and junit.xml (one testcase per row; a row that
// is not what the catalogue expects fails) in dir.
func Write(dir string, rows []Row) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(struct {
		Format int   `json:"format"`
		Rows   []Row `json:"rows"`
	}{1, rows}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "matrix.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return writeJUnit(filepath.Join(dir, "junit.xml"), rows)
}

func writeJUnit(path string, rows []Row) error {
	var cases []reports.JUnitCase
	var total time.Duration
	for _, r := range rows {
		total += r.Wall
		c := reports.JUnitCase{Name: fmt.Sprintf("#%d %s (%s)", r.Bug, r.Release, r.Role), Class: "bugs", Seconds: r.Wall.Seconds()}
		switch {
		case r.Verdict == RunError:
			c.Error = r.Error
		case !r.Expected():
			c.Failure, c.Detail = r.Verdict, fmt.Sprintf("%s\nfailed checks: %v\nruns: %v", r.Title, r.Failed, r.Dirs)
		}
		cases = append(cases, c)
	}
	return reports.WriteJUnitCases(path, "vigil known-bug matrix", total.Seconds(), cases, nil)
}
