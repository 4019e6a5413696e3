package kube

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// preconditionRV is the RV precondition of an update (the body's
// resourceVersion) or a delete; 0 if none.
func preconditionRV(o *history.KubeOperation) int64 {
	var s string
	switch o.Request.Verb {
	case history.KubeUpdate:
		if o.Request.Object != nil {
			s = o.Request.Object.ResourceVersion
		}
	case history.KubeDelete:
		s = o.Request.PreconditionRV
	}
	n, _ := facts.ParseRV(s)
	return n
}

// preconditionUID is the uid precondition of an update or delete.
func preconditionUID(o *history.KubeOperation) string {
	if o.Request.Verb == history.KubeUpdate && o.Request.Object != nil {
		return o.Request.Object.UID
	}
	return o.Request.PreconditionUID
}

// CheckOptimisticConcurrency is kube/optimistic-concurrency:
//   - an update accepted with precondition RV P committed on top of the
//     state at P: no change of the object the history knows lies between
//     P and the update's RV (else it overwrote a write it never saw);
//   - an update or delete whose precondition the history proves stale when
//     it was called (a write of the object acknowledged earlier at an RV
//     above P, or a uid other than the object's) is not accepted, and is
//     answered 409 (or 404 if the object is gone);
//   - of the updates and deletes with one precondition RV, at most one
//     succeeds;
//   - of updates racing from one RV (all called before any returned), all
//     answered, one succeeds unless another write of the object may have
//     come between.
func CheckOptimisticConcurrency(h *history.History, cfg check.Config) check.Result {
	return checkOptimisticConcurrency(buildKubeModel(h), cfg)
}

func checkOptimisticConcurrency(m *kubeModel, cfg check.Config) check.Result {
	h := m.h
	col := check.NewCollector(cfg)
	type key struct {
		name string
		p    int64
	}
	groups := map[key][]*kwrite{}
	judged := 0
	for _, w := range m.writes {
		o := w.op
		p, uid := preconditionRV(o), preconditionUID(o)
		if w.verb == history.KubeCreate || p == 0 && uid == "" {
			continue
		}
		judged++
		if p > 0 {
			groups[key{w.name, p}] = append(groups[key{w.name, p}], w)
		}
		ob := m.objs[w.name]
		base := check.Violation{Guarantee: ErrOptimisticConcurrency, Client: o.Client, Key: w.name, Revision: p,
			Operations: []int64{o.ID}}
		if w.outcome == wAcked && p > 0 && w.rv > 0 {
			if nx := ob.next(p); nx != nil && nx.rv < w.rv && nx.w != w {
				v := base
				v.Message = fmt.Sprintf("%s was accepted with precondition RV %d and committed at RV %d, but %s had changed "+
					"%s at RV %d in between: it overwrote a write it never saw", opText(o), p, w.rv, m.changeText(nx), w.name, nx.rv)
				v.Want, v.Got = "409 Conflict", fmt.Sprintf("accepted at RV %d", w.rv)
				m.evidence(&v, nx.ref())
				col.Add(v)
				continue
			}
		}
		if w.outcome == wAcked && uid != "" {
			if have, proof := acceptedUID(m, w); have != "" && have != uid {
				v := base
				v.Message = fmt.Sprintf("%s was accepted with uid precondition %s, but the object it changed has uid %s",
					opText(o), uid, have)
				v.Want, v.Got = "409 Conflict", "accepted"
				if proof != nil && proof != w {
					v.Operations = append(v.Operations, proof.op.ID)
				}
				col.Add(v)
				continue
			}
		}
		if p == 0 || w.outcome == wUnknown {
			continue
		}
		// A write of the object acknowledged before this one was called,
		// above P, proves P stale.
		var stale *kwrite
		for _, c := range ob.changes {
			if c.rv > p && c.w.outcome == wAcked && c.w.op.Return < o.Call && c.w != w {
				stale = c.w
				break
			}
		}
		if stale == nil {
			continue
		}
		code := 200
		if o.Status != nil {
			code = o.Status.Code
		}
		if code == 409 || code == 404 || code == 429 {
			continue
		}
		v := base
		v.Message = fmt.Sprintf("%s with precondition RV %d was answered %d, though %s had been acknowledged at RV %d "+
			"before it was called", opText(o), p, code, m.writeText(stale), stale.rv)
		v.Want, v.Got = "409 Conflict", fmt.Sprint(code)
		v.Operations = append([]int64{stale.op.ID}, v.Operations...)
		col.Add(v)
	}
	races, won := 0, 0
	for k, ws := range groups {
		var succ []*kwrite
		for _, w := range ws {
			if w.outcome == wAcked {
				succ = append(succ, w)
			}
		}
		if len(succ) > 1 {
			v := check.Violation{Guarantee: ErrOptimisticConcurrency, Client: succ[1].op.Client, Key: k.name, Revision: k.p,
				Message: fmt.Sprintf("%s and %s both succeeded with precondition RV %d on %s: at most one may",
					opText(succ[0].op), opText(succ[1].op), k.p, k.name),
				Want: "at most one success", Got: fmt.Sprint(len(succ))}
			for _, w := range succ {
				v.Operations = append(v.Operations, w.op.ID)
			}
			col.Add(v)
		}
		for _, race := range concurrentUpdates(ws) {
			races++
			if v, bad := raceWithoutWinner(m, race, k.name, k.p); bad {
				col.Add(v)
			} else {
				won++
			}
		}
	}
	figures := map[string]float64{"writes_with_preconditions": float64(judged), "races": float64(races),
		"races_judged_fine": float64(won)}
	if judged == 0 {
		return check.Skip(NameOptimisticConcurrency, kubeSkipReason(h, "no update or delete had a precondition"), figures)
	}
	return col.Result(NameOptimisticConcurrency, figures)
}

