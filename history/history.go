package history

import (
	"fmt"
	"sort"
	"time"
)

// Record is one line of a history file: exactly one field is set.
type Record struct {
	Meta          *Meta          `json:"meta,omitempty"`
	Op            *Operation     `json:"op,omitempty"`
	Watch         *Watch         `json:"watch,omitempty"`
	WatchResponse *WatchResponse `json:"wresp,omitempty"`
	WatchEnd      *WatchEnd      `json:"wend,omitempty"`
	Fault         *Fault         `json:"fault,omitempty"`
	Mark          *Mark          `json:"mark,omitempty"`
	Call          *Call          `json:"call,omitempty"`
	ServerExit    *ServerExit    `json:"exit,omitempty"`

	KubeOp       *KubeOperation `json:"kop,omitempty"`
	KubeWatch    *KubeWatch     `json:"kwatch,omitempty"`
	KubeEvent    *KubeEvent     `json:"kevent,omitempty"`
	KubeWatchEnd *KubeWatchEnd  `json:"kwend,omitempty"`
}

func (r Record) fields() int {
	n := 0
	for _, set := range []bool{r.Meta != nil, r.Op != nil, r.Watch != nil, r.WatchResponse != nil,
		r.WatchEnd != nil, r.Fault != nil, r.Mark != nil, r.Call != nil, r.ServerExit != nil,
		r.KubeOp != nil, r.KubeWatch != nil, r.KubeEvent != nil, r.KubeWatchEnd != nil} {
		if set {
			n++
		}
	}
	return n
}

// WatchStream is one watch with everything it received.
type WatchStream struct {
	Watch
	Responses []WatchResponse
	// End is nil when the history does not say how the stream ended (the run
	// was cut short).
	End *WatchEnd
}

// Events returns every event of the stream in arrival order, with the index
// of the response that carried it.
func (w *WatchStream) Events() []EventAt {
	var out []EventAt
	for ri := range w.Responses {
		for ei := range w.Responses[ri].Events {
			out = append(out, EventAt{Watch: w.ID, Response: ri, Index: ei, Event: w.Responses[ri].Events[ei]})
		}
	}
	return out
}

// EventAt is an event with its place in a watch stream.
type EventAt struct {
	Watch    int64 `json:"watch"`
	Response int   `json:"response"`
	Index    int   `json:"index"`
	Event    Event `json:"event"`
}

// History is a whole run, in memory.
type History struct {
	Meta       Meta
	Operations []Operation
	Watches    []*WatchStream
	Faults     []Fault
	Marks      []Mark
	// Calls are the requests beside KV operations and watch streams
	// (progress requests, lease calls); format 2 on.
	Calls []Call
	// ServerExits are the processes vigil started that exited without
	// vigil asking them to, in the order they exited.
	ServerExits []ServerExit

	// KubeOps and KubeWatches are the Kubernetes side (vigil run --target kube).
	KubeOps     []KubeOperation
	KubeWatches []*KubeWatchStream

	// Context, in a segment after a run's first, is what it holds of the
	// segments before it only to judge its own records (see Context); no
	// check judges it. Nil in a whole history.
	Context *Context

	// Cut, when not empty, says that the file this history was loaded
	// from ends before the run did (vigil was killed while writing it):
	// the records are the complete ones before the cut.
	Cut string

	watchIndex     map[int64]*WatchStream
	kubeWatchIndex map[int64]*KubeWatchStream
}

// End is the latest time a record of h carries: an answer, a mark, a
// fault's end. Reports measure the run by it.
func (h *History) End() time.Duration {
	var end time.Duration
	for i := range h.Operations {
		end = max(end, h.Operations[i].Return)
	}
	for i := range h.KubeOps {
		end = max(end, h.KubeOps[i].Return)
	}
	for _, m := range h.Marks {
		end = max(end, m.Time)
	}
	for i := range h.Calls {
		end = max(end, h.Calls[i].Return)
	}
	for _, f := range h.Faults {
		end = max(end, f.End)
	}
	for _, x := range h.ServerExits {
		end = max(end, x.Time)
	}
	return end
}

// New returns an empty history with the given metadata.
func New(meta Meta) *History {
	meta.Format = FormatVersion
	return &History{Meta: meta, watchIndex: map[int64]*WatchStream{}}
}

// Add appends one record. Watch responses and ends must follow their watch.
func (h *History) Add(r Record) error {
	if r.fields() != 1 {
		return fmt.Errorf("a record must have exactly one of meta, op, watch, wresp, wend, fault, mark, call, exit, kop, kwatch, kevent, kwend; this one has %d", r.fields())
	}
	if h.watchIndex == nil {
		h.watchIndex = map[int64]*WatchStream{}
	}
	switch {
	case r.Meta != nil:
		if r.Meta.Format > FormatVersion {
			return fmt.Errorf("history format %d is newer than this vigil understands (%d); use a newer vigil", r.Meta.Format, FormatVersion)
		}
		h.Meta = *r.Meta
	case r.Op != nil:
		h.Operations = append(h.Operations, *r.Op)
	case r.Watch != nil:
		if _, dup := h.watchIndex[r.Watch.ID]; dup {
			return fmt.Errorf("watch %d is opened twice", r.Watch.ID)
		}
		ws := &WatchStream{Watch: *r.Watch}
		h.Watches = append(h.Watches, ws)
		h.watchIndex[ws.ID] = ws
	case r.WatchResponse != nil:
		ws := h.watchIndex[r.WatchResponse.Watch]
		if ws == nil {
			return fmt.Errorf("response for watch %d, which was never opened", r.WatchResponse.Watch)
		}
		ws.Responses = append(ws.Responses, *r.WatchResponse)
	case r.WatchEnd != nil:
		ws := h.watchIndex[r.WatchEnd.Watch]
		if ws == nil {
			return fmt.Errorf("end of watch %d, which was never opened", r.WatchEnd.Watch)
		}
		e := *r.WatchEnd
		ws.End = &e
	case r.Fault != nil:
		h.Faults = append(h.Faults, *r.Fault)
	case r.Mark != nil:
		h.Marks = append(h.Marks, *r.Mark)
	case r.Call != nil:
		h.Calls = append(h.Calls, *r.Call)
	case r.ServerExit != nil:
		h.ServerExits = append(h.ServerExits, *r.ServerExit)
	default:
		return h.addKube(r)
	}
	return nil
}

