package watch

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// declaredStart is the first revision a watch asked for: its start
// revision, or one above the revision it was created at.
func declaredStart(w *history.WatchStream) int64 {
	if w.Request.StartRevision > 0 {
		return w.Request.StartRevision
	}
	for _, r := range w.Responses {
		if r.Created {
			return r.Revision + 1
		}
	}
	return 0
}

// openAtMark reports whether w was open when the final write was
// acknowledged: called before it, not ended nor canceled before it.
func openAtMark(w *history.WatchStream, m history.Mark) bool {
	if w.Call > m.Time || (w.End != nil && w.End.Time < m.Time) {
		return false
	}
	for _, r := range w.Responses {
		if r.Canceled && r.Time < m.Time {
			return false
		}
	}
	return true
}

// endedByServer reports whether the server or an error ended w (a cancel
// response, or an end that is not the client's).
func endedByServer(w *history.WatchStream) bool {
	if w.End != nil {
		return w.End.Reason != history.EndClient
	}
	for _, r := range w.Responses {
		if r.Canceled {
			return true
		}
	}
	return false
}

// finalWrite returns the final-write mark and the changes at its revision.
func finalWrite(h *history.History, changes []change) (history.Mark, []change, bool) {
	m, ok := h.Mark(history.MarkFinalWrite)
	if !ok || m.Revision == 0 {
		return m, nil, false
	}
	i := sort.Search(len(changes), func(i int) bool { return changes[i].rev >= m.Revision })
	j := i
	for j < len(changes) && changes[j].rev == m.Revision {
		j++
	}
	return m, changes[i:j], true
}

func coversAny(w *history.WatchStream, cs []change) bool {
	for _, c := range cs {
		if facts.Covers(w, c.key, c.typ) {
			return true
		}
	}
	return false
}

// CheckReliable is watch/reliable: between the first and the last
// revision a watch observed, it delivered every change in its range (and
// passing its filters) that an acknowledged write proves committed. A
// watch still open when the final write was acknowledged, not ended by the
// server, covering the final write and not closed by the client to be
// resumed by another watch (whose chain watch/liveness follows), must have
// reached it: its last revision is raised to the final write's.
func CheckReliable(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	changes := committedChanges(h)
	mark, finals, hasMark := finalWrite(h, changes)
	figures := map[string]float64{"watches": float64(len(h.Watches)), "committed_changes": float64(len(changes))}
	if len(h.Watches) == 0 {
		return check.Skip(NameReliable, "the history has no watch", figures)
	}
	if len(changes) == 0 {
		return check.Skip(NameReliable, "no acknowledged write proves a committed change", figures)
	}
	resumed := map[int64]bool{}
	for _, w := range h.Watches {
		if w.Resumes != 0 {
			resumed[w.Resumes] = true
		}
	}
	judged, expected := 0, 0
	for _, w := range h.Watches {
		win := facts.ObservedWindow(w)
		extended := false
		// A watch the client closed to resume elsewhere owed the final
		// write no more than its closing time allowed: the resuming watch
		// carries the obligation on.
		handedOn := resumed[w.ID] && w.End != nil && w.End.Reason == history.EndClient
		if hasMark && openAtMark(w, mark) && !endedByServer(w) && !handedOn && coversAny(w, finals) && win.Last < mark.Revision {
			if !win.Ok {
				win.First, win.Ok = declaredStart(w), true
			}
			win.Last, extended = mark.Revision, win.First > 0
			win.Ok = win.First > 0
		}
		if !win.Ok {
			continue
		}
		judged++
		got := sortedRefs(w)
		i := sort.Search(len(changes), func(i int) bool { return changes[i].rev >= win.First })
		for ; i < len(changes) && changes[i].rev <= win.Last; i++ {
			c := changes[i]
			if !facts.Covers(w, c.key, c.typ) {
				continue
			}
			expected++
			pos := sort.Search(len(got), func(j int) bool { return !got[j].before(c.rev, c.key) })
			if pos < len(got) && got[pos].rev == c.rev && got[pos].key == c.key {
				if e := got[pos].at(w); e.Event.Type != c.typ || c.typ == history.EventPut && !c.keeps && e.Event.KV.Value != c.value {
					col.Add(alteredChange(h.Meta.Prefix, w, c, e))
				}
				continue
			}
			col.Add(missingChange(h.Meta.Prefix, w, c, got, pos, win, extended, mark))
		}
	}
	figures["watches_judged"] = float64(judged)
	if expected > 0 {
		figures["changes_expected"] = float64(expected)
	}
	if judged == 0 {
		return check.Skip(NameReliable, "no watch observed a revision", figures)
	}
	return col.Result(NameReliable, figures)
}

