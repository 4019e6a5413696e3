package reports

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/workload/grammar"
)

// ProductionCount is how one production of the grammar
// ("production.field=class", Operation.Draw) fared in a run: how many
// requests drawn from it were sent, answered (a response, or a definite
// error: compacted, future revision, key or lease not found, invalid)
// and refused as not implemented during the run. RefusedBefore holds the
// target's words when it refused the production when asked before the
// run (the workload then drew none).
type ProductionCount struct {
	Production    string `json:"production"`
	Sent          int    `json:"sent"`
	Answered      int    `json:"answered"`
	Refused       int    `json:"refused"`
	RefusedBefore string `json:"refused_before,omitempty"`
}

// CountProductions counts an etcd run's requests by the productions they
// were drawn from (so a saved run gets the same counts), with every
// production the run could draw (Meta.Productions) and those refused
// before the run; it also returns the productions the run could draw and
// never did. Nothing for a history drawn from no grammar (before format
// 4). In the vocabulary's order.
func CountProductions(h *history.History) ([]ProductionCount, []string) {
	d := NewDigest()
	d.init()
	d.meta, d.metaSet = h.Meta, true
	d.addForms(h, [2]map[int64]bool{})
	return d.countProductions()
}

// answeredOp: a response, or an error that says what happened.
func answeredOp(o *history.Operation) bool { return o.Response != nil || o.Code.Definite() }

// answeredCall: an answer, or an error that says what happened.
func answeredCall(c *history.Call) bool { return !c.Failed() || c.Code.Definite() }

// prodRow is production p's row.
func (d *Digest) prodRow(p string) *ProductionCount {
	if d.prods[p] == nil {
		d.prods[p] = &ProductionCount{Production: p}
	}
	return d.prods[p]
}

// countDrawn counts a request drawn from draw: sent, and answered or
// refused.
func (d *Digest) countDrawn(draw []string, answered, refused bool) {
	for _, p := range draw {
		if !grammar.Known(p) {
			continue // a pattern's tag, the member comparer's: not the grammar's
		}
		c := d.prodRow(p)
		c.Sent++
		switch {
		case answered:
			c.Answered++
		case refused:
			c.Refused++
		}
	}
}

// countProductions is CountProductions of the segments added so far.
func (d *Digest) countProductions() ([]ProductionCount, []string) {
	d.init()
	if len(d.prods) == 0 && len(d.meta.Productions) == 0 {
		return nil, nil
	}
	rows := map[string]*ProductionCount{}
	for p, c := range d.prods {
		cc := *c
		rows[p] = &cc
	}
	for _, p := range d.meta.Productions {
		if rows[p] == nil {
			rows[p] = &ProductionCount{Production: p}
		}
	}
	for p, words := range d.meta.Refuses {
		if grammar.Known(p) {
			if rows[p] == nil {
				rows[p] = &ProductionCount{Production: p}
			}
			rows[p].RefusedBefore = words
		}
	}
	out := make([]ProductionCount, 0, len(rows))
	for _, c := range rows {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b ProductionCount) int { return grammar.Order(a.Production, b.Production) })
	var never []string
	for _, p := range d.meta.Productions {
		if rows[p].Sent == 0 && rows[p].RefusedBefore == "" {
			never = append(never, p)
		}
	}
	slices.SortFunc(never, grammar.Order)
	return out, never
}

// writeProductions writes the coverage under the verdict table: per field
// of the grammar, each class sent with sent/answered (and how many were
// refused during the run); the productions the run could draw and never
// did; those refused before the run, by the target's words.
func writeProductions(w io.Writer, prods []ProductionCount, never []string) {
	if len(prods) == 0 {
		return
	}
	fmt.Fprintln(w, "productions drawn (production.field=class), sent/answered:")
	var field string
	var parts []string
	flush := func() {
		if len(parts) > 0 {
			writeWrapped(w, "  "+field+": ", parts)
		}
		parts = nil
	}
	byWords := map[string][]string{}
	for _, p := range prods {
		if p.RefusedBefore != "" {
			byWords[p.RefusedBefore] = append(byWords[p.RefusedBefore], p.Production)
		}
		if p.Sent == 0 {
			continue
		}
		if f := grammar.Field(p.Production); f != field {
			flush()
			field = f
		}
		s := fmt.Sprintf("%s %d/%d", strings.TrimPrefix(p.Production, field+"="), p.Sent, p.Answered)
		if p.Refused > 0 {
			s += fmt.Sprintf(" (%d refused)", p.Refused)
		}
		parts = append(parts, s)
	}
	flush()
	if len(never) > 0 {
		writeWrapped(w, "never drawn: ", never)
	} else {
		fmt.Fprintln(w, "never drawn: none")
	}
	if len(byWords) > 0 {
		fmt.Fprintln(w, "refused before the run, so not drawn:")
		for _, words := range slices.Sorted(maps.Keys(byWords)) {
			writeWrapped(w, "  "+words+": ", byWords[words])
		}
	}
}

// writeWrapped writes head and the parts, comma-separated, wrapped at 110
// characters with the continuation indented under the first part.
func writeWrapped(w io.Writer, head string, parts []string) {
	indent := strings.Repeat(" ", min(len(head), 24))
	line := head
	for i, s := range parts {
		if i < len(parts)-1 {
			s += ","
		}
		if len(line)+len(s) > 110 && strings.TrimSpace(line) != strings.TrimSpace(head) && line != indent {
			fmt.Fprintln(w, strings.TrimRight(line, " "))
			line = indent
		}
		line += s + " "
	}
	fmt.Fprintln(w, strings.TrimRight(line, " "))
}

// productionsSummary says in a few words how much of the grammar a run
// drew.
func productionsSummary(prods []ProductionCount, never []string) string {
	drawn, before, during := 0, 0, 0
	for _, p := range prods {
		if p.Sent > 0 {
			drawn++
		}
		if p.RefusedBefore != "" {
			before++
		}
		if p.Refused > 0 {
			during++
		}
	}
	return fmt.Sprintf("%d drawn, %d never drawn, %d refused before the run, %d refused during it", drawn, len(never), before, during)
}
