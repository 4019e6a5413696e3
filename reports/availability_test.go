package reports

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// TestAvailabilitySummary: a 10 s run down from 3 s to 7 s around a fault
// that healed at 5 s answered 60% of the time and came back 2 s after
// the heal; the seconds count each kind and outcome.
func TestAvailabilitySummary(t *testing.T) {
	s := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	h := history.New(history.Meta{Target: history.Target{Kind: "etcd"}})
	add := func(ret float64, kind history.OpKind, resp *history.Response, code history.ErrorCode) {
		h.Operations = append(h.Operations, history.Operation{ID: int64(len(h.Operations) + 1), Call: s(ret) - 1000, Return: s(ret),
			Request: history.Request{Kind: kind}, Response: resp, Code: code})
	}
	add(0, history.OpPut, &history.Response{}, "")
	add(3, history.OpRange, &history.Response{}, "")
	add(4, history.OpPut, nil, history.ErrUnknown)
	add(6, history.OpPut, nil, history.ErrUnknown)
	add(7, history.OpRange, nil, history.ErrCompacted) // a definite error is an answer
	add(10, history.OpPut, &history.Response{}, "")
	h.Faults = append(h.Faults, history.Fault{Name: "kill-leader", Start: s(2), End: s(5)}, history.Fault{Name: "watch-drop", Start: s(8), End: s(9)})

	a := availability(h)
	if a.AnsweredFraction < 0.599 || a.AnsweredFraction > 0.601 || a.LongestOutageS != 4 {
		t.Fatalf("answered %v, longest %v; want 0.6 and 4 s", a.AnsweredFraction, a.LongestOutageS)
	}
	if len(a.Faults) != 2 || a.Faults[0].AnsweredAgainAfterS != 2 || a.Faults[1].AnsweredAgainAfterS != 0 {
		t.Fatalf("faults %+v: want 2 s after kill-leader, 0 after watch-drop", a.Faults)
	}
	var sec7 Second
	for _, x := range a.PerSecond {
		if x.T == 6 {
			if x.Calls["put"].Unanswered != 1 {
				t.Errorf("second 6: %+v, want one unanswered put", x)
			}
		}
		if x.T == 7 {
			sec7 = x
		}
	}
	if sec7.Calls["range"].Failed != 1 {
		t.Errorf("second 7: %+v, want one range answered with a definite error", sec7)
	}
	var b bytes.Buffer
	Table(&b, Summarize(h, nil, 10))
	if !strings.Contains(b.String(), "availability: answered 60.0% of the run, longest outage 4.0s; answered again after the heal of kill-leader (healed at 5.0s) 2.0s") {
		t.Errorf("table:\n%s", b.String())
	}
}
