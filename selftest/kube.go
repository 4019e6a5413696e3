package selftest

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/checkers/kube"
	"github.com/vigil-suite/vigil/history"
)

// KubeKinds are the corruptions of Kubernetes histories. In a site, watch
// and ev index h.KubeWatches and a watch's events, op and kv index
// h.KubeOps and a list's items.
func KubeKinds() []Kind {
	return append([]Kind{
		{Name: "kube-drop-event", Owner: kube.NameWatchFromRV, sites: innerKubeEvents, apply: dropKubeEvent},
		{Name: "kube-duplicate-event", Owner: kube.NameWatchOrdered, sites: innerKubeEvents, apply: duplicateKubeEvent},
		{Name: "kube-swap-events", Owner: kube.NameWatchOrdered, sites: kubeEventPairs, apply: swapKubeEvents},
		{Name: "kube-event-rv+1", Owner: kube.NameWatchFromRV, sites: innerKubeEvents, apply: shiftKubeEvent(1)},
		{Name: "kube-event-rv-1", Owner: kube.NameWatchFromRV, sites: innerKubeEvents, apply: shiftKubeEvent(-1)},
		{Name: "kube-rv-leading-zero", Owner: kube.NameRVFormat, sites: kubeChangeEvents, apply: leadingZero},
		{Name: "kube-drop-initial-events-end", Owner: kube.NameWatchlistInitial, sites: initialEventsEnds, apply: dropKubeEvent,
			argue: initialEventsUnasked},
		{Name: "kube-get-older-value", Owner: kube.NameConsistentRead, sites: staleGets, apply: getOlderValue},
		{Name: "kube-list-drop-item", Owner: kube.NameConsistentRead, sites: consistentListItems, apply: dropListItem},
		{Name: "kube-page-drop-item", Owner: kube.NamePagination, sites: pageItems, apply: dropListItem, argue: lastLonePage},
		{Name: "kube-next-page-rv+1", Owner: kube.NamePagination, sites: nextPages, apply: nextPageRV},
		{Name: "kube-410-without-fresh-token", Owner: kube.NameContinueExpired, sites: expiredContinues, apply: dropFreshToken},
		{Name: "kube-409-as-success", Owner: kube.NameOptimisticConcurrency, sites: staleConflicts, apply: conflictAccepted},
		{Name: "kube-quiet-end", Owner: kube.NameWatchTimeout, sites: kubeQuietEndSites, apply: kubeQuietEnd,
			argue: endDuringFault},
	}, kubeWriteKinds()...)
}

// isChange: an event that reports a change of an object.
func isChange(e history.KubeEvent) bool {
	return e.Object != nil && (e.Type == history.KubeAdded || e.Type == history.KubeModified || e.Type == history.KubeDeleted)
}

// startsAtRV: a watch from an explicit RV, without an initial state, so
// every event it delivers is a change after that RV.
func startsAtRV(w *history.KubeWatchStream) bool {
	rv := w.Request.ResourceVersion
	return rv != "" && rv != "0" && (w.Request.SendInitialEvents == nil || !*w.Request.SendInitialEvents)
}

// changeIndexes are the indexes of w's change events.
func changeIndexes(w *history.KubeWatchStream) []int {
	var out []int
	for i, e := range w.Events {
		if isChange(e) {
			out = append(out, i)
		}
	}
	return out
}

// innerKubeEvents are the change events of watches from an explicit RV
// that are neither the watch's first change nor its last: inside the span
// the watch vouches for, so a gap, not a shorter span.
func innerKubeEvents(h *history.History) []site {
	var out []site
	for wi, w := range h.KubeWatches {
		if !startsAtRV(w) {
			continue
		}
		idx := changeIndexes(w)
		for j := 1; j+1 < len(idx); j++ {
			out = append(out, site{watch: wi, ev: idx[j]})
		}
	}
	return out
}

// kubeEventPairs are two successive change events of a watch from an
// explicit RV, at different RVs.
func kubeEventPairs(h *history.History) []site {
	var out []site
	for wi, w := range h.KubeWatches {
		if !startsAtRV(w) {
			continue
		}
		idx := changeIndexes(w)
		for j := 1; j < len(idx); j++ {
			if w.Events[idx[j-1]].Object.ResourceVersion != w.Events[idx[j]].Object.ResourceVersion {
				out = append(out, site{watch: wi, ev: idx[j-1], ev2: idx[j]})
			}
		}
	}
	return out
}

// kubeChangeEvents are every change event of every watch.
func kubeChangeEvents(h *history.History) []site {
	var out []site
	for wi, w := range h.KubeWatches {
		for _, i := range changeIndexes(w) {
			out = append(out, site{watch: wi, ev: i})
		}
	}
	return out
}

