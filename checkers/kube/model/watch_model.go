package model

import (
	"sort"

	"github.com/vigil-suite/vigil/history"
)

// What each Kubernetes watch asked for and how its events split into an
// initial part (a state) and a live part (changes), shared by the watch
// checks.

type kwMode int8

const (
	WatchExplicit  kwMode = iota // from RV N > 0: the changes after N
	WatchState                   // RV unset or "0" (no sendInitialEvents): a state, then changes
	WatchStreaming               // sendInitialEvents=true: a state, its end bookmark, then changes
	kwNoInitial                  // sendInitialEvents=false from RV unset or "0": changes from an RV the server picks
	WatchRefused                 // answered with an error status and nothing else
	WatchUnjudged                // a malformed RV or a selector vigil cannot parse
)

// Watch is one watch as the checks see it.
type Watch struct {
	Stream *history.KubeWatchStream
	Sel    *LabelSelector
	selErr error
	Mode   kwMode
	ReqRV  int64
	ErrIdx int // the first ERROR event; -1 if none
	// InitN: events [0, initN) are the initial part; endBM is the
	// k8s.io/initial-events-end bookmark among them, -1 if none.
	InitN int
	EndBM int
	Items []history.Object
	// State judges the initial items as the state at an RV in [sLo, sHi].
	State            StateCheck
	StateLo, StateHi int64
	// The live part vouches for every change in (start, last]. start is
	// the requested RV, or the initial state's RV; when the history cannot
	// tell it (startKnown false) it is just below the first live RV.
	Start      int64
	StartKnown bool
	Last       int64
	Extended   bool // last was raised to the final write's RV
	// Live holds the indices of the live ADDED, MODIFIED and DELETED
	// events in arrival order; byRV the same sorted by RV.
	Live []int
	ByRV []rvIdx
	// rvs holds each event's RV, parsed once (0: none or malformed).
	rvs []int64
}

// Rv returns the RV of event i.
func (kw *Watch) Rv(i int) int64 { return kw.rvs[i] }

type rvIdx struct {
	Rv  int64
	Idx int
}

// LiveEnd is the end of the events a watch vouches for: its first ERROR event, or its end.
func (kw *Watch) LiveEnd() int {
	if kw.ErrIdx >= 0 {
		return kw.ErrIdx
	}
	return len(kw.Stream.Events)
}

// EventAt returns the index of the watch's live event at rv, or -1.
func (kw *Watch) EventAt(rv int64) int {
	i := sort.Search(len(kw.ByRV), func(i int) bool { return kw.ByRV[i].Rv >= rv })
	if i < len(kw.ByRV) && kw.ByRV[i].Rv == rv {
		return kw.ByRV[i].Idx
	}
	return -1
}

// FirstLiveRV is the RV of the first live event, 0 if none.
func (kw *Watch) FirstLiveRV() int64 {
	if len(kw.Live) == 0 {
		return 0
	}
	return kw.Rv(kw.Live[0])
}

// IsInitialEnd reports the bookmark that ends a streaming list's initial events.
func IsInitialEnd(e *history.KubeEvent) bool {
	return e.Type == history.KubeBookmark && e.Object != nil &&
		e.Object.Annotations[history.AnnotationInitialEventsEnd] == "true"
}

// TypeFits reports whether an event type is the expected one.
func TypeFits(got, want string) bool {
	if want == history.KubeAdded+"|"+history.KubeModified {
		return got == history.KubeAdded || got == history.KubeModified
	}
	return got == want
}

// LastObserved is the highest RV the watch itself showed (without the
// final-write extension).
func (kw *Watch) LastObserved() int64 {
	var last int64
	for i := kw.InitN; i < kw.LiveEnd(); i++ {
		last = max(last, kw.Rv(i))
	}
	return last
}
