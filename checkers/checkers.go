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

	ErrKVRevisionMonotonic = errors.New("kv/revision-monotonic: the store revision never decreases in what one " +
		"client observes over time, and every committed write increases it by exactly one per txn")
	ErrKVSerializableSane = errors.New("kv/serializable-sane: serializable reads may be stale, but never return a " +
		"value that was never written, never a revision above the store's, and never go backwards on one member session")
	ErrKVCompaction = errors.New("kv/compaction: a read at a compacted revision fails with ErrCompacted; " +
		"a read at a future revision fails, it never returns data")
	ErrKVConvergence = errors.New("kv/convergence: at the end, with faults healed, every member has the same " +
		"revision, compact revision and HashKV")
	ErrWatchFilter = errors.New("watch/filter: every event is inside the watched key or prefix and passes " +
		"the requested event-type filters")
	ErrWatchAtomic    = errors.New("watch/atomic: all events of one revision (one txn) arrive in one response")
	ErrWatchResumable = errors.New("watch/resumable: a watch started at revision R delivers first the first " +
		"matching change at revision >= R; a watch started below the compact revision fails with ErrCompacted " +
		"carrying the compact revision, and is never silently started later")
	ErrWatchBookmarkable = errors.New("watch/bookmarkable: after a progress notification at revision P no event " +
		"with revision <= P arrives; progress revisions never decrease and are >= the last event's")
	ErrWatchPrevKV = errors.New("watch/prev-kv: when prev_kv was requested, it equals the key's value just " +
		"before the event (it may be absent only when that revision is compacted)")
	ErrWatchPrevKVAtCreation = errors.New("watch/prev-kv-at-creation: prev_kv is not missing from the first " +
		"events of a new watch (etcd's watch server can send a change that races the creation without it)")
	ErrWatchIsCreate  = errors.New("watch/is-create: an event is a create exactly when the key did not exist before it")
	ErrWatchAgreement = errors.New("watch/agreement: watches whose ranges and revisions overlap saw the same " +
		"events in the same order")
	ErrWatchCancelReason = errors.New("watch/cancel-reason: a watch ended by the server carries a cancel reason " +
		"or an error; a stream never just stops while the client still waits")
	ErrRunAvailability = errors.New("run/availability: the system answered the clients' requests, every outage ended " +
		"within the bound after the faults around it healed, and the run's final write succeeded")
	ErrWatchProgressBeforeStart = errors.New("watch/progress-before-start: a watch that asked to start at revision S " +
		"gets no progress notification below S-1 (etcd #20221)")
)

// Check names, as reports and result.json spell them.
const (
	NameLinearizable  = "kv/linearizable"
	NameWatchOrdered  = "watch/ordered"
	NameWatchUnique   = "watch/unique"
	NameWatchReliable = "watch/reliable"
	NameWatchLiveness = "watch/liveness"

	NameKVRevisionMonotonic = "kv/revision-monotonic"
	NameKVSerializableSane  = "kv/serializable-sane"
	NameKVCompaction        = "kv/compaction"
	NameKVConvergence       = "kv/convergence"
	NameWatchFilter         = "watch/filter"
	NameWatchAtomic         = "watch/atomic"
	NameWatchResumable      = "watch/resumable"
	NameWatchBookmarkable   = "watch/bookmarkable"
	NameWatchPrevKV         = "watch/prev-kv"
	// NameWatchPrevKVAtCreation is not a line of SEMANTICS.md: it splits off
	// a known etcd race from watch/prev-kv, as a warning (see CheckWatchPrevKV).
	NameWatchPrevKVAtCreation = "watch/prev-kv-at-creation"
	NameWatchIsCreate         = "watch/is-create"
	NameWatchAgreement        = "watch/agreement"
	NameWatchCancelReason     = "watch/cancel-reason"
	NameRunAvailability       = "run/availability"
	// NameWatchProgressBeforeStart is a SHOULD: see CheckWatchProgressBeforeStart.
	NameWatchProgressBeforeStart = "watch/progress-before-start"
)

// IsShould reports whether the named check judges a SHOULD line of
// SEMANTICS.md (a best-effort promise, reported as a warning) rather than
// a MUST. Its violations still make its verdict fail; the caller decides
// what a failed SHOULD means for the run.
func IsShould(name string) bool {
	return name == NameWatchLiveness || name == NameWatchPrevKVAtCreation || name == NameWatchProgressBeforeStart || isKubeShould(name)
}

// All returns every check this package implements, in report order: the
// KV checks, then the watch checks, the SHOULD line (liveness) last.
func All() []Check {
	return []Check{
		{Name: NameLinearizable, Run: CheckLinearizable},
		{Name: NameKVRevisionMonotonic, Run: CheckKVRevisionMonotonic},
		{Name: NameKVSerializableSane, Run: CheckKVSerializableSane},
		{Name: NameKVCompaction, Run: CheckKVCompaction},
		{Name: NameKVConvergence, Run: CheckKVConvergence},
		{Name: NameWatchOrdered, Run: CheckWatchOrdered},
		{Name: NameWatchUnique, Run: CheckWatchUnique},
		{Name: NameWatchReliable, Run: CheckWatchReliable},
		{Name: NameWatchFilter, Run: CheckWatchFilter},
		{Name: NameWatchAtomic, Run: CheckWatchAtomic},
		{Name: NameWatchResumable, Run: CheckWatchResumable},
		{Name: NameWatchBookmarkable, Run: CheckWatchBookmarkable},
		{Name: NameWatchPrevKV, Run: CheckWatchPrevKV},
		{Name: NameWatchIsCreate, Run: CheckWatchIsCreate},
		{Name: NameWatchAgreement, Run: CheckWatchAgreement},
		{Name: NameWatchCancelReason, Run: CheckWatchCancelReason},
		{Name: NameWatchLiveness, Run: CheckWatchLiveness},
		{Name: NameWatchPrevKVAtCreation, Run: CheckWatchPrevKVAtCreation},
		{Name: NameWatchProgressBeforeStart, Run: CheckWatchProgressBeforeStart},
		{Name: NameRunAvailability, Run: CheckRunAvailability},
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

func unknown(name, reason string, figures map[string]float64) Result {
	return Result{Name: name, Verdict: Unknown, Reason: reason, Violations: []Violation{}, Figures: figures}
}

func documented(name, reason string, figures map[string]float64) Result {
	return Result{Name: name, Verdict: Documented, Reason: reason, Violations: []Violation{}, Figures: figures}
}

func skipped(name, reason string, figures map[string]float64) Result {
	return Result{Name: name, Verdict: Skipped, Reason: reason, Violations: []Violation{}, Figures: figures}
}
