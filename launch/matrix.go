package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vigil-suite/vigil/matrix"
)

// MatrixOptions are the options of `vigil matrix run`.
type MatrixOptions struct {
	Out      string // default runs/matrix-<name>-<time>; the same dir again resumes
	Parallel int    // cells at once; 0: the spec's, else one per two cores
	Cells    string // indexes and ranges, e.g. 0-3,7; empty: every cell
	Vigil    string // the vigil binary each cell runs
}

// MatrixRun runs the cells of spec (raw: the spec file's bytes) on this
// machine, each as a `vigil run` of its own, then merges them into
// matrix.json, junit.xml and matrix.html and prints the table. It
// returns the exit code of the worst cell.
func MatrixRun(ctx context.Context, spec *matrix.Spec, raw []byte, o MatrixOptions) (int, error) {
	only, err := matrix.ParseCells(o.Cells, spec.Cells())
	if err != nil {
		return ExitSetup, Usagef("--cells %v", err)
	}
	unregister, err := openOut(&o.Out, "matrix-"+spec.Name)
	if err != nil {
		return ExitSetup, err
	}
	defer unregister()
	if err := matrix.ClaimDir(o.Out, raw); errors.Is(err, matrix.ErrOtherSpec) {
		return ExitSetup, Usagef("%v", err)
	} else if err != nil {
		return ExitSetup, SetupError(err)
	}
	fmt.Fprintf(os.Stderr, "matrix %s: %d cells, output in %s\n", spec.Name, spec.Cells(), o.Out)
	r := &matrix.Runner{Spec: spec, Vigil: o.Vigil, Out: o.Out, Parallel: o.Parallel, Cells: only, Progress: os.Stderr}
	runErr := r.Run(ctx)
	code, err := MatrixMerge(o.Out, o.Out)
	switch {
	case err != nil:
		return ExitSetup, err
	case ctx.Err() != nil:
		return ExitSetup, fmt.Errorf("interrupted; the same command resumes the matrix (finished cells are kept)")
	case runErr != nil:
		return ExitSetup, runErr
	}
	return code, nil
}

// MatrixCell runs cell index of spec into out, as a pod of the Indexed
// Job does, and prints its verdict. The exit code is 0 whatever the
// verdict (a failed cell is not a pod to retry), 3 when the cell could
// not be run.
func MatrixCell(ctx context.Context, spec *matrix.Spec, vigil, out string, index int) (int, error) {
	c, kept, err := matrix.RunCell(ctx, spec, vigil, out, index)
	if err != nil {
		return ExitSetup, SetupError(err)
	}
	if ctx.Err() != nil {
		return ExitSetup, fmt.Errorf("cell %d interrupted", index)
	}
	how := ""
	if kept {
		how = " (kept from an earlier run)"
	}
	fmt.Printf("cell %d (%s): %s%s\n", c.Index, c.Label, c.Verdict, how)
	return ExitPass, nil
}

// MatrixRate prints the false-alarm table of matrices of healthy runs
// (matrix.WriteRates); exit 1 when some cell did not pass.
func MatrixRate(w io.Writer, dirs ...string) (int, error) {
	var rates []matrix.Rate
	for _, d := range dirs {
		m, err := matrix.ReadMatrix(filepath.Join(d, "matrix.json"))
		if err != nil {
			return ExitSetup, SetupError(fmt.Errorf("%s: %w (vigil matrix run --out %s writes it)", d, err, d))
		}
		rates = append(rates, matrix.RateOf(m))
	}
	matrix.WriteRates(w, dirs, rates)
	for _, r := range rates {
		if r.Alarms > 0 {
			return ExitFail, nil
		}
	}
	return ExitPass, nil
}

// MatrixMerge merges the cells found under dirs (run anywhere: other
// machines, the pods of a Job) into one matrix written to out, prints its
// table, and returns the exit code of the worst cell.
func MatrixMerge(out string, dirs ...string) (int, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return ExitSetup, SetupError(err)
	}
	m, err := matrix.Collect(out, dirs...)
	if err != nil {
		return ExitSetup, SetupError(err)
	}
	if err := m.Write(out); err != nil {
		return ExitSetup, err
	}
	m.Print(os.Stdout, out)
	return m.ExitCode(), nil
}
