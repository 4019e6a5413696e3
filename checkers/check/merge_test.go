package check

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestMergerVerdictRule(t *testing.T) {
	errX := errors.New("x")
	cases := []struct {
		name string
		in   []Verdict
		want Verdict
	}{
		{"a failure anywhere fails", []Verdict{Pass, Fail, Pass}, Fail},
		{"an unknown part leaves the whole unknown", []Verdict{Pass, Unknown, Pass}, Unknown},
		{"a failure outranks an unknown", []Verdict{Unknown, Fail}, Fail},
		{"skipped segments do not hide a pass", []Verdict{Skipped, Pass, Skipped}, Pass},
		{"all skipped is skipped", []Verdict{Skipped, Skipped}, Skipped},
		{"a limitation outranks a pass", []Verdict{Pass, Documented}, Documented},
	}
	for _, c := range cases {
		var m Merger
		for i, v := range c.in {
			r := Result{Name: "c", Verdict: v, Judged: 1, Figures: map[string]float64{"events": 2, "longest_outage_s": float64(i)},
				Evidence: &Evidence{Asked: 1, Answered: 1}}
			if v == Fail {
				r.Violations = []Violation{{Guarantee: errX, Message: "broken"}}
			}
			if v == Skipped || v == Unknown {
				r.Reason = "why"
			}
			m.Add(i, i == len(c.in)-1, []Result{r})
		}
		got := m.Results()
		if len(got) != 1 || got[0].Verdict != c.want {
			t.Errorf("%s: %v", c.name, got)
			continue
		}
		r := got[0]
		n := float64(len(c.in))
		if r.Judged != len(c.in) || r.Figures["events"] != 2*n || r.Figures["longest_outage_s"] != n-1 ||
			r.Evidence.Asked != len(c.in) {
			t.Errorf("%s: counts not added or maxima not kept: %+v", c.name, r)
		}
		if (c.want == Unknown || c.want == Skipped) && r.Reason == "" {
			t.Errorf("%s: no reason", c.name)
		}
		if c.want == Fail && len(r.Violations) != 1 {
			t.Errorf("%s: violations %v", c.name, r.Violations)
		}
	}
}

// A drawing holds its segment's state: the merged result keeps the first
// failure's, else the last segment's, and no other.
func TestMergerKeepsOneDrawing(t *testing.T) {
	drawing := func(name string) func(io.Writer) (string, error) {
		return func(io.Writer) (string, error) { return name, nil }
	}
	for _, c := range []struct {
		verdicts []Verdict
		want     string
	}{
		{[]Verdict{Pass, Pass, Pass}, "segment 2"},
		{[]Verdict{Pass, Fail, Fail}, "segment 1"},
		{[]Verdict{Fail, Pass, Pass}, "segment 0"},
	} {
		var m Merger
		for i, v := range c.verdicts {
			m.Add(i, i == len(c.verdicts)-1, []Result{{Name: "c", Verdict: v, Drawing: drawing(fmt.Sprintf("segment %d", i))}})
		}
		got, _ := m.Results()[0].Drawing(nil)
		if got != c.want {
			t.Errorf("%v: drawing of %s, want %s", c.verdicts, got, c.want)
		}
	}
}
