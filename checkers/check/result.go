// Package check is the vocabulary every check shares: verdicts, results,
// violations, the configuration of budgets and bounds, and the Check value
// that names a check, its guarantee and its SHOULD mark. Checks are pure
// functions from a history to a Result: no I/O, no randomness, and no
// clock but kv/linearizable's time budget (which can only turn a verdict
// into unknown), so a saved run re-checked offline gives the same verdicts.
package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// Verdict is the outcome of one check.
type Verdict string

const (
	Pass Verdict = "pass"
	Fail Verdict = "fail"
	// Unknown: the check could not decide (it ran out of its budget). Never
	// read it as pass.
	Unknown Verdict = "unknown"
	// Skipped: the check had nothing to judge in this history, or the target
	// does not support what it needs. Reason says which.
	Skipped Verdict = "skipped"
	// Documented: the history departs from the guarantee only in a way the
	// target's own documentation or code states (the history's
	// limitations, e.g. kine keeps no key versions). Reason quotes it;
	// any other departure is still a failure.
	Documented Verdict = "limitation"
)

// Result is one named check's verdict with its evidence.
type Result struct {
	Name    string  `json:"name"`
	Verdict Verdict `json:"verdict"`
	// Should marks a best-effort promise (a SHOULD line): its failure is a
	// warning and does not fail the run.
	Should bool `json:"should,omitempty"`
	// Severity is the check's: what a breach of its guarantee costs.
	Severity Severity `json:"severity,omitempty"`
	// Profiles are the profiles the check belongs to (ProfileEtcd, ...);
	// OutsideProfile marks a check outside the run's profile: its verdict
	// is shown but does not count in the run's.
	Profiles       []string `json:"profiles,omitempty"`
	OutsideProfile bool     `json:"outside_profile,omitempty"`
	// Reason explains a skipped or unknown verdict.
	Reason     string      `json:"reason,omitempty"`
	Violations []Violation `json:"violations"`
	// Figures are what the check counted (events judged, operations, ...).
	Figures map[string]float64 `json:"figures,omitempty"`
	// Judged counts the observations the check took at face value, and
	// Excused, by reason, those it let through without (a prev_kv absent
	// because a compaction covers its revision, an event whose store state
	// the history does not fix). Every excuse is bounded by evidence; when
	// excuses outnumber what was judged, a pass means little (MostlyExcused),
	// and the reports say so.
	Judged  int            `json:"judged,omitempty"`
	Excused map[string]int `json:"excused,omitempty"`
	// Evidence is what the check needed from the run and what the target
	// answered (see Apply); nil only in results older than format 2.
	Evidence *Evidence `json:"evidence,omitempty"`
	// Elapsed is measured by the caller (checkers read no clock).
	Elapsed time.Duration `json:"elapsed_ns,omitempty"`
	// Drawing, when the check can show what it judged (kv/linearizable:
	// porcupine's view of its search), writes that view as a
	// self-contained HTML page and says what it drew. It draws from the
	// state of the run that gave the verdict, so nothing is judged twice;
	// it is not part of result.json.
	Drawing func(w io.Writer) (string, error) `json:"-"`
}

// Violation is one broken guarantee with the records that prove it.
type Violation struct {
	// Guarantee is the sentinel of the broken guarantee; errors.Is works on it.
	Guarantee error `json:"-"`
	// Message says what happened, in words a person can follow.
	Message string `json:"message"`
	// Where applicable: the watch, client, key and revision concerned.
	Watch    int64  `json:"watch,omitempty"`
	Client   int    `json:"client,omitempty"`
	Key      string `json:"key,omitempty"`
	Revision int64  `json:"revision,omitempty"`
	Want     string `json:"want,omitempty"`
	Got      string `json:"got,omitempty"`
	// Operations and Events are the records that prove the violation.
	Operations []int64           `json:"operations,omitempty"`
	Events     []history.EventAt `json:"events,omitempty"`
	// KubeEvents are Kubernetes watch events that prove it (Kubernetes
	// checks); each names its watch and its index in that watch.
	KubeEvents []history.KubeEventAt `json:"kube_events,omitempty"`
	// Calls (progress requests, lease calls) and Watches (etcd or
	// Kubernetes watches, as the check's family) are further records that
	// prove it: requests owed an answer that got none.
	Calls   []int64 `json:"calls,omitempty"`
	Watches []int64 `json:"watches,omitempty"`
	// RestsOn lists the watches (etcd or Kubernetes, as the check's
	// family) whose observations the violation
	// takes as proof of something else (a watch vouching that a key did
	// not change, or showing what another watch missed). It is kept apart
	// from Watches, where a watch is a record of the breach itself: should
	// another check show one of these watches unreliable, this violation
	// may be that watch's fault, and the reports show it under that
	// finding.
	RestsOn []int64 `json:"rests_on,omitempty"`
	// Span, where set, is the stretch of the run the violation is about
	// (an outage; a server's death until something could start it
	// again): the reports put violations within a server's death under it.
	Span *Span `json:"span,omitempty"`
	// Log quotes what a server's log says of the breach (a crash's first
	// line and its top frames).
	Log []string `json:"log,omitempty"`
}

// Span is a stretch of a run's time, from its start.
type Span struct {
	From time.Duration `json:"from_ns"`
	To   time.Duration `json:"to_ns"`
}

// Overlaps reports whether s and o share a moment.
func (s Span) Overlaps(o Span) bool { return s.From <= o.To && o.From <= s.To }

// Error makes a Violation usable as an error wrapping its guarantee.
func (v Violation) Error() string { return v.Message }

