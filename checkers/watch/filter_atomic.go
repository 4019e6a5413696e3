package watch

import (
	"fmt"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// CheckFilter is watch/filter: every event a watch delivers is on a
// key inside its key or range, and of a type its filters let through
// (no PUT with NoPut, no DELETE with NoDelete). One violation per event.
func CheckFilter(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	events, filtered := 0, 0
	for _, w := range h.Watches {
		r := facts.KeyRange{Key: w.Request.Key, End: w.Request.End}
		if w.Request.NoPut || w.Request.NoDelete || w.Request.End == "" {
			filtered++
		}
		for ri := range w.Responses {
			for ei, ev := range w.Responses[ri].Events {
				events++
				at := history.EventAt{Watch: w.ID, Response: ri, Index: ei, Event: ev}
				var why, want string
				switch {
				case !r.Contains(ev.KV.Key):
					why, want = "outside the watched "+watchRangeText(h.Meta.Prefix, w), "a key in the watched range"
				case ev.Type == history.EventPut && w.Request.NoPut:
					why, want = "although the watch asked for no PUT events (NoPut)", "no PUT"
				case ev.Type == history.EventDelete && w.Request.NoDelete:
					why, want = "although the watch asked for no DELETE events (NoDelete)", "no DELETE"
				case ev.Type != history.EventPut && ev.Type != history.EventDelete:
					why, want = "which is neither PUT nor DELETE", "PUT or DELETE"
				default:
					continue
				}
				col.Add(check.Violation{
					Guarantee: ErrFilter,
					Message: fmt.Sprintf("watch %d (client %d) delivered %s %s at revision %d (response %d), %s",
						w.ID, w.Client, ev.Type, facts.ShortKey(h.Meta.Prefix, ev.KV.Key), ev.Revision(), ri, why),
					Watch: w.ID, Client: w.Client, Key: ev.KV.Key, Revision: ev.Revision(),
					Want: want, Got: fmt.Sprintf("%s %s", ev.Type, ev.KV.Key), Events: []history.EventAt{at},
				})
			}
		}
	}
	figures := map[string]float64{"watches": float64(len(h.Watches)), "events": float64(events),
		"watches_with_filter_or_single_key": float64(filtered)}
	if events == 0 {
		return noEvents(NameFilter, h, figures)
	}
	return col.Result(NameFilter, figures)
}

// watchRangeText names what a watch watches, for messages.
func watchRangeText(prefix string, w *history.WatchStream) string {
	switch w.Request.End {
	case "":
		return "key " + facts.ShortKey(prefix, w.Request.Key)
	case "\x00":
		return "keys from " + facts.ShortKey(prefix, w.Request.Key)
	}
	return fmt.Sprintf("range [%s, %s)", facts.ShortKey(prefix, w.Request.Key), facts.ShortKey(prefix, w.Request.End))
}

// CheckAtomic is watch/atomic: the events of one revision (one txn)
// arrive in one response, so a watch never sees part of a txn. A revision
// whose events a watch received in two responses is one violation, naming
// an event of each. Watches that asked for fragmented responses are left
// out (etcd may split a large revision then). With no revision holding
// more than one event (in any response or in any acknowledged txn), there
// is nothing to split and the check is skipped.
func CheckAtomic(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	multi := map[int64]bool{} // revisions known to hold more than one change
	changes := committedChanges(h)
	for i := 1; i < len(changes); i++ {
		if changes[i].rev == changes[i-1].rev {
			multi[changes[i].rev] = true
		}
	}
	events, judged := 0, 0
	where := map[int64]history.EventAt{} // revision -> first event of it, per watch
	for _, w := range h.Watches {
		if w.Request.Fragment {
			continue
		}
		judged++
		clear(where)
		for ri := range w.Responses {
			evs := w.Responses[ri].Events
			for ei, ev := range evs {
				events++
				rev := ev.Revision()
				if ei > 0 && evs[ei-1].Revision() == rev {
					multi[rev] = true
				}
				first, seen := where[rev]
				if !seen {
					where[rev] = history.EventAt{Watch: w.ID, Response: ri, Index: ei, Event: ev}
					continue
				}
				// The same key again is a repeat (watch/unique), not a split.
				if first.Response == ri || first.Event.KV.Key == ev.KV.Key {
					continue
				}
				multi[rev] = true
				at := history.EventAt{Watch: w.ID, Response: ri, Index: ei, Event: ev}
				col.Add(check.Violation{
					Guarantee: ErrAtomic,
					Message: fmt.Sprintf("watch %d (client %d) received the events of revision %d in two responses: "+
						"%s %s in response %d, then %s %s in response %d", w.ID, w.Client, rev,
						first.Event.Type, facts.ShortKey(h.Meta.Prefix, first.Event.KV.Key), first.Response,
						ev.Type, facts.ShortKey(h.Meta.Prefix, ev.KV.Key), ri),
					Watch: w.ID, Client: w.Client, Key: ev.KV.Key, Revision: rev,
					Want: fmt.Sprintf("every event of revision %d in response %d", rev, first.Response),
					Got:  fmt.Sprintf("also in response %d", ri), Events: []history.EventAt{first, at},
				})
				where[rev] = at // report each further split once
			}
		}
	}
	figures := map[string]float64{"watches_judged": float64(judged), "events": float64(events),
		"revisions_with_several_changes": float64(len(multi))}
	switch {
	case judged == 0 && len(h.Watches) > 0:
		return check.Skip(NameAtomic, "every watch asked for fragmented responses", figures)
	case events == 0:
		return noEvents(NameAtomic, h, figures)
	case len(multi) == 0:
		return check.Skip(NameAtomic, "no revision held more than one change: nothing could be split", figures)
	}
	return col.Result(NameAtomic, figures)
}
