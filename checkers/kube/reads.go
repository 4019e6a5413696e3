package kube

import (
	"fmt"
	"math"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/checkers/kube/model"
	"github.com/vigil-suite/vigil/history"
)

// completeList reports a list answered in one page.
func completeList(o *history.KubeOperation) bool {
	return o.Request.Continue == "" && o.Response != nil && o.Response.Continue == ""
}

// CheckConsistentRead is kube/consistent-read: a get or list with RV
// unset, on whichever API server answered it, sees every write
// acknowledged before it was called. A list's RV is at or above every
// such write's and its items are the state at its RV; a get returns the
// object at a state no older than those writes (not replaced or deleted
// by one of them), or 404 only if the object may be absent by then.
func CheckConsistentRead(h *history.History, cfg check.Config) check.Result {
	return checkConsistentRead(model.Build(h), cfg)
}

func checkConsistentRead(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	judged := 0
	servers := map[string]int{}
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Request.Verb != history.KubeList && o.Request.Verb != history.KubeGet {
			continue
		}
		if k, _ := model.ReadKindOf(o.Request); k != model.ReadConsistent {
			continue
		}
		lo, loOp := m.Lo.MaxBefore(o.Call)
		switch {
		case o.Response != nil && o.Request.Verb == history.KubeList:
			judged++
			servers[o.Server]++
			P, ok := facts.ParseRV(o.Response.ListRV)
			if !ok {
				continue
			}
			if P < lo {
				col.Add(check.Violation{Guarantee: ErrConsistentRead,
					Message: fmt.Sprintf("%s on %s answered at RV %d, below RV %d of operation %d, a write acknowledged "+
						"before the list was called", model.OpText(o), serverName(o.Server), P, lo, loOp),
					Client: o.Client, Revision: P, Want: fmt.Sprintf(">= %d", lo), Got: fmt.Sprint(P),
					Operations: []int64{loOp, o.ID}})
			}
			reportListState(m, o, P, col, ErrConsistentRead, "on "+serverName(o.Server))
		case o.Request.Verb == history.KubeGet && (o.Response != nil || o.Status != nil && o.Status.Code == 404):
			judged++
			servers[o.Server]++
			if v, bad := getSeesBefore(m, o, lo, math.MaxInt64); bad {
				v.Guarantee = ErrConsistentRead
				v.Message = fmt.Sprintf("%s on %s (RV unset) %s; %d is the RV of operation %d, acknowledged before the "+
					"get was called", model.OpText(o), serverName(o.Server), v.Message, lo, loOp)
				v.Operations = append([]int64{loOp}, v.Operations...)
				col.Add(v)
			}
		}
	}
	figures := map[string]float64{"reads_judged": float64(judged), "servers": float64(len(servers))}
	for s, n := range servers {
		if s != "" {
			figures["reads_on_"+s] = float64(n)
		}
	}
	if judged == 0 {
		return check.Skip(NameConsistentRead, kubeSkipReason(h, "no get or list with RV unset was answered"), figures)
	}
	return col.Result(NameConsistentRead, figures)
}

func serverName(s string) string {
	if s == "" {
		return "the server"
	}
	return s
}

// CheckListExact is kube/list-exact: a list with
// resourceVersionMatch=Exact and RV N (or RV N with a limit and no match,
// the legacy form the API gives Exact semantics) answers with list RV N
// and the state at N (a page: its items as of N), or 410.
func CheckListExact(h *history.History, cfg check.Config) check.Result {
	return checkListExact(model.Build(h), cfg)
}

