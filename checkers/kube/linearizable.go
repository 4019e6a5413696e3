package kube

import (
	"fmt"
	"math"
	"slices"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/checkers/kube/model"
	"github.com/vigil-suite/vigil/history"
)

// CheckLinearizable is kube/linearizable. The RV of a committed write
// is its place in the one order, so no search is needed:
//
//   - writes: one that was called after another had returned has the
//     higher RV; each committed write fits the state just before it (a
//     create finds no object, an update or delete finds one, an update
//     with precondition P finds it at RV P);
//   - consistent reads (get and list with RV unset) and writes refused
//     with 404 or 409 (reads of the state that made them fail): each
//     reflects the state at some RV between every write or consistent
//     read that returned before it was called and every write (strictly)
//     or consistent list called after it returned; a list's RV must lie
//     there and its items be the state at it.
//
// Writes of unknown outcome are placed where a read or an event shows
// their unique value, else allowed both to have happened (anywhere after
// they were called) and not; an acknowledged delete no watch placed lies
// somewhere between its bounds. Polynomial: each operation is judged
// against the object's timeline with a few binary searches.
func CheckLinearizable(h *history.History, cfg check.Config) check.Result {
	return checkLinearizable(model.Build(h), cfg)
}

func checkLinearizable(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	x := buildLinIndex(m)
	writes, reads := 0, 0
	for _, w := range m.Writes {
		if w.Outcome != model.WriteAcked || w.Rv == 0 || w.Context {
			continue
		}
		writes++
		if prev, id := m.Lo.MaxBefore(w.Op.Call); prev >= w.Rv && id != w.Op.ID {
			col.Add(check.Violation{Guarantee: ErrLinearizable,
				Message: fmt.Sprintf("%s was called after operation %d had been acknowledged at RV %d, yet it took effect at RV %d",
					model.OpText(w.Op), id, prev, w.Rv),
				Client: w.Op.Client, Key: w.Name, Revision: w.Rv, Want: fmt.Sprintf("> %d", prev), Got: fmt.Sprint(w.Rv),
				Operations: []int64{id, w.Op.ID}})
		}
	}
	for _, c := range m.Changes {
		if v, bad := writeFits(m, c); bad {
			col.Add(v)
		}
	}
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		verb := o.Request.Verb
		switch {
		case verb == history.KubeGet || verb == history.KubeList:
			if k, _ := model.ReadKindOf(o.Request); k != model.ReadConsistent {
				continue
			}
			if o.Response == nil && !(verb == history.KubeGet && o.Status != nil && o.Status.Code == 404) {
				continue
			}
		case verb.IsWrite():
			if o.Status == nil || o.Status.Code != 404 && o.Status.Code != 409 {
				continue
			}
		default:
			continue
		}
		reads++
		lo, hi, loOp, hiOp := x.window(o)
		v, bad := readFits(m, o, lo, hi)
		if !bad {
			continue
		}
		v.Guarantee = ErrLinearizable
		v.Message = fmt.Sprintf("%s %s; it must reflect the state at an RV from %d (%s) to %s (%s)", model.OpText(o), v.Message,
			lo, boundText(loOp, "acknowledged before it was called"), hiText(hi), boundText(hiOp, "called after it returned"))
		for _, id := range []int64{loOp, hiOp} {
			if id != 0 && !slices.Contains(v.Operations, id) {
				v.Operations = append(v.Operations, id)
			}
		}
		col.Add(v)
	}
	figures := map[string]float64{"writes": float64(writes), "reads": float64(reads), "known_changes": float64(len(m.Changes)),
		"foreign_objects_seen": float64(m.Foreign), "values_reused": float64(m.ValueReuse)}
	if writes+reads == 0 {
		return check.Skip(NameLinearizable, kubeSkipReason(h, "no acknowledged write and no consistent read"), figures)
	}
	return col.Result(NameLinearizable, figures)
}

func boundText(op int64, what string) string {
	if op == 0 {
		return "nothing bounds it"
	}
	return fmt.Sprintf("operation %d, %s", op, what)
}

func hiText(hi int64) string {
	if hi == math.MaxInt64 {
		return "the end"
	}
	return fmt.Sprint(hi)
}

