package check

import (
	"fmt"
	"maps"
	"strings"
)

// A segmented run (history.Segment) is judged segment by segment: each
// check runs on each segment's history, and Merger makes one result per
// check of the run from them. The verdict rule is Jepsen's for composed
// checks, with skipped below pass: a failure in any segment fails the
// check; else an unknown in any leaves it unknown (a part of the run was
// not decided, so the whole is not); else a limitation; else pass when
// some segment passed; skipped only when every segment was. Counts add
// up; figures that are maxima or bounds take the largest.

// maxViolationsMerged caps the violations a merged result keeps (each
// segment's were capped already; Figures["violations"] counts them all).
const maxViolationsMerged = 50

// Merger merges the results of a run's segments, check by check. The zero
// value is ready.
type Merger struct {
	order    []string
	byName   map[string]*Result
	segments int
	// failDrawn: the check's Drawing is a failure's, which stays.
	failDrawn map[string]bool
}

// Add merges one segment's results (segment is its index, for the
// reasons). A result's Drawing is kept only where the view will show it
// — the first failure, else the last segment's (last) — since a drawing
// holds its segment's state in memory.
func (m *Merger) Add(segment int, last bool, results []Result) {
	if m.byName == nil {
		m.byName, m.failDrawn = map[string]*Result{}, map[string]bool{}
	}
	m.segments++
	for _, r := range results {
		if !last && r.Verdict != Fail {
			r.Drawing = nil
		}
		cur, ok := m.byName[r.Name]
		if !ok {
			c := r
			c.Figures = maps.Clone(r.Figures)
			c.Excused = maps.Clone(r.Excused)
			c.Violations = append([]Violation(nil), r.Violations...)
			if r.Evidence != nil {
				e := *r.Evidence
				c.Evidence = &e
			}
			if c.Reason != "" {
				c.Reason = fmt.Sprintf("segment %d: %s", segment, c.Reason)
			}
			m.byName[r.Name] = &c
			m.order = append(m.order, r.Name)
			m.failDrawn[r.Name] = r.Verdict == Fail && r.Drawing != nil
			continue
		}
		mergeInto(cur, r, segment)
		if r.Drawing != nil && !m.failDrawn[r.Name] {
			// The first failure's view, else the last segment's.
			cur.Drawing, m.failDrawn[r.Name] = r.Drawing, r.Verdict == Fail
		}
	}
}

// Segments is how many segments were added.
func (m *Merger) Segments() int { return m.segments }

// Results is one result per check, in the order the checks first came.
func (m *Merger) Results() []Result {
	out := make([]Result, 0, len(m.order))
	for _, name := range m.order {
		out = append(out, *m.byName[name])
	}
	return out
}

// verdictRank orders verdicts for merging: the highest decides.
func verdictRank(v Verdict) int {
	switch v {
	case Fail:
		return 4
	case Unknown:
		return 3
	case Documented:
		return 2
	case Pass:
		return 1
	}
	return 0 // skipped
}

func mergeInto(cur *Result, r Result, segment int) {
	if verdictRank(r.Verdict) > verdictRank(cur.Verdict) {
		cur.Verdict, cur.Reason = r.Verdict, ""
		if r.Reason != "" {
			cur.Reason = fmt.Sprintf("segment %d: %s", segment, r.Reason)
		}
	}
	if len(cur.Violations) < maxViolationsMerged {
		cur.Violations = append(cur.Violations, r.Violations[:min(len(r.Violations), maxViolationsMerged-len(cur.Violations))]...)
	}
	if cur.Figures == nil && len(r.Figures) > 0 {
		cur.Figures = map[string]float64{}
	}
	for k, v := range r.Figures {
		if maxFigure(k) {
			cur.Figures[k] = max(cur.Figures[k], v)
		} else {
			cur.Figures[k] += v
		}
	}
	cur.Judged += r.Judged
	if cur.Excused == nil && len(r.Excused) > 0 {
		cur.Excused = map[string]int{}
	}
	for k, v := range r.Excused {
		cur.Excused[k] += v
	}
	cur.Elapsed += r.Elapsed
	cur.Evidence = mergeEvidence(cur.Evidence, r.Evidence)
}

// maxFigure reports whether a figure is a maximum or a bound (the longest
// outage, a bound in seconds, a count of members), not a count to add.
func maxFigure(name string) bool {
	return strings.HasSuffix(name, "_s") || strings.Contains(name, "max") || strings.Contains(name, "longest") ||
		name == "members" || name == "servers"
}

func mergeEvidence(a, b *Evidence) *Evidence {
	switch {
	case b == nil:
		return a
	case a == nil:
		e := *b
		return &e
	}
	a.Asked += b.Asked
	a.Answered += b.Answered
	a.Ignored += b.Ignored
	a.Refused += b.Refused
	a.Owed += b.Owed
	a.Legacy = a.Legacy || b.Legacy
	if a.Asked > 0 {
		a.Why = ""
	}
	if len(a.Unanswered) < 10 {
		a.Unanswered = append(a.Unanswered, b.Unanswered[:min(len(b.Unanswered), 10-len(a.Unanswered))]...)
	}
	if a.Records == "" {
		a.Records = b.Records
	}
	if a.Example == "" {
		a.Example = b.Example
	}
	if a.Request == "" {
		a.Request, a.Answer = b.Request, b.Answer
	}
	return a
}
