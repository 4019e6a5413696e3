package kube

import (
	"fmt"
	"sort"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/checkers/kube/model"
	"github.com/vigil-suite/vigil/history"
)

// CheckRVFormat is kube/rv-format: every resourceVersion the server
// sent (objects of answers, list items, list RVs, watch events and
// bookmarks) is a positive decimal integer without leading zeros, the
// form resourceversion.CompareResourceVersion accepts (Kubernetes 1.35+,
// KEP-5504); and RVs increase within the resource: an update's new RV is
// above the RV of the state it replaced (its precondition).
func CheckRVFormat(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	judged := 0
	// what describes the record, called only for a violation (the
	// descriptions of a million good RVs would cost more than the check).
	checkRV := func(rv string, what func() string, v func() check.Violation) {
		judged++
		if facts.WellFormedRV(rv) {
			return
		}
		x := v()
		x.Guarantee = ErrRVFormat
		x.Message = fmt.Sprintf("%s carries resourceVersion %q, which is not a positive decimal integer without leading zeros",
			what(), rv)
		x.Want, x.Got = "a positive decimal integer", fmt.Sprintf("%q", rv)
		col.Add(x)
	}
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		r := o.Response
		if r == nil {
			continue
		}
		base := check.Violation{Client: o.Client, Operations: []int64{o.ID}}
		about := func(key string) func() check.Violation {
			return func() check.Violation { v := base; v.Key = key; return v }
		}
		// A dry run's answer was never stored: a create's has no
		// resourceVersion, an update's keeps the object's (dryrun.go in
		// k8s.io/apiserver/pkg/registry/generic/registry).
		dry := o.Request.DryRun
		if r.Object != nil && o.Request.Verb != history.KubeDelete && !(dry && r.Object.ResourceVersion == "") {
			checkRV(r.Object.ResourceVersion, func() string { return fmt.Sprintf("%s: the answer's %s", model.OpText(o), r.Object.Name) },
				about(r.Object.Name))
		}
		if o.Request.Verb == history.KubeList {
			checkRV(r.ListRV, func() string { return fmt.Sprintf("%s: the list", model.OpText(o)) }, about(""))
			for j := range r.Items {
				it := &r.Items[j]
				checkRV(it.ResourceVersion, func() string { return fmt.Sprintf("%s: item %s", model.OpText(o), it.Name) }, about(it.Name))
			}
		}
		// A purge answers the RV of the state it replaced (PurgedBy).
		if o.Request.Verb == history.KubeUpdate && !dry && !model.PurgedBy(o) && o.Request.Object != nil && r.Object != nil {
			p, okP := facts.ParseRV(o.Request.Object.ResourceVersion)
			n, okN := facts.ParseRV(r.Object.ResourceVersion)
			if okP && okN && n <= p {
				v := base
				v.Guarantee, v.Key, v.Revision = ErrRVFormat, r.Object.Name, n
				v.Message = fmt.Sprintf("%s replaced %s at RV %d and was acknowledged at RV %d, not above it",
					model.OpText(o), r.Object.Name, p, n)
				v.Want, v.Got = fmt.Sprintf("> %d", p), fmt.Sprint(n)
				col.Add(v)
			}
		}
	}
	for _, w := range h.KubeWatches {
		for i := range w.Events {
			e := &w.Events[i]
			if e.Object == nil || e.Type == history.KubeError {
				continue
			}
			checkRV(e.Object.ResourceVersion, func() string { return fmt.Sprintf("watch %d event %d (%s)", w.ID, i, e.Type) },
				func() check.Violation {
					return check.Violation{Watch: w.ID, Client: w.Client, Key: e.Object.Name,
						KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}}
				})
		}
	}
	figures := map[string]float64{"rvs": float64(judged)}
	if judged == 0 {
		return check.Skip(NameRVFormat, kubeSkipReason(h, "no answer or event carried a resourceVersion"), figures)
	}
	return col.Result(NameRVFormat, figures)
}

// CheckRVOrder is kube/rv-order: an acknowledged create or update
// that was called after another write had returned has a higher RV; no
// two acknowledged writes share an RV. Only the RVs the answers name are
// judged (a ConfigMap delete answers without one).
func CheckRVOrder(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	type wr struct {
		o  *history.KubeOperation
		rv int64
	}
	var ws []wr
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		// A delete answered with the object marked for deletion may be one
		// of an object already marked: it wrote nothing, and answers the
		// RV of the mark. A purge (the last finalizer removed) answers the
		// RV of the state it replaced; its own is the DELETED event's.
		if !o.Request.Verb.IsWrite() || o.Response == nil || o.Request.DryRun || model.PurgedBy(o) ||
			o.Request.Verb == history.KubeDelete && o.Response.Object != nil && o.Response.Object.DeletionTimestamp != "" {
			continue
		}
		if rv := model.ObjRV(o.Response.Object); rv > 0 {
			ws = append(ws, wr{o, rv})
		}
	}
	figures := map[string]float64{"writes": float64(len(ws))}
	if len(ws) < 2 {
		return check.Skip(NameRVOrder, kubeSkipReason(h, "fewer than two acknowledged writes name their RV"), figures)
	}
	var ents []model.TimeEntry
	byRV := map[int64]*history.KubeOperation{}
	for _, w := range ws {
		ents = append(ents, model.TimeEntry{T: w.o.Return, RV: w.rv, Op: w.o.ID})
		if first := byRV[w.rv]; first != nil {
			col.Add(check.Violation{Guarantee: ErrRVOrder,
				Message: fmt.Sprintf("%s and %s were both acknowledged at RV %d", model.OpText(first), model.OpText(w.o), w.rv),
				Client:  w.o.Client, Key: model.OpName(w.o), Revision: w.rv, Want: "distinct RVs", Got: fmt.Sprint(w.rv),
				Operations: []int64{first.ID, w.o.ID}})
			continue
		}
		byRV[w.rv] = w.o
	}
	lo := model.NewTimeIndex(ents, true)
	ops := map[int64]*history.KubeOperation{}
	for _, w := range ws {
		ops[w.o.ID] = w.o
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].o.Call < ws[j].o.Call })
	for _, w := range ws {
		prev, id := lo.MaxBefore(w.o.Call)
		if prev < w.rv || id == 0 {
			continue
		}
		a := ops[id]
		col.Add(check.Violation{Guarantee: ErrRVOrder,
			Message: fmt.Sprintf("%s was called after %s had returned with RV %d, yet it was acknowledged at RV %d",
				model.OpText(w.o), model.OpText(a), prev, w.rv),
			Client: w.o.Client, Key: model.OpName(w.o), Revision: w.rv,
			Want: fmt.Sprintf("> %d", prev), Got: fmt.Sprint(w.rv), Operations: []int64{id, w.o.ID}})
	}
	return col.Result(NameRVOrder, figures)
}