func checkListExact(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	judged, expired := 0, 0
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Request.Verb != history.KubeList {
			continue
		}
		k, n := model.ReadKindOf(o.Request)
		if k != model.ReadExact {
			continue
		}
		switch {
		case model.IsExpired(o.Status):
			expired++
		case o.Response != nil:
			judged++
			P, ok := facts.ParseRV(o.Response.ListRV)
			if !ok {
				continue
			}
			if P != n {
				col.Add(check.Violation{Guarantee: ErrListExact,
					Message: fmt.Sprintf("%s asked for exactly RV %d and answered at RV %d", model.OpText(o), n, P),
					Client:  o.Client, Revision: P, Want: fmt.Sprint(n), Got: fmt.Sprint(P), Operations: []int64{o.ID}})
			}
			reportListState(m, o, n, col, ErrListExact, "(Exact)")
		}
	}
	figures := map[string]float64{"lists_judged": float64(judged), "expired": float64(expired)}
	if judged == 0 {
		return check.Skip(NameListExact, kubeSkipReason(h, "no Exact list was answered with data"), figures)
	}
	return col.Result(NameListExact, figures)
}

// CheckListNotOlderThan is kube/list-not-older-than: a list with
// resourceVersionMatch=NotOlderThan and RV N (or RV N without a limit and
// no match) answers at a list RV at or above N, with the state at its RV.
func CheckListNotOlderThan(h *history.History, cfg check.Config) check.Result {
	return checkListNotOlderThan(model.Build(h), cfg)
}

func checkListNotOlderThan(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	judged := 0
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Request.Verb != history.KubeList || o.Response == nil {
			continue
		}
		k, n := model.ReadKindOf(o.Request)
		if k != model.ReadNotOlder {
			continue
		}
		judged++
		P, ok := facts.ParseRV(o.Response.ListRV)
		if !ok {
			continue
		}
		if P < n {
			col.Add(check.Violation{Guarantee: ErrListNotOlderThan,
				Message: fmt.Sprintf("%s asked for RV %d or newer and answered at RV %d", model.OpText(o), n, P),
				Client:  o.Client, Revision: P, Want: fmt.Sprintf(">= %d", n), Got: fmt.Sprint(P), Operations: []int64{o.ID}})
		}
		reportListState(m, o, P, col, ErrListNotOlderThan, "(NotOlderThan)")
	}
	figures := map[string]float64{"lists_judged": float64(judged)}
	if judged == 0 {
		return check.Skip(NameListNotOlderThan, kubeSkipReason(h, "no NotOlderThan list was answered"), figures)
	}
	return col.Result(NameListNotOlderThan, figures)
}

// CheckFutureRV is kube/future-rv. A get or list at RV N (NotOlderThan
// or Exact), or a watch from N, is judged when the history proves N was
// in the future for all of it: a write called, or a consistent list
// answered, after it ended shows the store still below N. Such a request
// never gets data: it waits (no answer, or is closed by vigil), or is
// answered 504 (ResourceVersionTooLarge); 429, 500 and 503 are tolerated
// (the server did not serve it); any other status, or data (a list at an
// RV below N is stale; one at or above N claims a state the store had not
// reached), fails. A watch from such an N delivers nothing at or below N
// and no ERROR but 504.
func CheckFutureRV(h *history.History, cfg check.Config) check.Result {
	return checkFutureRV(model.Build(h), cfg)
}

