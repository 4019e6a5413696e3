package kube

import (
	"fmt"
	"sort"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/checkers/kube/model"
	"github.com/vigil-suite/vigil/history"
)

// CheckWatchOrdered is kube/watch-ordered: after its initial state (a
// watch from RV unset or "0", or a streaming list, sends the state in key
// order, not RV order), every non-BOOKMARK event of a watch has a higher
// RV than the one before.
func CheckWatchOrdered(h *history.History, cfg check.Config) check.Result {
	return checkWatchOrdered(model.Build(h), cfg)
}

func checkWatchOrdered(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	events := 0
	for _, kw := range m.Watches {
		if kw.Mode == model.WatchUnjudged && (kw.Stream.Request.ResourceVersion == "" || kw.Stream.Request.ResourceVersion == "0") {
			continue
		}
		w, prev := kw.Stream, -1
		for _, i := range kw.Live {
			events++
			if prev >= 0 {
				p, c := kw.Rv(prev), kw.Rv(i)
				if c <= p {
					col.Add(check.Violation{Guarantee: ErrWatchOrdered,
						Message: fmt.Sprintf("watch %d (client %d) delivered %s after %s: the RV did not increase",
							w.ID, w.Client, model.EventText(w.Events[i]), model.EventText(w.Events[prev])),
						Watch: w.ID, Client: w.Client, Key: w.Events[i].Object.Name, Revision: c,
						Want: fmt.Sprintf("> %d", p), Got: fmt.Sprint(c),
						KubeEvents: []history.KubeEventAt{model.EventAt(w, prev), model.EventAt(w, i)}})
				}
			}
			prev = i
		}
	}
	figures := map[string]float64{"watches": float64(len(h.KubeWatches)), "events": float64(events)}
	if events == 0 {
		return check.Skip(NameWatchOrdered, kubeSkipReason(h, "no watch delivered a change"), figures)
	}
	return col.Result(NameWatchOrdered, figures)
}

// CheckWatchFromRV is kube/watch-from-rv. A watch from N delivers
// nothing at or below N, and, between N and the highest RV it vouched for
// (its last event or bookmark; for the last watch of a client, open until
// the run closed it, the final write), every change the history proves
// committed that the watch's selector lets through: acknowledged writes,
// writes whose values a read or event showed, deletions other watches
// delivered, and acknowledged deletes no watch placed (their RV is
// bounded by time). A watch without a selector delivers each with its
// true type — ADDED only for a create, so no synthetic ADDED — and value.
// For a watch that starts with a state (RV unset or "0", a streaming
// list), N is that state's RV. Events no write explains are violations.
func CheckWatchFromRV(h *history.History, cfg check.Config) check.Result {
	return checkWatchFromRV(model.Build(h), cfg)
}

func checkWatchFromRV(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	judged, expected, undetermined, before := 0, 0, 0, 0
	for _, kw := range m.Watches {
		if kw.Mode == model.WatchRefused || kw.Mode == model.WatchUnjudged {
			continue
		}
		judged++
		fromRVBelow(m, kw, col)
		before += fromRVUnexplained(m, kw, col)
		e, u := fromRVComplete(m, kw, col)
		expected, undetermined = expected+e, undetermined+u
		fromRVPendingDeletes(m, kw, col)
	}
	figures := map[string]float64{"watches_judged": float64(judged), "changes_expected": float64(expected),
		"changes_undetermined": float64(undetermined), "known_changes": float64(len(m.Changes))}
	if judged == 0 {
		return check.Skip(NameWatchFromRV, kubeSkipReason(h, "no watch was served"), figures)
	}
	r := col.Result(NameWatchFromRV, figures)
	r.Judged, r.Excused = expected, map[string]int{"undetermined": undetermined}
	if before > 0 {
		// Events below their object's Floor in a segment: its changes
		// there were in the segments before (history.Context).
		r.Excused["before_context"] = before
	}
	return r
}

// CheckWatchAgreement is kube/watch-agreement: watches with the same
// selector saw the same change at every RV both vouch for — the same
// object, type and value — and neither skipped one the other delivered.
// Watches started at the same RV therefore see identical sequences; the
// initial states of watches that start with one are not compared (two
// such watches may start at different RVs).
func CheckWatchAgreement(h *history.History, cfg check.Config) check.Result {
	return checkWatchAgreement(model.Build(h), cfg)
}