// initialEventsEnds are the BOOKMARKs that end a streaming list's
// initial events.
func initialEventsEnds(h *history.History) []site {
	var out []site
	for wi, w := range h.KubeWatches {
		for i, e := range w.Events {
			if e.Type == history.KubeBookmark && e.Object != nil && e.Object.Annotations[history.AnnotationInitialEventsEnd] == "true" {
				out = append(out, site{watch: wi, ev: i})
			}
		}
	}
	return out
}

// ackedState is an object state an acknowledged create or update made.
type ackedState struct {
	obj history.Object
	rv  int64
	ret time.Duration
}

// ackedStates lists, per object, the states acknowledged writes made, by RV.
func ackedStates(h *history.History) map[string][]ackedState {
	out := map[string][]ackedState{}
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if (o.Request.Verb != history.KubeCreate && o.Request.Verb != history.KubeUpdate) || o.Response == nil || o.Response.Object == nil {
			continue
		}
		rv, err := strconv.ParseInt(o.Response.Object.ResourceVersion, 10, 64)
		if err != nil {
			continue
		}
		out[o.Response.Object.Name] = append(out[o.Response.Object.Name], ackedState{*o.Response.Object, rv, o.Return})
	}
	for _, list := range out {
		slices.SortFunc(list, func(a, b ackedState) int { return int(a.rv - b.rv) })
	}
	return out
}

// staleGets are gets with RV unset that returned a state an acknowledged
// write made and acknowledged before the get was called, paired with the
// state an acknowledged write made before it: returning that one instead
// is stale for sure.
func staleGets(h *history.History) []site {
	states := ackedStates(h)
	var out []site
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Request.Verb != history.KubeGet || o.Request.ResourceVersion != "" || o.Response == nil || o.Response.Object == nil {
			continue
		}
		list := states[o.Response.Object.Name]
		j := slices.IndexFunc(list, func(s ackedState) bool { return s.obj.ResourceVersion == o.Response.Object.ResourceVersion })
		if j > 0 && list[j].ret < o.Call {
			out = append(out, site{op: i, kv: j - 1, alt: o.Response.Object.Name})
		}
	}
	return out
}

// listItems are the items of the lists keep accepts.
func listItems(keep func(o *history.KubeOperation) bool) func(h *history.History) []site {
	return func(h *history.History) []site {
		var out []site
		for i := range h.KubeOps {
			o := &h.KubeOps[i]
			if o.Request.Verb != history.KubeList || o.Response == nil || !keep(o) {
				continue
			}
			for k := range o.Response.Items {
				out = append(out, site{op: i, kv: k})
			}
		}
		return out
	}
}

var (
	// consistentListItems: items of complete lists with RV unset and no
	// selector, which must hold the whole state at their RV.
	consistentListItems = listItems(func(o *history.KubeOperation) bool {
		return o.Request.ResourceVersion == "" && o.Request.Limit == 0 && o.Request.LabelSelector == "" && o.Request.Continue == ""
	})
	// pageItems: items of paginated lists without a selector.
	pageItems = listItems(func(o *history.KubeOperation) bool {
		return o.Request.Limit > 0 && o.Request.LabelSelector == "" && o.Request.ResourceVersion != "0"
	})
)

// nextPages are answered requests for a page after the first.
func nextPages(h *history.History) []site {
	var out []site
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Request.Verb == history.KubeList && o.Request.Continue != "" && o.Response != nil && o.Response.ListRV != "" {
			out = append(out, site{op: i})
		}
	}
	return out
}

// expiredContinues are next-page requests answered 410 with a fresh token.
func expiredContinues(h *history.History) []site {
	var out []site
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Request.Verb == history.KubeList && o.Status != nil && o.Status.Code == 410 && o.Status.Continue != "" {
			out = append(out, site{op: i})
		}
	}
	return out
}

// staleConflicts are updates refused 409 whose precondition the history
// proves stale: a write of the object at a higher RV was acknowledged
// before the update was called.
func staleConflicts(h *history.History) []site {
	states := ackedStates(h)
	var out []site
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Request.Verb != history.KubeUpdate || o.Status == nil || o.Status.Code != 409 || o.Request.Object == nil {
			continue
		}
		p, err := strconv.ParseInt(o.Request.Object.ResourceVersion, 10, 64)
		if err != nil {
			continue
		}
		if slices.ContainsFunc(states[o.Request.Object.Name], func(s ackedState) bool { return s.rv > p && s.ret < o.Call }) {
			out = append(out, site{op: i})
		}
	}
	return out
}