// writeFits judges a committed change against the object's state just
// before it, where the history settles that state.
func writeFits(m *model.Model, c *model.Change) (check.Violation, bool) {
	o := c.Obj
	prev := o.At(c.Rv - 1)
	from := int64(0)
	if prev != nil {
		from = prev.Rv
	}
	w := c.Write
	if w.Context || o.Unknown(from) {
		// A segment's context is judged where it was recorded; a change
		// whose state before lies below the object's Floor, not at all.
		return check.Violation{}, false
	}
	v := check.Violation{Guarantee: ErrLinearizable, Client: w.Op.Client, Key: o.Name, Revision: c.Rv,
		Operations: []int64{w.Op.ID}}
	if prev != nil {
		m.Evidence(&v, prev.Ref())
	}
	if w.How != (model.Ref{}) {
		m.Evidence(&v, w.How)
	}
	switch {
	case w.Verb == history.KubeCreate && prev.Exists() && o.Settled(from, c.Rv-1, false):
		v.Message = fmt.Sprintf("%s created %s at RV %d, but it existed then: %s made it at RV %d and nothing removed it",
			model.OpText(w.Op), o.Name, c.Rv, m.ChangeText(prev), prev.Rv)
		v.Want, v.Got = "409 AlreadyExists", "created"
		return v, true
	case w.Verb != history.KubeCreate && !model.IsApply(w.Op) && !prev.Exists() && model.SpanIn(o.PutSpans, from, c.Rv-1) == nil:
		what := "it was never created before"
		if prev != nil {
			what = fmt.Sprintf("%s deleted it at RV %d", m.ChangeText(prev), prev.Rv)
		}
		v.Message = fmt.Sprintf("%s changed %s at RV %d, but it did not exist then: %s", model.OpText(w.Op), o.Name, c.Rv, what)
		v.Want, v.Got = "404 NotFound", "accepted"
		return v, true
	case w.Verb != history.KubeCreate && prev.Exists() && o.Settled(from, c.Rv-1, true):
		if p := model.PreconditionRV(w.Op); p > 0 && p != prev.Rv {
			v.Message = fmt.Sprintf("%s with precondition RV %d took effect at RV %d, but %s was then at RV %d (%s)",
				model.OpText(w.Op), p, c.Rv, o.Name, prev.Rv, m.ChangeText(prev))
			v.Want, v.Got = "409 Conflict", "accepted"
			return v, true
		}
	}
	return v, false
}

// readFits judges a consistent read, or a write refused with 404 or 409,
// against the RVs [lo, hi] its state may come from. The returned
// violation's message lacks its subject.
func readFits(m *model.Model, o *history.KubeOperation, lo, hi int64) (check.Violation, bool) {
	if o.Request.Verb == history.KubeList {
		P, ok := facts.ParseRV(o.Response.ListRV)
		if !ok {
			return check.Violation{}, false
		}
		v := check.Violation{Client: o.Client, Revision: P, Operations: []int64{o.ID}}
		if P < lo || P > hi {
			v.Message = fmt.Sprintf("answered at RV %d", P)
			v.Want, v.Got = fmt.Sprintf("%d..%s", lo, hiText(hi)), fmt.Sprint(P)
			return v, true
		}
		sel, err := model.ParseSelectors(o.Request.LabelSelector, o.Request.FieldSelector)
		if err != nil {
			return v, false
		}
		items := o.Response.Items
		sc := listState(m, o, sel, P)
		if len(sc.Issues) == 0 {
			return v, false
		}
		text, refs := m.IssueText(sc.Issues[0], items, fmt.Sprint(P))
		v.Key = sc.Issues[0].Name
		v.Message = fmt.Sprintf("answered at RV %d, but its items are not the state there: %s", P, text)
		if n := len(sc.Issues); n > 1 {
			v.Message += fmt.Sprintf(" (and %d more)", n-1)
		}
		m.Evidence(&v, refs...)
		return v, true
	}
	if o.Request.Verb == history.KubeGet {
		return getSeesBefore(m, o, lo, hi)
	}
	// A refused write: a read of the state that made it fail.
	name := model.OpName(o)
	ob := m.Objs[name]
	if ob == nil {
		return check.Violation{}, false
	}
	v := check.Violation{Client: o.Client, Key: name, Operations: []int64{o.ID}}
	code := o.Status.Code
	switch {
	case code == 404:
		if len(ob.AbsentSet(nil, lo, hi)) > 0 {
			return v, false
		}
		st := ob.At(lo)
		v.Revision = st.Rv
		v.Message = fmt.Sprintf("was answered 404, but %s existed throughout: %s made it at RV %d", name, m.ChangeText(st), st.Rv)
		v.Want, v.Got = "success or 409", "404"
		m.Evidence(&v, st.Ref())
		return v, true
	case o.Request.Verb == history.KubeCreate: // 409 AlreadyExists
		if ob.MayExistIn(lo, hi, 0) {
			return v, false
		}
		v.Message = fmt.Sprintf("was answered 409, but %s did not exist at any RV it may have seen", name)
		v.Want, v.Got = "created", "409"
		return v, true
	default: // 409 Conflict on a precondition
		p := model.PreconditionRV(o)
		if p == 0 || model.PreconditionUID(o) != "" || ob.MayExistIn(lo, hi, p) {
			return v, false
		}
		c := ob.Exactly(p)
		if !c.Exists() {
			return v, false
		}
		v.Revision = p
		v.Message = fmt.Sprintf("was answered 409 Conflict on precondition RV %d, but %s was at RV %d (%s) throughout, "+
			"or absent", p, name, p, m.ChangeText(c))
		v.Want, v.Got = "accepted", "409"
		m.Evidence(&v, c.Ref())
		return v, true
	}
}
