package facts

import (
	"testing"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// TestQuietSpan: the longest span free of faults, each widened by the
// settle time, sabotage ignored — the spans FaultAround does not excuse.
func TestQuietSpan(t *testing.T) {
	s := time.Second
	f := func(name string, a, b time.Duration) history.Fault {
		return history.Fault{Name: name, Start: a, End: b}
	}
	for _, tc := range []struct {
		name   string
		faults []history.Fault
		want   time.Duration
	}{
		{"none", nil, 100 * s},
		{"one in the middle", []history.Fault{f("pause", 40*s, 41*s)}, 58 * s},
		{"overlapping", []history.Fault{f("pause", 10*s, 30*s), f("kill", 20*s, 25*s)}, 69 * s},
		{"sabotage excuses nothing", []history.Fault{f("sabotage:drop-event", 50*s, 50*s)}, 100 * s},
		{"covering all", []history.Fault{f("partition", 0, 100*s)}, 0},
	} {
		if got := QuietSpan(tc.faults, 0, 100*s); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		for _, from := range []time.Duration{s, 33 * s, 61 * s} {
			to := from + 8*s
			quiet := QuietSpan(tc.faults, from, to) == to-from
			if quiet == FaultAround(tc.faults, from, to) {
				t.Errorf("%s: QuietSpan and FaultAround disagree on [%v, %v]", tc.name, from, to)
			}
		}
	}
}

// TestTally: owed requests left unanswered are noted; refused ones are
// not answered; why is kept only when nothing was asked.
func TestTally(t *testing.T) {
	tl := NewTally("streaming list", "BOOKMARK", "kube_watches")
	tl.Count(1, true, false, true)
	tl.Count(2, false, false, true)
	tl.Count(3, false, true, false)
	e := tl.Evidence("unused")
	if e.Asked != 3 || e.Answered != 1 || e.Refused != 1 || e.Owed != 2 || e.Ignored != 1 || len(e.Unanswered) != 1 ||
		e.Unanswered[0] != 2 || e.Why != "" {
		t.Errorf("%+v", e)
	}
	if e := NewTally("streaming list", "BOOKMARK", "kube_watches").Evidence(""); e.Why != "the run sent no streaming list" {
		t.Errorf("why %q", e.Why)
	}
}
