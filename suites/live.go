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
	"github.com/vigil-suite/vigil/reports"
)

// liveJudge judges a run while it goes on. Each pass cuts the history at
// the recorder's horizon (everything sent before it is recorded, so the
// cut is sound: history.CutAt) and runs the checks of safety on it — the
// MUST checks whose severity is data or order, whose violations stay
// violations however the run goes on. Liveness and the SHOULD lines wait
// for the end. A pass takes time linear in the history, so the next one
// waits at least four times as long as the last took: the judge costs at
// most about a fifth of one core, however long the run.
//
// In a segmented run the judge also takes each segment from the recorder
// as soon as it is complete (SealReady), runs every check on it, merges
// the results and hands the segment to onSegment (the reports' digest),
// and the segment is gone from memory: the run's memory is bounded by a
// segment, not by the run.
type liveJudge struct {
	rec      *history.Recorder
	cfg      check.Config
	every    time.Duration // period of the cut passes; 0: none (segments only)
	failFast bool
	stop     func() // ends the workload early (fail-fast)

	// onSegment receives each judged segment with its results (nil: none).
	onSegment func(h *history.History, results []check.Result)
	merged    check.Merger
	digest    *reports.Digest // a segmented run's, fed by onSegment

	mu         sync.Mutex
	passes     int
	upTo       time.Duration // the horizon of the last pass
	failed     []string      // checks found failing, in the order found
	violations int
	// sealedViolations count those of the segments judged whole;
	// cutViolations those of the last cut pass.
	sealedViolations, cutViolations int
	firstAt                         time.Duration // the horizon of the pass that found the first
	stopped                         bool
}

// LiveEvery is the default period of the live judge's passes.
const LiveEvery = 5 * time.Second

// sealEvery is how often the judge looks for complete segments.
const sealEvery = time.Second

// run makes passes until ctx ends.
func (j *liveJudge) run(ctx context.Context) {
	next := time.Now().Add(j.every)
	for {
		t := time.NewTimer(sealEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		j.judgeSegments(j.rec.SealReady(false))
		if j.every > 0 && time.Now().After(next) {
			start := time.Now()
			j.pass()
			next = time.Now().Add(max(j.every, 4*time.Since(start)))
		}
	}
}

// judgeSegments judges sealed segments with every check, merges their
// results and hands each to onSegment.
func (j *liveJudge) judgeSegments(segments []*history.History) {
	for _, h := range segments {
		seg := h.Meta.Segment
		results := Check(h, j.cfg)
		var failed []string
		n := 0
		for _, r := range check.MarkProfile(results, h.Meta.Profile) {
			if r.Verdict == check.Fail && !r.Should && !r.OutsideProfile {
				failed = append(failed, r.Name)
				n += max(len(r.Violations), int(r.Figures["violations"]))
			}
		}
		j.mu.Lock()
		j.merged.Add(seg.Index, seg.Last, results)
		j.mu.Unlock()
		j.note(failed, n, seg.End, true)
		if j.onSegment != nil {
			j.onSegment(h, results)
		}
	}
}

// results are the merged results of the segments judged.
func (j *liveJudge) results() []check.Result {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.merged.Results()
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
	j.note(failed, n, at, false)
}

// note records a pass's failures up to at; with fail-fast, the first
// failure stops the workload.
func (j *liveJudge) note(failed []string, n int, at time.Duration, sealed bool) {
	j.mu.Lock()
	j.passes++
	j.upTo = max(j.upTo, at)
	for _, name := range failed {
		if !slices.Contains(j.failed, name) {
			j.failed = append(j.failed, name)
		}
	}
	// A sealed segment's count is final; a cut's is replaced by the next
	// cut's, and by its segment's once that is sealed.
	if sealed {
		j.sealedViolations += n
		j.cutViolations = 0
	} else {
		j.cutViolations = n
	}
	j.violations = j.sealedViolations + j.cutViolations
	first := len(failed) > 0 && j.firstAt == 0
	if first {
		j.firstAt = at
	}
	stop := first && j.failFast && !j.stopped
	j.stopped = j.stopped || stop
	j.mu.Unlock()
	if stop {
		j.rec.Add(history.Record{Mark: &history.Mark{Name: history.MarkStopped, Time: j.rec.Now()}})
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
