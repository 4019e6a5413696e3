package checkers

import (
	"errors"
	"fmt"

	"github.com/vigil-suite/vigil/history"
)

// Guarantees, one sentinel per check. A Violation wraps the sentinel of the
// guarantee it breaks, so errors.Is(violation, ErrWatchReliable) works. The
// messages quote the guarantee as SEMANTICS.md words it.
var (
	ErrLinearizable = errors.New("kv/linearizable: linearizable reads and all writes form one history " +
		"that a single copy of the store could have produced, respecting real time")
	ErrWatchOrdered  = errors.New("watch/ordered: event revisions never decrease within a watch")
	ErrWatchUnique   = errors.New("watch/unique: no (revision, key) is delivered twice on one watch")
	ErrWatchReliable = errors.New("watch/reliable: between the first and last revision a watch observed, " +
		"it delivered every committed change in its range")
	ErrWatchLiveness = errors.New("watch/liveness: every watch open at the final write reaches the final revision")
)

// Check names, as reports and result.json spell them.
const (
	NameLinearizable  = "kv/linearizable"
	NameWatchOrdered  = "watch/ordered"
	NameWatchUnique   = "watch/unique"
	NameWatchReliable = "watch/reliable"
	NameWatchLiveness = "watch/liveness"
)

// IsShould reports whether the named check judges a SHOULD line of
// SEMANTICS.md (a best-effort promise, reported as a warning) rather than
// a MUST. Its violations still make its verdict fail; the caller decides
// what a failed SHOULD means for the run.
func IsShould(name string) bool { return name == NameWatchLiveness }

// All returns every check this package implements, in report order.
func All() []Check {
	return []Check{
		{Name: NameLinearizable, Run: CheckLinearizable},
		{Name: NameWatchOrdered, Run: CheckWatchOrdered},
		{Name: NameWatchUnique, Run: CheckWatchUnique},
		{Name: NameWatchReliable, Run: CheckWatchReliable},
		{Name: NameWatchLiveness, Run: CheckWatchLiveness},
	}
}

// Run runs every check of All on h, in order, and returns their results. A
// check that panics yields an unknown verdict naming the panic rather than
// taking the caller down. Run reads no clock: a caller that wants each
// check's Elapsed loops over All itself and calls RunCheck.
func Run(h *history.History, cfg Config) []Result {
	checks := All()
	out := make([]Result, 0, len(checks))
	for _, c := range checks {
		out = append(out, RunCheck(c, h, cfg))
	}
	return out
}

// RunCheck runs one check, fills in its name and turns a panic into an
// unknown verdict.
func RunCheck(c Check, h *history.History, cfg Config) (r Result) {
	defer func() {
		if p := recover(); p != nil {
			r = Result{Name: c.Name, Verdict: Unknown, Reason: fmt.Sprintf("the check panicked: %v", p),
				Violations: []Violation{}}
		}
	}()
	r = c.Run(h, cfg)
	if r.Name == "" {
		r.Name = c.Name
	}
	r.Should = IsShould(r.Name)
	if r.Violations == nil {
		r.Violations = []Violation{}
	}
	return r
}

// collector keeps up to max violations (all of them when max <= 0) and
// counts every one it was given.
type collector struct {
	max   int
	kept  []Violation
	total int
}

func newCollector(cfg Config) *collector {
	return &collector{max: cfg.MaxViolations, kept: []Violation{}}
}

func (c *collector) add(v Violation) {
	c.total++
	if c.max <= 0 || len(c.kept) < c.max {
		c.kept = append(c.kept, v)
	}
}

// result folds the collected violations into a Result: fail if there was
// any, pass otherwise. The total count goes into the figures.
func (c *collector) result(name string, figures map[string]float64) Result {
	if figures == nil {
		figures = map[string]float64{}
	}
	figures["violations"] = float64(c.total)
	v := Pass
	if c.total > 0 {
		v = Fail
	}
	return Result{Name: name, Verdict: v, Violations: c.kept, Figures: figures}
}

func skipped(name, reason string, figures map[string]float64) Result {
	return Result{Name: name, Verdict: Skipped, Reason: reason, Violations: []Violation{}, Figures: figures}
}
