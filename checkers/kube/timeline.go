package kube

import (
	"math"
	"sort"
	"time"
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
