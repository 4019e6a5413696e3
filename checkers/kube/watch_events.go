package kube

import (
	"fmt"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/checkers/kube/model"
	"github.com/vigil-suite/vigil/history"
)

// CheckWatchExpired is kube/watch-expired. An expired watch is
// answered with HTTP 200 and an ERROR event whose Status is 410 with
// reason Expired — not refused with HTTP 410 — and nothing follows an
// ERROR event. A watch from an RV below a compaction of etcd that vigil
// made (and that returned before the watch was called) is owed that 410
// or every change from its RV on: one that starts silently later fails.
// (The watch cache may still hold the compacted history and serve it.)
func CheckWatchExpired(h *history.History, cfg check.Config) check.Result {
	return checkWatchExpired(model.Build(h), cfg)
}

func checkWatchExpired(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	type compaction struct {
		at  time.Duration
		rev int64
		op  int64
	}
	var comps []compaction
	for i := range h.Operations {
		o := &h.Operations[i]
		if o.Request.Kind == history.OpCompact && o.Response != nil {
			comps = append(comps, compaction{o.Return, o.Request.Revision, o.ID})
		}
	}
	judged, errors := 0, 0
	rule := facts.NewEndings(h)
	for _, kw := range m.Watches {
		w := kw.Stream
		// An expired end with no ERROR event is an HTTP 410 refusal.
		if end := rule.KubeWatch(w); end.Class == facts.EndingExpired && end.Index < 0 {
			judged++
			col.Add(check.Violation{Guarantee: ErrWatchExpired,
				Message: fmt.Sprintf("watch %d (client %d) from RV %q was refused with HTTP %s; an expired watch is answered "+
					"with HTTP 200 and an ERROR event", w.ID, w.Client, w.Request.ResourceVersion, model.StatusText(w.End.Status)),
				Watch: w.ID, Client: w.Client, Want: "HTTP 200, ERROR 410 Expired", Got: "HTTP " + model.StatusText(w.End.Status)})
		}
		if kw.ErrIdx >= 0 {
			judged++
			errors++
			e := &w.Events[kw.ErrIdx]
			if model.IsExpired(e.Status) && e.Status.Reason != "Expired" {
				col.Add(check.Violation{Guarantee: ErrWatchExpired,
					Message: fmt.Sprintf("watch %d (client %d) got an ERROR event 410 with reason %q, not Expired",
						w.ID, w.Client, e.Status.Reason),
					Watch: w.ID, Client: w.Client, Want: "410 Expired", Got: model.StatusText(e.Status),
					KubeEvents: []history.KubeEventAt{model.EventAt(w, kw.ErrIdx)}})
			}
			if kw.ErrIdx+1 < len(w.Events) {
				col.Add(check.Violation{Guarantee: ErrWatchExpired,
					Message: fmt.Sprintf("watch %d (client %d) delivered %s after its ERROR event (%s)", w.ID, w.Client,
						model.EventText(w.Events[kw.ErrIdx+1]), model.EventText(*e)),
					Watch: w.ID, Client: w.Client, Want: "nothing after ERROR", Got: model.EventText(w.Events[kw.ErrIdx+1]),
					KubeEvents: []history.KubeEventAt{model.EventAt(w, kw.ErrIdx), model.EventAt(w, kw.ErrIdx+1)}})
			}
		}
		if kw.Mode != model.WatchExplicit || kw.ErrIdx == 0 {
			continue
		}
		var comp compaction
		for _, c := range comps {
			if c.at < w.Call && c.rev > comp.rev {
				comp = c
			}
		}
		if kw.ReqRV+1 >= comp.rev {
			continue
		}
		judged++
		upto := kw.Last
		if f := kw.FirstLiveRV(); f > 0 {
			upto = f - 1
		}
		for _, c := range m.ChangesIn(kw.ReqRV, upto) {
			if typ, sure := m.Expected(c, kw.Sel); typ == "" || !sure {
				continue
			}
			v := check.Violation{Guarantee: ErrWatchExpired,
				Message: fmt.Sprintf("watch %d (client %d) from RV %d, below etcd's compaction at %d (etcd operation %d), was "+
					"not answered 410 and started silently later: it skipped the change of %s at RV %d (%s)",
					w.ID, w.Client, kw.ReqRV, comp.rev, comp.op, c.Obj.Name, c.Rv, m.ChangeText(c)),
				Watch: w.ID, Client: w.Client, Key: c.Obj.Name, Revision: c.Rv,
				Want: "ERROR 410 Expired, or every change from RV " + fmt.Sprint(kw.ReqRV+1), Got: "a later start"}
			if len(kw.Live) > 0 {
				v.KubeEvents = []history.KubeEventAt{model.EventAt(w, kw.Live[0])}
			}
			m.Evidence(&v, c.Ref())
			col.Add(v)
			break
		}
	}
	figures := map[string]float64{"watches_judged": float64(judged), "error_events": float64(errors),
		"compactions": float64(len(comps))}
	if judged == 0 {
		return check.Skip(NameWatchExpired, kubeSkipReason(h, "no watch expired, ended in an ERROR event or started "+
			"below a compaction"), figures)
	}
	return col.Result(NameWatchExpired, figures)
}