func checkWatchAgreement(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	type canon struct {
		kw  *model.Watch
		idx int
	}
	groups := map[string]map[int64]canon{}
	members := map[string][]*model.Watch{}
	for _, kw := range m.Watches {
		if kw.Mode == model.WatchRefused || kw.Mode == model.WatchUnjudged || len(kw.Live) == 0 && !kw.Extended {
			continue
		}
		g := kw.Stream.Request.LabelSelector + "\x00" + kw.Stream.Request.FieldSelector
		if groups[g] == nil {
			groups[g] = map[int64]canon{}
		}
		members[g] = append(members[g], kw)
		for _, i := range kw.Live {
			rv := kw.Rv(i)
			if _, ok := groups[g][rv]; !ok {
				groups[g][rv] = canon{kw, i}
			}
		}
	}
	compared := 0
	for g, ws := range members {
		if len(ws) < 2 {
			continue
		}
		rvs := make([]int64, 0, len(groups[g]))
		for rv := range groups[g] {
			rvs = append(rvs, rv)
		}
		sort.Slice(rvs, func(i, j int) bool { return rvs[i] < rvs[j] })
		for _, kw := range ws {
			compared++
			w := kw.Stream
			i := sort.Search(len(rvs), func(i int) bool { return rvs[i] > kw.Start })
			for ; i < len(rvs) && rvs[i] <= kw.Last; i++ {
				c := groups[g][rvs[i]]
				if c.kw == kw {
					continue
				}
				want := &c.kw.Stream.Events[c.idx]
				j := kw.EventAt(rvs[i])
				if j >= 0 && sameKubeEvent(&w.Events[j], want) {
					continue
				}
				got, gotEv := "nothing", []history.KubeEventAt{}
				if j >= 0 {
					got, gotEv = model.EventText(w.Events[j]), []history.KubeEventAt{model.EventAt(w, j)}
				}
				col.Add(check.Violation{Guarantee: ErrWatchAgreement,
					Message: fmt.Sprintf("watch %d (client %d) delivered %s at RV %d, where watch %d (client %d, same selector) "+
						"delivered %s; watch %d vouches for RVs %d..%d", w.ID, w.Client, got, rvs[i], c.kw.Stream.ID, c.kw.Stream.Client,
						model.EventText(*want), w.ID, kw.Start+1, kw.Last),
					Watch: w.ID, Client: w.Client, Key: want.Object.Name, Revision: rvs[i], Want: model.EventText(*want), Got: got,
					KubeEvents: append(gotEv, model.EventAt(c.kw.Stream, c.idx)),
					// The other watch is the proof; it may be the wrong one.
					RestsOn: []int64{c.kw.Stream.ID}})
			}
		}
	}
	figures := map[string]float64{"watches_compared": float64(compared), "selectors": float64(len(members))}
	if compared == 0 {
		return check.Skip(NameWatchAgreement, kubeSkipReason(h, "no two watches with the same selector delivered changes"), figures)
	}
	return col.Result(NameWatchAgreement, figures)
}

func sameKubeEvent(a, b *history.KubeEvent) bool {
	return a.Type == b.Type && a.Object != nil && b.Object != nil && a.Object.Name == b.Object.Name &&
		a.Object.ResourceVersion == b.Object.ResourceVersion && a.Object.Value == b.Object.Value
}

// CheckWatchResume is kube/watch-resume: a watch that resumes another
// from the last RV that one saw (event or bookmark) delivers nothing at or
// below it (no duplicate) and begins with the first change after it the
// history proves (no gap) — or answers 410. A resume from another RV is a
// harness matter, counted and not judged.
func CheckWatchResume(h *history.History, cfg check.Config) check.Result {
	return checkWatchResume(model.Build(h), cfg)
}

