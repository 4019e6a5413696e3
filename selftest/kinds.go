package selftest

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/checkers/linearizable"
	"github.com/vigil-suite/vigil/checkers/watch"
	"github.com/vigil-suite/vigil/history"
)

// Kind is one kind of small corruption of what the system answered.
type Kind struct {
	Name string
	// Owner is the check that owns the corrupted guarantee: it must be
	// among the checks that reject the corrupted history.
	Owner string
	// sites lists where the corruption applies in h; apply corrupts the
	// site-th of them in a copy of h (see clone) and says what it did.
	sites func(h *history.History) []site
	apply func(h *history.History, s site) string
	// argue, when set, says why a miss at a site is no weakness of a MUST
	// check ("" when it is one): the corrupted answer cannot be told from a
	// correct one, or only a SHOULD check can notice it.
	argue func(h *history.History, s site) string
}

// site locates a corruption: an operation (op, kv), or a watch event
// (watch, resp, ev), and whatever else the kind needs (alt).
type site struct {
	op, kv     int
	watch      int
	resp, ev   int
	resp2, ev2 int
	alt        string
	altMod     int64
}

// Kinds are the corruptions of etcd histories, one per guarantee they
// attack.
func Kinds() []Kind {
	return append([]Kind{
		{Name: "drop-event", Owner: watch.NameReliable, sites: innerEvents(""), apply: dropEvent},
		{Name: "drop-delete-event", Owner: watch.NameReliable, sites: innerEvents(history.EventDelete), apply: dropEvent},
		{Name: "duplicate-event", Owner: watch.NameUnique, sites: innerEvents(""), apply: duplicateEvent},
		{Name: "swap-events", Owner: watch.NameOrdered, sites: eventPairs, apply: swapEvents},
		{Name: "event-revision+1", Owner: watch.NameReliable, sites: innerEvents(""), apply: shiftEvent(1)},
		{Name: "event-revision-1", Owner: watch.NameReliable, sites: innerEvents(""), apply: shiftEvent(-1)},
		{Name: "split-txn-events", Owner: watch.NameAtomic, sites: txnResponses, apply: splitResponse},
		{Name: "drop-prev-kv", Owner: watch.NamePrevKV, sites: prevKVEvents, apply: dropPrevKV, argue: racesCreation},
		{Name: "mark-put-as-create", Owner: watch.NameIsCreate, sites: updateEvents, apply: markCreate},
		{Name: "read-older-value", Owner: linearizable.Name, sites: olderValues, apply: readValue},
		{Name: "read-value-never-written", Owner: linearizable.Name, sites: readKVs, apply: neverWritten},
		{Name: "read-header-revision+1", Owner: linearizable.Name, sites: linearizableReads, apply: advanceHeader,
			argue: nextWriteInFlight},
		{Name: "put-revision-1", Owner: kv.NameRevisionMonotonic, sites: acknowledgedPuts, apply: shiftPut(-1)},
		{Name: "put-revision+1", Owner: kv.NameRevisionMonotonic, sites: acknowledgedPuts, apply: shiftPut(1)},
		{Name: "stop-watch-silently", Owner: watch.NameReliable, sites: watchesOpenAtEnd, apply: stopWatch,
			argue: finalWriteUncovered},
		{Name: "ignore-progress", Owner: watch.NameBookmarkable, sites: progressAnswered, apply: ignoreProgress},
		{Name: "contended-write-not-applied", Owner: watch.NameReliable, sites: contendedPuts, apply: notApplied},
		{Name: "quiet-end", Owner: watch.NameCancelReason, sites: quietEndSites, apply: quietEnd},
	}, grammarKinds()...)
}

// eventsWhere lists the events of every watch that keep accepts; keep sees
// the watch's events in order and the index of the one considered.
func eventsWhere(keep func(evs []history.EventAt, i int) bool) func(h *history.History) []site {
	return func(h *history.History) []site {
		var out []site
		for wi, w := range h.Watches {
			evs := w.Events()
			for i, e := range evs {
				if keep(evs, i) {
					out = append(out, site{watch: wi, resp: e.Response, ev: e.Index})
				}
			}
		}
		return out
	}
}

