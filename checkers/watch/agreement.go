package watch

import (
	"fmt"
	"slices"
	"sort"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// CheckAgreement is watch/agreement: watches whose ranges and
// revisions overlap saw the same events in the same order. Rather than
// compare every pair, it builds one canonical record of every (revision,
// key) any watch delivered — its type and value, and its place among the
// events of that revision as the watch that delivered most of them gave it
// — and holds each watch to it, over the span of revisions the watch
// observed (observedWindow), for the keys and event types it covers:
//   - the same (revision, key) carries the same type and value;
//   - the events of one revision come in the same order;
//   - a change another watch delivered, inside this watch's span, key range
//     and filters, was delivered by this watch too.
//
// One violation per watch: its first disagreement by revision, naming the
// other watch and both events. Cost: O(E log E) for E events in all.
func CheckAgreement(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	events := 0
	// The largest group of events any watch delivered for each revision.
	type group struct {
		w      *history.WatchStream
		ri, ei int
		n      int
	}
	best := map[int64]group{}
	for _, w := range h.Watches {
		for ri := range w.Responses {
			evs := w.Responses[ri].Events
			events += len(evs)
			for ei := 0; ei < len(evs); {
				rev, n := evs[ei].Revision(), 1
				for ei+n < len(evs) && evs[ei+n].Revision() == rev {
					n++
				}
				if g, ok := best[rev]; !ok || n > g.n {
					best[rev] = group{w, ri, ei, n}
				}
				ei += n
			}
		}
	}
	figures := map[string]float64{"watches": float64(len(h.Watches)), "events": float64(events)}
	if len(h.Watches) < 2 || events == 0 {
		return check.Skip(NameAgreement, "fewer than two watches, or no event: nothing to compare", figures)
	}
	// canon: per revision, every distinct key any watch delivered there; the
	// largest group's events first, in its order (pos), others after.
	canon := make(map[int64][]canonEvent, len(best))
	for rev, g := range best {
		list := make([]canonEvent, g.n)
		for i := range list {
			ev := g.w.Responses[g.ri].Events[g.ei+i]
			list[i] = canonEvent{at: history.EventAt{Watch: g.w.ID, Response: g.ri, Index: g.ei + i, Event: ev}, pos: int32(i)}
		}
		canon[rev] = list
	}
	first := map[int64]disagreement{} // watch -> its first disagreement
	note := func(w *history.WatchStream, d disagreement) {
		if old, ok := first[w.ID]; !ok || d.rev < old.rev {
			d.w = w
			first[w.ID] = d
		}
	}
	for _, w := range h.Watches {
		lastPos, lastRev := int32(-1), int64(-1)
		lastRI, lastEI := 0, 0
		for ri := range w.Responses {
			evs := w.Responses[ri].Events
			for ei := range evs {
				ev := &evs[ei]
				rev := ev.Revision()
				list := canon[rev]
				ci := 0
				for ci < len(list) && list[ci].at.Event.KV.Key != ev.KV.Key {
					ci++
				}
				if ci == len(list) {
					canon[rev] = append(list, canonEvent{at: history.EventAt{Watch: w.ID, Response: ri, Index: ei, Event: *ev}, pos: -1})
					continue
				}
				c := &list[ci]
				if c.at.Watch != w.ID && (c.at.Event.Type != ev.Type || c.at.Event.KV.Value != ev.KV.Value) {
					at := history.EventAt{Watch: w.ID, Response: ri, Index: ei, Event: *ev}
					note(w, disagreement{rev: rev, key: ev.KV.Key, mine: &at, theirs: c.at,
						what: fmt.Sprintf("%s %q where watch %d delivered %s %q", ev.Type, ev.KV.Value,
							c.at.Watch, c.at.Event.Type, c.at.Event.KV.Value)})
				}
				if rev != lastRev {
					lastPos, lastRev = -1, rev
				}
				if c.pos < 0 {
					continue
				}
				if c.pos < lastPos && c.at.Watch != w.ID {
					at := history.EventAt{Watch: w.ID, Response: ri, Index: ei, Event: *ev}
					prev := history.EventAt{Watch: w.ID, Response: lastRI, Index: lastEI, Event: w.Responses[lastRI].Events[lastEI]}
					note(w, disagreement{rev: rev, key: ev.KV.Key, mine: &at, theirs: c.at, other: &prev,
						what: fmt.Sprintf("its events of revision %d in another order than watch %d's", rev, c.at.Watch)})
				}
				lastPos, lastRI, lastEI = c.pos, ri, ei
			}
		}
	}
	byKey := map[string][]canonRef{}
	distinct := 0
	for rev, list := range canon {
		distinct += len(list)
		for i := range list {
			byKey[list[i].at.Event.KV.Key] = append(byKey[list[i].at.Event.KV.Key], canonRef{rev, &list[i]})
		}
	}
	idx := &keyIndex{id: make(map[string]int32, len(byKey))}
	for key := range byKey {
		idx.keys = append(idx.keys, key)
	}
	sort.Strings(idx.keys)
	for i, key := range idx.keys {
		refs := byKey[key]
		sort.Slice(refs, func(i, j int) bool { return refs[i].rev < refs[j].rev })
		idx.refs = append(idx.refs, refs)
		idx.id[key] = int32(i)
	}
	for _, w := range h.Watches {
		if d, ok := idx.missedBy(w); ok {
			note(w, d)
		}
	}
	for _, w := range h.Watches { // in watch order, for a stable report
		if d, ok := first[w.ID]; ok {
			col.Add(d.violation(h.Meta.Prefix))
		}
	}
	figures["distinct_changes"] = float64(distinct)
	return col.Result(NameAgreement, figures)
}

type canonRef struct {
	rev int64
	c   *canonEvent
}

type canonEvent struct {
	at  history.EventAt
	pos int32 // place among its revision's events in the largest group (-1: not in it)
}

type disagreement struct {
	w      *history.WatchStream
	rev    int64
	key    string
	mine   *history.EventAt // nil when the watch missed the change
	theirs history.EventAt
	other  *history.EventAt
	what   string
}

func (d disagreement) violation(prefix string) check.Violation {
	evs := []history.EventAt{d.theirs}
	if d.mine != nil {
		evs = append([]history.EventAt{*d.mine}, evs...)
	}
	if d.other != nil {
		evs = append(evs, *d.other)
	}
	got := "nothing"
	if d.mine != nil {
		got = fmt.Sprintf("%s %s %q at %d (response %d)", d.mine.Event.Type, d.mine.Event.KV.Key, d.mine.Event.KV.Value,
			d.rev, d.mine.Response)
	}
	return check.Violation{
		Guarantee: ErrAgreement,
		Message: fmt.Sprintf("watch %d (client %d) disagrees with watch %d at revision %d on %s: it delivered %s",
			d.w.ID, d.w.Client, d.theirs.Watch, d.rev, facts.ShortKey(prefix, d.key), d.what),
		Watch: d.w.ID, Client: d.w.Client, Key: d.key, Revision: d.rev,
		Want: fmt.Sprintf("%s %s %q at %d, as watch %d (response %d)", d.theirs.Event.Type, d.theirs.Event.KV.Key,
			d.theirs.Event.KV.Value, d.rev, d.theirs.Watch, d.theirs.Response),
		Got: got, Events: evs,
		// The other watch is the proof: if it is the one that is wrong,
		// this watch is only its witness.
		RestsOn: []int64{d.theirs.Watch},
	}
}

// keyIndex holds the canonical changes per key, keys sorted, and buffers
// reused from one watch to the next.
type keyIndex struct {
	keys []string
	id   map[string]int32
	refs [][]canonRef // by key id, sorted by revision
	revs []int64
	off  []int32
}

// missedBy finds the lowest canonical change inside w's observed span,
// range and filters that w did not deliver. w's own events are bucketed
// by key (counting sort over the keys its range spans), so a watch costs
// its events plus the canonical changes it should have seen.
func (x *keyIndex) missedBy(w *history.WatchStream) (disagreement, bool) {
	win := facts.ObservedWindow(w)
	if !win.Ok {
		return disagreement{}, false
	}
	r := facts.KeyRange{Key: w.Request.Key, End: w.Request.End}
	lo := sort.SearchStrings(x.keys, w.Request.Key)
	hi := lo
	for hi < len(x.keys) && r.Contains(x.keys[hi]) {
		hi++
	}
	x.off = append(x.off[:0], make([]int32, hi-lo+1)...)
	n := 0
	for _, resp := range w.Responses {
		for i := range resp.Events {
			if id, ok := x.id[resp.Events[i].KV.Key]; ok && int(id) >= lo && int(id) < hi {
				x.off[int(id)-lo+1]++
				n++
			}
		}
	}
	for i := 1; i < len(x.off); i++ {
		x.off[i] += x.off[i-1]
	}
	x.revs = append(x.revs[:0], make([]int64, n)...)
	fill := append([]int32(nil), x.off[:len(x.off)-1]...)
	for _, resp := range w.Responses {
		for i := range resp.Events {
			if id, ok := x.id[resp.Events[i].KV.Key]; ok && int(id) >= lo && int(id) < hi {
				x.revs[fill[int(id)-lo]] = resp.Events[i].Revision()
				fill[int(id)-lo]++
			}
		}
	}
	var found disagreement
	ok := false
	for ki := lo; ki < hi; ki++ {
		mine := x.revs[x.off[ki-lo]:x.off[ki-lo+1]]
		if !slices.IsSorted(mine) {
			slices.Sort(mine)
		}
		refs, mi := x.refs[ki], 0
		j := sort.Search(len(refs), func(j int) bool { return refs[j].rev >= win.First })
		for ; j < len(refs) && refs[j].rev <= win.Last && (!ok || refs[j].rev < found.rev); j++ {
			c := refs[j].c
			if c.at.Watch == w.ID || !facts.Covers(w, x.keys[ki], c.at.Event.Type) {
				continue
			}
			for mi < len(mine) && mine[mi] < refs[j].rev {
				mi++
			}
			if mi < len(mine) && mine[mi] == refs[j].rev {
				continue
			}
			found, ok = disagreement{rev: refs[j].rev, key: x.keys[ki], theirs: c.at,
				what: fmt.Sprintf("nothing, though watch %d delivered %s %q there and its span %d..%d covers it",
					c.at.Watch, c.at.Event.Type, c.at.Event.KV.Value, win.First, win.Last)}, true
			break
		}
	}
	return found, ok
}