func checkWatchResume(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	judged, expired, elsewhere := 0, 0, 0
	for _, kw := range m.Watches {
		w := kw.Stream
		if w.Resumes == 0 {
			continue
		}
		prev := m.ByWatch[w.Resumes]
		if prev == nil {
			continue
		}
		L, lastIdx := lastRVSeen(prev.Stream)
		if L == 0 {
			L = prev.ReqRV
		}
		if n, ok := facts.ParseRV(w.Request.ResourceVersion); !ok || n != L {
			elsewhere++
			continue
		}
		if kw.Mode == model.WatchRefused && model.IsExpired(w.End.Status) || kw.ErrIdx == 0 && model.IsExpired(w.Events[0].Status) {
			expired++
			continue
		}
		if kw.Mode != model.WatchExplicit {
			continue
		}
		judged++
		for _, i := range kw.Live {
			rv := kw.Rv(i)
			if rv > L {
				continue
			}
			v := check.Violation{Guarantee: ErrWatchResume,
				Message: fmt.Sprintf("watch %d (client %d) resumed watch %d from RV %d, the last it saw, and delivered %s again",
					w.ID, w.Client, prev.Stream.ID, L, model.EventText(w.Events[i])),
				Watch: w.ID, Client: w.Client, Key: w.Events[i].Object.Name, Revision: rv,
				Want: fmt.Sprintf("> %d", L), Got: fmt.Sprint(rv), KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}}
			if j := prev.EventAt(rv); j >= 0 {
				v.KubeEvents = append(v.KubeEvents, model.EventAt(prev.Stream, j))
			}
			col.Add(v)
		}
		upto := kw.Last
		if f := kw.FirstLiveRV(); f > 0 {
			upto = f - 1
		}
		for _, c := range m.ChangesIn(L, upto) {
			if typ, sure := m.Expected(c, kw.Sel); typ == "" || !sure {
				continue
			}
			v := check.Violation{Guarantee: ErrWatchResume,
				Message: fmt.Sprintf("watch %d (client %d) resumed watch %d from RV %d, but the change of %s at RV %d (%s) "+
					"reached neither: watch %d's first change is at RV %d", w.ID, w.Client, prev.Stream.ID, L, c.Obj.Name, c.Rv,
					m.ChangeText(c), w.ID, kw.FirstLiveRV()),
				Watch: w.ID, Client: w.Client, Key: c.Obj.Name, Revision: c.Rv,
				Want: fmt.Sprintf("%s at RV %d", c.Obj.Name, c.Rv), Got: "nothing"}
			if lastIdx >= 0 {
				v.KubeEvents = append(v.KubeEvents, model.EventAt(prev.Stream, lastIdx))
			}
			if len(kw.Live) > 0 {
				v.KubeEvents = append(v.KubeEvents, model.EventAt(w, kw.Live[0]))
			}
			m.Evidence(&v, c.Ref())
			col.Add(v)
		}
	}
	figures := map[string]float64{"resumes_judged": float64(judged), "resumes_expired": float64(expired),
		"resumed_from_another_rv": float64(elsewhere)}
	if judged == 0 && expired == 0 {
		return check.Skip(NameWatchResume, kubeSkipReason(h, "no watch resumed another from its last RV"), figures)
	}
	return col.Result(NameWatchResume, figures)
}

// lastRVSeen is the RV of a watch's last event that carried one (event or
// bookmark), and that event's index; 0 and -1 if none.
func lastRVSeen(w *history.KubeWatchStream) (int64, int) {
	for i := len(w.Events) - 1; i >= 0; i-- {
		if rv := model.ObjRV(w.Events[i].Object); rv > 0 {
			return rv, i
		}
	}
	return 0, -1
}

// fromRVBelow: nothing at or below the requested RV.
func fromRVBelow(m *model.Model, kw *model.Watch, col *check.Collector) {
	if kw.Mode != model.WatchExplicit {
		return
	}
	w := kw.Stream
	for _, i := range kw.Live {
		rv := kw.Rv(i)
		if rv > kw.ReqRV {
			continue
		}
		col.Add(check.Violation{Guarantee: ErrWatchFromRV,
			Message: fmt.Sprintf("watch %d (client %d) from RV %d delivered %s, at or below the RV it started from",
				w.ID, w.Client, kw.ReqRV, model.EventText(w.Events[i])),
			Watch: w.ID, Client: w.Client, Key: w.Events[i].Object.Name, Revision: rv,
			Want: fmt.Sprintf("> %d", kw.ReqRV), Got: fmt.Sprint(rv), KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}})
	}
}

