package main

import (
	"bytes"
	"os"
	"strconv"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/launch"
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
		self, err := os.Executable()
		if err != nil {
			return exitSetup, setupError(err)
		}
		ctx, stop := stopContext()
		defer stop()
		return launch.MatrixRun(ctx, spec, raw, launch.MatrixOptions{Out: out, Parallel: parallel, Cells: cells, Vigil: self})
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
		return launch.MatrixCell(ctx, spec, self, out, index)
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
		return launch.MatrixMerge(out, dirs...)
	}
}

// cmdMatrixRate is `vigil matrix rate DIR...`.
func cmdMatrixRate(fs *flag.FlagSet) action {
	return func(dirs []string) (int, error) { return launch.MatrixRate(os.Stdout, dirs...) }
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
