package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/fixtures/runs"
	"github.com/vigil-suite/vigil/matrix"
)

// cmdMatrixRun is `vigil matrix run SPEC`: every cell on this machine, or
// with --emit kubernetes the objects that run them on a cluster.
func cmdMatrixRun(fs *flag.FlagSet) action {
	var out, cells, emit string
	var parallel int
	fs.StringVar(&out, "out", "", "output dir; run again with the same dir to resume (default runs/matrix-<name>-<time>)")
	fs.IntVar(&parallel, "parallel", 0, "cells running at once (default: the spec's parallel, else one per two cores)")
	fs.StringVar(&cells, "cells", "", "run only these cells: indexes and ranges, e.g. 0-3,7")
	fs.StringVar(&emit, "emit", "", "kubernetes: print the objects that run the matrix as an Indexed Job instead of running it")
	return func(args []string) (int, error) {
		spec, raw, err := loadSpec(args[0])
		if err != nil {
			return exitSetup, err
		}
		switch emit {
		case "":
		case "kubernetes":
			y, err := matrix.KubeYAML(spec, raw)
			if err != nil {
				return exitSetup, err
			}
			os.Stdout.Write(y)
			return exitPass, nil
		default:
			return exitSetup, usageError("--emit %q: want kubernetes", emit)
		}
		only, err := matrix.ParseCells(cells, spec.Cells())
		if err != nil {
			return exitSetup, usageError("--cells %v", err)
		}
		if out == "" {
			out = runs.DefaultOut("matrix-" + spec.Name)
		}
		if err := matrix.ClaimDir(out, raw); errors.Is(err, matrix.ErrOtherSpec) {
			return exitSetup, usageError("%v", err)
		} else if err != nil {
			return exitSetup, setupError(err)
		}
		ctx, done, err := startOutput(&out, "matrix")
		if err != nil {
			return exitSetup, err
		}
		defer done()
		self, err := os.Executable()
		if err != nil {
			return exitSetup, setupError(err)
		}
		fmt.Fprintf(os.Stderr, "matrix %s: %d cells, output in %s\n", spec.Name, spec.Cells(), out)
		r := &matrix.Runner{Spec: spec, Vigil: self, Out: out, Parallel: parallel, Cells: only, Progress: os.Stderr}
		runErr := r.Run(ctx)
		m, err := matrix.Collect(out, out)
		if err != nil {
			return exitSetup, err
		}
		if err := m.Write(out); err != nil {
			return exitSetup, err
		}
		m.Print(os.Stdout, out)
		if ctx.Err() != nil {
			return exitSetup, fmt.Errorf("interrupted; the same command resumes the matrix (finished cells are kept)")
		}
		if runErr != nil {
			return exitSetup, runErr
		}
		return m.ExitCode(), nil
	}
}

// cmdMatrixCell is `vigil matrix cell`: one cell, by index, as a pod of
// the Indexed Job runs it. Its verdict is in the cell's dir; the exit code
// is 0 whatever the verdict (a failed cell is not a pod to retry), 3 when
// the cell could not be run.
func cmdMatrixCell(fs *flag.FlagSet) action {
	var specPath, out string
	index := -1
	fs.StringVar(&specPath, "spec", "", "the matrix spec file")
	fs.StringVar(&out, "out", ".", "the matrix's output dir; the cell writes cells/cell-NNNN under it")
	fs.IntVar(&index, "index", -1, "the cell to run (default: $JOB_COMPLETION_INDEX, as an Indexed Job sets it)")
	return func([]string) (int, error) {
		if specPath == "" {
			return exitSetup, usageError("--spec FILE is required")
		}
		if index < 0 {
			v, ok := os.LookupEnv("JOB_COMPLETION_INDEX")
			if !ok {
				return exitSetup, usageError("give --index N, or run where JOB_COMPLETION_INDEX is set (a pod of an Indexed Job)")
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				return exitSetup, usageError("JOB_COMPLETION_INDEX=%q is not a cell index", v)
			}
			index = n
		}
		spec, _, err := loadSpec(specPath)
		if err != nil {
			return exitSetup, err
		}
		self, err := os.Executable()
		if err != nil {
			return exitSetup, setupError(err)
		}
		ctx, stop := stopContext()
		defer stop()
		c, kept, err := matrix.RunCell(ctx, spec, self, out, index)
		if err != nil {
			return exitSetup, setupError(err)
		}
		if ctx.Err() != nil {
			return exitSetup, fmt.Errorf("cell %d interrupted", index)
		}
		how := ""
		if kept {
			how = " (kept from an earlier run)"
		}
		fmt.Printf("cell %d (%s): %s%s\n", c.Index, c.Label, c.Verdict, how)
		return exitPass, nil
	}
}

// cmdMatrixMerge is `vigil matrix merge DIR...`: the cells run anywhere
// (other machines, the pods of a Job) as one matrix.
func cmdMatrixMerge(fs *flag.FlagSet) action {
	var out string
	fs.StringVar(&out, "out", "", "where matrix.json, junit.xml and matrix.html go (required)")
	return func(dirs []string) (int, error) {
		if out == "" {
			return exitSetup, usageError("--out DIR is required")
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return exitSetup, setupError(err)
		}
		m, err := matrix.Collect(out, dirs...)
		if err != nil {
			return exitSetup, setupError(err)
		}
		if err := m.Write(out); err != nil {
			return exitSetup, err
		}
		m.Print(os.Stdout, out)
		return m.ExitCode(), nil
	}
}

// loadSpec reads a spec and checks each cell's command line against vigil
// run's flags (matrix.LoadSpec); every error is the command line's.
func loadSpec(path string) (*matrix.Spec, []byte, error) {
	spec, raw, err := matrix.LoadSpec(path, func(args []string) error {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(&bytes.Buffer{})
		defineRunFlags(fs)
		return fs.Parse(args)
	})
	if err != nil {
		return nil, nil, usageError("%v", err)
	}
	return spec, raw, nil
}
