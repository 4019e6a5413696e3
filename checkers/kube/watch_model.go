package kube

import (
	"sort"

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

// lastObserved is the highest RV the watch itself showed (without the
// final-write extension).
func (kw *kwatch) lastObserved() int64 {
	var last int64
	for i := kw.initN; i < kw.liveEnd(); i++ {
		last = max(last, kw.rv(i))
	}
	return last
}
