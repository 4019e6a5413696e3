package kube

import (
	"math"
	"sort"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
)

// One object's timeline, and the bounds time puts on RVs: what the
// Kubernetes model answers the checks with.

// timeIndex answers bounds of committed RVs by time.
type timeIndex struct {
	t  []time.Duration
	rv []int64
	op []int64
}

// maxBefore returns the highest RV among entries with time < t (sorted by
// time, prefix maxima), and the operation that holds it.
func (x *timeIndex) maxBefore(t time.Duration) (int64, int64) {
	i := sort.Search(len(x.t), func(i int) bool { return x.t[i] >= t })
	if i == 0 {
		return 0, 0
	}
	return x.rv[i-1], x.op[i-1]
}

// minAfter returns the lowest RV among entries with time > t (sorted by
// time, suffix minima), MaxInt64 if none.
func (x *timeIndex) minAfter(t time.Duration) (int64, int64) {
	i := sort.Search(len(x.t), func(i int) bool { return x.t[i] > t })
	if i == len(x.t) {
		return math.MaxInt64, 0
	}
	return x.rv[i], x.op[i]
}

func newTimeIndex(ents []tent, prefixMax bool) timeIndex {
	sort.Slice(ents, func(i, j int) bool { return ents[i].t < ents[j].t })
	x := timeIndex{t: make([]time.Duration, len(ents)), rv: make([]int64, len(ents)), op: make([]int64, len(ents))}
	for i, e := range ents {
		x.t[i], x.rv[i], x.op[i] = e.t, e.rv, e.op
	}
	if prefixMax {
		for i := 1; i < len(ents); i++ {
			if x.rv[i] < x.rv[i-1] {
				x.rv[i], x.op[i] = x.rv[i-1], x.op[i-1]
			}
		}
	} else {
		for i := len(ents) - 2; i >= 0; i-- {
			if x.rv[i] > x.rv[i+1] {
				x.rv[i], x.op[i] = x.rv[i+1], x.op[i+1]
			}
		}
	}
	return x
}

type tent struct {
	t  time.Duration
	rv int64
	op int64
}

// spanIn reports a span that may hold a change in (a, b].
func spanIn(spans []kspan, a, b int64) *kspan {
	for i := range spans {
		s := &spans[i]
		if s.lo+1 <= b && s.hi-1 > a {
			return s
		}
	}
	return nil
}

// at returns the object's latest known change at or below rv, or nil.
func (o *kobj) at(rv int64) *kchange {
	i := sort.Search(len(o.changes), func(i int) bool { return o.changes[i].rv > rv })
	if i == 0 {
		return nil
	}
	return o.changes[i-1]
}

// next returns the object's first known change above rv, or nil.
func (o *kobj) next(rv int64) *kchange {
	i := sort.Search(len(o.changes), func(i int) bool { return o.changes[i].rv > rv })
	if i == len(o.changes) {
		return nil
	}
	return o.changes[i]
}

// exactly returns the object's known change at rv, or nil.
func (o *kobj) exactly(rv int64) *kchange {
	if c := o.at(rv); c != nil && c.rv == rv {
		return c
	}
	return nil
}

// settled reports whether no deletion the history cannot place may lie in
// (a, b]; withPuts also counts unplaced creates and updates (they may
// change the labels).
func (o *kobj) settled(a, b int64, withPuts bool) bool {
	if spanIn(o.delSpans, a, b) != nil {
		return false
	}
	return !withPuts || spanIn(o.putSpans, a, b) == nil
}

// upper returns the highest RV at which the change c can still be the
// object's state: just below the next known change, or below a certain
// unplaced deletion that surely comes after it. MaxInt64 when none.
func (o *kobj) upper(c *kchange) (int64, *kchange, *kspan) {
	up := int64(math.MaxInt64)
	nx := o.next(c.rv)
	if nx != nil {
		up = nx.rv - 1
	}
	for i := range o.delSpans {
		s := &o.delSpans[i]
		if s.certain && s.lo >= c.rv && s.hi-2 < up {
			return s.hi - 2, nil, s
		}
	}
	return up, nx, nil
}

// exists reports whether the change leaves the object existing.
func (c *kchange) exists() bool { return c != nil && !c.del }

// ref returns how the change is known: its write's operation if it was
// acknowledged with the RV, else the record that placed it.
func (c *kchange) ref() kref {
	if c.w.how != (kref{}) {
		return c.w.how
	}
	return kref{op: c.w.op.ID, idx: -1}
}

// evidence renders references as a violation's operations and events.
func (m *kubeModel) evidence(v *check.Violation, refs ...kref) {
	for _, r := range refs {
		switch {
		case r.op != 0:
			if !facts.ContainsID(v.Operations, r.op) {
				v.Operations = append(v.Operations, r.op)
			}
		case r.watch != 0:
			if w := m.h.KubeWatchByID(r.watch); w != nil && int(r.idx) < len(w.Events) {
				v.KubeEvents = append(v.KubeEvents, kevAt(w, int(r.idx)))
			}
		}
	}
}