// CheckWatchInitialState is kube/watch-initial-state: a watch from RV
// unset or "0" (without sendInitialEvents) starts with ADDED events that
// are the state of the collection at one RV (each object at its state
// there, none missing, under the watch's selector), and every later event
// has an RV above that state's. A server may turn such a watch into a
// streaming list (Kubernetes 1.34+ with WatchList); its initial-events-end
// bookmark then names the state's RV.
func CheckWatchInitialState(h *history.History, cfg check.Config) check.Result {
	return checkWatchInitialState(model.Build(h), cfg)
}

func checkWatchInitialState(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	judged := 0
	for _, kw := range m.Watches {
		if kw.Mode != model.WatchState {
			continue
		}
		judged++
		initialStateIssues(m, kw, col, ErrWatchInitialState, "initial state")
	}
	figures := map[string]float64{"watches_judged": float64(judged)}
	if judged == 0 {
		return check.Skip(NameWatchInitialState, kubeSkipReason(h, "no watch from RV unset or \"0\""), figures)
	}
	return col.Result(NameWatchInitialState, figures)
}

// initialIndex maps an index into kw.items back to the event index.
func initialIndex(kw *model.Watch, item int) int {
	n := -1
	for i := 0; i < kw.InitN; i++ {
		e := &kw.Stream.Events[i]
		if e.Type == history.KubeAdded && e.Object != nil {
			n++
			if n == item {
				return i
			}
		}
	}
	return 0
}

// CheckWatchSelector is kube/watch-selector, for watches with a label
// selector: every ADDED or MODIFIED object (initial ones too) matches it,
// and so does the state a DELETED event carries; a change that makes an
// object match is ADDED, one that makes it stop matching (or deletes a
// matching one) is DELETED, one that keeps it matching is MODIFIED, and
// one that leaves it outside is not delivered. Where an unplaced write may
// have changed the labels just before, the type is not judged.
func CheckWatchSelector(h *history.History, cfg check.Config) check.Result {
	return checkWatchSelector(model.Build(h), cfg)
}

func checkWatchSelector(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	judged := 0
	for _, kw := range m.Watches {
		if kw.Sel == nil || kw.Mode == model.WatchRefused || kw.Mode == model.WatchUnjudged {
			continue
		}
		judged++
		w := kw.Stream
		for i := 0; i < kw.LiveEnd(); i++ {
			e := &w.Events[i]
			if e.Object == nil || e.Type == history.KubeBookmark || m.Objs[e.Object.Name] == nil {
				continue
			}
			if !kw.Sel.Matches(e.Object.Name, e.Object.Labels) {
				what := "an object"
				if e.Type == history.KubeDeleted {
					what = "the last matching state of an object"
				}
				col.Add(check.Violation{Guarantee: ErrWatchSelector,
					Message: fmt.Sprintf("watch %d (client %d, selector %q) delivered %s with labels %v, which do not match; "+
						"a DELETED event carries %s", w.ID, w.Client, kw.Sel.Raw, model.EventText(*e), e.Object.Labels, what),
					Watch: w.ID, Client: w.Client, Key: e.Object.Name, Revision: kw.Rv(i),
					Want: "labels matching " + kw.Sel.Raw, Got: fmt.Sprint(e.Object.Labels),
					KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}})
			}
		}
		for _, i := range kw.Live {
			e := &w.Events[i]
			c := m.ChangeAt[kw.Rv(i)]
			if c == nil || c.Obj.Name != e.Object.Name {
				continue // kube/watch-from-rv reports it
			}
			typ, sure := m.Expected(c, kw.Sel)
			if !sure || model.TypeFits(e.Type, typ) {
				continue
			}
			want := typ
			if want == "" {
				want = "nothing (the object matches neither before nor after)"
			}
			v := check.Violation{Guarantee: ErrWatchSelector,
				Message: fmt.Sprintf("watch %d (client %d, selector %q) delivered %s for %s, which %s; want %s",
					w.ID, w.Client, kw.Sel.Raw, model.EventText(*e), m.ChangeText(c), transition(m, c, kw.Sel), want),
				Watch: w.ID, Client: w.Client, Key: c.Obj.Name, Revision: c.Rv, Want: want, Got: e.Type,
				KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}}
			m.Evidence(&v, c.Ref())
			col.Add(v)
		}
		for _, c := range m.ChangesIn(kw.Start, kw.Last) {
			typ, sure := m.Expected(c, kw.Sel)
			if !sure || (typ != history.KubeAdded && typ != history.KubeDeleted) {
				continue
			}
			if i := kw.EventAt(c.Rv); i >= 0 && w.Events[i].Object.Name == c.Obj.Name {
				continue
			}
			v := check.Violation{Guarantee: ErrWatchSelector,
				Message: fmt.Sprintf("watch %d (client %d, selector %q) did not deliver %s for %s at RV %d, which %s",
					w.ID, w.Client, kw.Sel.Raw, typ, m.ChangeText(c), c.Rv, transition(m, c, kw.Sel)),
				Watch: w.ID, Client: w.Client, Key: c.Obj.Name, Revision: c.Rv, Want: typ, Got: "nothing"}
			m.Evidence(&v, c.Ref())
			col.Add(v)
		}
	}
	figures := map[string]float64{"watches_judged": float64(judged)}
	if judged == 0 {
		return check.Skip(NameWatchSelector, kubeSkipReason(h, "no watch had a label selector"), figures)
	}
	return col.Result(NameWatchSelector, figures)
}