// concurrentUpdates splits the updates of one (object, RV) into races: two
// or more updates all called before the first of them returned.
func concurrentUpdates(ws []*kwrite) [][]*kwrite {
	var ups []*kwrite
	for _, w := range ws {
		if w.verb == history.KubeUpdate {
			ups = append(ups, w)
		}
	}
	sort.Slice(ups, func(i, j int) bool { return ups[i].op.Call < ups[j].op.Call })
	var out [][]*kwrite
	for i := 0; i < len(ups); {
		j, firstReturn := i+1, ups[i].op.Return
		for j < len(ups) && ups[j].op.Call < firstReturn {
			firstReturn = min(firstReturn, ups[j].op.Return)
			j++
		}
		if j-i >= 2 {
			out = append(out, ups[i:j])
		}
		i = j
	}
	return out
}

// linIndex bounds the RV a consistent read or a write could have taken
// effect at: lo, the highest RV revealed by an operation that returned
// before it was called (acknowledged writes, consistent lists' RVs,
// consistent gets' objects); hiW, the lowest RV of a write called after
// it returned (strictly above); hiL, the lowest RV of a consistent list
// called after it returned (at or above).
type linIndex struct {
	lo, hiW, hiL timeIndex
}

// window returns the RVs an operation's effect may lie at, and the
// operations that bound them.
func (x *linIndex) window(o *history.KubeOperation) (lo, hi, loOp, hiOp int64) {
	lo, loOp = x.lo.maxBefore(o.Call)
	hw, hwOp := x.hiW.minAfter(o.Return)
	hl, hlOp := x.hiL.minAfter(o.Return)
	hi, hiOp = int64(math.MaxInt64), 0
	if hw != math.MaxInt64 {
		hi, hiOp = hw-1, hwOp
	}
	if hl < hi {
		hi, hiOp = hl, hlOp
	}
	return lo, hi, loOp, hiOp
}

