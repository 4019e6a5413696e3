package reports

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/workload/grammar"
)

// FormCount is how one request form (history.FormOf, WatchForms, or a
// call's kind) fared in a run: how many were sent, answered (a response,
// or a definite error such as compacted), and refused as not implemented
// during the run. RefusedBefore holds the target's words when it refused
// the form when asked before the run (the workload then sent none).
type FormCount struct {
	Form          string `json:"form"`
	Sent          int    `json:"sent"`
	Answered      int    `json:"answered"`
	Refused       int    `json:"refused"`
	RefusedBefore string `json:"refused_before,omitempty"`
}

// CountForms counts an etcd run's operations, calls and watches by form,
// from their recorded requests (so a saved run, of any format, gets the
// same counts), with the forms refused before the run. Sorted by form.
func CountForms(h *history.History) []FormCount {
	d := NewDigest()
	d.init()
	d.meta, d.metaSet = h.Meta, true
	d.addForms(h, [2]map[int64]bool{})
	return d.countForms()
}

// countForms is CountForms of the segments added so far.
func (d *Digest) countForms() []FormCount {
	d.init()
	out := make([]FormCount, 0, len(d.forms))
	for _, c := range d.forms {
		out = append(out, *c)
	}
	for f, words := range d.meta.Refuses {
		if legacyAlias(f, d.meta.Refuses) || grammar.Known(f) {
			continue // a production's row is in the productions' table
		}
		i := slices.IndexFunc(out, func(c FormCount) bool { return c.Form == f })
		if i < 0 {
			i = len(out)
			out = append(out, FormCount{Form: f})
		}
		out[i].RefusedBefore = words
	}
	slices.SortFunc(out, func(a, b FormCount) int { return strings.Compare(a.Form, b.Form) })
	return out
}

// legacyAlias: a capability name that a history probed by form records
// beside the forms it stands for (serializable beside
// range-serializable, txn beside the txn forms); it adds no row.
func legacyAlias(name string, refuses map[string]string) bool {
	switch name {
	case history.CapSerializable:
		_, ok := refuses["range-serializable"]
		_, drawn := refuses["range.serializable=true"]
		return ok || drawn
	case history.CapTxn:
		for f := range refuses {
			if strings.HasPrefix(f, "txn-") || strings.HasPrefix(f, "txn.") || strings.HasPrefix(f, "compare.") {
				return true
			}
		}
	}
	return false
}

// writeForms writes the accounting under the verdict table: each form
// sent with sent/answered (and how many were refused during the run),
// wrapped; then the forms refused before the run, with the target's words
// (a history drawn from the grammar lists its productions instead:
// writeProductions).
func writeForms(w io.Writer, forms []FormCount) {
	if len(forms) == 0 {
		return
	}
	var sent, before []string
	for _, f := range forms {
		if f.Sent > 0 {
			s := fmt.Sprintf("%s %d/%d", f.Form, f.Sent, f.Answered)
			if f.Refused > 0 {
				s += fmt.Sprintf(" (%d refused)", f.Refused)
			}
			sent = append(sent, s)
		}
		if f.RefusedBefore != "" {
			before = append(before, fmt.Sprintf("  %s: %s\n", f.Form, f.RefusedBefore))
		}
	}
	fmt.Fprintln(w, "request forms, sent/answered:")
	line := " "
	for i, s := range sent {
		if len(line)+len(s) > 110 {
			fmt.Fprintln(w, line)
			line = " "
		}
		line += " " + s
		if i < len(sent)-1 {
			line += ","
		}
	}
	if strings.TrimSpace(line) != "" {
		fmt.Fprintln(w, line)
	}
	if len(before) > 0 {
		fmt.Fprintf(w, "refused before the run, so not sent:\n%s", strings.Join(before, ""))
	}
}
