package bugs

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/reports"
	"github.com/vigil-suite/vigil/suites"
)

// Which releases of a bug to run.
const (
	Affected = "affected"
	Fixed    = "fixed"
	Both     = "both"
)

// Options set a matrix run.
type Options struct {
	// Out gets one dir per bug, release and attempt:
	// Out/<number>/<release>/attempt-<n>, each a whole vigil run dir.
	Out string
	// Which is Affected, Fixed or Both.
	Which string
	// Attempts overrides every recipe's number of attempts when > 0.
	Attempts int
	// Seed is the first attempt's seed; attempt n uses Seed+n-1.
	Seed  int64
	Vigil string
	// Progress receives build progress and one line per attempt; nil: none.
	Progress io.Writer
}

// Runner runs attempts; Attempt is a field so that the verdict logic can
// be tested on outcomes made by hand.
type Runner struct {
	Options
	Attempt func(ctx context.Context, b Bug, release, dir string, seed int64) (AttemptResult, error)
}

// NewRunner runs attempts on real etcd clusters.
func NewRunner(o Options) *Runner {
	r := &Runner{Options: o}
	r.Attempt = r.realAttempt
	return r
}

// AttemptResult is what one attempt found.
type AttemptResult struct {
	Dir     string
	Verdict check.Verdict
	// Failed lists the MUST checks that failed.
	Failed []string
	// Matched: one of the bug's checks failed with the bug's symptom.
	Matched bool
	// Detected is when the first violation of one of the bug's checks
	// became provable, from the start of the workload (the latest record
	// it cites); zero when none failed.
	Detected time.Duration
	// Elapsed is the attempt's whole wall time (start, workload, checks).
	Elapsed time.Duration
}

// Run runs every bug in bugs on the releases asked for, and returns the
// matrix's rows in order. A row that could not be run at all (a release
// that cannot be built) carries its error and the matrix goes on.
func (r *Runner) Run(ctx context.Context, bugs []Bug) []Row {
	var rows []Row
	for _, b := range bugs {
		for _, role := range roles(r.Which) {
			if ctx.Err() != nil {
				return rows
			}
			rows = append(rows, r.runRelease(ctx, b, role))
		}
	}
	return rows
}

func roles(which string) []string {
	switch which {
	case Affected:
		return []string{Affected}
	case Fixed:
		return []string{Fixed}
	}
	return []string{Affected, Fixed}
}

// runRelease runs attempts on one release of b until one of b's checks
// fails (on the affected release) or the budget is spent.
func (r *Runner) runRelease(ctx context.Context, b Bug, role string) Row {
	release := b.Affected
	if role == Fixed {
		release = b.Fixed
	}
	row := Row{Bug: b.Number, Title: b.Title, Release: release, Role: role, Checks: b.Checks}
	if b.Recipe.Patch != nil {
		row.Patched = b.Recipe.Patch.String()
	}
	attempts := b.Recipe.Attempts
	if r.Attempts > 0 {
		attempts = r.Attempts
	}
	start := time.Now()
	for n := 1; n <= attempts && ctx.Err() == nil; n++ {
		dir := filepath.Join(r.Out, fmt.Sprint(b.Number), release, fmt.Sprintf("attempt-%d", n))
		seed := r.Seed + int64(n) - 1
		res, err := r.Attempt(ctx, b, release, dir, seed)
		if err != nil {
			row.Error = err.Error()
			break
		}
		row.add(res)
		r.logf("#%d %s (%s) attempt %d/%d: %s %v (%s)", b.Number, release, role, n, attempts, res.Verdict, res.Failed, res.Elapsed.Round(time.Second))
		if role == Affected && row.Reproduced {
			row.WallToDetection = time.Since(start)
			break
		}
	}
	row.Wall = time.Since(start)
	row.Verdict = row.verdict()
	return row
}

func (r *Runner) logf(format string, a ...any) {
	if r.Progress != nil {
		fmt.Fprintf(r.Progress, format+"\n", a...)
	}
}

