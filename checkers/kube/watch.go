package kube

import (
	"fmt"
	"sort"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// CheckWatchOrdered is kube/watch-ordered: after its initial state (a
// watch from RV unset or "0", or a streaming list, sends the state in key
// order, not RV order), every non-BOOKMARK event of a watch has a higher
// RV than the one before.
func CheckWatchOrdered(h *history.History, cfg check.Config) check.Result {
	return checkWatchOrdered(buildKubeModel(h), cfg)
}

func checkWatchOrdered(m *kubeModel, cfg check.Config) check.Result {
	h := m.h
	col := check.NewCollector(cfg)
	events := 0
	for _, kw := range m.watches {
		if kw.mode == kwUnjudged && (kw.w.Request.ResourceVersion == "" || kw.w.Request.ResourceVersion == "0") {
			continue
		}
		w, prev := kw.w, -1
		for _, i := range kw.live {
			events++
			if prev >= 0 {
				p, c := kw.rv(prev), kw.rv(i)
				if c <= p {
					col.Add(check.Violation{Guarantee: ErrWatchOrdered,
						Message: fmt.Sprintf("watch %d (client %d) delivered %s after %s: the RV did not increase",
							w.ID, w.Client, kevText(w.Events[i]), kevText(w.Events[prev])),
						Watch: w.ID, Client: w.Client, Key: w.Events[i].Object.Name, Revision: c,
						Want: fmt.Sprintf("> %d", p), Got: fmt.Sprint(c),
						KubeEvents: []history.KubeEventAt{kevAt(w, prev), kevAt(w, i)}})
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
	return checkWatchFromRV(buildKubeModel(h), cfg)
}

func checkWatchFromRV(m *kubeModel, cfg check.Config) check.Result {
	h := m.h
	col := check.NewCollector(cfg)
	judged, expected, undetermined := 0, 0, 0
	for _, kw := range m.watches {
		if kw.mode == kwRefused || kw.mode == kwUnjudged {
			continue
		}
		judged++
		fromRVBelow(m, kw, col)
		fromRVUnexplained(m, kw, col)
		e, u := fromRVComplete(m, kw, col)
		expected, undetermined = expected+e, undetermined+u
		fromRVPendingDeletes(m, kw, col)
	}
	figures := map[string]float64{"watches_judged": float64(judged), "changes_expected": float64(expected),
		"changes_undetermined": float64(undetermined), "known_changes": float64(len(m.changes))}
	if judged == 0 {
		return check.Skip(NameWatchFromRV, kubeSkipReason(h, "no watch was served"), figures)
	}
	return col.Result(NameWatchFromRV, figures)
}

// CheckWatchAgreement is kube/watch-agreement: watches with the same
// selector saw the same change at every RV both vouch for — the same
// object, type and value — and neither skipped one the other delivered.
// Watches started at the same RV therefore see identical sequences; the
// initial states of watches that start with one are not compared (two
// such watches may start at different RVs).
func CheckWatchAgreement(h *history.History, cfg check.Config) check.Result {
	return checkWatchAgreement(buildKubeModel(h), cfg)
}

func checkWatchAgreement(m *kubeModel, cfg check.Config) check.Result {
	h := m.h
	col := check.NewCollector(cfg)
	type canon struct {
		kw  *kwatch
		idx int
	}
	groups := map[string]map[int64]canon{}
	members := map[string][]*kwatch{}
	for _, kw := range m.watches {
		if kw.mode == kwRefused || kw.mode == kwUnjudged || len(kw.live) == 0 && !kw.extended {
			continue
		}
		g := kw.w.Request.LabelSelector
		if groups[g] == nil {
			groups[g] = map[int64]canon{}
		}
		members[g] = append(members[g], kw)
		for _, i := range kw.live {
			rv := kw.rv(i)
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
			w := kw.w
			i := sort.Search(len(rvs), func(i int) bool { return rvs[i] > kw.start })
			for ; i < len(rvs) && rvs[i] <= kw.last; i++ {
				c := groups[g][rvs[i]]
				if c.kw == kw {
					continue
				}
				want := &c.kw.w.Events[c.idx]
				j := kw.eventAt(rvs[i])
				if j >= 0 && sameKubeEvent(&w.Events[j], want) {
					continue
				}
				got, gotEv := "nothing", []history.KubeEventAt{}
				if j >= 0 {
					got, gotEv = kevText(w.Events[j]), []history.KubeEventAt{kevAt(w, j)}
				}
				col.Add(check.Violation{Guarantee: ErrWatchAgreement,
					Message: fmt.Sprintf("watch %d (client %d) delivered %s at RV %d, where watch %d (client %d, same selector) "+
						"delivered %s; watch %d vouches for RVs %d..%d", w.ID, w.Client, got, rvs[i], c.kw.w.ID, c.kw.w.Client,
						kevText(*want), w.ID, kw.start+1, kw.last),
					Watch: w.ID, Client: w.Client, Key: want.Object.Name, Revision: rvs[i], Want: kevText(*want), Got: got,
					KubeEvents: append(gotEv, kevAt(c.kw.w, c.idx))})
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
	return checkWatchResume(buildKubeModel(h), cfg)
}

func checkWatchResume(m *kubeModel, cfg check.Config) check.Result {
	h := m.h
	col := check.NewCollector(cfg)
	judged, expired, elsewhere := 0, 0, 0
	for _, kw := range m.watches {
		w := kw.w
		if w.Resumes == 0 {
			continue
		}
		prev := m.byWatch[w.Resumes]
		if prev == nil {
			continue
		}
		L, lastIdx := lastRVSeen(prev.w)
		if L == 0 {
			L = prev.reqRV
		}
		if n, ok := facts.ParseRV(w.Request.ResourceVersion); !ok || n != L {
			elsewhere++
			continue
		}
		if kw.mode == kwRefused && isExpired(w.End.Status) || kw.errIdx == 0 && isExpired(w.Events[0].Status) {
			expired++
			continue
		}
		if kw.mode != kwExplicit {
			continue
		}
		judged++
		for _, i := range kw.live {
			rv := kw.rv(i)
			if rv > L {
				continue
			}
			v := check.Violation{Guarantee: ErrWatchResume,
				Message: fmt.Sprintf("watch %d (client %d) resumed watch %d from RV %d, the last it saw, and delivered %s again",
					w.ID, w.Client, prev.w.ID, L, kevText(w.Events[i])),
				Watch: w.ID, Client: w.Client, Key: w.Events[i].Object.Name, Revision: rv,
				Want: fmt.Sprintf("> %d", L), Got: fmt.Sprint(rv), KubeEvents: []history.KubeEventAt{kevAt(w, i)}}
			if j := prev.eventAt(rv); j >= 0 {
				v.KubeEvents = append(v.KubeEvents, kevAt(prev.w, j))
			}
			col.Add(v)
		}
		upto := kw.last
		if f := kw.firstLiveRV(); f > 0 {
			upto = f - 1
		}
		for _, c := range m.changesIn(L, upto) {
			if typ, sure := m.expected(c, kw.sel); typ == "" || !sure {
				continue
			}
			v := check.Violation{Guarantee: ErrWatchResume,
				Message: fmt.Sprintf("watch %d (client %d) resumed watch %d from RV %d, but the change of %s at RV %d (%s) "+
					"reached neither: watch %d's first change is at RV %d", w.ID, w.Client, prev.w.ID, L, c.obj.name, c.rv,
					m.changeText(c), w.ID, kw.firstLiveRV()),
				Watch: w.ID, Client: w.Client, Key: c.obj.name, Revision: c.rv,
				Want: fmt.Sprintf("%s at RV %d", c.obj.name, c.rv), Got: "nothing"}
			if lastIdx >= 0 {
				v.KubeEvents = append(v.KubeEvents, kevAt(prev.w, lastIdx))
			}
			if len(kw.live) > 0 {
				v.KubeEvents = append(v.KubeEvents, kevAt(w, kw.live[0]))
			}
			m.evidence(&v, c.ref())
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
		if rv := objRV(w.Events[i].Object); rv > 0 {
			return rv, i
		}
	}
	return 0, -1
}

// lastObserved is the highest RV the watch itself showed (without the
// final-write extension).
func (kw *kwatch) lastObserved() int64 {
	var last int64
	for i := kw.initN; i < kw.liveEnd(); i++ {
		last = max(last, kw.rv(i))
	}
	return last
}

// fromRVBelow: nothing at or below the requested RV.
func fromRVBelow(m *kubeModel, kw *kwatch, col *check.Collector) {
	if kw.mode != kwExplicit {
		return
	}
	w := kw.w
	for _, i := range kw.live {
		rv := kw.rv(i)
		if rv > kw.reqRV {
			continue
		}
		col.Add(check.Violation{Guarantee: ErrWatchFromRV,
			Message: fmt.Sprintf("watch %d (client %d) from RV %d delivered %s, at or below the RV it started from",
				w.ID, w.Client, kw.reqRV, kevText(w.Events[i])),
			Watch: w.ID, Client: w.Client, Key: w.Events[i].Object.Name, Revision: rv,
			Want: fmt.Sprintf("> %d", kw.reqRV), Got: fmt.Sprint(rv), KubeEvents: []history.KubeEventAt{kevAt(w, i)}})
	}
}

// fromRVUnexplained: every live event is a change the history knows.
func fromRVUnexplained(m *kubeModel, kw *kwatch, col *check.Collector) {
	w := kw.w
	for _, i := range kw.live {
		e := &w.Events[i]
		rv := kw.rv(i)
		if m.objs[e.Object.Name] == nil || (kw.mode == kwExplicit && rv <= kw.reqRV) {
			continue
		}
		if c := m.changeAt[rv]; c != nil && c.obj.name == e.Object.Name {
			continue
		}
		var why string
		var refs []kref
		if e.Type == history.KubeDeleted {
			why = "no delete of it can have made that change"
			if c := m.changeAt[rv]; c != nil {
				why, refs = fmt.Sprintf("RV %d is %s of %s", rv, m.changeText(c), c.obj.name), []kref{c.ref()}
			}
		} else {
			why, refs = m.explainValue(e.Object.Name, rv, e.Object.Value)
		}
		v := check.Violation{Guarantee: ErrWatchFromRV,
			Message: fmt.Sprintf("watch %d (client %d) delivered %s, which no write explains: %s",
				w.ID, w.Client, kevText(*e), why),
			Watch: w.ID, Client: w.Client, Key: e.Object.Name, Revision: rv,
			Want: "a committed change", Got: kevText(*e), KubeEvents: []history.KubeEventAt{kevAt(w, i)}}
		m.evidence(&v, refs...)
		col.Add(v)
	}
}

// fromRVComplete: every change in (start, last] the watch owes, delivered
// with its type and value (types only judged without a selector; with one,
// kube/watch-selector judges them).
func fromRVComplete(m *kubeModel, kw *kwatch, col *check.Collector) (expected, undetermined int) {
	w := kw.w
	for _, c := range m.changesIn(kw.start, kw.last) {
		typ, sure := m.expected(c, kw.sel)
		if !sure {
			undetermined++
			continue
		}
		if typ == "" {
			continue
		}
		expected++
		i := kw.eventAt(c.rv)
		if i < 0 || w.Events[i].Object.Name != c.obj.name {
			col.Add(missedChange(m, kw, c, typ, i))
			continue
		}
		e := &w.Events[i]
		switch {
		case kw.sel == nil && e.Type != typ:
			what := "wrong type"
			if e.Type == history.KubeAdded {
				what = "a synthetic ADDED"
			}
			v := check.Violation{Guarantee: ErrWatchFromRV,
				Message: fmt.Sprintf("watch %d (client %d) delivered %s: %s, %s made a %s at RV %d", w.ID, w.Client,
					kevText(*e), what, m.changeText(c), typ, c.rv),
				Watch: w.ID, Client: w.Client, Key: c.obj.name, Revision: c.rv, Want: typ, Got: e.Type,
				KubeEvents: []history.KubeEventAt{kevAt(w, i)}}
			m.evidence(&v, c.ref())
			col.Add(v)
		case !c.del && e.Type != history.KubeDeleted && e.Object.Value != c.value:
			v := check.Violation{Guarantee: ErrWatchFromRV,
				Message: fmt.Sprintf("watch %d (client %d) delivered %s, but %s wrote %q at RV %d", w.ID, w.Client,
					kevText(*e), m.changeText(c), c.value, c.rv),
				Watch: w.ID, Client: w.Client, Key: c.obj.name, Revision: c.rv,
				Want: fmt.Sprintf("%q", c.value), Got: fmt.Sprintf("%q", e.Object.Value),
				KubeEvents: []history.KubeEventAt{kevAt(w, i)}}
			m.evidence(&v, c.ref())
			col.Add(v)
		}
	}
	return expected, undetermined
}

// missedChange reports a change the watch owed and did not deliver,
// naming the events around the gap.
func missedChange(m *kubeModel, kw *kwatch, c *kchange, typ string, at int) check.Violation {
	w := kw.w
	pos := sort.Search(len(kw.byRV), func(i int) bool { return kw.byRV[i].rv >= c.rv })
	var near []history.KubeEventAt
	around := "it delivered no change at all"
	if pos > 0 {
		near = append(near, kevAt(w, kw.byRV[pos-1].idx))
		around = "before it " + kevText(w.Events[kw.byRV[pos-1].idx])
	}
	if pos < len(kw.byRV) {
		near = append(near, kevAt(w, kw.byRV[pos].idx))
		if pos > 0 {
			around += ", after it "
		} else {
			around = "after it "
		}
		around += kevText(w.Events[kw.byRV[pos].idx])
	}
	msg := fmt.Sprintf("watch %d (client %d) missed the change of %s at RV %d (%s, owed as %s); it vouches for RVs %d..%d; %s",
		w.ID, w.Client, c.obj.name, c.rv, m.changeText(c), typ, kw.start+1, kw.last, around)
	if at >= 0 {
		msg += "; at that RV it delivered another object"
	}
	if kw.extended && c.rv > kw.lastObserved() {
		msg += fmt.Sprintf("; it was open until the run closed it after the final write at RV %d, so it must reach it", kw.last)
	}
	v := check.Violation{Guarantee: ErrWatchFromRV, Message: msg, Watch: w.ID, Client: w.Client, Key: c.obj.name,
		Revision: c.rv, Want: fmt.Sprintf("%s %s at RV %d", typ, c.obj.name, c.rv), Got: "nothing", KubeEvents: near}
	m.evidence(&v, c.ref())
	return v
}

// fromRVPendingDeletes: an acknowledged delete no watch placed lies at an
// RV in a known span; a watch without a selector whose window holds the
// whole span owes its DELETED event.
func fromRVPendingDeletes(m *kubeModel, kw *kwatch, col *check.Collector) {
	if kw.sel != nil || !kw.startKnown {
		return
	}
	w := kw.w
	for _, name := range m.names {
		o := m.objs[name]
		for _, s := range o.delSpans {
			if !s.certain || s.lo < kw.start || s.hi-1 > kw.last {
				continue
			}
			found := false
			for _, i := range kw.live {
				e := &w.Events[i]
				if rv := kw.rv(i); e.Type == history.KubeDeleted && e.Object.Name == name && rv > s.lo && rv < s.hi {
					found = true
					break
				}
			}
			if found {
				continue
			}
			col.Add(check.Violation{Guarantee: ErrWatchFromRV,
				Message: fmt.Sprintf("watch %d (client %d) missed the deletion of %s by %s, acknowledged: it lies between "+
					"RV %d and %d, inside the RVs %d..%d the watch vouches for", w.ID, w.Client, name, m.writeText(s.w),
					s.lo+1, s.hi-1, kw.start+1, kw.last),
				Watch: w.ID, Client: w.Client, Key: name, Revision: s.lo + 1,
				Want: "DELETED " + name, Got: "nothing", Operations: []int64{s.w.op.ID}})
		}
	}
}
