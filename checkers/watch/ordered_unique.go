package watch

import (
	"fmt"
	"sort"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// CheckOrdered is watch/ordered: within one watch, across all its
// responses, an event's revision is never below the revision of the event
// before it. One violation per place where the revision drops.
func CheckOrdered(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	events := 0
	for _, w := range h.Watches {
		pri, pei := -1, 0 // the previous event, read in place: no copy of the stream
		for ri := range w.Responses {
			evs := w.Responses[ri].Events
			events += len(evs)
			for ei := range evs {
				if pri >= 0 && evs[ei].Revision() < w.Responses[pri].Events[pei].Revision() {
					prev := history.EventAt{Watch: w.ID, Response: pri, Index: pei, Event: w.Responses[pri].Events[pei]}
					cur := history.EventAt{Watch: w.ID, Response: ri, Index: ei, Event: evs[ei]}
					col.Add(check.Violation{
						Guarantee: ErrOrdered,
						Message: fmt.Sprintf("watch %d delivered %s %s at revision %d after %s %s at revision %d",
							w.ID, cur.Event.Type, facts.ShortKey(h.Meta.Prefix, cur.Event.KV.Key), cur.Event.Revision(),
							prev.Event.Type, facts.ShortKey(h.Meta.Prefix, prev.Event.KV.Key), prev.Event.Revision()),
						Watch: w.ID, Client: w.Client, Key: cur.Event.KV.Key, Revision: cur.Event.Revision(),
						Want:   fmt.Sprintf(">= %d", prev.Event.Revision()),
						Got:    fmt.Sprint(cur.Event.Revision()),
						Events: []history.EventAt{prev, cur},
					})
				}
				pri, pei = ri, ei
			}
		}
	}
	figures := map[string]float64{"watches": float64(len(h.Watches)), "events": float64(events)}
	if events == 0 {
		return noEvents(NameOrdered, h, figures)
	}
	return col.Result(NameOrdered, figures)
}

// CheckUnique is watch/unique: one watch delivers a (revision, key)
// at most once. One violation per repeat, naming the first delivery too.
func CheckUnique(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	events := 0
	type revKey struct {
		rev int64
		key string
	}
	type place struct{ ri, ei int32 }
	first := map[revKey]place{}
	for _, w := range h.Watches {
		clear(first)
		for ri := range w.Responses {
			evs := w.Responses[ri].Events
			events += len(evs)
			for ei := range evs {
				k := revKey{evs[ei].Revision(), evs[ei].KV.Key}
				p, dup := first[k]
				if !dup {
					first[k] = place{int32(ri), int32(ei)}
					continue
				}
				before := history.EventAt{Watch: w.ID, Response: int(p.ri), Index: int(p.ei),
					Event: w.Responses[p.ri].Events[p.ei]}
				ev := history.EventAt{Watch: w.ID, Response: ri, Index: ei, Event: evs[ei]}
				col.Add(check.Violation{
					Guarantee: ErrUnique,
					Message: fmt.Sprintf("watch %d delivered %s at revision %d twice: response %d event %d, then response %d event %d",
						w.ID, facts.ShortKey(h.Meta.Prefix, k.key), k.rev, before.Response, before.Index, ev.Response, ev.Index),
					Watch: w.ID, Client: w.Client, Key: k.key, Revision: k.rev,
					Want: "once", Got: "again",
					Events: []history.EventAt{before, ev},
				})
			}
		}
	}
	figures := map[string]float64{"watches": float64(len(h.Watches)), "events": float64(events)}
	if events == 0 {
		return noEvents(NameUnique, h, figures)
	}
	return col.Result(NameUnique, figures)
}

// noEvents is the verdict of a check that found no event to judge. The
// run asked for that evidence when it opened watches and acknowledged
// writes they cover after they were opened: then no event at all is
// unknown, not a skip (watch/liveness and watch/reliable say more, when a
// watch vouched for anything). Without a watch, or without a covered
// write, there was nothing to deliver: skipped.
func noEvents(name string, h *history.History, figures map[string]float64) check.Result {
	if len(h.Watches) == 0 {
		return check.Skip(name, "the history has no watch", figures)
	}
	changes := committedChanges(h)
	for _, w := range h.Watches {
		for _, c := range changes {
			if c.call > w.Call && facts.Covers(w, c.key, c.typ) {
				return check.Inconclusive(name, fmt.Sprintf("no watch delivered an event, though watch %d was open "+
					"before operation %d changed %s, which it covers: the evidence this check needs never arrived",
					w.ID, c.op, facts.ShortKey(h.Meta.Prefix, c.key)), figures)
			}
		}
	}
	return check.Skip(name, "no watch delivered an event, and no acknowledged write changed a key after a watch "+
		"covering it was opened", figures)
}

// change is a committed change the history proves: the write that made it
// got a response naming its revision.
type change struct {
	rev   int64
	key   string
	typ   history.EventType
	op    int64
	value string        // what a PUT wrote
	call  time.Duration // when the write was called
	// keeps: a PUT with ignore_value, which wrote the value the key held
	// (not named by the request).
	keeps bool
}

// committedChanges lists, sorted by revision then key, the changes of
// every acknowledged write: puts; deletes that deleted something (their
// keys known from the request, or from prev_kvs for a range delete); txns
// whose taken path wrote. A lease revoke's answer does not say which
// keys it deleted: its changes are not listed.
//
// In a segment, the writes of its context (history.Context) count too:
// a watch that began before the segment delivers their changes.
func committedChanges(h *history.History) []change {
	var out []change
	for _, ops := range h.OperationsWithContext() {
		for i := range ops {
			o := &ops[i]
			rev, wrote := facts.AckedWriteRevision(o)
			if !wrote {
				continue
			}
			history.Executed(&o.Request, o.Response, func(r *history.Request, resp *history.Response) {
				switch r.Kind {
				case history.OpPut:
					out = append(out, change{rev, r.Key, history.EventPut, o.ID, r.Value, o.Call, r.IgnoreValue})
				case history.OpDelete:
					if resp == nil || resp.Deleted == 0 {
						return
					}
					if r.End == "" {
						out = append(out, change{rev, r.Key, history.EventDelete, o.ID, "", o.Call, false})
						return
					}
					for _, kv := range resp.PrevKVs {
						out = append(out, change{rev, kv.Key, history.EventDelete, o.ID, "", o.Call, false})
					}
				}
			})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].rev != out[j].rev {
			return out[i].rev < out[j].rev
		}
		return out[i].key < out[j].key
	})
	return out
}
