package reports

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/vigil-suite/vigil/history"
)

// PatternCount is how the requests of one placement and timing pattern
// (history.PatternOf of their draw entries) fared in a run: how many were
// sent and how many answered (a response or a definite error, such as
// the compacted revision a compact-race read asks for; a watch once
// created).
type PatternCount struct {
	Pattern  string `json:"pattern"`
	Sent     int    `json:"sent"`
	Answered int    `json:"answered"`
}

// patternTally is the digest's count of the patterns, segment by segment.
type patternTally struct {
	counts map[string]*PatternCount
	// watches not yet ended, with whether their creation was counted: a
	// watch open across segments is in each.
	watches map[int64]bool
}

// addPatterns counts the segment's requests sent by a pattern.
func (d *Digest) addPatterns(h *history.History) {
	t := &d.patterns
	if t.counts == nil {
		t.counts, t.watches = map[string]*PatternCount{}, map[int64]bool{}
	}
	row := func(p string) *PatternCount {
		if t.counts[p] == nil {
			t.counts[p] = &PatternCount{Pattern: p}
		}
		return t.counts[p]
	}
	for i := range h.Operations {
		o := &h.Operations[i]
		p := history.PatternOf(o.Draw)
		if p == "" {
			continue
		}
		c := row(p)
		c.Sent++
		if o.Response != nil || o.Definite() {
			c.Answered++
		}
	}
	for i := range h.Calls {
		k := &h.Calls[i]
		if p := history.PatternOf(k.Draw); p != "" {
			c := row(p)
			c.Sent++
			if !k.Failed() {
				c.Answered++
			}
		}
	}
	for _, w := range h.Watches {
		p := history.PatternOf(w.Draw)
		if p == "" {
			continue
		}
		created, seen := t.watches[w.ID]
		if !seen {
			row(p).Sent++
		}
		for _, r := range w.Responses {
			if !created && (r.Created || len(r.Events) > 0 || r.Progress) {
				created = true
				row(p).Answered++
			}
		}
		t.watches[w.ID] = created
		if w.End != nil {
			delete(t.watches, w.ID)
		}
	}
}

// countPatterns lists every pattern, in history.Patterns' order (any
// other name a history holds after them), once the run sent any: nil
// for a run with every share 0, or older than the patterns.
func (d *Digest) countPatterns() []PatternCount {
	t := &d.patterns
	if len(t.counts) == 0 {
		return nil
	}
	var out []PatternCount
	for _, p := range history.Patterns() {
		c := PatternCount{Pattern: p}
		if t.counts[p] != nil {
			c = *t.counts[p]
		}
		out = append(out, c)
	}
	var others []string
	for p := range t.counts {
		if !slices.Contains(history.Patterns(), p) {
			others = append(others, p)
		}
	}
	slices.Sort(others)
	for _, p := range others {
		out = append(out, *t.counts[p])
	}
	return out
}

// CountPatterns counts a run's requests by the pattern that sent them,
// from its history alone.
func CountPatterns(h *history.History) []PatternCount {
	d := NewDigest()
	d.addPatterns(h)
	return d.countPatterns()
}

// writePatterns writes the patterns' line under the request forms.
func writePatterns(w io.Writer, patterns []PatternCount) {
	if len(patterns) == 0 {
		return
	}
	fmt.Fprintln(w, "patterns, sent/answered:")
	var parts []string
	for _, p := range patterns {
		parts = append(parts, fmt.Sprintf("%s %d/%d", p.Pattern, p.Sent, p.Answered))
	}
	fmt.Fprintf(w, "  %s\n", strings.Join(parts, ", "))
}

// patternsSummary says in a few words how many patterns were sent.
func patternsSummary(patterns []PatternCount) string {
	sent, reqs := 0, 0
	for _, p := range patterns {
		if p.Sent > 0 {
			sent++
		}
		reqs += p.Sent
	}
	return fmt.Sprintf("%d of %d sent, %d requests", sent, len(patterns), reqs)
}
