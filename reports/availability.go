package reports

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// Availability is how the system under test answered over the run, beside
// the run/availability verdict: the share of the run it answered in, its
// longest outage, how soon it answered again after each fault healed, and
// the calls of every second by kind and outcome.
type Availability struct {
	// AnsweredFraction is the share of the span from the first call's
	// return to the last that no outage covered.
	AnsweredFraction float64         `json:"answered_fraction"`
	LongestOutageS   float64         `json:"longest_outage_s"`
	Faults           []FaultRecovery `json:"faults"`
	PerSecond        []Second        `json:"per_second"`
}

// FaultRecovery is one fault and how long after it healed the system
// answered again: 0 when no outage outlasted it.
type FaultRecovery struct {
	Name                string  `json:"name"`
	StartS              float64 `json:"start_s"`
	EndS                float64 `json:"end_s"`
	AnsweredAgainAfterS float64 `json:"answered_again_after_s"`
}

// Second counts the calls that returned in one second of the run, by kind
// (range, put, txn, ... or the Kubernetes verb).
type Second struct {
	T     int                 `json:"t"`
	Calls map[string]Outcomes `json:"calls"`
}

// Outcomes of calls: answered with data, answered with a definite error,
// or unanswered (timed out, connection lost: the outcome is unknown).
type Outcomes struct {
	Ok         int `json:"ok"`
	Failed     int `json:"failed,omitempty"`
	Unanswered int `json:"unanswered,omitempty"`
}

// availability is h's Availability (nil when it has no calls).
func availability(h *history.History) *Availability {
	d := NewDigest()
	d.Add(h, nil)
	return d.availability()
}

// availState is the availability table as a digest gathers it: the
// outages' search (facts.Outages), run over the calls by their return as
// the segments come (the calls answered after a segment's latest call
// wait for the next segment, which may hold calls answered before them),
// the time they took and the longest, and the calls of each second by
// kind. Of the outages it keeps only those a fault's end falls in (one a
// fault at most), the ones the table reports: a run's outages are as
// many as its calls left unanswered.
type availState struct {
	any           bool
	first, last   time.Duration // the earliest and latest return
	pending       []retOk       // returned after the horizon, by return
	prev          time.Duration // the last answer's return, -1 before the first
	cur           facts.Outage
	down, longest time.Duration
	outages       []facts.Outage // those a fault's end falls in
	perSec        [][]outcomes   // by second (from 0), by kind id
	before        map[int][]outcomes
}

type retOk struct {
	ret time.Duration
	ok  bool
}

// outcomes are Outcomes in a third of the room.
type outcomes struct{ ok, failed, unanswered int32 }

// count adds call c, of kind id k, to its second.
func (a *availState) count(c facts.Call, k int) {
	if !a.any {
		a.first, a.last = c.Ret, c.Ret
	}
	a.any = true
	a.first, a.last = min(a.first, c.Ret), max(a.last, c.Ret)
	t := int(c.Ret / time.Second)
	var row *[]outcomes
	if t >= 0 {
		for len(a.perSec) <= t {
			a.perSec = append(a.perSec, nil)
		}
		row = &a.perSec[t]
	} else {
		if a.before == nil {
			a.before = map[int][]outcomes{}
		}
		r := a.before[t]
		row = &r
		defer func() { a.before[t] = r }()
	}
	for len(*row) <= k {
		*row = append(*row, outcomes{})
	}
	o := &(*row)[k]
	switch {
	case !c.Ok:
		o.unanswered++
	case c.Failed:
		o.failed++
	default:
		o.ok++
	}
}

// add runs the outages' search over the calls (sorted by return) up to
// horizon, the latest start of a call in the segment: a later segment's
// calls start, so return, after it.
// ends are the faults' ends, sorted.
func (a *availState) add(calls []facts.Call, horizon time.Duration, ends []time.Duration) {
	merged := make([]retOk, 0, len(a.pending)+len(calls))
	p := a.pending
	for _, c := range calls {
		for len(p) > 0 && p[0].ret <= c.Ret {
			merged, p = append(merged, p[0]), p[1:]
		}
		merged = append(merged, retOk{c.Ret, c.Ok})
	}
	merged = append(merged, p...)
	i := 0
	for ; i < len(merged) && merged[i].ret <= horizon; i++ {
		a.step(merged[i], ends)
	}
	a.pending = slices.Clip(merged[i:])
}