// CheckWatchDeletedRV is kube/watch-deleted-rv: a DELETED event
// carries its object's last state (the value of the change just before)
// with the RV of the deletion — on a watch without a selector, never the
// RV of the object's last create or update. On a watch with a selector a
// DELETED may report the object leaving it; the same holds with the RV of
// that change.
func CheckWatchDeletedRV(h *history.History, cfg check.Config) check.Result {
	return checkWatchDeletedRV(model.Build(h), cfg)
}

func checkWatchDeletedRV(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	judged := 0
	for _, kw := range m.Watches {
		if kw.Mode == model.WatchRefused || kw.Mode == model.WatchUnjudged {
			continue
		}
		w := kw.Stream
		for _, i := range kw.Live {
			e := &w.Events[i]
			o := m.Objs[e.Object.Name]
			if e.Type != history.KubeDeleted || o == nil {
				continue
			}
			rv := kw.Rv(i)
			if o.Unknown(rv - 1) {
				continue // its state before lies below the segment's context
			}
			judged++
			c := o.Exactly(rv)
			if kw.Sel == nil && c != nil && !c.Del {
				v := check.Violation{Guarantee: ErrWatchDeletedRV,
					Message: fmt.Sprintf("watch %d (client %d) delivered %s: RV %d is %s of %s, not its deletion",
						w.ID, w.Client, model.EventText(*e), rv, m.ChangeText(c), o.Name),
					Watch: w.ID, Client: w.Client, Key: o.Name, Revision: rv, Want: "the deletion's RV", Got: fmt.Sprint(rv),
					KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}}
				m.Evidence(&v, c.Ref())
				col.Add(v)
				continue
			}
			prev := o.At(rv - 1)
			carried := m.ByValue[e.Object.Value]
			switch {
			case carried != nil && carried.Rv >= rv:
				v := check.Violation{Guarantee: ErrWatchDeletedRV,
					Message: fmt.Sprintf("watch %d (client %d) delivered %s, carrying the state %s made at RV %d, not before the "+
						"deletion", w.ID, w.Client, model.EventText(*e), m.WriteText(carried), carried.Rv),
					Watch: w.ID, Client: w.Client, Key: o.Name, Revision: rv, Want: fmt.Sprintf("a state below RV %d", rv),
					Got: fmt.Sprint(carried.Rv), KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}}
				m.Evidence(&v, model.Ref{Op: carried.Op.ID, Index: -1})
				col.Add(v)
			case prev.Exists() && e.Object.Value != prev.Value && o.Settled(prev.Rv, rv-1, true) ||
				prev.Exists() && carried != nil && carried.Rv > 0 && carried.Rv < prev.Rv && e.Object.Value != prev.Value:
				// (A status write or a mark keeps the value an earlier write made.)
				v := check.Violation{Guarantee: ErrWatchDeletedRV,
					Message: fmt.Sprintf("watch %d (client %d) delivered %s, but %s's last state before RV %d was %q, made by "+
						"%s at RV %d", w.ID, w.Client, model.EventText(*e), o.Name, rv, prev.Value, m.ChangeText(prev), prev.Rv),
					Watch: w.ID, Client: w.Client, Key: o.Name, Revision: rv,
					Want: fmt.Sprintf("%q", prev.Value), Got: fmt.Sprintf("%q", e.Object.Value),
					KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}}
				m.Evidence(&v, prev.Ref())
				col.Add(v)
			}
		}
	}
	figures := map[string]float64{"deleted_events": float64(judged)}
	if judged == 0 {
		return check.Skip(NameWatchDeletedRV, kubeSkipReason(h, "no watch delivered a DELETED event"), figures)
	}
	return col.Result(NameWatchDeletedRV, figures)
}