// opsWhere lists the operations keep accepts.
func opsWhere(keep func(o *history.Operation) bool) func(h *history.History) []site {
	return where(func(h *history.History) []history.Operation { return h.Operations }, keep)
}

// where lists, as sites, the indexes of the records of a history (all)
// that keep accepts.
func where[T any](all func(h *history.History) []T, keep func(*T) bool) func(h *history.History) []site {
	return func(h *history.History) []site {
		var out []site
		records := all(h)
		for i := range records {
			if keep(&records[i]) {
				out = append(out, site{op: i})
			}
		}
		return out
	}
}

// innerEvents are the events of a type ("" for any) that are neither the
// first nor the last event of their watch: inside the span the watch
// vouches for, so missing one is a gap, not a shorter span.
func innerEvents(typ history.EventType) func(h *history.History) []site {
	return eventsWhere(func(evs []history.EventAt, i int) bool {
		return i > 0 && i < len(evs)-1 && (typ == "" || evs[i].Event.Type == typ)
	})
}

// prevKVEvents are the events that carry a prev_kv.
var prevKVEvents = eventsWhere(func(evs []history.EventAt, i int) bool { return evs[i].Event.PrevKV != nil })

// updateEvents are PUT events of a key that existed (not creates).
var updateEvents = eventsWhere(func(evs []history.EventAt, i int) bool {
	e := evs[i].Event
	return e.Type == history.EventPut && !e.IsCreate && e.KV.Version > 1
})

// eventPairs are two successive events of one watch at different
// revisions.
func eventPairs(h *history.History) []site {
	var out []site
	for wi, w := range h.Watches {
		evs := w.Events()
		for i := 1; i < len(evs); i++ {
			if evs[i-1].Event.Revision() != evs[i].Event.Revision() {
				out = append(out, site{watch: wi, resp: evs[i-1].Response, ev: evs[i-1].Index, resp2: evs[i].Response, ev2: evs[i].Index})
			}
		}
	}
	return out
}

// txnResponses are responses that carry several events of one revision
// (a txn's changes), on watches that did not ask for fragments.
func txnResponses(h *history.History) []site {
	var out []site
	for wi, w := range h.Watches {
		if w.Request.Fragment {
			continue
		}
		for ri, r := range w.Responses {
			for i := 1; i < len(r.Events); i++ {
				if r.Events[i].Revision() == r.Events[i-1].Revision() {
					out = append(out, site{watch: wi, resp: ri, ev: i})
					break
				}
			}
		}
	}
	return out
}

// isLinearizableRead is an acknowledged range of the latest revision,
// the reads kv/linearizable judges in full.
func isLinearizableRead(o *history.Operation) bool {
	return o.Request.Kind == history.OpRange && !o.Failed() && !o.Request.Serializable && o.Request.Revision == 0
}

var (
	linearizableReads = opsWhere(isLinearizableRead)
	acknowledgedPuts  = opsWhere(func(o *history.Operation) bool { return o.Request.Kind == history.OpPut && !o.Failed() })
)

func readKVs(h *history.History) []site {
	var out []site
	for _, s := range linearizableReads(h) {
		o := &h.Operations[s.op]
		if !o.Request.KeysOnly {
			for k := range o.Response.KVs {
				out = append(out, site{op: s.op, kv: k})
			}
		}
	}
	return out
}

// olderValues pairs each value a linearizable read returned with the
// value an acknowledged put wrote to that key before it.
func olderValues(h *history.History) []site {
	type put struct {
		value string
		rev   int64
	}
	puts := map[string][]put{} // key -> acknowledged plain puts, by revision
	for _, p := range acknowledgedPuts(h) {
		o := &h.Operations[p.op]
		puts[o.Request.Key] = append(puts[o.Request.Key], put{o.Request.Value, o.Response.Revision})
	}
	for _, ps := range puts {
		slices.SortFunc(ps, func(a, b put) int { return cmp.Compare(a.rev, b.rev) })
	}
	var out []site
	for _, s := range readKVs(h) {
		kv := h.Operations[s.op].Response.KVs[s.kv]
		ps := puts[kv.Key]
		i, _ := slices.BinarySearchFunc(ps, kv.ModRevision, func(p put, r int64) int { return cmp.Compare(p.rev, r) })
		if i > 0 && ps[i-1].value != kv.Value {
			s.alt, s.altMod = ps[i-1].value, ps[i-1].rev
			out = append(out, s)
		}
	}
	return out
}

