package model

import (
	"fmt"
	"math"
)

// Judging a set of objects (a list's items, a watch's initial events) as
// the state of the collection at some RV in [a, b]: every item must be its
// object's state at that RV, and, when the set claims to be complete,
// every object that exists there (and matches the selector) must be in
// it. Each item, and each absent object, allows a set of RVs; the state
// is valid when they share one.

// Intervals is a sorted list of disjoint closed intervals of RVs.
type Intervals [][2]int64

func intersectIvs(a, b Intervals) Intervals {
	var out Intervals
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		lo, hi := max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
		if lo <= hi {
			out = append(out, [2]int64{lo, hi})
		}
		if a[i][1] < b[j][1] {
			i++
		} else {
			j++
		}
	}
	return out
}

type issueKind int8

const (
	issUnexplained issueKind = iota // the item is no change the history knows
	issDeletedRV                    // the item carries the RV of its object's deletion
	issWrongValue                   // another value was written at the item's RV
	IssueSelector                   // the item does not match the selector
	issDuplicate                    // the object appears twice
	issNewer                        // the item is newer than the state can be
	issStale                        // the object changed after the item, at or below the state
	issSplit                        // the items cannot be one state
	issMissing                      // an object of the state is absent
)

// stateIssue is one way a set of objects fails to be a state.
type stateIssue struct {
	Kind  issueKind
	Name  string
	Item  int   // index in the items; -1 for a missing object
	Rv    int64 // the item's RV; for a missing object, the RV of its state
	other *Change
	span  *Span
	prev  int // issDuplicate: the first index
}

// StateCheck is the verdict on a set of objects as a state.
type StateCheck struct {
	// S is the highest RV in [a, b] at which the set is the state; valid
	// only when ok.
	S      int64
	ok     bool
	lo     int64 // the lowest such RV
	Issues []stateIssue
}

// StateRVText renders a state RV for messages.
func StateRVText(a, b int64) string {
	if a == b {
		return fmt.Sprint(a)
	}
	if b == math.MaxInt64 {
		return fmt.Sprintf("%d or later", a)
	}
	return fmt.Sprintf("%d..%d", a, b)
}
