// Package reports renders a run's outcome: result.json, junit.xml and the
// verdict table a person reads at the end of a run.
package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/internal/redact"
)

// Verdict of a whole run; "error" means the run could not be judged
// (interrupted, or the system under test could not be set up).
const VerdictError = "error"

// FaultCount is how often one fault was injected.
type FaultCount struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// Stats are the figures of a run, counted from its history.
type Stats struct {
	Operations       int          `json:"operations"`
	FailedOperations int          `json:"failed_operations"`
	OpsPerSecond     float64      `json:"ops_per_second"`
	Watches          int          `json:"watches"`
	WatchEvents      int          `json:"watch_events"`
	Faults           []FaultCount `json:"faults"`
	// Availability is how the system answered over the run.
	Availability *Availability `json:"availability,omitempty"`
	// Forms counts an etcd run's requests by form (CountForms): sent,
	// answered, refused during the run or before it.
	Forms []FormCount `json:"forms,omitempty"`
	// Patterns counts an etcd run's requests by the placement and timing
	// pattern that sent them (CountPatterns): sent, answered.
	Patterns []PatternCount `json:"patterns,omitempty"`
	// Productions counts an etcd run's requests by the grammar
	// productions they were drawn from (CountProductions), with every one
	// the run could draw; NeverDrawn lists those it never drew.
	Productions []ProductionCount `json:"productions,omitempty"`
	NeverDrawn  []string          `json:"never_drawn,omitempty"`
	// Kube is set for runs of a Kubernetes target: its calls, watches,
	// 410s and relists (the etcd figures above are then vigil's own
	// compactions and the oracle watch).
	Kube *KubeStats `json:"kube,omitempty"`
}

// ResultFormat is the version of result.json's layout: a reader that
// knows format N reads every file that says N. It changes when a field
// changes meaning or goes; added fields keep it.
const ResultFormat = 1

// Result is result.json.
type Result struct {
	Format int `json:"format"`
	// Vigil is the version of vigil that judged the run; Flags are the
	// flags the run was given (as the history's meta records them).
	Vigil   string            `json:"vigil,omitempty"`
	Flags   map[string]string `json:"flags,omitempty"`
	Verdict string            `json:"verdict"`
	Reason  string            `json:"reason,omitempty"`
	// SetupFailed: the run could not start (no cluster, a bad endpoint),
	// so nothing was judged; Reason says why.
	SetupFailed bool           `json:"setup_failed,omitempty"`
	Seed        int64          `json:"seed"`
	Target      history.Target `json:"target"`
	DurationS   float64        `json:"duration_s"`
	Stats       Stats          `json:"stats"`
	Checks      []check.Result `json:"checks"`
	// Findings group the failed checks' violations by root cause (see
	// Findings), worst first.
	Findings []Finding         `json:"findings"`
	Files    map[string]string `json:"files,omitempty"`
	// StoppedEarly says why the workload stopped early: --fail-fast at
	// the first violation the live judge found, or a server's death no
	// fault would undo ("" when it ran its course).
	StoppedEarly string `json:"stopped_early,omitempty"`
	// Segments counts the segments a segmented run was judged in (each
	// alone, their results merged); 0 for a run judged whole.
	Segments int `json:"segments,omitempty"`
	// Profile is what the run held the target to (the history's); the
	// checks outside it (checks[].outside_profile) are reported but do
	// not decide Verdict.
	Profile string `json:"profile,omitempty"`
	// Limitations are the documented departures the run declared (or the
	// fixture documents), by name, with where the target states them.
	Limitations map[string]string `json:"limitations,omitempty"`
}

// Summarize builds the result of a run from its history and check results.
// durationS is the length of the workload in seconds.
func Summarize(h *history.History, results []check.Result, durationS float64) Result {
	d := NewDigest()
	d.Add(h, results)
	return SummarizeDigest(d, results, durationS)
}

// SummarizeDigest builds the result of a run from its digest and the
// run's check results (merged over its segments); the findings are the
// digest's (each segment's, found by Add), worst first.
func SummarizeDigest(d *Digest, results []check.Result, durationS float64) Result {
	d.init()
	m := d.meta
	profile := profileOf(m)
	results = check.MarkProfile(results, profile)
	r := Result{Format: ResultFormat, Profile: profile, Limitations: m.Limitations, Vigil: m.Vigil, Flags: redact.Flags(m.Flags), Verdict: string(check.Overall(results)),
		Seed: m.Seed, Target: m.Target, DurationS: durationS, Checks: results, Stats: Stats{Faults: []FaultCount{}}}
	if r.Checks == nil {
		r.Checks = []check.Result{}
	}
	r.Findings = slices.Clone(d.findings)
	slices.SortStableFunc(r.Findings, findingOrder)
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	r.Stats.Operations, r.Stats.FailedOperations = d.operations, d.failedOps
	if durationS > 0 {
		r.Stats.OpsPerSecond = float64(r.Stats.Operations) / durationS
	}
	r.Stats.Availability = d.availability()
	r.Stats.Watches, r.Stats.WatchEvents = d.watches, d.watchEvents
	counts := map[string]int{}
	for _, f := range d.faults {
		counts[f.Name]++
	}
	for name, n := range counts {
		r.Stats.Faults = append(r.Stats.Faults, FaultCount{Name: name, Count: n})
	}
	sort.Slice(r.Stats.Faults, func(i, j int) bool { return r.Stats.Faults[i].Name < r.Stats.Faults[j].Name })
	if d.kubeSeen {
		k := d.countKube()
		r.Stats.Kube = &k
	} else {
		r.Stats.Forms = d.countForms()
		r.Stats.Patterns = d.countPatterns()
		r.Stats.Productions, r.Stats.NeverDrawn = d.countProductions()
	}
	return r
}

// ExitCode maps a run's verdict to vigil's exit code: 0 pass, 1 a violation,
// 2 unknown, 3 the run could not be judged.
func ExitCode(verdict string) int {
	switch verdict {
	case string(check.Pass):
		return 0
	case string(check.Fail):
		return 1
	case string(check.Unknown):
		return 2
	}
	return 3
}

// WriteJSON writes result.json into dir.
func WriteJSON(dir string, r Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "result.json"), append(b, '\n'), 0o644)
}

// ReadJSON reads a result.json.
func ReadJSON(path string) (Result, error) {
	var r Result
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(b, &r)
}
