package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/launch"
	"github.com/vigil-suite/vigil/reports"
)

// cmdCheck re-runs the checkers on a saved run, offline. It writes its
// verdicts to DIR/check/ so the original result stays as it was.
func cmdCheck(fset *flag.FlagSet) action {
	linTimeout := fset.Duration("check-timeout", check.DefaultConfig().LinearizabilityTimeout, "budget of the linearizability search")
	maxUnavailable := fset.Duration("max-unavailable", check.DefaultConfig().MaxUnavailable, "run/availability: how long clients may go unanswered after the faults around an outage healed")
	return func(pos []string) (int, error) {
		if len(pos) != 1 {
			return exitSetup, usageError("vigil check takes one argument: the output dir of a run (or its history file)")
		}
		return checkSaved(pos[0], *linTimeout, *maxUnavailable)
	}
}

func checkSaved(path string, linTimeout, maxUnavailable time.Duration) (int, error) {
	cfg := check.DefaultConfig()
	cfg.LinearizabilityTimeout, cfg.MaxUnavailable = linTimeout, maxUnavailable
	return launch.Recheck(path, cfg)
}

// cmdReduce is `vigil reduce DIR`: the run's findings replayed and
// reduced on fresh servers, each written as a program.
func cmdReduce(fset *flag.FlagSet) action {
	finding := fset.Int("finding", 0, "the finding to reduce, numbered as the verdict lists them (0: every one vigil can)")
	budget := fset.Int("budget", 60, "the most replays (each on a fresh server) for one finding")
	version := fset.String("etcd-version", "", "replay on this etcd release instead of the run's")
	binary := fset.String("etcd-binary", "", "replay on this etcd binary instead of the run's")
	return func(pos []string) (int, error) {
		if *finding < 0 || *budget < 1 {
			return exitSetup, usageError("--finding must be 0 or more and --budget at least 1")
		}
		ctx, stop := stopContext()
		defer stop()
		return launch.Reduce(ctx, launch.ReduceOptions{Dir: pos[0], Finding: *finding, Budget: *budget,
			EtcdVersion: *version, EtcdBinary: *binary})
	}
}

// cmdReport is `vigil report DIR`: report.html again from a saved run's
// history and result.json (after vigil check, from DIR/check/result.json).
func cmdReport(fset *flag.FlagSet) action {
	return func(pos []string) (int, error) {
		path, err := history.RunFile(pos[0])
		if err != nil {
			return exitSetup, fmt.Errorf("cannot report: %w", err)
		}
		dir := filepath.Dir(path)
		r, err := reports.ReadJSON(filepath.Join(dir, "result.json"))
		if err != nil {
			return exitSetup, fmt.Errorf("cannot report: %w (vigil check %s writes one)", err, dir)
		}
		// A segmented history is drawn segment by segment, from a digest;
		// its findings are result.json's.
		d := reports.NewDigest()
		h, n, err := history.LoadSegments(path, func(seg *history.History) error {
			d.Add(seg, nil)
			return nil
		})
		if err != nil {
			return exitSetup, fmt.Errorf("cannot report: %w", err)
		}
		if n == 0 {
			warnCut(h)
			err = reports.WritePage(dir, h, r)
		} else {
			err = reports.WritePageDigest(dir, d, r)
		}
		if err != nil {
			return exitSetup, err
		}
		fmt.Println(filepath.Join(dir, reports.PageFile))
		return exitPass, nil
	}
}

// warnCut says when a saved history was cut short (its run killed while
// writing it): what follows judges or draws the records before the cut.
func warnCut(h *history.History) {
	if h.Cut != "" {
		fmt.Fprintf(os.Stderr, "vigil: %s\n", h.Cut)
	}
}
