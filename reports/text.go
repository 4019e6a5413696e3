package reports

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// Table writes the verdict table and, below it, the findings, each with
// the records of its smallest witness.
func Table(w io.Writer, r Result) {
	width := 26
	for _, c := range r.Checks {
		width = max(width, len(c.Name))
	}
	fmt.Fprintf(w, "\n%-*s %-8s %8s  %s\n", width, "CHECK", "VERDICT", "TIME", "DETAIL")
	for _, c := range r.Checks {
		detail := c.Reason
		if c.Verdict == check.Fail {
			detail = fmt.Sprintf("%d violation(s)", len(c.Violations))
			if n, ok := c.Figures["violations"]; ok && int(n) > len(c.Violations) {
				detail = fmt.Sprintf("%d violation(s), first %d kept", int(n), len(c.Violations))
			}
			detail += fmt.Sprintf(" in %d finding(s)", findingsOf(r.Findings, c.Name))
		} else if detail == "" {
			detail = figures(c.Figures)
		}
		if e := evidenceText(c); e != "" && c.Verdict != check.Fail {
			detail = e + "; " + detail
		}
		if c.Verdict == check.Pass && c.MostlyExcused() {
			detail = fmt.Sprintf("MOSTLY EXCUSED: %d excused (%s), %d judged; %s", c.Excuses(), excuses(c.Excused), c.Judged, detail)
		}
		if c.OutsideProfile {
			detail = "(outside the profile " + r.Profile + ") " + detail
		}
		fmt.Fprintf(w, "%-*s %-8s %7.2fs  %s\n", width, c.Name, verdictWord(c), c.Elapsed.Seconds(), detail)
	}
	s := r.Stats
	var faults []string
	for _, f := range s.Faults {
		faults = append(faults, fmt.Sprintf("%s x%d", f.Name, f.Count))
	}
	if s.Kube != nil {
		if len(faults) == 0 {
			faults = []string{"none"}
		}
		fmt.Fprintf(w, "\n%sfaults: %s\n", s.Kube, strings.Join(faults, ", "))
		writeKubeVerbs(w, s.Kube.Verbs, s.Kube.NeverSent)
	} else {
		fmt.Fprintf(w, "\n%d operations (%d failed, %.0f/s), %d watches, %d watch events", s.Operations,
			s.FailedOperations, s.OpsPerSecond, s.Watches, s.WatchEvents)
		for _, f := range faults {
			fmt.Fprintf(w, ", %s", f)
		}
		fmt.Fprintln(w)
		if r.Segments > 0 {
			fmt.Fprintf(w, "judged in %d segments, each by every check as it ended (--segment)\n", r.Segments)
		}
		if s.Productions != nil {
			writeProductions(w, s.Productions, s.NeverDrawn)
		} else {
			writeForms(w, s.Forms)
		}
		writePatterns(w, s.Patterns)
	}
	writeAvailability(w, s.Availability)
	writeHeldTo(w, r)
	writeFindings(w, r)
	verdict := strings.ToUpper(r.Verdict)
	if r.Reason != "" {
		verdict += ": " + r.Reason
	}
	fmt.Fprintf(w, "\nverdict: %s (seed %d)\n", verdict, r.Seed)
}

// writeHeldTo says under the table what the run held the target to: its
// profile (and what fell outside it) and each declared limitation.
func writeHeldTo(w io.Writer, r Result) {
	if r.Profile != "" && r.Profile != check.ProfileEtcd {
		var failed []string
		outside := 0
		for _, c := range r.Checks {
			if c.OutsideProfile {
				outside++
				if c.Verdict == check.Fail || c.Verdict == check.Unknown {
					failed = append(failed, c.Name+" "+string(c.Verdict))
				}
			}
		}
		line := fmt.Sprintf("profile %s: %d checks decide the verdict; %d outside it are reported only", r.Profile, len(r.Checks)-outside, outside)
		if len(failed) > 0 {
			line += " (" + strings.Join(failed, ", ") + ")"
		}
		fmt.Fprintln(w, line)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Limitations)) {
		fmt.Fprintf(w, "declared limitation %s: %s\n", name, r.Limitations[name])
	}
}

// maxShownFindings bounds what the terminal shows; result.json has every
// finding and every violation (up to the checkers' own cap).
const maxShownFindings = 10

// writeFindings lists the findings under the table, each with its
// smallest witness, then the other checks' parts of the same cause and
// the violations resting on it, each with its own smallest witness;
// result.json has every violation (up to the checkers' own cap).
func writeFindings(w io.Writer, r Result) {
	if len(r.Findings) == 0 {
		return
	}
	total := 0
	for _, f := range r.Findings {
		total += f.Total()
	}
	fmt.Fprintf(w, "\n%d finding(s) (%d violation(s)), worst first:\n", len(r.Findings), total)
	for i, f := range r.Findings {
		if i == maxShownFindings {
			fmt.Fprintf(w, "\n... %d more finding(s) in result.json\n", len(r.Findings)-i)
			break
		}
		fmt.Fprintf(w, "\n%d. ", i+1)
		writePart(w, f.Part, "   ", "")
		if len(f.Also) > 0 {
			n := 0
			for _, p := range f.Also {
				n += p.Violations
			}
			fmt.Fprintf(w, "   the same records also broke (one cause as far as they show; %d more violation(s)):\n", n)
			for _, p := range f.Also {
				fmt.Fprint(w, "   + ")
				writePart(w, p, "     ", "")
			}
		}
		if len(f.RestingOnIt) > 0 {
			if f.RestingOnIt[0].RestsOnExit != "" {
				fmt.Fprintln(w, "   resting on it (only about the time the process was down; not findings of their own):")
			} else {
				fmt.Fprintln(w, "   resting on it (their proof is a watch this finding shows unreliable; not findings of their own):")
			}
			for _, p := range f.RestingOnIt {
				fmt.Fprint(w, "   ^ ")
				note := fmt.Sprintf(", resting on watch %s", joinIDs(p.RestsOn))
				if p.RestsOnExit != "" {
					note = ", resting on: " + p.RestsOnExit
				}
				writePart(w, p, "     ", note)
			}
		}
		if len(f.Probes) > 0 {
			target := ""
			if strings.HasPrefix(f.Check, "kube/") {
				target = "--target kube "
			}
			fmt.Fprintf(w, "   isolate it: vigil conform %s--only %s\n", target, strings.Join(f.Probes, ","))
		}
	}
}

