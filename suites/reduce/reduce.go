// Package reduce shrinks the requests behind a finding to the fewest and
// simplest that still show it when replayed, one after another, against a
// fresh server: delta debugging over the requests (drop some, keep the
// symptom), then over each request's parts (a txn's compares and branch
// operations, its nesting, a range's options, values). What it keeps is a
// reproduction a person can read and a program can replay.
package reduce

import (
	"context"
	"errors"
	"fmt"

	"github.com/vigil-suite/vigil/history"
)

// Step is one request of a reproduction: what is sent and to which
// member (an index into the cluster's members). A fresh server starts at
// another revision and hands out other lease ids, so the replayer moves
// every revision the request names (a range's, a filter's, a compare's
// on mod or create, a compaction's) by its distance from Head, the
// store's revision when the request was first sent, and maps a lease
// Granted by an earlier step's grant to the one the replay got.
type Step struct {
	Member  int
	Req     history.Request
	Head    int64
	Granted int64
}

// Symptom replays steps against a fresh server and reports whether the
// finding still shows, with what it saw (for the reproduction's text).
// An error means the replay could not run (the server did not start):
// the reduction stops there.
type Symptom func(ctx context.Context, steps []Step) (shows bool, saw string, err error)

// Result is a reduction: the steps kept, what the last replay that showed
// the symptom saw, and how many replays it took.
type Result struct {
	Steps   []Step
	Saw     string
	Replays int
}

// ErrNotSequential says the finding did not show when its requests were
// replayed one after another: it needs concurrency, faults or timing the
// replay does not have.
var ErrNotSequential = errors.New("the finding does not show when its requests are replayed one after another")

// Reduce shrinks steps while symptom holds, in at most budget replays
// (0: no bound). It replays the whole sequence first; when that does not
// show the symptom it returns ErrNotSequential.
func Reduce(ctx context.Context, steps []Step, symptom Symptom, budget int) (Result, error) {
	r := &reducer{ctx: ctx, symptom: symptom, budget: budget}
	shows, saw, err := r.try(steps)
	if err != nil {
		return Result{Replays: r.replays}, err
	}
	if !shows {
		return Result{Steps: steps, Replays: r.replays}, ErrNotSequential
	}
	r.saw = saw
	// A simpler request may need fewer before it (a compare dropped no
	// longer needs the write it read): alternate until neither helps.
	cur := steps
	for {
		n := len(cur)
		cur = r.simplify(r.ddmin(cur))
		if len(cur) == n || r.err != nil {
			break
		}
	}
	return Result{Steps: cur, Saw: r.saw, Replays: r.replays}, r.err
}

type reducer struct {
	ctx     context.Context
	symptom Symptom
	budget  int
	replays int
	saw     string
	err     error // the first error of a replay: reduction stops, keeping what it has
}

// try replays a candidate; false once the budget or an error ends the
// reduction.
func (r *reducer) try(steps []Step) (bool, string, error) {
	if r.err != nil || r.budget > 0 && r.replays >= r.budget || r.ctx.Err() != nil {
		return false, "", r.err
	}
	r.replays++
	shows, saw, err := r.symptom(r.ctx, steps)
	if err != nil {
		r.err = fmt.Errorf("replay %d: %w", r.replays, err)
		return false, "", r.err
	}
	return shows, saw, nil
}

// keep replays a candidate and remembers what it saw when it shows.
func (r *reducer) keep(steps []Step) bool {
	shows, saw, _ := r.try(steps)
	if shows {
		r.saw = saw
	}
	return shows
}

// ddmin is Zeller's delta debugging over the steps: try removing chunks
// of decreasing size, keeping any removal after which the symptom shows.
func (r *reducer) ddmin(steps []Step) []Step {
	n := 2
	for len(steps) >= 2 {
		chunk := (len(steps) + n - 1) / n
		removed := false
		for start := 0; start < len(steps); start += chunk {
			end := min(start+chunk, len(steps))
			cand := append(append([]Step(nil), steps[:start]...), steps[end:]...)
			if len(cand) > 0 && r.keep(cand) {
				steps, removed = cand, true
				n = max(n-1, 2)
				break
			}
		}
		if !removed {
			if chunk == 1 {
				break
			}
			n = min(n*2, len(steps))
		}
	}
	return steps
}

// simplify shrinks each step's request while the symptom holds, one
// candidate at a time, until no candidate of any step is kept.
func (r *reducer) simplify(steps []Step) []Step {
	for changed := true; changed; {
		changed = false
		for i := range steps {
			for _, c := range Simpler(steps[i]) {
				cand := append([]Step(nil), steps...)
				cand[i] = c
				if r.keep(cand) {
					steps, changed = cand, true
					break
				}
			}
		}
	}
	return steps
}
