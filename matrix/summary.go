package matrix

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/internal/redact"
	"github.com/vigil-suite/vigil/reports"
)

// Matrix is every cell of one spec, run or not, with the clusters of its
// failures: matrix.json.
type Matrix struct {
	Name string `json:"name"`
	Spec *Spec  `json:"spec"`
	// Cells has one entry per cell of the spec, in index order; a cell no
	// directory holds a finished run of is NotRun.
	Cells []Cell `json:"cells"`
	// Counts counts the cells by verdict.
	Counts map[string]int `json:"counts"`
	// Clusters group the failed cells by the check that failed, most
	// cells first.
	Clusters []Cluster `json:"clusters"`
}

// Verdicts is the order the counts are shown in.
var Verdicts = []string{"pass", "fail", "unknown", "error", NotRun}

// Cluster is the cells in which one check failed.
type Cluster struct {
	Check string `json:"check"`
	Cells []int  `json:"cells"`
}

// Collect builds the matrix of the cells found under dirs (each a matrix
// output dir, a dir of cell dirs, or a cell dir), with paths relative to
// out. Cells of another spec, or cells with the same index run twice,
// are errors; an unfinished cell is replaced by a finished one.
func Collect(out string, dirs ...string) (*Matrix, error) {
	var m *Matrix
	var errs []error
	for _, d := range dirs {
		found, err := cellDirs(d)
		if err != nil {
			return nil, err
		}
		for _, cd := range found {
			c, err := ReadCell(cd)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if m == nil {
				m = empty(c.Spec)
			}
			if c.Matrix != m.Name || c.Spec.Cells() != len(m.Cells) || c.Index < 0 || c.Index >= len(m.Cells) {
				errs = append(errs, fmt.Errorf("%s: cell %d of matrix %q (%d cells) does not belong to matrix %q (%d cells)",
					cd, c.Index, c.Matrix, c.Spec.Cells(), m.Name, len(m.Cells)))
				continue
			}
			if rel, err := filepath.Rel(out, cd); err == nil {
				c.Dir = rel
			} else {
				c.Dir = cd
			}
			if !c.Done() {
				c.Verdict = NotRun
				c.Reason = "started on " + c.Host + " at " + c.Started.Format("2006-01-02 15:04:05") + ", not finished"
			}
			old := m.Cells[c.Index]
			switch {
			case old.Dir == "" || !old.Done() && c.Done():
				m.Cells[c.Index] = c
			case old.Done() && c.Done():
				errs = append(errs, fmt.Errorf("cell %d ran twice: in %s and %s; merge one of them", c.Index, old.Dir, c.Dir))
			}
		}
	}
	if m == nil {
		return nil, errors.Join(append(errs, fmt.Errorf("no cells (%s) found under %s", CellFile, strings.Join(dirs, ", ")))...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	m.count()
	return m, nil
}

// empty is the matrix of spec with no cell run.
func empty(spec *Spec) *Matrix {
	m := &Matrix{Name: spec.Name, Spec: spec.Redacted(), Cells: make([]Cell, spec.Cells())}
	for i := range m.Cells {
		params, _ := spec.Cell(i)
		shown := redactedParams(params)
		m.Cells[i] = Cell{Matrix: spec.Name, Index: i, Label: Label(shown), Params: shown, Args: redact.Args(spec.Args(params)), Verdict: NotRun}
	}
	return m
}

// cellDirs finds the cell dirs at d, d/*, d/cells/*.
func cellDirs(d string) ([]string, error) {
	if _, err := os.Stat(d); err != nil {
		return nil, err
	}
	var found []string
	for _, pattern := range []string{d, filepath.Join(d, "*"), filepath.Join(d, "cells", "*")} {
		dirs, _ := filepath.Glob(pattern)
		for _, cd := range dirs {
			if _, err := os.Stat(filepath.Join(cd, CellFile)); err == nil {
				found = append(found, cd)
			}
		}
	}
	return found, nil
}

func (m *Matrix) count() {
	m.Counts = map[string]int{}
	byCheck := map[string][]int{}
	for _, c := range m.Cells {
		m.Counts[c.Verdict]++
		for _, name := range c.Failed {
			byCheck[name] = append(byCheck[name], c.Index)
		}
	}
	m.Clusters = []Cluster{}
	for name, cells := range byCheck {
		m.Clusters = append(m.Clusters, Cluster{Check: name, Cells: cells})
	}
	slices.SortFunc(m.Clusters, func(a, b Cluster) int {
		if d := len(b.Cells) - len(a.Cells); d != 0 {
			return d
		}
		return strings.Compare(a.Check, b.Check)
	})
}

// ExitCode is vigil matrix's exit code: 1 if a cell failed, else 3 if
// one could not be judged (error), else 2 if one is unknown, else 0 (cells
// not run do not count: `vigil matrix` runs them all or is interrupted).
func (m *Matrix) ExitCode() int {
	switch {
	case m.Counts[string(check.Fail)] > 0:
		return 1
	case m.Counts[reports.VerdictError] > 0:
		return 3
	case m.Counts[string(check.Unknown)] > 0:
		return 2
	}
	return 0
}

// Write writes matrix.json, junit.xml (a testcase per cell) and
// matrix.html into dir.
func (m *Matrix) Write(dir string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "matrix.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	var cases []reports.JUnitCase
	var total float64
	for _, c := range m.Cells {
		tc := reports.JUnitCase{Name: c.Label, Class: "vigil.matrix." + m.Name, Seconds: c.DurationS,
			Out: "vigil " + strings.Join(c.Args, " ") + "\n" + c.Dir}
		total += c.DurationS
		switch c.Verdict {
		case string(check.Pass):
		case string(check.Fail):
			tc.Failure = "failed: " + strings.Join(c.Failed, ", ")
			tc.Detail = c.Reason
		case NotRun:
			tc.Skipped = "not run"
		default:
			tc.Error = c.Verdict + ": " + c.Reason
		}
		cases = append(cases, tc)
	}
	props := map[string]string{"matrix": m.Name, "cells": fmt.Sprint(len(m.Cells))}
	if err := reports.WriteJUnitCases(filepath.Join(dir, "junit.xml"), "vigil matrix "+m.Name, total, cases, props); err != nil {
		return err
	}
	return m.writeHTML(filepath.Join(dir, "matrix.html"))
}

// Print writes the matrix for people: one line per cell that ran (or
// started), the counts by verdict, the clusters of failed checks, and
// where dir holds the files Write wrote.
func (m *Matrix) Print(w io.Writer, dir string) {
	var rows [][]string
	for _, c := range m.Cells {
		if c.Verdict == NotRun && c.Dir == "" {
			continue
		}
		rows = append(rows, []string{strconv.Itoa(c.Index), c.Verdict, strings.Join(c.Failed, ","), c.Label})
	}
	reports.Listing(w, true, []string{"CELL", "VERDICT", "FAILED CHECKS", "VALUES"}, rows)
	var counts []string
	for _, v := range Verdicts {
		if n := m.Counts[v]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, v))
		}
	}
	fmt.Fprintf(w, "\nmatrix %s: %d cells: %s\n", m.Name, len(m.Cells), strings.Join(counts, ", "))
	for _, cl := range m.Clusters {
		fmt.Fprintf(w, "  %s failed in %d cell(s): %v\n", cl.Check, len(cl.Cells), cl.Cells)
	}
	fmt.Fprintf(w, "results in %s (matrix.html, matrix.json, junit.xml)\n", dir)
}

// ReadMatrix reads a matrix.json.
func ReadMatrix(path string) (*Matrix, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Matrix
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}