// writePart prints one part of a finding: its check, severity, count and
// signature, then its smallest witness (the first line is written where
// the caller left off; the others are indented).
func writePart(w io.Writer, p Part, indent, witnessNote string) {
	kind := string(p.Severity)
	if p.Should {
		kind += ", SHOULD: a warning"
	}
	if p.OutsideProfile {
		kind += ", outside the profile: reported only"
	}
	count := fmt.Sprintf("%d violation(s)", p.Violations)
	if p.Found > 0 {
		count = fmt.Sprintf("%d of the violations kept (the check found %d)", p.Violations, p.Found)
	}
	fmt.Fprintf(w, "%s [%s]: %s like\n%s  %s\n%ssmallest witness%s:\n", p.Check, kind, count, indent, p.Signature, indent, witnessNote)
	writeViolation(w, p.Witness, indent)
}

// findingsOf counts the findings a check has a part in, its own or
// another's.
func findingsOf(fs []Finding, name string) int {
	n := 0
	for _, f := range fs {
		if _, ok := f.PartOf(name); ok {
			n++
		}
	}
	return n
}

// verdictWord is the table's verdict: a failed SHOULD check is a warning.
func verdictWord(c check.Result) string {
	if c.Should && c.Verdict == check.Fail {
		return "WARN"
	}
	return strings.ToUpper(string(c.Verdict))
}

func figures(f map[string]float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(f)) {
		parts = append(parts, fmt.Sprintf("%s=%g", k, f[k]))
	}
	return strings.Join(parts, " ")
}

// excuses lists the reasons of excuses that occurred, "why=n".
func excuses(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
		}
	}
	return strings.Join(parts, " ")
}

// writeViolation prints one violation: its message, then the evidence.
func writeViolation(w io.Writer, v check.Violation, indent string) {
	fmt.Fprintf(w, "%s- %s\n", indent, v.Message)
	if v.Want != "" || v.Got != "" {
		fmt.Fprintf(w, "%s    want: %s\n%s    got:  %s\n", indent, v.Want, indent, v.Got)
	}
	if len(v.Log) > 0 {
		fmt.Fprintf(w, "%s    log:\n", indent)
		for _, l := range v.Log {
			fmt.Fprintf(w, "%s    | %s\n", indent, l)
		}
	}
	if len(v.Operations) > 0 {
		fmt.Fprintf(w, "%s    operations: %s\n", indent, joinIDs(v.Operations))
	}
	if len(v.Calls) > 0 {
		fmt.Fprintf(w, "%s    calls: %s\n", indent, joinIDs(v.Calls))
	}
	if len(v.Watches) > 0 {
		fmt.Fprintf(w, "%s    watches: %s\n", indent, joinIDs(v.Watches))
	}
	for _, e := range v.Events {
		fmt.Fprintf(w, "%s    watch %d response %d: %s\n", indent, e.Watch, e.Response, eventText(e.Event))
	}
	for _, e := range v.KubeEvents {
		fmt.Fprintf(w, "%s    watch %d event %d: %s\n", indent, e.Event.Watch, e.Index, kubeEventText(e.Event))
	}
	if len(v.RestsOn) > 0 {
		fmt.Fprintf(w, "%s    taken as proof: watch %s\n", indent, joinIDs(v.RestsOn))
	}
}

// kubeEventText renders a Kubernetes watch event: type, object, RV, value.
func kubeEventText(e history.KubeEvent) string {
	switch {
	case e.Status != nil:
		return fmt.Sprintf("%s %d %s", e.Type, e.Status.Code, e.Status.Reason)
	case e.Object == nil:
		return e.Type
	case e.Type == history.KubeBookmark:
		return fmt.Sprintf("BOOKMARK rv=%s", e.Object.ResourceVersion)
	}
	s := fmt.Sprintf("%s %s rv=%s", e.Type, e.Object.Name, e.Object.ResourceVersion)
	if e.Object.Value != "" {
		s += fmt.Sprintf(" value=%q", e.Object.Value)
	}
	if len(e.Object.Labels) > 0 {
		s += fmt.Sprintf(" labels=%v", e.Object.Labels)
	}
	return s
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ", ")
}

func eventText(e history.Event) string {
	s := fmt.Sprintf("%s %s rev=%d", e.Type, e.KV.Key, e.KV.ModRevision)
	if e.Type == history.EventPut {
		s += fmt.Sprintf(" value=%q", e.KV.Value)
	}
	return s
}

// evidenceText is a check's evidence in one line: what the run asked and
// what the target answered ("" for results written before format 2).
func evidenceText(c check.Result) string {
	if c.Evidence == nil || c.Evidence.Asked == 0 {
		return "" // the reason says why nothing was asked
	}
	if c.Evidence.Legacy {
		return c.Evidence.String() + " (an older history: requests not all recorded)"
	}
	return c.Evidence.String()
}
