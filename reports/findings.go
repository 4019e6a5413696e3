package reports

import (
	"regexp"
	"slices"
	"strings"

	"github.com/vigil-suite/vigil/checkers/check"
)

// Finding is one root cause as far as the history shows it: the
// violations of one check that share a signature. One bug in a randomized
// run often breaks the same guarantee hundreds of times in the same way;
// a reader needs the cause once, with its smallest proof.
type Finding struct {
	Check    string         `json:"check"`
	Severity check.Severity `json:"severity"`
	// Should marks a finding of a SHOULD check: a warning.
	Should bool `json:"should,omitempty"`
	// Signature is what the violations share: the message of each with
	// its numbers, quoted values and ids masked (N, "…", X), runs of the
	// same item in a list collapsed. What is left is the kind of breach
	// and the shape of the operations involved (their kinds and roles).
	Signature string `json:"signature"`
	// Violations counts the violations kept that have this signature.
	Violations int `json:"violations"`
	// Found is how many violations the check found in all, when it kept
	// only the first ones (0 when it kept them all): the kept ones are
	// then a sample, and a finding's count a lower bound.
	Found int `json:"found,omitempty"`
	// Witness is the one with the fewest records (operations and events).
	Witness check.Violation `json:"witness"`
	// Probes are the conformance probes that isolate the check's
	// guarantee, where some exist (filled in by the caller, which knows
	// the probes).
	Probes []string `json:"probes,omitempty"`
}

// Findings groups the violations of the failed checks by signature, worst
// first: MUST before SHOULD, then by severity (data, order, liveness),
// then the most violations first.
func Findings(results []check.Result) []Finding {
	out := []Finding{}
	for _, r := range results {
		if r.Verdict != check.Fail {
			continue
		}
		found := 0
		if n := int(r.Figures["violations"]); n > len(r.Violations) {
			found = n
		}
		at := map[string]int{} // signature -> index into out
		for _, v := range r.Violations {
			sig := Signature(v.Message)
			i, ok := at[sig]
			if !ok {
				at[sig] = len(out)
				out = append(out, Finding{Check: r.Name, Severity: r.Severity, Should: r.Should, Signature: sig, Witness: v, Found: found})
				i = len(out) - 1
			} else if records(v) < records(out[i].Witness) {
				out[i].Witness = v
			}
			out[i].Violations++
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		switch {
		case a.Should != b.Should:
			if a.Should {
				return 1
			}
			return -1
		case a.Severity.Rank() != b.Severity.Rank():
			return a.Severity.Rank() - b.Severity.Rank()
		}
		return b.Violations - a.Violations
	})
	return out
}

// records is how much a reader must look at to follow a violation.
func records(v check.Violation) int {
	return len(v.Operations) + len(v.Events) + len(v.KubeEvents)
}

var (
	quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	hexID  = regexp.MustCompile(`\b[0-9a-f]{8,}\b`)
	number = regexp.MustCompile(`-?[0-9]+(?:\.[0-9]+)?`)
	list   = regexp.MustCompile(`[^\s,]+(?:, [^\s,]+)+`)
)

// Signature masks what differs between two violations of one cause: the
// numbers (ids, revisions, times), quoted values and hexadecimal ids; a
// list that repeats one masked item says it once, followed by "…". Only
// the main clause counts: what a message adds after "; " is context (the
// events around a missed one, the span a watch vouches for), which differs
// between two violations of one cause.
func Signature(message string) string {
	if i := strings.Index(message, "; "); i > 0 {
		message = message[:i]
	}
	s := quoted.ReplaceAllString(message, `"…"`)
	s = hexID.ReplaceAllStringFunc(s, func(t string) string {
		if strings.Trim(t, "0123456789") == "" || strings.Trim(t, "abcdef") == "" {
			return t // a plain number (masked next) or a word such as "deadbeef"
		}
		return "X"
	})
	s = number.ReplaceAllString(s, "N")
	s = list.ReplaceAllStringFunc(s, func(l string) string {
		items := strings.Split(l, ", ")
		for _, it := range items[1:] {
			if it != items[0] {
				return l
			}
		}
		return items[0] + "…"
	})
	return strings.Join(strings.Fields(s), " ")
}