// watchesOpenAtEnd are the watches still open at the final write (the
// client closed them after it), each cut after one of its inner responses
// with events.
func watchesOpenAtEnd(h *history.History) []site {
	final, ok := h.Mark(history.MarkFinalWrite)
	if !ok {
		return nil
	}
	var out []site
	for wi, w := range h.Watches {
		if w.End == nil || w.End.Reason != history.EndClient || w.End.Time < final.Time {
			continue
		}
		for ri := 1; ri < len(w.Responses)-1; ri++ {
			if len(w.Responses[ri].Events) > 0 && w.Responses[ri].Time < final.Time {
				out = append(out, site{watch: wi, resp: ri})
			}
		}
	}
	return out
}

// finalWriteUncovered: watch/reliable holds a watch open at the final
// write to that write only when the watch covers it; a watch of other keys
// that stops silently leaves no gap below what it vouched for, and only
// watch/liveness (SHOULD: it expected a progress notification at the
// final revision) can notice.
func finalWriteUncovered(h *history.History, s site) string {
	w := h.Watches[s.watch]
	if facts.Covers(w, h.Meta.Prefix+history.FinalKey, history.EventPut) {
		return ""
	}
	return fmt.Sprintf("watch %d does not cover the final write: only watch/liveness (SHOULD) can notice a silent stop", w.ID)
}

// racesCreation: etcd's watch server can send the first events of a new
// watch without prev_kv (a change racing the watch's creation), so
// watch/prev-kv leaves the first response with events to
// watch/prev-kv-at-creation, a SHOULD check.
func racesCreation(h *history.History, s site) string {
	w := h.Watches[s.watch]
	for ri, r := range w.Responses {
		if len(r.Events) > 0 {
			if ri == s.resp {
				return fmt.Sprintf("the event is in watch %d's first response with events: etcd may send those without prev_kv, "+
					"so only watch/prev-kv-at-creation (SHOULD) judges them", w.ID)
			}
			return ""
		}
	}
	return ""
}

// nextWriteInFlight: a read whose header revision is raised by one may be
// placed after the write that made that revision, if that write was in
// flight while the read ran (and changed no key the read returned).
func nextWriteInFlight(h *history.History, s site) string {
	r := &h.Operations[s.op]
	for i := range h.Operations {
		o := &h.Operations[i]
		if rev, wrote := facts.AckedWriteRevision(o); wrote && rev == r.Response.Revision+1 && o.Call < r.Return {
			return fmt.Sprintf("operation %d made revision %d and was in flight while the read ran", o.ID, rev)
		}
	}
	return ""
}

// The corruptions. Each works on a clone and copies what it changes.

func stopWatch(h *history.History, s site) string {
	w := h.Watches[s.watch]
	cut := len(w.Responses) - s.resp - 1
	w.Responses = w.Responses[:s.resp+1]
	return fmt.Sprintf("watch %d: stopped after response %d (%d responses dropped), still open until the client closed it", w.ID, s.resp, cut)
}

// quietEndSites are, in every watch, the responses with events after its
// first one with events and before its last response: where a quiet end
// cuts a watch that has vouched for something and had more to say.
func quietEndSites(h *history.History) []site {
	var out []site
	for wi, w := range h.Watches {
		seen := false
		for ri := 0; ri+1 < len(w.Responses); ri++ {
			if len(w.Responses[ri].Events) == 0 {
				continue
			}
			if seen {
				out = append(out, site{watch: wi, resp: ri})
			}
			seen = true
		}
	}
	return out
}