// evRef is an event's revision, key and place in its stream: a light
// handle, so that sorting a stream's events copies no event.
type evRef struct {
	rev    int64
	key    string
	ri, ei int32
}

func (r evRef) before(rev int64, key string) bool {
	if r.rev != rev {
		return r.rev < rev
	}
	return r.key < key
}

func (r evRef) at(w *history.WatchStream) history.EventAt {
	return history.EventAt{Watch: w.ID, Response: int(r.ri), Index: int(r.ei), Event: w.Responses[r.ri].Events[r.ei]}
}

// sortedRefs returns w's events sorted by revision, then key (stably).
func sortedRefs(w *history.WatchStream) []evRef {
	n := 0
	for ri := range w.Responses {
		n += len(w.Responses[ri].Events)
	}
	out := make([]evRef, 0, n)
	for ri := range w.Responses {
		for ei, ev := range w.Responses[ri].Events {
			out = append(out, evRef{ev.Revision(), ev.KV.Key, int32(ri), int32(ei)})
		}
	}
	if !sort.SliceIsSorted(out, func(i, j int) bool { return out[i].before(out[j].rev, out[j].key) }) {
		sort.SliceStable(out, func(i, j int) bool { return out[i].before(out[j].rev, out[j].key) })
	}
	return out
}

func missingChange(prefix string, w *history.WatchStream, c change, got []evRef, pos int, win facts.Window,
	extended bool, mark history.Mark) check.Violation {
	var near []history.EventAt
	var around []string
	if pos > 0 {
		e := got[pos-1].at(w)
		near = append(near, e)
		around = append(around, fmt.Sprintf("before it %s %s at %d", e.Event.Type, facts.ShortKey(prefix, e.Event.KV.Key), e.Event.Revision()))
	}
	if pos < len(got) {
		e := got[pos].at(w)
		near = append(near, e)
		around = append(around, fmt.Sprintf("after it %s %s at %d", e.Event.Type, facts.ShortKey(prefix, e.Event.KV.Key), e.Event.Revision()))
	}
	if len(around) == 0 {
		around = append(around, "it delivered no event at all")
	}
	msg := fmt.Sprintf("watch %d (client %d) missed the %s of %s at revision %d, committed by operation %d; "+
		"it vouches for revisions %d..%d; %s", w.ID, w.Client, c.typ, facts.ShortKey(prefix, c.key), c.rev, c.op,
		win.First, win.Last, strings.Join(around, ", "))
	if extended {
		msg += fmt.Sprintf("; it was open when the final write was acknowledged at revision %d, so it must reach it", mark.Revision)
	}
	return check.Violation{
		Guarantee: ErrReliable, Message: msg,
		Watch: w.ID, Client: w.Client, Key: c.key, Revision: c.rev,
		Want: fmt.Sprintf("%s %s at %d", c.typ, c.key, c.rev), Got: "nothing",
		Operations: []int64{c.op}, Events: near,
	}
}

// alteredChange reports an event at a committed change's revision and key
// that is not that change: another type, or a PUT of another value.
func alteredChange(prefix string, w *history.WatchStream, c change, e history.EventAt) check.Violation {
	want := fmt.Sprintf("%s %s", c.typ, c.key)
	if c.typ == history.EventPut && !c.keeps {
		want += fmt.Sprintf(" = %q", c.value)
	}
	got := fmt.Sprintf("%s %s", e.Event.Type, e.Event.KV.Key)
	if e.Event.Type == history.EventPut {
		got += fmt.Sprintf(" = %q", e.Event.KV.Value)
	}
	return check.Violation{
		Guarantee: ErrReliable,
		Message: fmt.Sprintf("watch %d (client %d) delivered %s at revision %d (response %d), but operation %d committed %s there",
			w.ID, w.Client, strings.Replace(got, e.Event.KV.Key, facts.ShortKey(prefix, e.Event.KV.Key), 1), c.rev, e.Response,
			c.op, strings.Replace(want, c.key, facts.ShortKey(prefix, c.key), 1)),
		Watch: w.ID, Client: w.Client, Key: c.key, Revision: c.rev,
		Want: want, Got: got, Operations: []int64{c.op}, Events: []history.EventAt{e},
	}
}

