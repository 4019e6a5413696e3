package matrix

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/internal/redact"
	"github.com/vigil-suite/vigil/reports"
)

// CellFile is the record of a cell in its directory: what it ran and,
// once the run ended, how.
const CellFile = "cell.json"

// Cell is one run of the matrix.
type Cell struct {
	Matrix string  `json:"matrix"`
	Index  int     `json:"index"`
	Label  string  `json:"label"`
	Params []Param `json:"params"`
	// Args is the vigil command line, --out aside.
	Args []string `json:"args"`
	// Host is the machine that ran it (a pod's name on Kubernetes).
	Host    string    `json:"host,omitempty"`
	Started time.Time `json:"started"`
	// Finished is zero while the cell runs, and stays zero when it was
	// interrupted: such a cell runs again when the matrix resumes.
	Finished  time.Time `json:"finished,omitzero"`
	DurationS float64   `json:"duration_s,omitempty"`
	ExitCode  int       `json:"exit_code"`
	// Verdict is the run's (result.json), or NotRun.
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
	// Failed lists the checks that failed, for the clusters.
	Failed []string `json:"failed_checks,omitempty"`
	// Dir is the cell's directory, relative to the matrix's output dir
	// (set when summarized).
	Dir string `json:"dir,omitempty"`
	// Spec is the matrix it belongs to, so that cells made anywhere can
	// be merged into it.
	Spec *Spec `json:"spec"`
}

// NotRun is the verdict of a cell with no finished run.
const NotRun = "not run"

// Done reports whether the cell's run ended by itself (any verdict).
func (c Cell) Done() bool { return !c.Finished.IsZero() }

// Runner runs a matrix's cells on this machine.
type Runner struct {
	Spec *Spec
	// Vigil is the vigil binary each cell runs.
	Vigil string
	// Out is the matrix's output dir; cell i runs in Out/cells/CellDir(i).
	Out string
	// Parallel bounds the cells running at once; 0: Spec.Parallel, else
	// one per two cores.
	Parallel int
	// Cells are the cells to run; nil: all of them.
	Cells []int
	// Progress receives a line per cell started and finished; nil: none.
	Progress io.Writer
}

// Run runs every cell not yet done, Parallel at a time, and keeps going
// when one fails or errors. Cells done by an earlier run are kept; a cell
// cut short by ctx stays undone. It returns when every cell ended or ctx
// did (ctx.Err() then).
func (r *Runner) Run(ctx context.Context) error {
	cells := r.Cells
	if cells == nil {
		for i := range r.Spec.Cells() {
			cells = append(cells, i)
		}
	}
	par := r.Parallel
	if par <= 0 {
		par = r.Spec.Parallel
	}
	if par <= 0 {
		par = max(1, runtime.NumCPU()/2)
	}
	var mu sync.Mutex
	say := func(format string, a ...any) {
		if r.Progress != nil {
			mu.Lock()
			fmt.Fprintf(r.Progress, format+"\n", a...)
			mu.Unlock()
		}
	}
	work := make(chan int)
	var started atomic.Int64
	var wg sync.WaitGroup
	var errs []error
	for range min(par, len(cells)) {
		wg.Go(func() {
			for i := range work {
				say("[%d/%d] cell %d starts", started.Add(1), len(cells), i)
				c, kept, err := RunCell(ctx, r.Spec, r.Vigil, r.Out, i)
				switch {
				case err != nil:
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					say("cell %d: %v", i, err)
				case kept:
					say("cell %d (%s): %s, kept from an earlier run", i, c.Label, c.Verdict)
				case !c.Done():
					say("cell %d (%s): interrupted", i, c.Label)
				default:
					say("cell %d (%s): %s in %.0fs%s", i, c.Label, c.Verdict, c.DurationS, reasonSuffix(c))
				}
			}
		})
	}
	for _, i := range cells {
		if ctx.Err() != nil {
			break
		}
		select {
		case work <- i:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.Join(errs...)
}

// SpecFile is the spec a matrix's output dir was claimed for (ClaimDir).
const SpecFile = "matrix.yaml"

// ErrOtherSpec is ClaimDir's refusal: the dir holds another matrix.
var ErrOtherSpec = errors.New("holds another spec")

// ClaimDir keeps one matrix per output dir, so that running a spec again
// into the same dir resumes it: it saves the spec's bytes there as
// SpecFile, and refuses (ErrOtherSpec) a dir that holds another spec,
// whose cells would be mixed with this one's.
func ClaimDir(out string, raw []byte) error {
	path := filepath.Join(out, SpecFile)
	if old, err := os.ReadFile(path); err == nil {
		if !bytes.Equal(old, raw) {
			return fmt.Errorf("%s %w (%s); resume with that spec, or give a new --out", out, ErrOtherSpec, path)
		}
		return nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, raw, 0o644)
}

// ParseCells reads a selection of the n cells, indexes and ranges as in
// "0-3,7", into the Runner's Cells: a part of a matrix can run now and
// the rest later, or elsewhere. "" selects every cell (nil).
func ParseCells(s string, n int) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var cells []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b >= n {
			return nil, fmt.Errorf("%q: want indexes or ranges within 0-%d, e.g. 0-3,7", part, n-1)
		}
		for i := a; i <= b; i++ {
			cells = append(cells, i)
		}
	}
	// Each cell once: two workers on one cell dir would clobber it.
	slices.Sort(cells)
	return slices.Compact(cells), nil
}