// step is facts.Outages' step over one call.
func (a *availState) step(c retOk, ends []time.Duration) {
	if !c.ok {
		if a.cur.Unanswered == 0 {
			a.cur.From, a.cur.Never = a.prev, a.prev < 0
			if a.cur.Never {
				a.cur.From = c.ret
			}
		}
		a.cur.Unanswered, a.cur.To = a.cur.Unanswered+1, c.ret
		return
	}
	if a.cur.Unanswered > 0 {
		a.cur.To = c.ret
		a.closed(a.cur, ends)
	}
	a.prev, a.cur = c.ret, facts.Outage{}
}

// closed counts outage o, and keeps it when a fault's end falls in it.
func (a *availState) closed(o facts.Outage, ends []time.Duration) {
	a.down += o.To - o.From
	a.longest = max(a.longest, o.To-o.From)
	if i, _ := slices.BinarySearch(ends, o.From+1); i < len(ends) && ends[i] < o.To {
		a.outages = append(a.outages, o)
	}
}

// availability is the table of the calls added so far.
func (d *Digest) availability() *Availability {
	s := d.av
	if !s.any {
		return nil
	}
	s.outages = slices.Clip(s.outages)
	ends := d.faultEnds()
	for _, c := range s.pending {
		s.step(c, ends)
	}
	if s.cur.Unanswered > 0 {
		s.cur.Open = true
		s.closed(s.cur, ends)
	}
	a := &Availability{AnsweredFraction: 1, Faults: []FaultRecovery{}, PerSecond: []Second{}}
	a.LongestOutageS = s.longest.Seconds()
	if span := s.last - s.first; span > 0 {
		a.AnsweredFraction = 1 - float64(s.down)/float64(span)
	}
	for _, f := range d.faults {
		r := FaultRecovery{Name: f.Name, StartS: f.Start.Seconds(), EndS: f.End.Seconds()}
		for _, o := range s.outages {
			if o.From < f.End && o.To > f.End {
				r.AnsweredAgainAfterS = (o.To - f.End).Seconds()
			}
		}
		a.Faults = append(a.Faults, r)
	}
	second := func(t int, row []outcomes) {
		sec := Second{T: t, Calls: map[string]Outcomes{}}
		for k, o := range row {
			if o != (outcomes{}) {
				sec.Calls[d.kinds[k]] = Outcomes{Ok: int(o.ok), Failed: int(o.failed), Unanswered: int(o.unanswered)}
			}
		}
		if len(sec.Calls) > 0 {
			a.PerSecond = append(a.PerSecond, sec)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(s.before)) {
		second(t, s.before[t])
	}
	for t, row := range s.perSec {
		second(t, row)
	}
	return a
}

// writeAvailability is the table's line on availability.
func writeAvailability(w io.Writer, a *Availability) {
	if a == nil {
		return
	}
	fmt.Fprintf(w, "availability: answered %.1f%% of the run, longest outage %.1fs", 100*a.AnsweredFraction, a.LongestOutageS)
	var slow []string
	for _, f := range a.Faults {
		if f.AnsweredAgainAfterS > 0 {
			slow = append(slow, fmt.Sprintf("%s (healed at %.1fs) %.1fs", f.Name, f.EndS, f.AnsweredAgainAfterS))
		}
	}
	if len(a.Faults) > 0 {
		switch {
		case len(slow) == 0 && len(a.Faults) == 1:
			fmt.Fprint(w, "; answering right after the fault healed")
		case len(slow) == 0:
			fmt.Fprintf(w, "; answering right after each of the %d faults healed", len(a.Faults))
		default:
			fmt.Fprintf(w, "; answered again after the heal of %s", strings.Join(slow, ", "))
		}
	}
	fmt.Fprintln(w)
}