func (h *History) addKube(r Record) error {
	if h.kubeWatchIndex == nil {
		h.kubeWatchIndex = map[int64]*KubeWatchStream{}
	}
	switch {
	case r.KubeOp != nil:
		h.KubeOps = append(h.KubeOps, *r.KubeOp)
	case r.KubeWatch != nil:
		if _, dup := h.kubeWatchIndex[r.KubeWatch.ID]; dup {
			return fmt.Errorf("kube watch %d is opened twice", r.KubeWatch.ID)
		}
		ws := &KubeWatchStream{KubeWatch: *r.KubeWatch}
		h.KubeWatches = append(h.KubeWatches, ws)
		h.kubeWatchIndex[ws.ID] = ws
	case r.KubeEvent != nil:
		ws := h.kubeWatchIndex[r.KubeEvent.Watch]
		if ws == nil {
			return fmt.Errorf("event for kube watch %d, which was never opened", r.KubeEvent.Watch)
		}
		ws.Events = append(ws.Events, *r.KubeEvent)
	case r.KubeWatchEnd != nil:
		ws := h.kubeWatchIndex[r.KubeWatchEnd.Watch]
		if ws == nil {
			return fmt.Errorf("end of kube watch %d, which was never opened", r.KubeWatchEnd.Watch)
		}
		e := *r.KubeWatchEnd
		ws.End = &e
	}
	return nil
}

// WatchByID returns the watch stream with the given id, or nil.
func (h *History) WatchByID(id int64) *WatchStream {
	// Rebuilt when watches were appended without Add (generated histories).
	if h.watchIndex == nil || len(h.watchIndex) != len(h.Watches) {
		h.watchIndex = map[int64]*WatchStream{}
		for _, w := range h.Watches {
			h.watchIndex[w.ID] = w
		}
	}
	return h.watchIndex[id]
}

// Mark returns the first mark with the given name.
func (h *History) Mark(name string) (Mark, bool) {
	for _, m := range h.Marks {
		if m.Name == name {
			return m, true
		}
	}
	return Mark{}, false
}

// Records returns the history as records, in an order that Add accepts:
// meta, then every other record sorted by time.
func (h *History) Records() []Record {
	type timed struct {
		t time.Duration
		r Record
	}
	var all []timed
	for i := range h.Operations {
		all = append(all, timed{h.Operations[i].Return, Record{Op: &h.Operations[i]}})
	}
	for _, w := range h.Watches {
		all = append(all, timed{w.Call, Record{Watch: &w.Watch}})
		for i := range w.Responses {
			all = append(all, timed{w.Responses[i].Time, Record{WatchResponse: &w.Responses[i]}})
		}
		if w.End != nil {
			all = append(all, timed{w.End.Time, Record{WatchEnd: w.End}})
		}
	}
	for i := range h.Faults {
		all = append(all, timed{h.Faults[i].End, Record{Fault: &h.Faults[i]}})
	}
	for i := range h.Marks {
		all = append(all, timed{h.Marks[i].Time, Record{Mark: &h.Marks[i]}})
	}
	for i := range h.Calls {
		all = append(all, timed{h.Calls[i].Return, Record{Call: &h.Calls[i]}})
	}
	for i := range h.ServerExits {
		all = append(all, timed{h.ServerExits[i].Time, Record{ServerExit: &h.ServerExits[i]}})
	}
	for i := range h.KubeOps {
		all = append(all, timed{h.KubeOps[i].Return, Record{KubeOp: &h.KubeOps[i]}})
	}
	for _, w := range h.KubeWatches {
		all = append(all, timed{w.Call, Record{KubeWatch: &w.KubeWatch}})
		for i := range w.Events {
			all = append(all, timed{w.Events[i].Time, Record{KubeEvent: &w.Events[i]}})
		}
		if w.End != nil {
			all = append(all, timed{w.End.Time, Record{KubeWatchEnd: w.End}})
		}
	}
	// Stable, so a watch's responses keep their order and follow the watch.
	sort.SliceStable(all, func(i, j int) bool { return all[i].t < all[j].t })
	meta := h.Meta
	out := []Record{{Meta: &meta}}
	for _, t := range all {
		out = append(out, t.r)
	}
	return out
}

// Clock reads the run's one monotonic clock: durations since its base.
type Clock struct{ base time.Time }

// NewClock starts a clock at now.
func NewClock() *Clock { return &Clock{base: time.Now()} }

// Now returns the time since the clock's base. It never goes backwards.
func (c *Clock) Now() time.Duration { return time.Since(c.base) }

// Base returns the wall-clock time at which the clock started.
func (c *Clock) Base() time.Time { return c.base }