// CheckLiveness is watch/liveness (SHOULD): every watch open when the
// final write was acknowledged, that covers the final write or receives
// progress notifications and starts at or below it, reaches the final write's revision (by an event
// or a progress notification at or above it) — itself, or through the
// watches that resume it after the server or an error ended it.
func CheckLiveness(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	changes := committedChanges(h)
	mark, finals, hasMark := finalWrite(h, changes)
	figures := map[string]float64{"watches": float64(len(h.Watches))}
	if !hasMark {
		return check.Skip(NameLiveness, "the history has no final-write mark", figures)
	}
	resumedBy := map[int64][]*history.WatchStream{}
	for _, w := range h.Watches {
		if w.Resumes != 0 {
			resumedBy[w.Resumes] = append(resumedBy[w.Resumes], w)
		}
	}
	judged := 0
	for _, w := range h.Watches {
		if !openAtMark(w, mark) || !(coversAny(w, finals) || facts.GotProgress(w)) {
			continue
		}
		if w.Request.StartRevision > mark.Revision {
			// Opened ahead of the final write: it owes nothing up to it
			// (seen: a watch at 100 in a run whose final write was at 40).
			continue
		}
		judged++
		reached, lastEv, chain := chainReach(w, resumedBy, map[int64]bool{})
		if reached >= mark.Revision {
			continue
		}
		how := "it was still open when the history ends"
		if w.End != nil {
			how = fmt.Sprintf("it ended (%s)", w.End.Reason)
		}
		if len(chain) > 1 {
			how += fmt.Sprintf("; watches %s resumed it", joinIDs(chain[1:]))
		}
		v := check.Violation{
			Guarantee: ErrLiveness,
			Message: fmt.Sprintf("watch %d (client %d) was open when the final write was acknowledged at revision %d, "+
				"but it and the watches resuming it reached only revision %d; %s", w.ID, w.Client, mark.Revision, reached, how),
			Watch: w.ID, Client: w.Client, Revision: mark.Revision,
			Want: fmt.Sprintf(">= %d", mark.Revision), Got: fmt.Sprint(reached),
		}
		if len(finals) > 0 {
			v.Key = finals[0].key
		}
		if mark.Op != 0 {
			v.Operations = []int64{mark.Op}
		}
		if lastEv != nil {
			v.Events = []history.EventAt{*lastEv}
		}
		col.Add(v)
	}
	figures["watches_judged"] = float64(judged)
	if judged == 0 {
		return check.Skip(NameLiveness, "no watch open at the final write covers it or receives progress notifications", figures)
	}
	return col.Result(NameLiveness, figures)
}

// chainReach returns the highest revision w, or a watch resuming it
// (transitively), reached; the last event of the watch that reached it;
// and the ids of the chain, w first.
func chainReach(w *history.WatchStream, resumedBy map[int64][]*history.WatchStream,
	seen map[int64]bool) (int64, *history.EventAt, []int64) {
	seen[w.ID] = true
	reached, chain := facts.ObservedWindow(w).Last, []int64{w.ID}
	var lastEv *history.EventAt
	for ri := len(w.Responses) - 1; ri >= 0 && lastEv == nil; ri-- {
		if evs := w.Responses[ri].Events; len(evs) > 0 {
			lastEv = &history.EventAt{Watch: w.ID, Response: ri, Index: len(evs) - 1, Event: evs[len(evs)-1]}
		}
	}
	for _, next := range resumedBy[w.ID] {
		if seen[next.ID] {
			continue
		}
		r, e, ids := chainReach(next, resumedBy, seen)
		chain = append(chain, ids...)
		if r > reached {
			reached = r
			if e != nil {
				lastEv = e
			}
		}
	}
	return reached, lastEv, chain
}

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ", ")
}
