package kube

import (
	"math"
	"sort"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// What each Kubernetes watch asked for and how its events split into an
// initial part (a state) and a live part (changes), shared by the watch
// checks.

type kwMode int8

const (
	kwExplicit  kwMode = iota // from RV N > 0: the changes after N
	kwState                   // RV unset or "0" (no sendInitialEvents): a state, then changes
	kwStreaming               // sendInitialEvents=true: a state, its end bookmark, then changes
	kwNoInitial               // sendInitialEvents=false from RV unset or "0": changes from an RV the server picks
	kwRefused                 // answered with an error status and nothing else
	kwUnjudged                // a malformed RV or a selector vigil cannot parse
)

// kwatch is one watch as the checks see it.
type kwatch struct {
	w      *history.KubeWatchStream
	sel    *labelSelector
	selErr error
	mode   kwMode
	reqRV  int64
	errIdx int // the first ERROR event; -1 if none
	// initN: events [0, initN) are the initial part; endBM is the
	// k8s.io/initial-events-end bookmark among them, -1 if none.
	initN int
	endBM int
	items []history.Object
	// state judges the initial items as the state at an RV in [sLo, sHi].
	state    stateCheck
	sLo, sHi int64
	// The live part vouches for every change in (start, last]. start is
	// the requested RV, or the initial state's RV; when the history cannot
	// tell it (startKnown false) it is just below the first live RV.
	start      int64
	startKnown bool
	last       int64
	extended   bool // last was raised to the final write's RV
	// live holds the indices of the live ADDED, MODIFIED and DELETED
	// events in arrival order; byRV the same sorted by RV.
	live []int
	byRV []rvIdx
	// rvs holds each event's RV, parsed once (0: none or malformed).
	rvs []int64
}

// rv returns the RV of event i.
func (kw *kwatch) rv(i int) int64 { return kw.rvs[i] }

type rvIdx struct {
	rv  int64
	idx int
}

// liveEnd is the end of the events a watch vouches for: its first ERROR event, or its end.
func (kw *kwatch) liveEnd() int {
	if kw.errIdx >= 0 {
		return kw.errIdx
	}
	return len(kw.w.Events)
}

// eventAt returns the index of the watch's live event at rv, or -1.
func (kw *kwatch) eventAt(rv int64) int {
	i := sort.Search(len(kw.byRV), func(i int) bool { return kw.byRV[i].rv >= rv })
	if i < len(kw.byRV) && kw.byRV[i].rv == rv {
		return kw.byRV[i].idx
	}
	return -1
}

// firstLiveRV is the RV of the first live event, 0 if none.
func (kw *kwatch) firstLiveRV() int64 {
	if len(kw.live) == 0 {
		return 0
	}
	return kw.rv(kw.live[0])
}

// isInitialEnd reports the bookmark that ends a streaming list's initial events.
func isInitialEnd(e *history.KubeEvent) bool {
	return e.Type == history.KubeBookmark && e.Object != nil &&
		e.Object.Annotations[history.AnnotationInitialEventsEnd] == "true"
}

// typeFits reports whether an event type is the expected one.
func typeFits(got, want string) bool {
	if want == history.KubeAdded+"|"+history.KubeModified {
		return got == history.KubeAdded || got == history.KubeModified
	}
	return got == want
}

func (m *kubeModel) classifyWatches() {
	lastOfClient := map[int]*history.KubeWatchStream{}
	for _, w := range m.h.KubeWatches {
		if p := lastOfClient[w.Client]; p == nil || w.Call >= p.Call {
			lastOfClient[w.Client] = w
		}
	}
	mark, hasMark := m.h.Mark(history.MarkFinalWrite)
	for _, w := range m.h.KubeWatches {
		kw := m.classify(w)
		if hasMark && lastOfClient[w.Client] == w {
			m.extendToFinal(kw, mark)
		}
		m.watches = append(m.watches, kw)
		m.byWatch[w.ID] = kw
	}
}

func (m *kubeModel) classify(w *history.KubeWatchStream) *kwatch {
	kw := &kwatch{w: w, errIdx: -1, endBM: -1, rvs: make([]int64, len(w.Events))}
	kw.sel, kw.selErr = parseSelector(w.Request.LabelSelector)
	for i := range w.Events {
		kw.rvs[i] = objRV(w.Events[i].Object)
		if w.Events[i].Type == history.KubeError && kw.errIdx < 0 {
			kw.errIdx = i
		}
	}
	rv := w.Request.ResourceVersion
	sie := w.Request.SendInitialEvents
	switch {
	case len(w.Events) == 0 && w.End != nil && w.End.Status != nil:
		kw.mode = kwRefused
		return kw
	case kw.selErr != nil:
		kw.mode = kwUnjudged
		return kw
	case rv != "" && rv != "0":
		n, ok := facts.ParseRV(rv)
		if !ok {
			kw.mode = kwUnjudged
			return kw
		}
		kw.reqRV = n
		kw.mode = kwExplicit
		if sie != nil && *sie {
			kw.mode = kwStreaming
		}
	case sie != nil && *sie:
		kw.mode = kwStreaming
	case sie != nil:
		kw.mode = kwNoInitial
	default:
		kw.mode = kwState
	}
	end := kw.liveEnd()
	if kw.mode == kwState || kw.mode == kwStreaming {
		m.splitInitial(kw, end)
	}
	kw.live = make([]int, 0, end-kw.initN)
	kw.byRV = make([]rvIdx, 0, end-kw.initN)
	for i := kw.initN; i < end; i++ {
		e := &w.Events[i]
		rv := kw.rv(i)
		if e.Type == history.KubeBookmark {
			kw.last = max(kw.last, rv)
			continue
		}
		if e.Object == nil || rv == 0 {
			continue
		}
		kw.live = append(kw.live, i)
		kw.byRV = append(kw.byRV, rvIdx{rv, i})
		kw.last = max(kw.last, rv)
	}
	sort.SliceStable(kw.byRV, func(i, j int) bool { return kw.byRV[i].rv < kw.byRV[j].rv })
	switch kw.mode {
	case kwExplicit:
		kw.start, kw.startKnown = kw.reqRV, true
	case kwState, kwStreaming:
		kw.start, kw.startKnown = kw.state.S, true
	case kwNoInitial:
		kw.start = math.MaxInt64
		for i := kw.initN; i < end; i++ {
			if rv := kw.rv(i); rv > 0 {
				kw.start = rv
				if w.Events[i].Type != history.KubeBookmark {
					kw.start = rv - 1
				}
				break
			}
		}
	}
	return kw
}

// splitInitial finds the initial part of a watch that starts with a state:
// the events up to the initial-events-end bookmark when there is one (a
// streaming list, or a plain watch the server turned into one), else the
// longest run of ADDED events of distinct objects; and judges the state.
func (m *kubeModel) splitInitial(kw *kwatch, end int) {
	evs := kw.w.Events
	for i := 0; i < end; i++ {
		if isInitialEnd(&evs[i]) {
			kw.endBM, kw.initN = i, i+1
			break
		}
	}
	if kw.endBM < 0 {
		names := map[string]bool{}
		for kw.initN < end && evs[kw.initN].Type == history.KubeAdded && evs[kw.initN].Object != nil &&
			!names[evs[kw.initN].Object.Name] {
			names[evs[kw.initN].Object.Name] = true
			kw.initN++
		}
	}
	for i := 0; i < kw.initN; i++ {
		if evs[i].Type == history.KubeAdded && evs[i].Object != nil {
			kw.items = append(kw.items, *evs[i].Object)
		}
	}
	if kw.endBM >= 0 {
		kw.sLo = kw.rv(kw.endBM)
		kw.sHi = kw.sLo
	} else {
		kw.sLo, kw.sHi = kw.reqRV, math.MaxInt64
		for _, it := range kw.items {
			kw.sLo = max(kw.sLo, objRV(&it))
		}
		for i := kw.initN; i < end; i++ {
			rv := kw.rv(i)
			if rv == 0 {
				continue
			}
			if evs[i].Type == history.KubeBookmark {
				kw.sHi = rv
			} else {
				kw.sHi = rv - 1
			}
			break
		}
	}
	if kw.endBM < 0 && kw.initN > 0 {
		// The state was taken before its last event arrived: a write
		// called after that has a higher RV.
		if hi, _ := m.hi.minAfter(evs[kw.initN-1].Time); hi-1 < kw.sHi && hi-1 >= kw.sLo {
			kw.sHi = hi - 1
		}
	}
	if kw.sLo > kw.sHi {
		// A later event at or below the state's RV: the initial-state checks
		// report that event; the items are judged at their own RV.
		kw.sHi = kw.sLo
	}
	kw.state = m.verifyState(kw.items, kw.sel, kw.sLo, kw.sHi, true)
}

// extendToFinal holds the last watch of a client, open until the run
// closed it after the final write was acknowledged, to the final write:
// the workload waits for every open watch to deliver it before closing
// them, so its window reaches the final write's RV.
func (m *kubeModel) extendToFinal(kw *kwatch, mark history.Mark) {
	w := kw.w
	if mark.Revision == 0 || kw.mode == kwRefused || kw.mode == kwUnjudged || kw.errIdx >= 0 || w.Call > mark.Time {
		return
	}
	if w.End != nil && (w.End.Reason != history.EndClient || w.End.Time < mark.Time) {
		return
	}
	c := m.changeAt[mark.Revision]
	if c == nil || !kw.startKnown || kw.start >= mark.Revision || kw.last >= mark.Revision {
		return
	}
	if typ, sure := m.expected(c, kw.sel); typ == "" || !sure {
		return
	}
	kw.last, kw.extended = mark.Revision, true
}

// expected says which event a watch with selector sel owes for change c:
// "" for none, "ADDED|MODIFIED" when either fits; sure is false when the
// history cannot tell whether one is owed (an unplaced write may have
// changed the object's labels just before).
func (m *kubeModel) expected(c *kchange, sel *labelSelector) (typ string, sure bool) {
	if sel == nil {
		switch {
		case c.del:
			return history.KubeDeleted, true
		case c.w.verb == history.KubeCreate:
			return history.KubeAdded, true
		}
		return history.KubeModified, true
	}
	prev := c.obj.at(c.rv - 1)
	from := int64(0)
	if prev != nil {
		from = prev.rv
	}
	newM := c.exists() && sel.matches(c.labels)
	if !c.obj.settled(from, c.rv-1, true) {
		if newM {
			return history.KubeAdded + "|" + history.KubeModified, true
		}
		return "", false
	}
	prevM := prev.exists() && sel.matches(prev.labels)
	switch {
	case prevM && newM:
		return history.KubeModified, true
	case newM:
		return history.KubeAdded, true
	case prevM:
		return history.KubeDeleted, true
	}
	return "", true
}

// changesIn returns the known changes with RV in (a, b].
func (m *kubeModel) changesIn(a, b int64) []*kchange {
	i := sort.Search(len(m.changes), func(i int) bool { return m.changes[i].rv > a })
	j := sort.Search(len(m.changes), func(i int) bool { return m.changes[i].rv > b })
	if i >= j {
		return nil
	}
	return m.changes[i:j]
}