// fromRVUnexplained: every live event is a change the history knows. It
// returns how many events it left unjudged for lying below their object's
// Floor (a segment's context does not reach them).
func fromRVUnexplained(m *model.Model, kw *model.Watch, col *check.Collector) (before int) {
	w := kw.Stream
	for _, i := range kw.Live {
		e := &w.Events[i]
		rv := kw.Rv(i)
		o := m.Objs[e.Object.Name]
		if o == nil || (kw.Mode == model.WatchExplicit && rv <= kw.ReqRV) {
			continue
		}
		if o.Unknown(rv) {
			before++
			continue
		}
		if c := m.ChangeAt[rv]; c != nil && c.Obj.Name == e.Object.Name {
			continue
		}
		if e.Type == history.KubeDeleted && unplacedDeletion(m.Objs[e.Object.Name], rv, kw.Sel != nil) {
			continue
		}
		var why string
		var refs []model.Ref
		if e.Type == history.KubeDeleted {
			why = "no delete of it can have made that change"
			if c := m.ChangeAt[rv]; c != nil {
				why, refs = fmt.Sprintf("RV %d is %s of %s", rv, m.ChangeText(c), c.Obj.Name), []model.Ref{c.Ref()}
			}
		} else {
			why, refs = m.ExplainValue(e.Object.Name, rv, e.Object.Value)
		}
		v := check.Violation{Guarantee: ErrWatchFromRV,
			Message: fmt.Sprintf("watch %d (client %d) delivered %s, which no write explains: %s",
				w.ID, w.Client, model.EventText(*e), why),
			Watch: w.ID, Client: w.Client, Key: e.Object.Name, Revision: rv,
			Want: "a committed change", Got: model.EventText(*e), KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}}
		m.Evidence(&v, refs...)
		col.Add(v)
	}
	return before
}

// unplacedDeletion reports whether a write the history bounds but cannot
// place can have made a DELETED event of o at rv: a delete whose span
// holds rv (only watches without a selector place deletions; a selector
// watch may see one no such watch saw), or, for a selector watch, a
// create or update that may have moved o out of the selector there.
func unplacedDeletion(o *model.Object, rv int64, selector bool) bool {
	in := func(spans []model.Span) bool {
		for _, s := range spans {
			if s.Lo < rv && rv < s.Hi {
				return true
			}
		}
		return false
	}
	return in(o.DelSpans) || selector && in(o.PutSpans)
}

// fromRVComplete: every change in (start, last] the watch owes, delivered
// with its type and value (types only judged without a selector; with one,
// kube/watch-selector judges them).
func fromRVComplete(m *model.Model, kw *model.Watch, col *check.Collector) (expected, undetermined int) {
	w := kw.Stream
	for _, c := range m.ChangesIn(kw.Start, kw.Last) {
		typ, sure := m.Expected(c, kw.Sel)
		if !sure {
			undetermined++
			continue
		}
		if typ == "" {
			continue
		}
		expected++
		i := kw.EventAt(c.Rv)
		if i < 0 || w.Events[i].Object.Name != c.Obj.Name {
			col.Add(missedChange(m, kw, c, typ, i))
			continue
		}
		e := &w.Events[i]
		switch {
		case kw.Sel == nil && !model.TypeFits(e.Type, typ):
			what := "wrong type"
			if e.Type == history.KubeAdded {
				what = "a synthetic ADDED"
			}
			v := check.Violation{Guarantee: ErrWatchFromRV,
				Message: fmt.Sprintf("watch %d (client %d) delivered %s: %s, %s made a %s at RV %d", w.ID, w.Client,
					model.EventText(*e), what, m.ChangeText(c), typ, c.Rv),
				Watch: w.ID, Client: w.Client, Key: c.Obj.Name, Revision: c.Rv, Want: typ, Got: e.Type,
				KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}}
			m.Evidence(&v, c.Ref())
			col.Add(v)
		case !c.Del && e.Type != history.KubeDeleted && e.Object.Value != c.Value:
			v := check.Violation{Guarantee: ErrWatchFromRV,
				Message: fmt.Sprintf("watch %d (client %d) delivered %s, but %s wrote %q at RV %d", w.ID, w.Client,
					model.EventText(*e), m.ChangeText(c), c.Value, c.Rv),
				Watch: w.ID, Client: w.Client, Key: c.Obj.Name, Revision: c.Rv,
				Want: fmt.Sprintf("%q", c.Value), Got: fmt.Sprintf("%q", e.Object.Value),
				KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}}
			m.Evidence(&v, c.Ref())
			col.Add(v)
		}
	}
	return expected, undetermined
}

