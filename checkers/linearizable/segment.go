package linearizable

import (
	"slices"

	"github.com/vigil-suite/vigil/history"
)

// segmentWatches is h with its watches cut to the segment's revisions, for
// a segment after a run's first (history.Segment). A segment's keys are its
// own, written from its start on; its watches, though, watch the whole
// run's keys and may have begun segments before (a watch belongs to the
// segment it ends in), so they vouch for revisions below the segment's
// start, where the model of the segment has no store to place them: the
// search would take a quiet span from there for where the store stood.
// Below the lowest header revision any of the segment's own answers
// carries, nothing of the segment's keys happened (its writes are sent
// after its first request is answered), so the watches are cut there:
// their events and progress below it dropped, their start raised to it.
// A whole history, or a run's first segment, is h itself.
func segmentWatches(h *history.History) *history.History {
	seg := h.Meta.Segment
	if seg == nil || seg.Index == 0 || len(h.Watches) == 0 {
		return h
	}
	var floor int64
	for i := range h.Operations {
		o := &h.Operations[i]
		if o.Response == nil || slices.Contains(seg.Carried, o.ID) {
			continue
		}
		if r := o.Response.Revision; r > 0 && (floor == 0 || r < floor) {
			floor = r
		}
	}
	if floor == 0 {
		return h
	}
	view := *h
	view.Watches = make([]*history.WatchStream, 0, len(h.Watches))
	for _, w := range h.Watches {
		cw := &history.WatchStream{Watch: w.Watch, End: w.End}
		cw.Request.StartRevision = max(cw.Request.StartRevision, floor)
		for _, r := range w.Responses {
			if r.Progress && r.Revision < floor {
				continue
			}
			evs := r.Events
			if len(evs) > 0 && evs[0].Revision() < floor {
				evs = slices.DeleteFunc(slices.Clone(evs), func(e history.Event) bool { return e.Revision() < floor })
				if len(evs) == 0 {
					continue
				}
			}
			r.Events = evs
			cw.Responses = append(cw.Responses, r)
		}
		view.Watches = append(view.Watches, cw)
	}
	return &view
}