// Bounds of kube/watch-timeout. kube-apiserver ends a watch with
// timeoutSeconds T exactly T after its handler started (the handler's
// context.WithTimeout and serveWatch's timer, k8s.io/apiserver
// pkg/endpoints/handlers/get.go; no jitter: the jitter applies only to
// --min-request-timeout when timeoutSeconds is absent). The handler starts
// after the client's call, so the clean end comes at or after T; the slack
// covers a loaded machine.
const (
	watchTimeoutSlackFixed = 5 * time.Second
	watchTimeoutSlackPart  = 4 // plus a quarter of T
)

func watchTimeoutSlack(t time.Duration) time.Duration {
	return watchTimeoutSlackFixed + t/watchTimeoutSlackPart
}

// CheckWatchTimeout is kube/watch-timeout. It owns how Kubernetes
// watches end, as the one rule of facts.Endings classifies them:
//   - an unexplained end fails: a watch the server closed cleanly before
//     its timeoutSeconds (or, without one, well before the server's own
//     timeout), with no ERROR event and no fault reaching its API server;
//     the client learns nothing and a reflector just watches again;
//   - a watch with timeoutSeconds T, unless vigil closed it first or the
//     server answered (an ERROR event, an HTTP status), ends cleanly no
//     later than T plus a slack (5 s and a quarter of T); one still open
//     later, or one that broke at or after T instead of ending, fails.
//
// Watches that a fault reaching their API server overlapped are not held
// to the slack (a paused server's timer runs late), and an end during
// such a fault is the fault's (facts.FaultSettle after it too). The counts
// of each class are the figures "ending_<class>".
func CheckWatchTimeout(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	rule := facts.NewEndings(h)
	judged, faulted := 0, 0
	var ends []facts.Ending
	for _, w := range h.KubeWatches {
		end := rule.KubeWatch(w)
		ends = append(ends, end)
		T := end.Timeout
		base := check.Violation{Guarantee: ErrWatchTimeout, Watch: w.ID, Client: w.Client}
		if n := len(w.Events); n > 0 {
			base.KubeEvents = []history.KubeEventAt{model.EventAt(w, n-1)}
			if w.Events[n-1].Object != nil {
				base.Revision, _ = facts.ParseRV(w.Events[n-1].Object.ResourceVersion)
			}
		}
		if end.Class == facts.EndingUnexplained {
			judged++
			v := base
			v.Message = fmt.Sprintf("watch %d (client %d) ended unexplained: %s", w.ID, w.Client, end.Why)
			v.Want = "an ERROR event, or a clean end at its timeout"
			if T > 0 {
				v.Want = fmt.Sprintf("an ERROR event, or a clean end at timeoutSeconds=%d", w.Request.TimeoutSeconds)
			}
			v.Got = fmt.Sprintf("a clean close after %.1fs", end.Elapsed.Seconds())
			col.Add(v)
			continue
		}
		switch end.Class {
		case facts.EndingAnswered, facts.EndingExpired, facts.EndingRefused, facts.EndingOpen:
			continue // the server answered, or the end is not known
		}
		if T <= 0 {
			continue
		}
		deadline, slack := w.Call+T, watchTimeoutSlack(T)
		elapsed := end.Elapsed
		if end.Class == facts.EndingClient && end.At <= deadline+slack {
			continue
		}
		if end.Class == facts.EndingFault || rule.FaultAt(w.Server, w.Call, min(end.At, deadline+slack), 0) != nil {
			faulted++
			continue
		}
		v := base
		v.Want = fmt.Sprintf("a clean end by %.1fs", (T + slack).Seconds())
		switch {
		case end.Class == facts.EndingTimeout && elapsed <= T+slack:
		case end.Class == facts.EndingTimeout:
			v.Message = fmt.Sprintf("watch %d (client %d) with timeoutSeconds=%d ended only %.1fs after it was called",
				w.ID, w.Client, w.Request.TimeoutSeconds, elapsed.Seconds())
			v.Got = fmt.Sprintf("ended at %.1fs", elapsed.Seconds())
			col.Add(v)
		case end.Class == facts.EndingClient:
			v.Message = fmt.Sprintf("watch %d (client %d) with timeoutSeconds=%d was still open %.1fs after it was called, "+
				"when vigil closed it", w.ID, w.Client, w.Request.TimeoutSeconds, elapsed.Seconds())
			v.Got = fmt.Sprintf("open at %.1fs", elapsed.Seconds())
			col.Add(v)
		case end.Class == facts.EndingBroken && elapsed >= T-facts.TimeoutTolerance:
			v.Message = fmt.Sprintf("watch %d (client %d) with timeoutSeconds=%d broke %.1fs after it was called instead of "+
				"ending cleanly: %s", w.ID, w.Client, w.Request.TimeoutSeconds, elapsed.Seconds(), w.End.Error)
			v.Got = "error: " + w.End.Error
			col.Add(v)
		default:
			continue // it broke before its timeout: a visible end, nothing to judge
		}
		judged++
	}
	figures := facts.EndingFigures(ends)
	figures["watches_judged"], figures["overlapped_by_faults"] = float64(judged), float64(faulted)
	if judged == 0 {
		return check.Skip(NameWatchTimeout, kubeSkipReason(h, "no watch with timeoutSeconds ran to its timeout, and none "+
			"ended before it"), figures)
	}
	r := col.Result(NameWatchTimeout, figures)
	r.Judged, r.Excused = judged, map[string]int{"fault": faulted}
	return r
}