func reasonSuffix(c Cell) string {
	switch {
	case len(c.Failed) > 0:
		return fmt.Sprintf(" (failed: %v)", c.Failed)
	case c.Reason != "" && c.Verdict != string(check.Pass):
		return " (" + c.Reason + ")"
	}
	return ""
}

// RunCell runs cell i of spec into out/cells/CellDir(i) with the vigil
// binary, unless an earlier run finished it (kept). Its output goes to
// vigil.log in the cell's dir. An error means the cell could not be
// started; a run that ends badly is the cell's verdict.
func RunCell(ctx context.Context, spec *Spec, vigil, out string, i int) (c Cell, kept bool, err error) {
	params, err := spec.Cell(i)
	if err != nil {
		return Cell{}, false, err
	}
	dir := filepath.Join(out, "cells", CellDir(i))
	if old, err := ReadCell(dir); err == nil && old.Done() {
		return old, true, nil
	}
	// An interrupted run leaves a partial dir; vigil run wants a fresh one.
	if err := os.RemoveAll(dir); err != nil {
		return Cell{}, false, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Cell{}, false, err
	}
	host, _ := os.Hostname()
	args := spec.Args(params)
	shown := redactedParams(params)
	c = Cell{Matrix: spec.Name, Index: i, Label: Label(shown), Params: shown, Args: redact.Args(args), Host: host,
		Started: time.Now().UTC(), Verdict: NotRun, Spec: spec.Redacted()}
	if err := writeCell(dir, c); err != nil {
		return Cell{}, false, err
	}
	log, err := os.Create(filepath.Join(dir, "vigil.log"))
	if err != nil {
		return Cell{}, false, err
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, vigil, append(args, "--out", filepath.Join(dir, "run"))...)
	cmd.Stdout, cmd.Stderr = log, log
	// Asked to stop, the cell's run stops as after Ctrl-C: it stops its
	// cluster and keeps its partial history. If this process dies, the
	// run is told to stop too.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 2 * time.Minute
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return c, false, nil // interrupted: not done, resumed later
	}
	c.Finished = time.Now().UTC()
	c.DurationS = c.Finished.Sub(c.Started).Seconds()
	c.ExitCode = cmd.ProcessState.ExitCode()
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return c, false, fmt.Errorf("running %s: %w", vigil, runErr)
	}
	res, err := reports.ReadJSON(filepath.Join(dir, "run", "result.json"))
	if err != nil {
		c.Verdict, c.Reason = reports.VerdictError, fmt.Sprintf("exit %d and no result.json: %s", c.ExitCode, lastError(filepath.Join(dir, "vigil.log")))
	} else {
		c.Verdict, c.Reason = res.Verdict, res.Reason
		for _, ch := range res.Checks {
			if ch.Verdict == check.Fail {
				c.Failed = append(c.Failed, ch.Name)
			}
		}
	}
	return c, false, writeCell(dir, c)
}

func writeCell(dir string, c Cell) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, CellFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, CellFile))
}

// ReadCell reads a cell's record from its dir.
func ReadCell(dir string) (Cell, error) {
	var c Cell
	b, err := os.ReadFile(filepath.Join(dir, CellFile))
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s: %w", filepath.Join(dir, CellFile), err)
	}
	if c.Spec == nil {
		return c, fmt.Errorf("%s: no spec in it", filepath.Join(dir, CellFile))
	}
	return c, nil
}

// lastError is the last "vigil: ..." line of a cell's log, which says why
// its run could not start, or a pointer to the log.
func lastError(log string) string {
	b, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "vigil: ") {
			return strings.TrimPrefix(lines[i], "vigil: ")
		}
	}
	return "see " + log
}
