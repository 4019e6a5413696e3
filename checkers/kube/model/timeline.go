package model

import (
	"math"
	"sort"
	"time"
)

// One object's timeline, and the bounds time puts on RVs: what the
// Kubernetes model answers the checks with.

// TimeIndex answers bounds of committed RVs by time.
type TimeIndex struct {
	t  []time.Duration
	rv []int64
	op []int64
}

// MaxBefore returns the highest RV among entries with time < t (sorted by
// time, prefix maxima), and the operation that holds it.
func (x *TimeIndex) MaxBefore(t time.Duration) (int64, int64) {
	i := sort.Search(len(x.t), func(i int) bool { return x.t[i] >= t })
	if i == 0 {
		return 0, 0
	}
	return x.rv[i-1], x.op[i-1]
}

// MinAfter returns the lowest RV among entries with time > t (sorted by
// time, suffix minima), MaxInt64 if none.
func (x *TimeIndex) MinAfter(t time.Duration) (int64, int64) {
	i := sort.Search(len(x.t), func(i int) bool { return x.t[i] > t })
	if i == len(x.t) {
		return math.MaxInt64, 0
	}
	return x.rv[i], x.op[i]
}

func NewTimeIndex(ents []TimeEntry, prefixMax bool) TimeIndex {
	sort.Slice(ents, func(i, j int) bool { return ents[i].T < ents[j].T })
	x := TimeIndex{t: make([]time.Duration, len(ents)), rv: make([]int64, len(ents)), op: make([]int64, len(ents))}
	for i, e := range ents {
		x.t[i], x.rv[i], x.op[i] = e.T, e.RV, e.Op
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

type TimeEntry struct {
	T  time.Duration
	RV int64
	Op int64
}

// SpanIn reports a span that may hold a change in (a, b].
func SpanIn(spans []Span, a, b int64) *Span {
	for i := range spans {
		s := &spans[i]
		if s.Lo+1 <= b && s.Hi-1 > a {
			return s
		}
	}
	return nil
}