// initialEventsUnasked: a watch from RV unset or "0" that did not ask
// for sendInitialEvents may be served the legacy way, its initial state as
// ADDED events with no end marker; the server turned it into a streaming
// list, and without the marker it still reads as a correct legacy answer.
//
// And a streaming list whose marker is followed only by ADDED events
// until vigil closed it reads as one still sending its initial state (at
// an RV the request allows), which a correct server may be doing.
func initialEventsUnasked(h *history.History, s site) string {
	w := h.KubeWatches[s.watch]
	if sie := w.Request.SendInitialEvents; sie == nil || !*sie {
		return fmt.Sprintf("kube watch %d did not ask for sendInitialEvents: without the marker its initial state is a "+
			"correct legacy answer", w.ID)
	}
	if w.End == nil || w.End.Reason != history.EndClient {
		return ""
	}
	for _, e := range w.Events[s.ev+1:] {
		if e.Type != history.KubeAdded && e.Type != history.KubeBookmark {
			return ""
		}
	}
	return fmt.Sprintf("kube watch %d received only ADDED events after the marker before vigil closed it: "+
		"without the marker it reads as a streaming list still sending its initial state", w.ID)
}

// lastLonePage: a page may hold fewer items than its limit, even none, so
// a page's only item can go unnoticed when no later page of the list was
// answered (the continue token that says where the page ended is opaque).
func lastLonePage(h *history.History, s site) string {
	o := &h.KubeOps[s.op]
	if len(o.Response.Items) != 1 {
		return ""
	}
	if o.Response.Continue != "" && slices.ContainsFunc(h.KubeOps, func(n history.KubeOperation) bool {
		return n.Request.Continue == o.Response.Continue && n.Response != nil
	}) {
		return ""
	}
	return fmt.Sprintf("kube operation %d: the page's only item, and no later page of the list was answered: an empty page "+
		"is allowed", o.ID)
}

// The corruptions.

// kubeQuietEndSites are, in every watch the server served, its change
// events after the first and before its last event: where a clean close
// cuts a watch that has delivered something and had more to say.
func kubeQuietEndSites(h *history.History) []site {
	var out []site
	for wi, w := range h.KubeWatches {
		if w.End == nil || w.End.Status != nil {
			continue
		}
		idx := changeIndexes(w)
		for j := 1; j < len(idx); j++ {
			if idx[j]+1 < len(w.Events) {
				out = append(out, site{watch: wi, ev: idx[j]})
			}
		}
	}
	return out
}

// kubeQuietEnd ends a watch right after one of its events, the server
// closing the stream cleanly: no ERROR event, no error.
func kubeQuietEnd(h *history.History, s site) string {
	w := h.KubeWatches[s.watch]
	cut := len(w.Events) - s.ev - 1
	w.Events = w.Events[:s.ev+1]
	t := w.Events[s.ev].Time
	w.End = &history.KubeWatchEnd{Watch: w.ID, Time: t, Reason: history.EndServer}
	return fmt.Sprintf("kube watch %d: closed cleanly %.2fs after its call, after %s (%d events dropped)", w.ID,
		(t - w.Call).Seconds(), kubeEventText(w.Events[s.ev]), cut)
}

// endDuringFault: a watch closed cleanly while a fault reached its API
// server, or within facts.FaultSettle after it, is the fault's doing:
// kube-apiserver closes its watches without a word when it shuts down
// and when its watch cache starts again after its etcd watch failed.
func endDuringFault(h *history.History, s site) string {
	w := h.KubeWatches[s.watch]
	t := w.Events[s.ev].Time
	if f := facts.NewEndings(h).FaultAt(w.Server, t, t, facts.FaultSettle); f != nil {
		return fmt.Sprintf("the close at %.2fs falls during fault %s (%d, %.2fs to %.2fs, settle %s): an end the fault explains",
			t.Seconds(), f.Name, f.ID, f.Start.Seconds(), f.End.Seconds(), facts.FaultSettle)
	}
	return ""
}

func dropKubeEvent(h *history.History, s site) string {
	w := h.KubeWatches[s.watch]
	e := w.Events[s.ev]
	w.Events = slices.Delete(w.Events, s.ev, s.ev+1)
	return fmt.Sprintf("kube watch %d: dropped event %d, %s", w.ID, s.ev, kubeEventText(e))
}

func duplicateKubeEvent(h *history.History, s site) string {
	w := h.KubeWatches[s.watch]
	e := w.Events[s.ev]
	w.Events = slices.Insert(w.Events, s.ev+1, e)
	return fmt.Sprintf("kube watch %d: delivered event %d, %s, twice", w.ID, s.ev, kubeEventText(e))
}