// quietEnd ends a watch right after a response, its stream closed with
// neither a cancel response nor an error.
func quietEnd(h *history.History, s site) string {
	w := h.Watches[s.watch]
	cut := len(w.Responses) - s.resp - 1
	w.Responses = w.Responses[:s.resp+1]
	w.End = &history.WatchEnd{Watch: w.ID, Time: w.Responses[s.resp].Time, Reason: history.EndError, Error: history.QuietClose}
	return fmt.Sprintf("watch %d: its stream closed quietly after response %d (%d responses dropped)", w.ID, s.resp, cut)
}

func dropEvent(h *history.History, s site) string {
	w, r := mutableResponse(h, s.watch, s.resp)
	e := r.Events[s.ev]
	r.Events = slices.Delete(r.Events, s.ev, s.ev+1)
	return fmt.Sprintf("watch %d response %d: dropped %s", w.ID, s.resp, eventText(e))
}

func duplicateEvent(h *history.History, s site) string {
	w, r := mutableResponse(h, s.watch, s.resp)
	e := r.Events[s.ev]
	r.Events = slices.Insert(r.Events, s.ev+1, e)
	return fmt.Sprintf("watch %d response %d: delivered %s twice", w.ID, s.resp, eventText(e))
}

func swapEvents(h *history.History, s site) string {
	w, r1 := mutableResponse(h, s.watch, s.resp)
	r2 := r1
	if s.resp2 != s.resp {
		_, r2 = mutableResponse(h, s.watch, s.resp2)
	}
	a, b := r1.Events[s.ev], r2.Events[s.ev2]
	r1.Events[s.ev], r2.Events[s.ev2] = b, a
	return fmt.Sprintf("watch %d: swapped %s (response %d) and %s (response %d)", w.ID, eventText(a), s.resp, eventText(b), s.resp2)
}

func shiftEvent(by int64) func(h *history.History, s site) string {
	return func(h *history.History, s site) string {
		w, r := mutableResponse(h, s.watch, s.resp)
		e := &r.Events[s.ev]
		was := eventText(*e)
		e.KV.ModRevision += by
		if e.IsCreate {
			e.KV.CreateRevision += by
		}
		return fmt.Sprintf("watch %d response %d: %s now at revision %d", w.ID, s.resp, was, e.KV.ModRevision)
	}
}

func splitResponse(h *history.History, s site) string {
	w := h.Watches[s.watch]
	r := w.Responses[s.resp]
	first, rest := r, r
	first.Events, rest.Events = slices.Clone(r.Events[:s.ev]), slices.Clone(r.Events[s.ev:])
	resps := make([]history.WatchResponse, 0, len(w.Responses)+1)
	resps = append(resps, w.Responses[:s.resp]...)
	resps = append(resps, first, rest)
	w.Responses = append(resps, w.Responses[s.resp+1:]...)
	return fmt.Sprintf("watch %d response %d: the events of revision %d split across two responses", w.ID, s.resp, r.Events[s.ev].Revision())
}

func dropPrevKV(h *history.History, s site) string {
	w, r := mutableResponse(h, s.watch, s.resp)
	e := &r.Events[s.ev]
	e.PrevKV = nil
	return fmt.Sprintf("watch %d response %d: %s without its prev_kv", w.ID, s.resp, eventText(*e))
}

func markCreate(h *history.History, s site) string {
	w, r := mutableResponse(h, s.watch, s.resp)
	e := &r.Events[s.ev]
	e.IsCreate, e.KV.CreateRevision, e.KV.Version = true, e.KV.ModRevision, 1
	return fmt.Sprintf("watch %d response %d: %s marked as a create", w.ID, s.resp, eventText(*e))
}

func readValue(h *history.History, s site) string {
	o := mutableOp(h, s.op)
	kv := &o.Response.KVs[s.kv]
	was := kv.Value
	kv.Value, kv.ModRevision = s.alt, s.altMod
	return fmt.Sprintf("operation %d: returned %s = %q (mod revision %d), the value before %q", o.ID, kv.Key, s.alt, s.altMod, was)
}

func neverWritten(h *history.History, s site) string {
	o := mutableOp(h, s.op)
	kv := &o.Response.KVs[s.kv]
	kv.Value = "never-written"
	return fmt.Sprintf("operation %d: returned %s = %q", o.ID, kv.Key, kv.Value)
}