func checkFutureRV(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	x := buildLinIndex(m)
	judged, waited, tooLarge, unproven := 0, 0, 0, 0
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Request.Verb != history.KubeGet && o.Request.Verb != history.KubeList {
			continue
		}
		k, n := model.ReadKindOf(o.Request)
		if k != model.ReadNotOlder && k != model.ReadExact {
			continue
		}
		below, proof := belowAfter(m, &x, o.Return)
		if below >= n {
			if lo, _ := m.Seen.MaxBefore(o.Call); lo < n {
				unproven++ // maybe future, maybe reached meanwhile
			}
			continue
		}
		judged++
		v := check.Violation{Guarantee: ErrFutureRV, Client: o.Client, Key: o.Request.Name, Revision: n,
			Want: "504 ResourceVersionTooLarge, or no answer", Operations: []int64{o.ID, proof}}
		future := fmt.Sprintf("the future RV %d (operation %d shows the store still at or below %d after it)", n, proof, below)
		switch {
		case o.Error != "":
			waited++
		case o.Status != nil && o.Status.Code == 504:
			tooLarge++
		case o.Status != nil && (o.Status.Code == 429 || o.Status.Code == 500 || o.Status.Code == 503):
		case o.Status != nil:
			v.Message = fmt.Sprintf("%s at %s was answered %s", model.OpText(o), future, model.StatusText(o.Status))
			v.Got = model.StatusText(o.Status)
			col.Add(v)
		case o.Request.Verb == history.KubeList:
			P, _ := facts.ParseRV(o.Response.ListRV)
			v.Got = fmt.Sprintf("a list at RV %d", P)
			if P < n {
				v.Message = fmt.Sprintf("%s at %s was answered with data at RV %d: stale data", model.OpText(o), future, P)
			} else {
				v.Message = fmt.Sprintf("%s at %s was answered with data at RV %d, a state the store had not reached",
					model.OpText(o), future, P)
			}
			col.Add(v)
		default:
			at := "no object"
			if ob := o.Response.Object; ob != nil {
				at = fmt.Sprintf("%s at RV %s", ob.Name, ob.ResourceVersion)
			}
			v.Message = fmt.Sprintf("%s at %s was answered with data (%s)", model.OpText(o), future, at)
			v.Got = "data"
			col.Add(v)
		}
	}
	for _, kw := range m.Watches {
		w := kw.Stream
		n, ok := facts.ParseRV(w.Request.ResourceVersion)
		if !ok {
			continue
		}
		end := w.Call
		if len(w.Events) > 0 {
			end = w.Events[0].Time
		} else if w.End != nil {
			end = w.End.Time
		}
		below, proof := belowAfter(m, &x, end)
		if below >= n {
			continue
		}
		judged++
		future := fmt.Sprintf("the future RV %d (operation %d shows the store still at or below %d after its first answer)",
			n, proof, below)
		for i := range w.Events {
			e := &w.Events[i]
			switch {
			case e.Type == history.KubeError && e.Status != nil && e.Status.Code == 504:
				tooLarge++
			case e.Type == history.KubeError:
				col.Add(check.Violation{Guarantee: ErrFutureRV,
					Message: fmt.Sprintf("watch %d (client %d) from %s got %s", w.ID, w.Client, future, model.EventText(*e)),
					Watch:   w.ID, Client: w.Client, Revision: n, Want: "504 or waiting", Got: model.EventText(*e),
					Operations: []int64{proof}, KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}})
			case e.Object != nil && e.Type != history.KubeBookmark && kw.Rv(i) <= n:
				col.Add(check.Violation{Guarantee: ErrFutureRV,
					Message: fmt.Sprintf("watch %d (client %d) from %s delivered %s, at or below it",
						w.ID, w.Client, future, model.EventText(*e)),
					Watch: w.ID, Client: w.Client, Key: e.Object.Name, Revision: kw.Rv(i), Want: "nothing at or below " +
						fmt.Sprint(n), Got: model.EventText(*e), Operations: []int64{proof}, KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}})
			}
		}
		if st := w.End; st != nil && st.Status != nil && st.Status.Code != 504 && st.Status.Code != 429 && st.Status.Code < 500 {
			col.Add(check.Violation{Guarantee: ErrFutureRV,
				Message: fmt.Sprintf("watch %d (client %d) from %s was refused %s", w.ID, w.Client, future, model.StatusText(st.Status)),
				Watch:   w.ID, Client: w.Client, Revision: n, Want: "504 or waiting", Got: model.StatusText(st.Status),
				Operations: []int64{proof}})
		}
	}
	figures := map[string]float64{"requests_judged": float64(judged), "waited": float64(waited),
		"too_large": float64(tooLarge), "maybe_future_unproven": float64(unproven)}
	if judged == 0 {
		return check.Skip(NameFutureRV, kubeSkipReason(h, "no request asked for an RV the history proves the store had "+
			"not reached"), figures)
	}
	return col.Result(NameFutureRV, figures)
}

// CheckStaleReadBound is kube/stale-read-bound (SHOULD). A get at RV
// N (not older than N) returns its object's state at some RV at or above
// N: not a state the object had already left at N, nor a 404 for an
// object that existed from N until the get returned. A list at RV "0" may
// be stale, but its items are the collection's state at its own list RV.
// (NotOlderThan lists are kube/list-not-older-than's.)
func CheckStaleReadBound(h *history.History, cfg check.Config) check.Result {
	return checkStaleReadBound(model.Build(h), cfg)
}

