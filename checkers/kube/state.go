package kube

import (
	"fmt"
	"math"
	"sort"

	"github.com/vigil-suite/vigil/history"
)

// Judging a set of objects (a list's items, a watch's initial events) as
// the state of the collection at some RV in [a, b]: every item must be its
// object's state at that RV, and, when the set claims to be complete,
// every object that exists there (and matches the selector) must be in
// it. Each item, and each absent object, allows a set of RVs; the state
// is valid when they share one.

// ivs is a sorted list of disjoint closed intervals of RVs.
type ivs [][2]int64

func intersectIvs(a, b ivs) ivs {
	var out ivs
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		lo, hi := max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
		if lo <= hi {
			out = append(out, [2]int64{lo, hi})
		}
		if a[i][1] < b[j][1] {
			i++
		} else {
			j++
		}
	}
	return out
}

type issueKind int8

const (
	issUnexplained issueKind = iota // the item is no change the history knows
	issDeletedRV                    // the item carries the RV of its object's deletion
	issWrongValue                   // another value was written at the item's RV
	issSelector                     // the item does not match the selector
	issDuplicate                    // the object appears twice
	issNewer                        // the item is newer than the state can be
	issStale                        // the object changed after the item, at or below the state
	issSplit                        // the items cannot be one state
	issMissing                      // an object of the state is absent
)

// stateIssue is one way a set of objects fails to be a state.
type stateIssue struct {
	kind  issueKind
	name  string
	item  int   // index in the items; -1 for a missing object
	rv    int64 // the item's RV; for a missing object, the RV of its state
	other *kchange
	span  *kspan
	prev  int // issDuplicate: the first index
}

// stateCheck is the verdict on a set of objects as a state.
type stateCheck struct {
	// S is the highest RV in [a, b] at which the set is the state; valid
	// only when ok.
	S      int64
	ok     bool
	lo     int64 // the lowest such RV
	issues []stateIssue
}

// stateRVText renders a state RV for messages.
func stateRVText(a, b int64) string {
	if a == b {
		return fmt.Sprint(a)
	}
	if b == math.MaxInt64 {
		return fmt.Sprintf("%d or later", a)
	}
	return fmt.Sprintf("%d..%d", a, b)
}

// verifyState judges items as the state at some RV in [a, b] under sel.
// With complete false only the items are judged (a page of a list).
func (m *kubeModel) verifyState(items []history.Object, sel *labelSelector, a, b int64, complete bool) stateCheck {
	allowed := ivs{{a, b}}
	var sc stateCheck
	seen := make(map[string]int, len(items))
	for i := range items {
		it := &items[i]
		o := m.objs[it.Name]
		if o == nil {
			continue
		}
		if j, dup := seen[it.Name]; dup {
			sc.issues = append(sc.issues, stateIssue{kind: issDuplicate, name: it.Name, item: i, prev: j, rv: objRV(it)})
			continue
		}
		seen[it.Name] = i
		rv := objRV(it)
		if rv == 0 {
			continue // kube/rv-format's business
		}
		if sel != nil && !sel.matches(it.Labels) {
			sc.issues = append(sc.issues, stateIssue{kind: issSelector, name: it.Name, item: i, rv: rv})
		}
		c := o.exactly(rv)
		switch {
		case c == nil:
			sc.issues = append(sc.issues, stateIssue{kind: issUnexplained, name: it.Name, item: i, rv: rv})
			continue
		case c.del:
			sc.issues = append(sc.issues, stateIssue{kind: issDeletedRV, name: it.Name, item: i, rv: rv, other: c})
			continue
		case c.value != it.Value:
			sc.issues = append(sc.issues, stateIssue{kind: issWrongValue, name: it.Name, item: i, rv: rv, other: c})
			continue
		}
		up, nx, sp := o.upper(c)
		next := intersectIvs(allowed, ivs{{rv, up}})
		if len(next) > 0 {
			allowed = next
			continue
		}
		iss := stateIssue{kind: issSplit, name: it.Name, item: i, rv: rv, other: nx, span: sp}
		switch {
		case rv > allowed[len(allowed)-1][1]:
			iss.kind = issNewer
		case up < allowed[0][0]:
			iss.kind = issStale
		}
		sc.issues = append(sc.issues, iss)
	}
	if complete {
		for _, name := range m.names {
			if _, in := seen[name]; in {
				continue
			}
			o := m.objs[name]
			lo, hi := allowed[0][0], allowed[len(allowed)-1][1]
			next := intersectIvs(allowed, o.absentSet(sel, lo, hi))
			if len(next) > 0 {
				allowed = next
				continue
			}
			st := o.at(hi)
			sc.issues = append(sc.issues, stateIssue{kind: issMissing, name: name, item: -1, rv: st.rv, other: st})
		}
	}
	sc.ok = len(sc.issues) == 0
	sc.lo, sc.S = allowed[0][0], allowed[len(allowed)-1][1]
	return sc
}