func swapKubeEvents(h *history.History, s site) string {
	w := h.KubeWatches[s.watch]
	a, b := w.Events[s.ev], w.Events[s.ev2]
	// Times stay in place: only the order of what arrived changes.
	w.Events[s.ev], w.Events[s.ev2] = b, a
	w.Events[s.ev].Time, w.Events[s.ev2].Time = a.Time, b.Time
	return fmt.Sprintf("kube watch %d: swapped events %d (%s) and %d (%s)", w.ID, s.ev, kubeEventText(a), s.ev2, kubeEventText(b))
}

func shiftKubeEvent(by int64) func(h *history.History, s site) string {
	return func(h *history.History, s site) string {
		w, e := mutableKubeEvent(h, s.watch, s.ev)
		was := kubeEventText(*e)
		rv, _ := strconv.ParseInt(e.Object.ResourceVersion, 10, 64)
		e.Object.ResourceVersion = strconv.FormatInt(rv+by, 10)
		return fmt.Sprintf("kube watch %d event %d: %s now at RV %s", w.ID, s.ev, was, e.Object.ResourceVersion)
	}
}

func leadingZero(h *history.History, s site) string {
	w, e := mutableKubeEvent(h, s.watch, s.ev)
	e.Object.ResourceVersion = "0" + e.Object.ResourceVersion
	return fmt.Sprintf("kube watch %d event %d: RV written %q", w.ID, s.ev, e.Object.ResourceVersion)
}

func getOlderValue(h *history.History, s site) string {
	o := mutableKubeOp(h, s.op)
	older := ackedStates(h)[s.alt][s.kv].obj
	was := *o.Response.Object
	o.Response.Object = &older
	return fmt.Sprintf("kube operation %d: get of %s returned the state at RV %s (%q) instead of RV %s (%q)",
		o.ID, s.alt, older.ResourceVersion, older.Value, was.ResourceVersion, was.Value)
}

func dropListItem(h *history.History, s site) string {
	o := mutableKubeOp(h, s.op)
	it := o.Response.Items[s.kv]
	o.Response.Items = slices.Delete(o.Response.Items, s.kv, s.kv+1)
	return fmt.Sprintf("kube operation %d: list at RV %s without item %s (RV %s)", o.ID, o.Response.ListRV, it.Name, it.ResourceVersion)
}

func nextPageRV(h *history.History, s site) string {
	o := mutableKubeOp(h, s.op)
	rv, _ := strconv.ParseInt(o.Response.ListRV, 10, 64)
	o.Response.ListRV = strconv.FormatInt(rv+1, 10)
	return fmt.Sprintf("kube operation %d: next page at list RV %s instead of %d", o.ID, o.Response.ListRV, rv)
}

func dropFreshToken(h *history.History, s site) string {
	o := mutableKubeOp(h, s.op)
	o.Status.Continue = ""
	return fmt.Sprintf("kube operation %d: 410 on an expired continue token without a fresh token", o.ID)
}

func conflictAccepted(h *history.History, s site) string {
	o := mutableKubeOp(h, s.op)
	top := int64(0)
	for _, list := range ackedStates(h) {
		top = max(top, list[len(list)-1].rv)
	}
	obj := *o.Request.Object
	obj.ResourceVersion = strconv.FormatInt(top+1, 10)
	o.Response, o.Status = &history.KubeResponse{Code: 200, Object: &obj}, nil
	return fmt.Sprintf("kube operation %d: update of %s on stale RV %s answered 200 at RV %s instead of 409",
		o.ID, obj.Name, o.Request.Object.ResourceVersion, obj.ResourceVersion)
}

func kubeEventText(e history.KubeEvent) string {
	return fmt.Sprintf("%s %s at RV %s", e.Type, e.Object.Name, e.Object.ResourceVersion)
}

// mutableKubeOp gives Kubernetes operation i of a clone its own answer.
func mutableKubeOp(h *history.History, i int) *history.KubeOperation {
	o := &h.KubeOps[i]
	if o.Response != nil {
		r := *o.Response
		r.Items = slices.Clone(r.Items)
		o.Response = &r
	}
	if o.Status != nil {
		st := *o.Status
		o.Status = &st
	}
	return o
}

// mutableKubeEvent gives event ei of Kubernetes watch wi of a clone its
// own object.
func mutableKubeEvent(h *history.History, wi, ei int) (*history.KubeWatchStream, *history.KubeEvent) {
	w := h.KubeWatches[wi]
	e := &w.Events[ei]
	obj := *e.Object
	obj.Annotations = maps.Clone(obj.Annotations)
	e.Object = &obj
	return w, e
}