func advanceHeader(h *history.History, s site) string {
	o := mutableOp(h, s.op)
	o.Response.Revision++
	return fmt.Sprintf("operation %d: header revision %d instead of %d", o.ID, o.Response.Revision, o.Response.Revision-1)
}

func shiftPut(by int64) func(h *history.History, s site) string {
	return func(h *history.History, s site) string {
		o := mutableOp(h, s.op)
		o.Response.Revision += by
		return fmt.Sprintf("operation %d: put of %s acknowledged at revision %d instead of %d", o.ID, o.Request.Key,
			o.Response.Revision, o.Response.Revision-by)
	}
}

func eventText(e history.Event) string {
	return fmt.Sprintf("%s %s at revision %d", e.Type, e.KV.Key, e.Revision())
}

// progressAnswered is the one site of ignore-progress: a history that
// records its progress requests and got some notification.
func progressAnswered(h *history.History) []site {
	if len(h.CallsOf(history.CallProgress)) == 0 {
		return nil
	}
	for _, w := range h.Watches {
		if facts.GotProgress(w) {
			return []site{{}}
		}
	}
	return nil
}

// ignoreProgress removes every progress notification: the server ignored
// every progress request the run sent.
func ignoreProgress(h *history.History, _ site) string {
	n := 0
	for _, w := range h.Watches {
		kept := w.Responses[:0:0]
		for _, r := range w.Responses {
			if r.Progress {
				n++
				continue
			}
			kept = append(kept, r)
		}
		w.Responses = kept
	}
	return fmt.Sprintf("removed all %d progress notifications: %d progress requests went unanswered", n, len(h.CallsOf(history.CallProgress)))
}

// contendedPuts are acknowledged plain puts that ran while another
// client's write to the same key was in flight, and whose value no read
// returned (so only the watches show it was applied).
func contendedPuts(h *history.History) []site {
	read := map[string]bool{}
	type span struct {
		client    int
		call, ret int64
	}
	writes := map[string][]span{}
	for i := range h.Operations {
		o := &h.Operations[i]
		if o.Response != nil {
			for _, kv := range o.Response.KVs {
				read[kv.Value] = true
			}
			for _, r := range o.Response.Responses {
				for _, kv := range r.KVs {
					read[kv.Value] = true
				}
			}
		}
		if o.Request.Kind.IsWrite() {
			for _, k := range writtenKeys(o.Request) {
				writes[k] = append(writes[k], span{o.Client, int64(o.Call), int64(o.Return)})
			}
		}
	}
	var out []site
	for _, s := range acknowledgedPuts(h) {
		o := &h.Operations[s.op]
		if read[o.Request.Value] || o.Request.PrevKV {
			continue
		}
		for _, w := range writes[o.Request.Key] {
			if w.client != o.Client && w.call < int64(o.Return) && w.ret > int64(o.Call) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

func writtenKeys(r history.Request) []string {
	switch r.Kind {
	case history.OpPut, history.OpDelete:
		return []string{r.Key}
	case history.OpTxn:
		var out []string
		for _, b := range [][]history.Request{r.Success, r.Failure} {
			for _, x := range b {
				out = append(out, writtenKeys(x)...)
			}
		}
		return out
	}
	return nil
}

// notApplied drops the put's change from every watch: acknowledged, but
// never applied. No read returned its value, so only the watches can show
// it missing: watch/reliable owns the proof (kv/linearizable takes the
// acknowledgement at its word and uses no watch against it).
func notApplied(h *history.History, s site) string {
	o := &h.Operations[s.op]
	n := 0
	for wi, w := range h.Watches {
		for ri := range w.Responses {
			r := &w.Responses[ri]
			for ei := range r.Events {
				if e := r.Events[ei]; e.KV.Key == o.Request.Key && e.Revision() == o.Response.Revision {
					_, mr := mutableResponse(h, wi, ri)
					mr.Events = slices.Delete(mr.Events, ei, ei+1)
					n++
					break
				}
			}
		}
	}
	return fmt.Sprintf("operation %d: put(%s, %q) acknowledged at revision %d while another client wrote the key, its change dropped from %d watches",
		o.ID, o.Request.Key, o.Request.Value, o.Response.Revision, n)
}