func checkStaleReadBound(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	judged := 0
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		k, n := model.ReadKindOf(o.Request)
		switch {
		case o.Request.Verb == history.KubeGet && k == model.ReadNotOlder && (o.Response != nil || o.Status != nil && o.Status.Code == 404):
			judged++
			hi, _ := m.Hi.MinAfter(o.Return)
			if hi != math.MaxInt64 {
				hi--
			}
			if hi < n {
				continue // a future RV: kube/future-rv's
			}
			if v, bad := getSeesBefore(m, o, n, hi); bad {
				v.Guarantee = ErrStaleReadBound
				v.Message = fmt.Sprintf("%s at RV %d (not older than %d) %s", model.OpText(o), n, n, v.Message)
				col.Add(v)
			}
		case o.Request.Verb == history.KubeList && k == model.ReadAny && o.Response != nil:
			judged++
			if P, ok := facts.ParseRV(o.Response.ListRV); ok {
				reportListState(m, o, P, col, ErrStaleReadBound, "(RV \"0\")")
			}
		}
	}
	figures := map[string]float64{"reads_judged": float64(judged)}
	if judged == 0 {
		return check.Skip(NameStaleReadBound, kubeSkipReason(h, "no get at an RV and no list at RV \"0\" was answered"), figures)
	}
	return col.Result(NameStaleReadBound, figures)
}

// reportListState judges a list's items as the state at P and reports
// every issue under g, prefixed with what the list was.
func reportListState(m *model.Model, o *history.KubeOperation, P int64, col *check.Collector, g error, what string) {
	sel, err := model.ParseSelectors(o.Request.LabelSelector, o.Request.FieldSelector)
	if err != nil {
		return
	}
	items := o.Response.Items
	sc := listState(m, o, sel, P)
	for _, iss := range sc.Issues {
		text, refs := m.IssueText(iss, items, fmt.Sprint(P))
		v := check.Violation{Guarantee: g, Message: fmt.Sprintf("%s %s at RV %d: %s", model.OpText(o), what, P, text),
			Client: o.Client, Key: iss.Name, Revision: iss.Rv, Operations: []int64{o.ID}}
		m.Evidence(&v, refs...)
		col.Add(v)
	}
}

// listState judges a list answer's items as the state at P (complete
// when the list came in one page), once per list and P.
func listState(m *model.Model, o *history.KubeOperation, sel *model.LabelSelector, P int64) model.StateCheck {
	k := [2]int64{o.ID, P}
	m.ListStatesMu.Lock()
	defer m.ListStatesMu.Unlock()
	if sc, ok := m.ListStates[k]; ok {
		return sc
	}
	if m.ListStates == nil {
		m.ListStates = map[[2]int64]model.StateCheck{}
	}
	sc := m.VerifyState(o.Response.Items, sel, P, P, completeList(o))
	m.ListStates[k] = sc
	return sc
}

