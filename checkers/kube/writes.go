package kube

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/checkers/kube/model"
	"github.com/vigil-suite/vigil/history"
)

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
	return checkOptimisticConcurrency(model.Build(h), cfg)
}

func checkOptimisticConcurrency(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	type key struct {
		name string
		p    int64
	}
	groups := map[key][]*model.Write{}
	judged := 0
	for _, w := range m.Writes {
		o := w.Op
		p, uid := model.PreconditionRV(o), model.PreconditionUID(o)
		if w.Verb == history.KubeCreate || p == 0 && uid == "" || w.Context {
			continue
		}
		judged++
		if p > 0 {
			groups[key{w.Name, p}] = append(groups[key{w.Name, p}], w)
		}
		ob := m.Objs[w.Name]
		base := check.Violation{Guarantee: ErrOptimisticConcurrency, Client: o.Client, Key: w.Name, Revision: p,
			Operations: []int64{o.ID}}
		if w.Outcome == model.WriteAcked && p > 0 && w.Rv > 0 {
			if nx := ob.Next(p); nx != nil && nx.Rv < w.Rv && nx.Write != w {
				v := base
				v.Message = fmt.Sprintf("%s was accepted with precondition RV %d and committed at RV %d, but %s had changed "+
					"%s at RV %d in between: it overwrote a write it never saw", model.OpText(o), p, w.Rv, m.ChangeText(nx), w.Name, nx.Rv)
				v.Want, v.Got = "409 Conflict", fmt.Sprintf("accepted at RV %d", w.Rv)
				m.Evidence(&v, nx.Ref())
				col.Add(v)
				continue
			}
		}
		if w.Outcome == model.WriteAcked && uid != "" {
			if have, proof := acceptedUID(m, w); have != "" && have != uid {
				v := base
				v.Message = fmt.Sprintf("%s was accepted with uid precondition %s, but the object it changed has uid %s",
					model.OpText(o), uid, have)
				v.Want, v.Got = "409 Conflict", "accepted"
				if proof != nil && proof != w {
					v.Operations = append(v.Operations, proof.Op.ID)
				}
				col.Add(v)
				continue
			}
		}
		if p == 0 || w.Outcome == model.WriteUnknown || o.NeverSent() {
			continue
		}
		// A write of the object acknowledged before this one was called,
		// above P, proves P stale.
		var stale *model.Write
		for _, c := range ob.Changes {
			if c.Rv > p && c.Write.Outcome == model.WriteAcked && c.Write.Op.Return < o.Call && c.Write != w {
				stale = c.Write
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
			"before it was called", model.OpText(o), p, code, m.WriteText(stale), stale.Rv)
		v.Want, v.Got = "409 Conflict", fmt.Sprint(code)
		v.Operations = append([]int64{stale.Op.ID}, v.Operations...)
		col.Add(v)
	}
	races, won := 0, 0
	for k, ws := range groups {
		var succ []*model.Write
		for _, w := range ws {
			if w.Outcome == model.WriteAcked {
				succ = append(succ, w)
			}
		}
		if len(succ) > 1 {
			v := check.Violation{Guarantee: ErrOptimisticConcurrency, Client: succ[1].Op.Client, Key: k.name, Revision: k.p,
				Message: fmt.Sprintf("%s and %s both succeeded with precondition RV %d on %s: at most one may",
					model.OpText(succ[0].Op), model.OpText(succ[1].Op), k.p, k.name),
				Want: "at most one success", Got: fmt.Sprint(len(succ))}
			for _, w := range succ {
				v.Operations = append(v.Operations, w.Op.ID)
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
func concurrentUpdates(ws []*model.Write) [][]*model.Write {
	var ups []*model.Write
	for _, w := range ws {
		if w.Verb == history.KubeUpdate {
			ups = append(ups, w)
		}
	}
	sort.Slice(ups, func(i, j int) bool { return ups[i].Op.Call < ups[j].Op.Call })
	var out [][]*model.Write
	for i := 0; i < len(ups); {
		j, firstReturn := i+1, ups[i].Op.Return
		for j < len(ups) && ups[j].Op.Call < firstReturn {
			firstReturn = min(firstReturn, ups[j].Op.Return)
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
	lo, hiW, hiL model.TimeIndex
}

// window returns the RVs an operation's effect may lie at, and the
// operations that bound them.
func (x *linIndex) window(o *history.KubeOperation) (lo, hi, loOp, hiOp int64) {
	lo, loOp = x.lo.MaxBefore(o.Call)
	hw, hwOp := x.hiW.MinAfter(o.Return)
	hl, hlOp := x.hiL.MinAfter(o.Return)
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
func acceptedUID(m *model.Model, w *model.Write) (string, *model.Write) {
	if w.Verb == history.KubeUpdate || w.Verb == history.KubePatch {
		if r := w.Op.Response; r != nil && r.Object != nil {
			return r.Object.UID, w
		}
		return "", nil
	}
	if w.Rv == 0 {
		return "", nil
	}
	ob := m.Objs[w.Name]
	for c := ob.At(w.Rv - 1); c != nil && !c.Del; c = ob.At(c.Rv - 1) {
		if r := c.Write.Op.Response; c.Write.Outcome == model.WriteAcked && r != nil && r.Object != nil && r.Object.UID != "" {
			return r.Object.UID, c.Write
		}
	}
	return "", nil
}

// raceWithoutWinner reports a race none of whose updates won although
// nothing else wrote the object in between: all were answered, all 409,
// the object was at RV p, and its next change the history knows (or may
// not know) comes from a write called after the race ended.
func raceWithoutWinner(m *model.Model, race []*model.Write, name string, p int64) (check.Violation, bool) {
	var end time.Duration
	for _, w := range race {
		if w.Outcome == model.WriteAcked {
			return check.Violation{}, false
		}
		if w.Outcome != model.WriteRefused || w.Op.Status == nil || w.Op.Status.Code != 409 {
			return check.Violation{}, false
		}
		end = max(end, w.Op.Return)
	}
	ob := m.Objs[name]
	c := ob.Exactly(p)
	if !c.Exists() {
		return check.Violation{}, false
	}
	if nx := ob.Next(p); nx != nil && nx.Write.Op.Call < end {
		return check.Violation{}, false
	}
	for _, spans := range [][]model.Span{ob.DelSpans, ob.PutSpans} {
		for _, s := range spans {
			if s.Write.Op.Call < end && s.Hi-1 > p {
				return check.Violation{}, false
			}
		}
	}
	v := check.Violation{Guarantee: ErrOptimisticConcurrency, Client: race[0].Op.Client, Key: name, Revision: p,
		Message: fmt.Sprintf("none of %d concurrent updates of %s from RV %d succeeded (all 409), though %s was at RV %d "+
			"(%s) and no other write of it came in between", len(race), name, p, name, p, m.ChangeText(c)),
		Want: "exactly one success", Got: "none"}
	for _, w := range race {
		v.Operations = append(v.Operations, w.Op.ID)
	}
	m.Evidence(&v, c.Ref())
	return v, true
}

// linIndex builds the index. A consistent list that is itself wrong
// (stale: below a write acknowledged before it was called) bounds nothing:
// used as a bound it would put the blame on every operation that came
// before it, which did nothing wrong. Its own violation is reported where
// it is judged.
func buildLinIndex(m *model.Model) linIndex {
	lists := consistentListOps(m)
	writesOnly := linIndex{lo: m.Seen, hiW: m.Hi, hiL: model.NewTimeIndex(nil, false)}
	var hiL []model.TimeEntry
	for _, o := range lists {
		n, ok := facts.ParseRV(o.Response.ListRV)
		if !ok {
			continue
		}
		lo, hi, _, _ := writesOnly.window(o)
		if _, bad := readFits(m, o, lo, hi); bad {
			continue
		}
		hiL = append(hiL, model.TimeEntry{T: o.Call, RV: n, Op: o.ID})
	}
	return linIndex{lo: m.Seen, hiW: m.Hi, hiL: model.NewTimeIndex(hiL, false)}
}

// consistentLists are the answered lists with RV unset.
func consistentListOps(m *model.Model) []*history.KubeOperation {
	var out []*history.KubeOperation
	for i := range m.History.KubeOps {
		o := &m.History.KubeOps[i]
		if o.Response == nil || o.Request.Verb != history.KubeList {
			continue
		}
		if k, _ := model.ReadKindOf(o.Request); k == model.ReadConsistent {
			out = append(out, o)
		}
	}
	return out
}