// missedChange reports a change the watch owed and did not deliver,
// naming the events around the gap.
func missedChange(m *model.Model, kw *model.Watch, c *model.Change, typ string, at int) check.Violation {
	w := kw.Stream
	pos := sort.Search(len(kw.ByRV), func(i int) bool { return kw.ByRV[i].Rv >= c.Rv })
	var near []history.KubeEventAt
	around := "it delivered no change at all"
	if pos > 0 {
		near = append(near, model.EventAt(w, kw.ByRV[pos-1].Idx))
		around = "before it " + model.EventText(w.Events[kw.ByRV[pos-1].Idx])
	}
	if pos < len(kw.ByRV) {
		near = append(near, model.EventAt(w, kw.ByRV[pos].Idx))
		if pos > 0 {
			around += ", after it "
		} else {
			around = "after it "
		}
		around += model.EventText(w.Events[kw.ByRV[pos].Idx])
	}
	msg := fmt.Sprintf("watch %d (client %d) missed the change of %s at RV %d (%s, owed as %s); it vouches for RVs %d..%d; %s",
		w.ID, w.Client, c.Obj.Name, c.Rv, m.ChangeText(c), typ, kw.Start+1, kw.Last, around)
	if at >= 0 {
		msg += "; at that RV it delivered another object"
	}
	if kw.Extended && c.Rv > kw.LastObserved() {
		msg += fmt.Sprintf("; it was open until the run closed it after the final write at RV %d, so it must reach it", kw.Last)
	}
	v := check.Violation{Guarantee: ErrWatchFromRV, Message: msg, Watch: w.ID, Client: w.Client, Key: c.Obj.Name,
		Revision: c.Rv, Want: fmt.Sprintf("%s %s at RV %d", typ, c.Obj.Name, c.Rv), Got: "nothing", KubeEvents: near}
	m.Evidence(&v, c.Ref())
	return v
}

// fromRVPendingDeletes: an acknowledged delete no watch placed lies at an
// RV in a known span; a watch without a selector whose window holds the
// whole span owes its DELETED event.
func fromRVPendingDeletes(m *model.Model, kw *model.Watch, col *check.Collector) {
	if kw.Sel != nil || !kw.StartKnown {
		return
	}
	w := kw.Stream
	for _, name := range m.Names {
		o := m.Objs[name]
		for _, s := range o.DelSpans {
			if !s.Certain || s.Lo < kw.Start || s.Hi-1 > kw.Last {
				continue
			}
			found := false
			for _, i := range kw.Live {
				e := &w.Events[i]
				if rv := kw.Rv(i); e.Type == history.KubeDeleted && e.Object.Name == name && rv > s.Lo && rv < s.Hi {
					found = true
					break
				}
			}
			if found {
				continue
			}
			col.Add(check.Violation{Guarantee: ErrWatchFromRV,
				Message: fmt.Sprintf("watch %d (client %d) missed the deletion of %s by %s, acknowledged: it lies between "+
					"RV %d and %d, inside the RVs %d..%d the watch vouches for", w.ID, w.Client, name, m.WriteText(s.Write),
					s.Lo+1, s.Hi-1, kw.Start+1, kw.Last),
				Watch: w.ID, Client: w.Client, Key: name, Revision: s.Lo + 1,
				Want: "DELETED " + name, Got: "nothing", Operations: []int64{s.Write.Op.ID}})
		}
	}
}
