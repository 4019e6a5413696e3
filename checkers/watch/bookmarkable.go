package watch

import (
	"fmt"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// CheckBookmarkable is watch/bookmarkable. On each watch, in arrival
// order:
//   - a progress notification at P is at least every earlier progress
//     notification's revision and every earlier event's revision;
//   - no event at a revision at or below the highest progress revision
//     received before it arrives.
//
// Skipped when no watch received a progress notification.
func CheckBookmarkable(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	notes, judged := 0, 0
	for _, w := range h.Watches {
		lastRI, lastEI := -1, 0 // the event with the highest revision so far
		lastEv := func() history.EventAt {
			return history.EventAt{Watch: w.ID, Response: lastRI, Index: lastEI, Event: w.Responses[lastRI].Events[lastEI]}
		}
		var progress *history.WatchResponse
		progressAt := -1
		counted := false
		for ri := range w.Responses {
			r := &w.Responses[ri]
			if r.Progress {
				notes++
				if !counted {
					judged, counted = judged+1, true
				}
				switch {
				case progress != nil && r.Revision < progress.Revision:
					col.Add(check.Violation{
						Guarantee: ErrBookmarkable,
						Message: fmt.Sprintf("watch %d (client %d) received a progress notification at revision %d (response %d) "+
							"after one at revision %d (response %d)", w.ID, w.Client, r.Revision, ri, progress.Revision, progressAt),
						Watch: w.ID, Client: w.Client, Revision: r.Revision,
						Want: fmt.Sprintf(">= %d", progress.Revision), Got: fmt.Sprint(r.Revision),
					})
				case lastRI >= 0 && r.Revision < lastEv().Event.Revision():
					last := lastEv()
					col.Add(check.Violation{
						Guarantee: ErrBookmarkable,
						Message: fmt.Sprintf("watch %d (client %d) received a progress notification at revision %d (response %d) "+
							"after the event %s %s at revision %d (response %d)", w.ID, w.Client, r.Revision, ri,
							last.Event.Type, facts.ShortKey(h.Meta.Prefix, last.Event.KV.Key), last.Event.Revision(), last.Response),
						Watch: w.ID, Client: w.Client, Key: last.Event.KV.Key, Revision: r.Revision,
						Want: fmt.Sprintf(">= %d", last.Event.Revision()), Got: fmt.Sprint(r.Revision),
						Events: []history.EventAt{last},
					})
				}
				if progress == nil || r.Revision > progress.Revision {
					progress, progressAt = r, ri
				}
				continue
			}
			for ei := range r.Events {
				ev := &r.Events[ei]
				if lastRI < 0 || ev.Revision() >= w.Responses[lastRI].Events[lastEI].Revision() {
					lastRI, lastEI = ri, ei
				}
				if progress == nil || ev.Revision() > progress.Revision {
					continue
				}
				at := history.EventAt{Watch: w.ID, Response: ri, Index: ei, Event: *ev}
				col.Add(check.Violation{
					Guarantee: ErrBookmarkable,
					Message: fmt.Sprintf("watch %d (client %d) delivered %s %s at revision %d (response %d) after a progress "+
						"notification at revision %d (response %d) said it had delivered everything up to that revision",
						w.ID, w.Client, ev.Type, facts.ShortKey(h.Meta.Prefix, ev.KV.Key), ev.Revision(), ri, progress.Revision, progressAt),
					Watch: w.ID, Client: w.Client, Key: ev.KV.Key, Revision: ev.Revision(),
					Want: fmt.Sprintf("> %d", progress.Revision), Got: fmt.Sprint(ev.Revision()),
					Events: []history.EventAt{at},
				})
			}
		}
	}
	figures := map[string]float64{"progress_notifications": float64(notes), "watches_judged": float64(judged)}
	if notes == 0 {
		return check.Skip(NameBookmarkable, "no watch received a progress notification", figures)
	}
	return col.Result(NameBookmarkable, figures)
}

// CheckCancelReason is watch/cancel-reason. Every watch's end is
// classified by the one rule of facts.Endings; the etcd watch API allows
// every class but two:
//   - unexplained: a cancel response with no cancel reason, compact
//     revision or error, or a stream that closed with neither a cancel
//     response nor an error (a fault does not explain that: a broken gRPC
//     stream ends with a status, which clientv3 reports or retries);
//   - open, when the history has the end mark (the workload finished and
//     closed every watch): the stream never ended while the client waited.
//
// The counts of each class are the figures "ending_<class>".
func CheckCancelReason(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	_, finished := h.Mark(history.MarkEnd)
	rule := facts.NewEndings(h)
	judged, byServer := 0, 0
	var ends []facts.Ending
	for _, w := range h.Watches {
		end := rule.Watch(w)
		ends = append(ends, end)
		if end.Class == facts.EndingOpen && !finished {
			continue // the run was cut short: the end is not known
		}
		judged++
		v := check.Violation{Guarantee: ErrCancelReason, Watch: w.ID, Client: w.Client}
		switch end.Class {
		case facts.EndingUnexplained:
			byServer++
			v.Message = fmt.Sprintf("watch %d (client %d) ended unexplained: %s", w.ID, w.Client, end.Why)
			v.Want, v.Got = "a cancel reason, a compact revision or an error", "neither"
			if end.Note != "" {
				v.Got += ", " + end.Note
			}
			if end.Index >= 0 {
				v.Revision = w.Responses[end.Index].Revision
			}
		case facts.EndingOpen:
			v.Message = fmt.Sprintf("watch %d (client %d) never ended, though the workload finished (end mark) "+
				"and closes every watch it opened: its stream stopped without a word while the client waited", w.ID, w.Client)
			v.Want, v.Got = "an end", "none"
		case facts.EndingClient:
			continue
		default:
			byServer++
			continue
		}
		if n := len(w.Responses); n > 0 {
			v.Revision = max(v.Revision, w.Responses[n-1].Revision)
		}
		col.Add(v)
	}
	figures := facts.EndingFigures(ends)
	figures["watches_judged"], figures["ended_by_server_or_error"] = float64(judged), float64(byServer)
	if judged == 0 {
		if len(h.Watches) == 0 {
			return check.Skip(NameCancelReason, "the history has no watch", figures)
		}
		return check.Skip(NameCancelReason, "no watch ended and the run was cut short (no end mark)", figures)
	}
	return col.Result(NameCancelReason, figures)
}

// CheckProgressBeforeStart is watch/progress-before-start, a SHOULD:
// a watch that asked to start at revision S gets no progress notification
// below S-1. Such a notification breaks no documented guarantee (every
// event up to it was delivered: none was owed), but it reports a position
// the watch never held, and a client that resumes from it asks for events
// it never wanted. etcd treated it as a bug (#20221) and since v3.4.38,
// v3.5.22 and v3.6.2 sends a watch still ahead of its store none.
func CheckProgressBeforeStart(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	judged := 0
	for _, w := range h.Watches {
		s := w.Request.StartRevision
		if s <= 0 {
			continue
		}
		counted := false
		for ri := range w.Responses {
			r := &w.Responses[ri]
			if !r.Progress {
				continue
			}
			if !counted {
				judged, counted = judged+1, true
			}
			if r.Revision < s-1 {
				col.Add(check.Violation{
					Guarantee: ErrProgressBeforeStart,
					Message: fmt.Sprintf("watch %d (client %d) asked to start at revision %d but received a progress notification "+
						"at revision %d (response %d), below its start", w.ID, w.Client, s, r.Revision, ri),
					Watch: w.ID, Client: w.Client, Revision: r.Revision,
					Want: fmt.Sprintf(">= %d", s-1), Got: fmt.Sprint(r.Revision),
				})
			}
		}
	}
	figures := map[string]float64{"watches_judged": float64(judged)}
	if judged == 0 {
		return check.Skip(NameProgressBeforeStart, "no watch with a start revision received a progress notification", figures)
	}
	return col.Result(NameProgressBeforeStart, figures)
}
