package reports

import (
	"fmt"
	"io"
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

func availability(h *history.History) *Availability {
	cs := facts.Calls(h)
	if len(cs) == 0 {
		return nil
	}
	a := &Availability{AnsweredFraction: 1, Faults: []FaultRecovery{}, PerSecond: []Second{}}
	outages := facts.Outages(cs)
	var down time.Duration
	for _, o := range outages {
		down += o.To - o.From
		a.LongestOutageS = max(a.LongestOutageS, (o.To - o.From).Seconds())
	}
	if span := cs[len(cs)-1].Ret - cs[0].Ret; span > 0 {
		a.AnsweredFraction = 1 - float64(down)/float64(span)
	}
	for _, f := range h.Faults {
		r := FaultRecovery{Name: f.Name, StartS: f.Start.Seconds(), EndS: f.End.Seconds()}
		for _, o := range outages {
			if o.From < f.End && o.To > f.End {
				r.AnsweredAgainAfterS = (o.To - f.End).Seconds()
			}
		}
		a.Faults = append(a.Faults, r)
	}
	for _, c := range cs {
		t := int(c.Ret / time.Second)
		if len(a.PerSecond) == 0 || a.PerSecond[len(a.PerSecond)-1].T != t {
			a.PerSecond = append(a.PerSecond, Second{T: t, Calls: map[string]Outcomes{}})
		}
		s := &a.PerSecond[len(a.PerSecond)-1]
		o := s.Calls[c.Kind]
		switch {
		case !c.Ok:
			o.Unanswered++
		case c.Failed:
			o.Failed++
		default:
			o.Ok++
		}
		s.Calls[c.Kind] = o
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