// Unwrap returns the guarantee sentinel.
func (v Violation) Unwrap() error { return v.Guarantee }

// Config sets the budgets and bounds of the checks.
type Config struct {
	// LinearizabilityTimeout bounds the whole kv/linearizable check; past
	// it the verdict is unknown.
	LinearizabilityTimeout time.Duration
	// MaxViolations caps the violations kept per check (the count is still
	// reported in the figures).
	MaxViolations int
	// MaxUnavailable bounds how long the system may leave clients without
	// an answer after the faults around the outage healed
	// (run/availability).
	MaxUnavailable time.Duration
}

// DefaultConfig is what `vigil run` and `vigil check` use unless told otherwise.
func DefaultConfig() Config {
	return Config{LinearizabilityTimeout: 5 * time.Minute, MaxViolations: 20, MaxUnavailable: 30 * time.Second}
}

// Check is one named check, defined once by the package that implements
// it: the registry, the SHOULD list and the reports all read this value.
type Check struct {
	Name string
	// Guarantee is the sentinel its violations wrap (see Guarantee).
	Guarantee error
	// Should marks a best-effort promise (a SHOULD line): its failure is
	// a warning and does not fail the run.
	Should bool
	// Severity is how bad a breach of its guarantee is for a client.
	Severity Severity
	// Profiles are the profiles the check belongs to: always ProfileEtcd,
	// and ProfileKubernetes when Kubernetes relies on what it tests
	// (EtcdOnly, ForKubernetes).
	Profiles []string
	Run      func(h *history.History, cfg Config) Result
	// Evidence says what the check needs from the run and what the target
	// answered; Run applies the one verdict rule to it (Apply). Every
	// check declares it.
	Evidence Evidencer
}

// Safety reports whether c is a MUST check of data or order: a violation
// of it stays one however the run goes on, so it may judge a history cut
// while the run is still going (liveness and SHOULD lines wait for the
// end).
func (c Check) Safety() bool { return !c.Should && c.Severity != Liveness }

// Severity ranks what a breach costs the system's clients, worst first:
// findings are listed in this order.
type Severity string

const (
	// Data: clients saw wrong or missing data (a stale read, a lost or
	// invented event, a wrong prev_kv, a write accepted that should not
	// have been).
	Data Severity = "data"
	// Order: the data is right but its order, metadata or protocol is not
	// (revisions out of order, a duplicate event, a wrong status or
	// cancel reason).
	Order Severity = "order"
	// Liveness: the system stopped answering or delivering, or answered
	// later than it must.
	Liveness Severity = "liveness"
)

// Excuses sums Excused.
func (r Result) Excuses() int {
	n := 0
	for _, v := range r.Excused {
		n += v
	}
	return n
}

// MostlyExcused reports whether more observations were excused than
// judged: more than half of what the check saw passed on an excuse.
func (r Result) MostlyExcused() bool {
	e := r.Excuses()
	return e > 0 && e > r.Judged
}

// Rank orders severities, worst first (0); an unknown one ranks last.
func (s Severity) Rank() int {
	switch s {
	case Data:
		return 0
	case Order:
		return 1
	case Liveness:
		return 2
	}
	return 3
}

// Guarantee returns the sentinel of the guarantee a check owns: its text
// is the check's name and the guarantee in words, and a Violation wraps
// it, so errors.Is(violation, guarantee) works.
func Guarantee(name, text string) error { return errors.New(name + ": " + text) }

// Run runs one check, fills in its name and SHOULD mark and turns a panic
// into an unknown verdict rather than taking the caller down.
func Run(c Check, h *history.History, cfg Config) (r Result) {
	defer func() {
		if p := recover(); p != nil {
			r = Result{Name: c.Name, Verdict: Unknown, Reason: fmt.Sprintf("the check panicked: %v", p),
				Should: c.Should, Severity: c.Severity, Profiles: c.Profiles, Violations: []Violation{}}
		}
	}()
	r = c.Run(h, cfg)
	if r.Name == "" {
		r.Name = c.Name
	}
	if c.Evidence != nil {
		r = Apply(c, r, c.Evidence(h))
	}
	r.Should, r.Severity, r.Profiles = c.Should, c.Severity, c.Profiles
	if r.Violations == nil {
		r.Violations = []Violation{}
	}
	return r
}

// Overall folds verdicts into one: fail beats unknown beats pass; skipped
// counts as neither, and so do the failures of SHOULD checks (warnings)
// and every verdict of a check outside the run's profile.
func Overall(results []Result) Verdict {
	v := Pass
	for _, r := range results {
		if r.Should && r.Verdict == Fail || r.OutsideProfile {
			continue
		}
		switch r.Verdict {
		case Fail:
			return Fail
		case Unknown:
			v = Unknown
		}
	}
	return v
}

// violationJSON is a Violation as result.json spells it: the guarantee as
// its text, since an error value does not survive JSON.
type violationJSON struct {
	Guarantee string `json:"guarantee,omitempty"`
	plainViolation
}

type plainViolation Violation

// MarshalJSON writes the guarantee as text.
func (v Violation) MarshalJSON() ([]byte, error) {
	out := violationJSON{plainViolation: plainViolation(v)}
	if v.Guarantee != nil {
		out.Guarantee = v.Guarantee.Error()
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads a violation back; the guarantee becomes a plain
// error with the same text (errors.Is against the sentinel no longer holds).
func (v *Violation) UnmarshalJSON(b []byte) error {
	var in violationJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*v = Violation(in.plainViolation)
	if in.Guarantee != "" {
		v.Guarantee = errors.New(in.Guarantee)
	}
	return nil
}