// kubeFaultDuring reports a fault overlapping (from, to) that reaches
// server (facts.Endings.FaultAt: a sabotage record never does).
func kubeFaultDuring(h *history.History, server string, from, to time.Duration) bool {
	return facts.NewEndings(h).FaultAt(server, from, to, 0) != nil
}

// initialStateIssues reports the initial part of a watch that is not one
// state, and later events at or below the state's RV. Selector mismatches
// are kube/watch-selector's.
func initialStateIssues(m *model.Model, kw *model.Watch, col *check.Collector, g error, what string) {
	w := kw.Stream
	rvText := model.StateRVText(kw.StateLo, kw.StateHi)
	for _, iss := range kw.State.Issues {
		if iss.Kind == model.IssueSelector {
			continue
		}
		v := check.Violation{Guarantee: g, Watch: w.ID, Client: w.Client, Key: iss.Name, Revision: iss.Rv}
		text, refs := m.IssueText(iss, kw.Items, rvText)
		v.Message = fmt.Sprintf("watch %d (client %d) from RV %q: its %s is not one state of the collection at RV %s: %s",
			w.ID, w.Client, w.Request.ResourceVersion, what, rvText, text)
		if iss.Item >= 0 {
			v.KubeEvents = append(v.KubeEvents, model.EventAt(w, initialIndex(kw, iss.Item)))
		}
		m.Evidence(&v, refs...)
		col.Add(v)
	}
	top := kw.StateLo
	for _, i := range kw.Live {
		rv := kw.Rv(i)
		if rv > top {
			continue
		}
		col.Add(check.Violation{Guarantee: g,
			Message: fmt.Sprintf("watch %d (client %d) delivered %s after its %s, which shows RV %d: a later event must "+
				"have an RV above the state's", w.ID, w.Client, model.EventText(w.Events[i]), what, top),
			Watch: w.ID, Client: w.Client, Key: w.Events[i].Object.Name, Revision: rv,
			Want: fmt.Sprintf("> %d", top), Got: fmt.Sprint(rv), KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}})
	}
}

// transition says what a change did to an object with respect to sel.
func transition(m *model.Model, c *model.Change, sel *model.LabelSelector) string {
	prev := c.Obj.At(c.Rv - 1)
	prevM, newM := prev.Exists() && sel.Matches(prev.Obj.Name, prev.Labels), c.Exists() && sel.Matches(c.Obj.Name, c.Labels)
	switch {
	case c.Del && prevM:
		return "deleted a matching object"
	case c.Del:
		return "deleted an object that did not match"
	case prevM && newM:
		return "kept it matching"
	case newM && !prev.Exists():
		return "created it matching"
	case newM:
		return fmt.Sprintf("made it match (labels %v, before %v)", c.Labels, prev.Labels)
	case prevM:
		return fmt.Sprintf("made it stop matching (labels %v, before %v)", c.Labels, prev.Labels)
	}
	return fmt.Sprintf("left it outside the selector (labels %v)", c.Labels)
}
