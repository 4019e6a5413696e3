package history

import (
	"testing"
	"time"
)

// A cut keeps what was known at t: an answer that came later is no
// answer, a later request is not there, a watch's later responses and end
// are not there.
func TestCutAt(t *testing.T) {
	h := New(Meta{Prefix: "/p/"})
	add := func(r Record) {
		if err := h.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	add(Record{Op: &Operation{ID: 1, Call: 1, Return: 5, Request: Request{Kind: OpPut, Key: "/p/a"}, Response: &Response{Revision: 2}}})
	add(Record{Op: &Operation{ID: 2, Call: 8, Return: 20, Request: Request{Kind: OpPut, Key: "/p/a"}, Response: &Response{Revision: 3}}})
	add(Record{Op: &Operation{ID: 3, Call: 12, Return: 14, Request: Request{Kind: OpRange, Key: "/p/a"}, Response: &Response{Revision: 3}}})
	add(Record{Watch: &Watch{ID: 1, Call: 2}})
	add(Record{WatchResponse: &WatchResponse{Watch: 1, Time: 6, Revision: 2}})
	add(Record{WatchResponse: &WatchResponse{Watch: 1, Time: 15, Revision: 3}})
	add(Record{WatchEnd: &WatchEnd{Watch: 1, Time: 30, Reason: EndClient}})
	add(Record{Fault: &Fault{ID: 1, Name: "kill-leader", Start: 9, End: 25}})
	add(Record{Mark: &Mark{Name: MarkEnd, Time: 31}})

	c := h.CutAt(10)
	if len(c.Operations) != 2 || c.Operations[0].Response == nil {
		t.Fatalf("operations %+v: want op 1 as it was and op 2 without its answer", c.Operations)
	}
	if o := c.Operations[1]; o.ID != 2 || o.Response != nil || o.Code != ErrUnknown || o.Return != 10 {
		t.Errorf("op 2 at the cut: %+v, want an unknown outcome returning at the cut", o)
	}
	w := c.WatchByID(1)
	if w == nil || len(w.Responses) != 1 || w.End != nil {
		t.Fatalf("watch 1 at the cut: %+v, want its first response only and no end", w)
	}
	if len(c.Faults) != 1 || len(c.Marks) != 0 {
		t.Errorf("faults %v marks %v: want the fault that began, no mark", c.Faults, c.Marks)
	}
	if h.Operations[1].Response == nil || len(h.WatchByID(1).Responses) != 2 {
		t.Error("the cut changed the history it was cut from")
	}
}

// The horizon stays at the send time of the oldest request not recorded.
func TestRecorderHorizon(t *testing.T) {
	r := NewRecorder(Meta{}, NewClock(), nil)
	tok := r.Begin()
	sent := r.Horizon()
	time.Sleep(2 * time.Millisecond)
	if h := r.Horizon(); h != sent {
		t.Fatalf("horizon %v moved past a pending request sent at %v", h, sent)
	}
	r.End(tok)
	if h := r.Horizon(); h <= sent {
		t.Fatalf("horizon %v did not move on once nothing was pending", h)
	}
}