// getSeesBefore judges a get's answer against the window [lo, hi] of RVs
// its state may come from: the returned object is its object's state at
// some RV there, or, for a 404, the object may be absent at some RV there.
// The violation it returns lacks Guarantee and the message's subject.
func getSeesBefore(m *model.Model, o *history.KubeOperation, lo, hi int64) (check.Violation, bool) {
	name := o.Request.Name
	ob := m.Objs[name]
	if ob == nil {
		return check.Violation{}, false
	}
	v := check.Violation{Client: o.Client, Key: name, Operations: []int64{o.ID}}
	if o.Response == nil { // 404
		if len(ob.AbsentSet(nil, lo, hi)) > 0 {
			return v, false
		}
		st := ob.At(lo)
		v.Revision = st.Rv
		v.Message = fmt.Sprintf("answered 404, but %s exists from RV %d (%s made it, value %q) through RV %s",
			name, st.Rv, m.ChangeText(st), st.Value, model.StateRVText(lo, hi))
		v.Want, v.Got = fmt.Sprintf("%s at RV %d or later", name, st.Rv), "404"
		m.Evidence(&v, st.Ref())
		return v, true
	}
	it := o.Response.Object
	r := model.ObjRV(it)
	if r == 0 {
		return v, false
	}
	v.Revision = r
	c := ob.Exactly(r)
	switch {
	case c == nil && ob.Unknown(r) && ob.Floor-1 < lo:
		// A state from before the segment's context, where the object's
		// changes from its Floor on are known: older than lo allows.
		nx := ob.At(ob.Floor)
		v.Message = fmt.Sprintf("returned %s at RV %d (value %q), but %s changed it at RV %d, at or below %d", name, r,
			it.Value, m.ChangeText(nx), nx.Rv, lo)
		v.Want, v.Got = fmt.Sprintf("%s as of RV %d or later", name, lo), fmt.Sprintf("RV %d", r)
		m.Evidence(&v, nx.Ref())
		return v, true
	case c == nil && ob.Unknown(r):
		return v, false // a state from before the segment's context
	case c == nil:
		why, refs := m.ExplainValue(name, r, it.Value)
		v.Message = fmt.Sprintf("returned %s at RV %d with value %q, which no write explains: %s", name, r, it.Value, why)
		v.Want, v.Got = "a committed state", fmt.Sprintf("%q at RV %d", it.Value, r)
		m.Evidence(&v, refs...)
		return v, true
	case c.Del:
		v.Message = fmt.Sprintf("returned %s at RV %d, the RV of its deletion by %s", name, r, m.ChangeText(c))
		v.Want, v.Got = "a state of the object", "its deletion's RV"
		m.Evidence(&v, c.Ref())
		return v, true
	case c.Value != it.Value:
		v.Message = fmt.Sprintf("returned %s at RV %d with value %q, but %s wrote %q there", name, r, it.Value,
			m.ChangeText(c), c.Value)
		v.Want, v.Got = fmt.Sprintf("%q", c.Value), fmt.Sprintf("%q", it.Value)
		m.Evidence(&v, c.Ref())
		return v, true
	}
	up, nx, sp := ob.Upper(c)
	switch {
	case up < lo && sp != nil:
		v.Message = fmt.Sprintf("returned %s at RV %d (value %q), but %s deleted it after that, at an RV between %d and %d, "+
			"at or below %d", name, r, it.Value, m.WriteText(sp.Write), sp.Lo+1, sp.Hi-1, lo)
		v.Want, v.Got = fmt.Sprintf("a state at RV %d or later", lo), fmt.Sprintf("RV %d", r)
		v.Operations = append(v.Operations, sp.Write.Op.ID)
		return v, true
	case up < lo:
		v.Message = fmt.Sprintf("returned %s at RV %d (value %q), but %s changed it at RV %d, at or below %d", name, r,
			it.Value, m.ChangeText(nx), nx.Rv, lo)
		v.Want, v.Got = fmt.Sprintf("%s as of RV %d or later", name, lo), fmt.Sprintf("RV %d", r)
		m.Evidence(&v, nx.Ref())
		return v, true
	case r > hi:
		v.Message = fmt.Sprintf("returned %s at RV %d, above %d, the highest RV its answer can reflect", name, r, hi)
		v.Want, v.Got = fmt.Sprintf("<= %d", hi), fmt.Sprint(r)
		return v, true
	}
	return v, false
}

// belowAfter returns the lowest RV the store is proven to have had after
// t (an acknowledged or placed write called after t commits above it; a
// consistent list called after t answers at or above it... so the store
// was below that write's RV, and at most that list's RV, after t), with
// the operation that proves it; MaxInt64 if nothing does.
func belowAfter(m *model.Model, x *linIndex, t time.Duration) (int64, int64) {
	w, wOp := x.hiW.MinAfter(t)
	if w != math.MaxInt64 {
		w-- // the store was below the write's RV when it was called
	}
	l, lOp := x.hiL.MinAfter(t)
	if l < w {
		return l, lOp
	}
	return w, wOp
}
