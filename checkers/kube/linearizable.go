package kube

import (
	"fmt"
	"math"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
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
	return checkLinearizable(buildKubeModel(h), cfg)
}

func checkLinearizable(m *kubeModel, cfg check.Config) check.Result {
	h := m.h
	col := check.NewCollector(cfg)
	x := m.linIndex()
	writes, reads := 0, 0
	for _, w := range m.writes {
		if w.outcome != wAcked || w.rv == 0 {
			continue
		}
		writes++
		if prev, id := m.lo.maxBefore(w.op.Call); prev >= w.rv && id != w.op.ID {
			col.Add(check.Violation{Guarantee: ErrLinearizable,
				Message: fmt.Sprintf("%s was called after operation %d had been acknowledged at RV %d, yet it took effect at RV %d",
					opText(w.op), id, prev, w.rv),
				Client: w.op.Client, Key: w.name, Revision: w.rv, Want: fmt.Sprintf("> %d", prev), Got: fmt.Sprint(w.rv),
				Operations: []int64{id, w.op.ID}})
		}
	}
	for _, c := range m.changes {
		if v, bad := m.writeFits(c); bad {
			col.Add(v)
		}
	}
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		verb := o.Request.Verb
		switch {
		case verb == history.KubeGet || verb == history.KubeList:
			if k, _ := readKindOf(o.Request); k != rkConsistent {
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
		v, bad := m.readFits(o, lo, hi)
		if !bad {
			continue
		}
		v.Guarantee = ErrLinearizable
		v.Message = fmt.Sprintf("%s %s; it must reflect the state at an RV from %d (%s) to %s (%s)", opText(o), v.Message,
			lo, boundText(loOp, "acknowledged before it was called"), hiText(hi), boundText(hiOp, "called after it returned"))
		for _, id := range []int64{loOp, hiOp} {
			if id != 0 && !facts.ContainsID(v.Operations, id) {
				v.Operations = append(v.Operations, id)
			}
		}
		col.Add(v)
	}
	figures := map[string]float64{"writes": float64(writes), "reads": float64(reads), "known_changes": float64(len(m.changes)),
		"foreign_objects_seen": float64(m.foreign), "values_reused": float64(m.valueReuse)}
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