// acceptedUID is the uid of the object an accepted update or delete
// changed, and the write whose answer shows it: the update's own answer,
// or, for a placed delete, the last acknowledged create or update of the
// object before the deletion (the same incarnation).
func acceptedUID(m *kubeModel, w *kwrite) (string, *kwrite) {
	if w.verb == history.KubeUpdate {
		if r := w.op.Response; r != nil && r.Object != nil {
			return r.Object.UID, w
		}
		return "", nil
	}
	if w.rv == 0 {
		return "", nil
	}
	ob := m.objs[w.name]
	for c := ob.at(w.rv - 1); c != nil && !c.del; c = ob.at(c.rv - 1) {
		if r := c.w.op.Response; c.w.outcome == wAcked && r != nil && r.Object != nil && r.Object.UID != "" {
			return r.Object.UID, c.w
		}
	}
	return "", nil
}

// raceWithoutWinner reports a race none of whose updates won although
// nothing else wrote the object in between: all were answered, all 409,
// the object was at RV p, and its next change the history knows (or may
// not know) comes from a write called after the race ended.
func raceWithoutWinner(m *kubeModel, race []*kwrite, name string, p int64) (check.Violation, bool) {
	var end time.Duration
	for _, w := range race {
		if w.outcome == wAcked {
			return check.Violation{}, false
		}
		if w.outcome != wRefused || w.op.Status.Code != 409 {
			return check.Violation{}, false
		}
		end = max(end, w.op.Return)
	}
	ob := m.objs[name]
	c := ob.exactly(p)
	if !c.exists() {
		return check.Violation{}, false
	}
	if nx := ob.next(p); nx != nil && nx.w.op.Call < end {
		return check.Violation{}, false
	}
	for _, spans := range [][]kspan{ob.delSpans, ob.putSpans} {
		for _, s := range spans {
			if s.w.op.Call < end && s.hi-1 > p {
				return check.Violation{}, false
			}
		}
	}
	v := check.Violation{Guarantee: ErrOptimisticConcurrency, Client: race[0].op.Client, Key: name, Revision: p,
		Message: fmt.Sprintf("none of %d concurrent updates of %s from RV %d succeeded (all 409), though %s was at RV %d "+
			"(%s) and no other write of it came in between", len(race), name, p, name, p, m.changeText(c)),
		Want: "exactly one success", Got: "none"}
	for _, w := range race {
		v.Operations = append(v.Operations, w.op.ID)
	}
	m.evidence(&v, c.ref())
	return v, true
}

// linIndex builds the index. A consistent list that is itself wrong
// (stale: below a write acknowledged before it was called) bounds nothing:
// used as a bound it would put the blame on every operation that came
// before it, which did nothing wrong. Its own violation is reported where
// it is judged.
func buildLinIndex(m *kubeModel) linIndex {
	lists := consistentListOps(m)
	writesOnly := linIndex{lo: m.seen, hiW: m.hi, hiL: newTimeIndex(nil, false)}
	var hiL []tent
	for _, o := range lists {
		n, ok := facts.ParseRV(o.Response.ListRV)
		if !ok {
			continue
		}
		lo, hi, _, _ := writesOnly.window(o)
		if _, bad := readFits(m, o, lo, hi); bad {
			continue
		}
		hiL = append(hiL, tent{o.Call, n, o.ID})
	}
	return linIndex{lo: m.seen, hiW: m.hi, hiL: newTimeIndex(hiL, false)}
}

// consistentLists are the answered lists with RV unset.
func consistentListOps(m *kubeModel) []*history.KubeOperation {
	var out []*history.KubeOperation
	for i := range m.h.KubeOps {
		o := &m.h.KubeOps[i]
		if o.Response == nil || o.Request.Verb != history.KubeList {
			continue
		}
		if k, _ := readKindOf(o.Request); k == rkConsistent {
			out = append(out, o)
		}
	}
	return out
}
