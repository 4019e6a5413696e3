package watch

import (
	"fmt"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// CheckPrevKV is watch/prev-kv, for every event of a watch that asked
// for prev_kv:
//   - a prev_kv is of the event's key, below the event's revision, and if
//     the value it carries was written by an acknowledged write, at that
//     write's revision;
//   - where the history determines the key's state just before the event
//     (see timeline): when the key existed, prev_kv carries its value and
//     mod revision, and may be absent only when that revision may have been
//     compacted when the event was sent: a compaction above it was
//     requested by the run, or shown by the server (ErrCompacted for a read
//     at or above it, a watch canceled with a compact revision above it),
//     before the event arrived, whoever else may compact; when the key did
//     not exist, prev_kv is absent.
//
// One case is left to watch/prev-kv-at-creation: prev_kv missing on an
// event of the first response that carried events on a watch. etcd's watch
// server registers a watch before it notes that the watch wants prev_kv, so
// a change racing the creation goes out without it (seen on v3.4.25; the
// same order is in later versions' v3rpc/watch.go).
func CheckPrevKV(h *history.History, cfg check.Config) check.Result {
	return scanPrevKV(h, cfg, false)
}

// CheckPrevKVAtCreation is watch/prev-kv-at-creation (SHOULD): prev_kv
// is not missing from the first events of a new watch (see CheckPrevKV).
func CheckPrevKVAtCreation(h *history.History, cfg check.Config) check.Result {
	return scanPrevKV(h, cfg, true)
}

// scanPrevKV judges prev_kv; atCreation selects the first-events case only
// (reported under its own name), otherwise that case is left out.
func scanPrevKV(h *history.History, cfg check.Config, atCreation bool) check.Result {
	name, guarantee := NamePrevKV, ErrPrevKV
	if atCreation {
		name, guarantee = NamePrevKVAtCreation, ErrPrevKVAtCreation
	}
	col := check.NewCollector(cfg)
	figures := map[string]float64{}
	var n eventCounts
	var tl *timeline
	var written map[facts.KeyValue]facts.WrittenValue
	comp := facts.NewCompactions(h)
	prefix := h.Meta.Prefix
	for _, w := range h.Watches {
		if !w.Request.PrevKV {
			continue
		}
		firstEvents := -1 // index of the first response with events
		for ri := range w.Responses {
			resp := &w.Responses[ri]
			if firstEvents < 0 && len(resp.Events) > 0 {
				firstEvents = ri
			}
			for ei := range resp.Events {
				ev := &resp.Events[ei]
				if tl == nil {
					tl, written = newTimeline(h), facts.PossibleWrites(h)
				}
				n.events++
				key, rev, pk := ev.KV.Key, ev.Revision(), ev.PrevKV
				// Messages are built only for violations: this loop sees every event.
				report := func(why, want, got string, ops ...int64) {
					if atCreation {
						return // only the missing-at-creation case below
					}
					col.Add(check.Violation{Guarantee: guarantee, Watch: w.ID, Client: w.Client, Key: key, Revision: rev,
						Message: fmt.Sprintf("watch %d (client %d) delivered %s %s at revision %d (response %d) with prev_kv %s%s",
							w.ID, w.Client, ev.Type, facts.ShortKey(prefix, key), rev, ri, prevText(prefix, pk), why),
						Want: want, Got: got, Operations: ops,
						Events: []history.EventAt{{Watch: w.ID, Response: ri, Index: ei, Event: *ev}}})
				}
				if pk != nil {
					wv, known := written[facts.KeyValue{Key: pk.Key, Value: pk.Value}]
					switch {
					case pk.Key != key:
						report(", which is another key's", key, pk.Key)
						continue
					case pk.ModRevision >= rev:
						report(", which is not before the event", fmt.Sprintf("mod revision < %d", rev), fmt.Sprint(pk.ModRevision))
						continue
					case known && wv.Rev != 0 && wv.Rev != pk.ModRevision:
						report(fmt.Sprintf(", but operation %d wrote that value at revision %d", wv.Op, wv.Rev),
							fmt.Sprint(wv.Rev), fmt.Sprint(pk.ModRevision), wv.Op)
						continue
					}
				}
				st, ok := tl.stateBefore(key, rev)
				if !ok {
					n.undetermined++
					continue
				}
				n.judged++
				switch {
				case st.exists && pk == nil:
					// Excused only by a compaction above rev-1 requested
					// (or shown by the server) before the event arrived.
					if comp.CoveredBy(resp.Time, rev) {
						n.compacted++
						continue
					}
					if ri == firstEvents {
						n.atCreation++
						if atCreation {
							col.Add(check.Violation{Guarantee: guarantee, Watch: w.ID, Client: w.Client, Key: key, Revision: rev,
								Message: fmt.Sprintf("watch %d (client %d) delivered %s %s at revision %d in its first response with events (response %d) "+
									"without prev_kv, though the key held %q (mod revision %d): the change raced the watch's creation",
									w.ID, w.Client, ev.Type, facts.ShortKey(prefix, key), rev, ri, st.value, st.mod),
								Want: stateText(st), Got: "absent",
								Events: []history.EventAt{{Watch: w.ID, Response: ri, Index: ei, Event: *ev}}})
						}
						continue
					}
					report(fmt.Sprintf(", but the key held %q (mod revision %d) and no compaction above revision %d "+
						"had been requested when the event arrived", st.value, st.mod, rev-1), stateText(st), "absent")
				case !st.exists && pk != nil:
					why := ", but the key did not exist before the event"
					if st.mod > 0 {
						why += fmt.Sprintf(" (deleted at revision %d)", st.mod)
					}
					report(why, stateText(st), prevText(prefix, pk))
				case st.exists && (pk.Value != st.value || pk.ModRevision != st.mod):
					report(fmt.Sprintf(", but the key held %q at mod revision %d", st.value, st.mod), stateText(st), prevText(prefix, pk))
				}
			}
		}
	}
	n.into(figures)
	figures["absent_compacted"] = float64(n.compacted)
	figures["absent_at_creation"] = float64(n.atCreation)
	if n.events == 0 {
		return check.Skip(name, "no watch that asked for prev_kv delivered an event", figures)
	}
	r := col.Result(name, figures)
	r.Judged = n.judged - n.compacted
	r.Excused = map[string]int{"compacted": n.compacted, "undetermined": n.undetermined}
	if !atCreation {
		// watch/prev-kv-at-creation judges these.
		r.Judged -= n.atCreation
		r.Excused["at_creation"] = n.atCreation
	}
	return r
}

// CheckIsCreate is watch/is-create, for every event:
//   - a DELETE is never a create;
//   - a PUT's own fields agree: IsCreate exactly when its create revision
//     is its mod revision, exactly when its version is 1;
//   - where the history determines the key's state just before the event
//     (see timeline), a PUT is a create exactly when the key did not exist.
func CheckIsCreate(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	figures := map[string]float64{}
	var n eventCounts
	var tl *timeline
	prefix := h.Meta.Prefix
	// A target that documents that it keeps no versions sends version 0;
	// such events are judged on is_create and create revision alone.
	noVersions, versionsDocumented := h.Meta.Limitations[history.LimitationNoVersions]
	versionZero := 0
	for _, w := range h.Watches {
		for ri := range w.Responses {
			evs := w.Responses[ri].Events
			for ei := range evs {
				ev := &evs[ei]
				if tl == nil {
					tl = newTimeline(h)
				}
				n.events++
				key, rev := ev.KV.Key, ev.Revision()
				report := func(why, want, got string) {
					col.Add(check.Violation{Guarantee: ErrIsCreate, Watch: w.ID, Client: w.Client, Key: key, Revision: rev,
						Message: fmt.Sprintf("watch %d (client %d) delivered %s %s at revision %d (response %d)%s",
							w.ID, w.Client, ev.Type, facts.ShortKey(prefix, key), rev, ri, why),
						Want: want, Got: got, Events: []history.EventAt{{Watch: w.ID, Response: ri, Index: ei, Event: *ev}}})
				}
				fields := func() string {
					return fmt.Sprintf("is_create %v, create revision %d, version %d", ev.IsCreate, ev.KV.CreateRevision, ev.KV.Version)
				}
				if ev.Type == history.EventDelete {
					if ev.IsCreate {
						report(" marked as a create", "not a create", "is_create")
					}
					continue
				}
				if versionsDocumented && ev.KV.Version == 0 && ev.IsCreate == (ev.KV.CreateRevision == rev) {
					versionZero++
				} else if byRev, byVersion := ev.KV.CreateRevision == rev, ev.KV.Version == 1; ev.IsCreate != byRev || ev.IsCreate != byVersion {
					report(" whose fields disagree on whether it is a create: "+fields(),
						"is_create = (create revision = mod revision) = (version = 1)", fields())
					continue
				}
				st, ok := tl.stateBefore(key, rev)
				if !ok {
					n.undetermined++
					continue
				}
				n.judged++
				switch {
				case ev.IsCreate && st.exists:
					report(fmt.Sprintf(" as a create (%s), but the key existed before it: %s", fields(), stateText(st)),
						"not a create", "create")
				case !ev.IsCreate && !st.exists:
					why := fmt.Sprintf(" as an update (%s), but the key did not exist before it", fields())
					if st.mod > 0 {
						why += fmt.Sprintf(" (deleted at revision %d)", st.mod)
					}
					report(why, "a create", "not a create")
				}
			}
		}
	}
	n.into(figures)
	if n.events == 0 {
		return noEvents(NameIsCreate, h, figures)
	}
	if versionZero > 0 {
		figures["events_with_version_0"] = float64(versionZero)
		if col.Total == 0 {
			return check.Limitation(NameIsCreate, fmt.Sprintf("%d events carried version 0, which etcd never sends for a live key; the target documents it: %s", versionZero, noVersions), figures)
		}
	}
	r := col.Result(NameIsCreate, figures)
	r.Judged, r.Excused = n.judged, map[string]int{"undetermined": n.undetermined}
	return r
}

func prevText(prefix string, pk *history.KV) string {
	if pk == nil {
		return "absent"
	}
	return fmt.Sprintf("%s = %q (mod revision %d)", facts.ShortKey(prefix, pk.Key), pk.Value, pk.ModRevision)
}

func stateText(st keyState) string {
	switch {
	case st.exists:
		return fmt.Sprintf("%q at mod revision %d", st.value, st.mod)
	case st.mod > 0:
		return fmt.Sprintf("absent (deleted at revision %d)", st.mod)
	}
	return "absent (never written)"
}

// eventCounts are the figures of a check that judges events one by one.
type eventCounts struct{ events, judged, undetermined, compacted, atCreation int }

func (n eventCounts) into(f map[string]float64) {
	f["events"], f["events_judged"], f["events_undetermined"] = float64(n.events), float64(n.judged), float64(n.undetermined)
}
