package history

import "time"

// CutAt returns the history as it was known at t, for judging a run while
// it goes on. It is sound only when every request sent before t has been
// recorded (t is at most the Recorder's Horizon): then any answer the cut
// keeps can only reflect requests the cut keeps too.
//
//   - Operations called before t are kept; one that returned after t
//     becomes one of unknown outcome (no response, code unknown), since
//     its answer may show requests sent after t. Later ones are dropped.
//   - Watches opened before t keep the responses received by t; an end
//     after t is dropped (the watch is still open at t).
//   - Calls, faults and marks are kept when they began by t (a fault that
//     had begun is kept whole: it excuses what it excuses), server exits
//     when they happened by t.
//
// The cut shares no slice that a later Add could change.
func (h *History) CutAt(t time.Duration) *History {
	// The context is complete: it was sealed with the segment before.
	c := &History{Meta: h.Meta, Context: h.Context}
	for i := range h.Operations {
		o := h.Operations[i]
		if o.Call >= t {
			continue
		}
		if o.Return > t {
			o.Response, o.Code, o.Error, o.Return = nil, ErrUnknown, "no answer yet at the cut", t
		}
		c.Operations = append(c.Operations, o)
	}
	for _, w := range h.Watches {
		if w.Call >= t {
			continue
		}
		cw := &WatchStream{Watch: w.Watch}
		for _, r := range w.Responses {
			if r.Time <= t {
				cw.Responses = append(cw.Responses, r)
			}
		}
		if w.End != nil && w.End.Time <= t {
			e := *w.End
			cw.End = &e
		}
		c.Watches = append(c.Watches, cw)
	}
	for _, x := range h.Calls {
		if x.Call < t {
			c.Calls = append(c.Calls, x)
		}
	}
	for _, f := range h.Faults {
		if f.Start < t {
			c.Faults = append(c.Faults, f)
		}
	}
	for _, m := range h.Marks {
		if m.Time <= t {
			c.Marks = append(c.Marks, m)
		}
	}
	for _, x := range h.ServerExits {
		if x.Time <= t {
			c.ServerExits = append(c.ServerExits, x)
		}
	}
	for i := range h.KubeOps {
		o := h.KubeOps[i]
		if o.Call >= t {
			continue
		}
		if o.Return > t {
			o.Response, o.Status, o.Error, o.Return = nil, nil, "no answer yet at the cut", t
		}
		c.KubeOps = append(c.KubeOps, o)
	}
	for _, w := range h.KubeWatches {
		if w.Call >= t {
			continue
		}
		cw := &KubeWatchStream{KubeWatch: w.KubeWatch}
		for _, e := range w.Events {
			if e.Time <= t {
				cw.Events = append(cw.Events, e)
			}
		}
		if w.End != nil && w.End.Time <= t {
			e := *w.End
			cw.End = &e
		}
		c.KubeWatches = append(c.KubeWatches, cw)
	}
	return c
}