// absentSet returns the RVs in [lo, hi] at which the object is absent, or
// does not match sel, or may be either (a change the history cannot place
// may lie before).
func (o *kobj) absentSet(sel *labelSelector, lo, hi int64) ivs {
	var out ivs
	add := func(s, e int64) {
		if n := len(out); n > 0 && out[n-1][1] >= s-1 {
			out[n-1][1] = max(out[n-1][1], e)
			return
		}
		out = append(out, [2]int64{s, e})
	}
	c := o.at(lo)
	start := lo
	i := sort.Search(len(o.changes), func(i int) bool { return o.changes[i].rv > lo })
	for {
		end := hi
		if i < len(o.changes) && o.changes[i].rv <= hi {
			end = o.changes[i].rv - 1
		}
		from := int64(0)
		if c != nil {
			from = c.rv
		}
		if !c.exists() || !sel.matches(c.labels) || !o.settled(from, end, sel != nil) {
			add(start, end)
		}
		if end == hi {
			return out
		}
		c, start = o.changes[i], o.changes[i].rv
		i++
	}
}

// issueText says what an issue means, for a message that already named
// the set ("list operation 12 at RV 500: ..."), and the records proving it.
func (m *kubeModel) issueText(iss stateIssue, items []history.Object, stateRV string) (string, []kref) {
	var it *history.Object
	if iss.item >= 0 && iss.item < len(items) {
		it = &items[iss.item]
	}
	switch iss.kind {
	case issUnexplained:
		why, refs := m.explainValue(it.Name, iss.rv, it.Value)
		return fmt.Sprintf("%s at RV %d with value %q is no change the history knows: %s", it.Name, iss.rv, it.Value, why), refs
	case issDeletedRV:
		return fmt.Sprintf("%s is shown at RV %d, the RV of its deletion by %s", it.Name, iss.rv, m.writeText(iss.other.w)),
			[]kref{iss.other.ref()}
	case issWrongValue:
		return fmt.Sprintf("%s at RV %d has value %q, but %s wrote %q at that RV", it.Name, iss.rv, it.Value,
			m.writeText(iss.other.w), iss.other.value), []kref{iss.other.ref()}
	case issSelector:
		return fmt.Sprintf("%s (labels %v) does not match the selector", it.Name, it.Labels), nil
	case issDuplicate:
		return fmt.Sprintf("%s appears twice (items %d and %d)", it.Name, iss.prev, iss.item), nil
	case issNewer:
		return fmt.Sprintf("%s at RV %d is newer than the state at RV %s", it.Name, iss.rv, stateRV), nil
	case issStale:
		if iss.span != nil {
			return fmt.Sprintf("%s is shown at RV %d (value %q), but %s, acknowledged, deleted it at an RV between %d and %d, "+
					"at or below RV %s", it.Name, iss.rv, it.Value, m.writeText(iss.span.w), iss.span.lo+1, iss.span.hi-1, stateRV),
				[]kref{{op: iss.span.w.op.ID, idx: -1}}
		}
		return fmt.Sprintf("%s is shown at RV %d (value %q), but %s changed it at RV %d, at or below RV %s", it.Name, iss.rv,
			it.Value, m.changeText(iss.other), iss.other.rv, stateRV), []kref{iss.other.ref()}
	case issSplit:
		return fmt.Sprintf("%s at RV %d cannot be in one state with the other items (its next change is %s)", it.Name, iss.rv,
			m.changeOrNone(iss.other)), nil
	case issMissing:
		return fmt.Sprintf("%s is missing, though it exists at RV %s: %s made it at RV %d (value %q) and nothing the history "+
			"shows removed it", iss.name, stateRV, m.writeText(iss.other.w), iss.other.rv, iss.other.value), []kref{iss.other.ref()}
	}
	return "unknown issue", nil
}

func (m *kubeModel) changeOrNone(c *kchange) string {
	if c == nil {
		return "not known"
	}
	return fmt.Sprintf("%s at RV %d", m.changeText(c), c.rv)
}

// writeText names a write: "update operation 12 (client 3)".
func (m *kubeModel) writeText(w *kwrite) string {
	if w == nil {
		return "no write"
	}
	return fmt.Sprintf("%s operation %d (client %d)", w.verb, w.op.ID, w.op.Client)
}

// changeText names a change by its write.
func (m *kubeModel) changeText(c *kchange) string {
	if c == nil {
		return "no change"
	}
	return m.writeText(c.w)
}

// explainValue says why an object state (name, rv, value) is no change the
// history knows.
func (m *kubeModel) explainValue(name string, rv int64, value string) (string, []kref) {
	w := m.byValue[value]
	switch {
	case w == nil:
		if c := m.changeAt[rv]; c != nil {
			return fmt.Sprintf("nobody wrote that value; RV %d is %s of %s", rv, m.changeText(c), c.obj.name), []kref{c.ref()}
		}
		return "nobody wrote that value", nil
	case w.name != name:
		return fmt.Sprintf("that value was written to %s by %s", w.name, m.writeText(w)), []kref{{op: w.op.ID, idx: -1}}
	case w.outcome == wRefused:
		return fmt.Sprintf("%s that wrote it was refused (%s)", m.writeText(w), statusText(w.op.Status)), []kref{{op: w.op.ID, idx: -1}}
	case w.rv != 0 && w.rv != rv:
		return fmt.Sprintf("%s committed that value at RV %d", m.writeText(w), w.rv), []kref{{op: w.op.ID, idx: -1}}
	}
	if c := m.changeAt[rv]; c != nil {
		return fmt.Sprintf("RV %d is %s of %s", rv, m.changeText(c), c.obj.name), []kref{c.ref()}
	}
	return "the history cannot place it", nil
}