// realAttempt is one ordinary vigil run of the recipe on a fresh cluster
// of release: its history, result.json and junit.xml go to dir.
func (r *Runner) realAttempt(ctx context.Context, b Bug, release, dir string, seed int64) (AttemptResult, error) {
	begin := time.Now()
	rc := b.Recipe
	opts := binaries.Options{Version: release, Failpoints: rc.Failpoints, Patch: rc.Patch, Progress: r.Progress}
	bin, err := binaries.Etcd(ctx, opts)
	if err != nil {
		return AttemptResult{}, fmt.Errorf("building etcd %s: %w", release, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return AttemptResult{}, err
	}
	wl := rc.Workload()
	sched := chaos.Schedule{}
	if len(rc.Faults) > 0 {
		sched = chaos.Plan(seed, rc.Faults, rc.FaultInterval, wl.Duration)
		if err := sched.Save(filepath.Join(dir, chaos.ScheduleFile)); err != nil {
			return AttemptResult{}, err
		}
	}
	cfg := etcdproc.Config{Binary: bin, Members: rc.Members, Dir: dir, Version: release,
		Failpoints: rc.Failpoints, Settings: rc.Settings}
	var links chaos.Links
	if sched.NeedsLinks() {
		pn := chaos.NewProxyNet(seed)
		defer pn.Close()
		cfg.Network, links = pn, pn
	}
	fx := etcdproc.New(cfg)
	defer fx.Stop()
	sctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	err = fx.Start(sctx)
	cancel()
	if err != nil {
		return AttemptResult{}, err
	}
	checks := check.DefaultConfig()
	out, err := suites.RunEtcd(ctx, fx, suites.EtcdConfig{Workload: wl, Common: suites.Common{Out: dir, Seed: seed, Vigil: r.Vigil,
		Checks: checks, Schedule: sched, Links: links, Flags: map[string]string{"bug": fmt.Sprint(b.Number), "release": release}}})
	if err != nil {
		return AttemptResult{}, err
	}
	fx.Stop()
	if out.Interrupted {
		return AttemptResult{}, ctx.Err()
	}
	rep := reports.Summarize(out.History, out.Results, out.Elapsed.Seconds())
	if err := reports.WriteJSON(dir, rep); err != nil {
		return AttemptResult{}, err
	}
	if err := reports.WriteJUnit(dir, rep); err != nil {
		return AttemptResult{}, err
	}
	if err := faultsRan(out.History, rc.Faults); err != nil {
		return AttemptResult{}, err
	}
	res := Judge(out.History, out.Results, b.Checks, b.Symptom)
	res.Dir, res.Elapsed = dir, time.Since(begin)
	return res, nil
}

// Judge reads an attempt's verdicts: which MUST checks failed, whether
// one of checks failed with the symptom (any violation when symptom is
// nil), and when the first such violation became provable.
func Judge(h *history.History, results []check.Result, checks []string, symptom *Symptom) AttemptResult {
	res := AttemptResult{Verdict: check.Overall(results)}
	start := workloadStart(h)
	for _, c := range results {
		// A SHOULD warning fails nothing, unless it is the bug's own
		// check (#20221's symptom breaks no MUST).
		if c.Verdict != check.Fail || c.Should && !slices.Contains(checks, c.Name) {
			continue
		}
		res.Failed = append(res.Failed, c.Name)
		if !slices.Contains(checks, c.Name) {
			continue
		}
		if symptom == nil {
			res.Matched = true
		}
		for _, v := range c.Violations {
			if symptom != nil && !symptom.Match(h, v) {
				continue
			}
			res.Matched = true
			t := evidenceTime(h, v) - start
			if t > 0 && (res.Detected == 0 || t < res.Detected) {
				res.Detected = t
			}
		}
	}
	return res
}

// workloadStart is the call time of the run's first operation.
func workloadStart(h *history.History) time.Duration {
	first := time.Duration(-1)
	for _, o := range h.Operations {
		if first < 0 || o.Call < first {
			first = o.Call
		}
	}
	return max(first, 0)
}

// evidenceTime is when a violation became provable: the latest time among
// the records it cites (an operation's return, an event's receipt).
func evidenceTime(h *history.History, v check.Violation) time.Duration {
	var latest time.Duration
	for _, id := range v.Operations {
		for i := range h.Operations {
			if h.Operations[i].ID == id {
				latest = max(latest, h.Operations[i].Return)
			}
		}
	}
	for _, e := range v.Events {
		if w := h.WatchByID(e.Watch); w != nil && e.Response < len(w.Responses) {
			latest = max(latest, w.Responses[e.Response].Time)
		}
	}
	if latest == 0 && v.Watch != 0 {
		// A violation that names only its watch (a missed event): the
		// watch's last response is when the gap could be seen.
		if w := h.WatchByID(v.Watch); w != nil && len(w.Responses) > 0 {
			latest = w.Responses[len(w.Responses)-1].Time
		}
	}
	return latest
}

// faultsRan checks that every fault of the recipe was injected at least
// once: an attempt whose faults all failed to inject did not run the
// recipe, and must not count as "not reproduced".
func faultsRan(h *history.History, faults []string) error {
	for _, name := range faults {
		var lastErr string
		ran := false
		for _, f := range h.Faults {
			if f.Name != name {
				continue
			}
			if e := f.Details["error"]; e != "" {
				lastErr = e
				continue
			}
			ran = true
		}
		if !ran {
			if lastErr == "" {
				lastErr = "it was never scheduled (the attempt is shorter than the fault interval?)"
			}
			return fmt.Errorf("fault %s never ran: %s", name, lastErr)
		}
	}
	return nil
}
