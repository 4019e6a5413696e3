package suites

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vigil-suite/vigil/checkers"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// liveJudge judges a run while it goes on. Each pass cuts the history at
// the recorder's horizon (everything sent before it is recorded, so the
// cut is sound: history.CutAt) and runs the checks of safety on it — the
// MUST checks whose severity is data or order, whose violations stay
// violations however the run goes on. Liveness and the SHOULD lines wait
// for the end. A pass takes time linear in the history, so the next one
// waits at least four times as long as the last took: the judge costs at
// most about a fifth of one core, however long the run.
type liveJudge struct {
	rec      *history.Recorder
	cfg      check.Config
	every    time.Duration
	failFast bool
	stop     func() // ends the workload early (fail-fast)

	mu         sync.Mutex
	passes     int
	upTo       time.Duration // the horizon of the last pass
	failed     []string      // checks found failing, in the order found
	violations int
	firstAt    time.Duration // the horizon of the pass that found the first
	stopped    bool
}

// LiveEvery is the default period of the live judge's passes.
const LiveEvery = 5 * time.Second

// run makes passes until ctx ends.
func (j *liveJudge) run(ctx context.Context) {
	wait := j.every
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		start := time.Now()
		j.pass()
		wait = max(j.every, 4*time.Since(start))
	}
}

// pass judges one cut and notes what failed; with fail-fast, the first
// failure stops the workload.
func (j *liveJudge) pass() {
	cut, at := j.rec.Snapshot()
	var failed []string
	n := 0
	for _, c := range checkers.ForHistory(cut) {
		// A check outside the run's profile decides nothing: it must not
		// stop a --fail-fast run either.
		if !c.Safety() || !check.InProfile(c.Profiles, cut.Meta.Profile) {
			continue
		}
		if r := check.Run(c, cut, j.cfg); r.Verdict == check.Fail {
			failed = append(failed, r.Name)
			n += max(len(r.Violations), int(r.Figures["violations"]))
		}
	}
	j.mu.Lock()
	j.passes++
	j.upTo = at
	for _, name := range failed {
		if !slices.Contains(j.failed, name) {
			j.failed = append(j.failed, name)
		}
	}
	j.violations = max(j.violations, n)
	first := len(failed) > 0 && j.firstAt == 0
	if first {
		j.firstAt = at
	}
	stop := first && j.failFast && !j.stopped
	j.stopped = j.stopped || stop
	j.mu.Unlock()
	if stop {
		j.stop()
	}
}

// status is the live judge's part of the progress line.
func (j *liveJudge) status() string {
	if j == nil {
		return ""
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.passes == 0:
		return ""
	case len(j.failed) == 0:
		return fmt.Sprintf(", judged to %.0fs: no violation", j.upTo.Seconds())
	}
	return fmt.Sprintf(", judged to %.0fs: %d violation(s) of %s", j.upTo.Seconds(), j.violations, strings.Join(j.failed, ", "))
}

// FailFast says why a run stopped early, for people: "" when it did not.
func (j *liveJudge) failFastReason() string {
	if j == nil {
		return ""
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.stopped {
		return ""
	}
	return fmt.Sprintf("--fail-fast: %s failed on the history up to %.1fs; the workload stopped there, the faults healed, and the whole history was judged",
		strings.Join(j.failed, ", "), j.firstAt.Seconds())
}
