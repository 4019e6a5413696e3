package watch

import (
	"math"
	"sort"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// timeline is what the history shows of every key's changes: those of
// acknowledged writes (from their requests and responses) and every event
// any watch delivered (a write of unknown outcome seen by a watch
// committed at the event's revision). It answers "what was the key just
// before revision r" only where the history determines it, for
// watch/prev-kv and watch/is-create.
//
// The store is assumed empty under the run's prefix at the start (the
// prefix is fresh). A change nobody saw can only come from a write whose
// effect is not fully known: a write of unknown outcome, which may land at
// any revision above what the store had reached when it was called, or an
// acknowledged range delete whose deleted keys the response does not list.
// Such a write makes its keys uncertain from that revision on — except at
// revisions whose changes are all known for the key: an acknowledged
// write's revision (one txn per revision), or a revision at which a watch
// without filters covering the key delivered events (a watch delivers all
// of a revision's events in its range at once).
type timeline struct {
	keys map[string][]tlChange
	// known: per revision, bit 63 when an acknowledged write fully known
	// holds it, bit i when the unfiltered watch range ranges[i] delivered
	// events at it.
	known     map[int64]uint64
	ranges    []facts.KeyRange
	rangeBit  map[facts.KeyRange]int
	uncertain []uncertainWrite
	keyCache  map[string]keyInfo
}

type tlChange struct {
	rev   int64
	typ   history.EventType
	value string
	// before caches stateBefore for the change's own revision: 0 not yet
	// computed, 1 determined, 2 not determined.
	before int8
}

type uncertainWrite struct {
	ranges []facts.KeyRange
	from   int64
}

type keyInfo struct {
	mask uint64 // bits of the ranges holding the key, and bit 63
	from int64  // lowest revision an uncertain write may have changed it at
}

const allKeysBit = uint64(1) << 63

func newTimeline(h *history.History) *timeline {
	t := &timeline{keys: map[string][]tlChange{}, known: map[int64]uint64{}, rangeBit: map[facts.KeyRange]int{},
		keyCache: map[string]keyInfo{}}
	bounds := facts.NewRevBounds(h)
	seen := map[eventKey]bool{}
	add := func(c tlChange, key string) {
		if c.typ == history.EventDelete {
			c.value = ""
		}
		if !seen[eventKey{c.rev, key}] {
			seen[eventKey{c.rev, key}] = true
			t.keys[key] = append(t.keys[key], c)
		}
	}
	leaseKeys := facts.LeaseKeys(h)
	// A segment's context (history.Context) holds the writes before it that its
	// watches may show: their changes count as the segment's own do.
	for _, ops := range h.OperationsWithContext() {
		for i := range ops {
			o := &ops[i]
			if o.Request.Kind == history.OpLeaseRevoke && !o.Definite() {
				// Its answer does not say which keys it deleted, if any.
				u := uncertainWrite{from: bounds.AtLeast(o.Call).Rev + 1}
				for _, k := range leaseKeys[o.Request.Lease] {
					u.ranges = append(u.ranges, facts.KeyRange{Key: k})
				}
				t.uncertain = append(t.uncertain, u)
				continue
			}
			if o.Failed() {
				if o.Request.Kind.IsWrite() && !o.Definite() {
					u := uncertainWrite{from: bounds.AtLeast(o.Call).Rev + 1}
					o.Request.Writes(func(r *history.Request, _ bool) {
						u.ranges = append(u.ranges, facts.KeyRange{Key: r.Key, End: r.End})
					})
					t.uncertain = append(t.uncertain, u)
				}
				continue
			}
			rev, creates := facts.AckedWriteRevision(o)
			if !creates {
				continue
			}
			full := true
			history.Executed(&o.Request, o.Response, func(r *history.Request, resp *history.Response) {
				switch {
				case r.Kind == history.OpRange:
				case r.Kind == history.OpPut && r.IgnoreValue:
					// It keeps the value the key held, which the request
					// does not say: the watches that saw it tell.
					full = false
					t.uncertain = append(t.uncertain, uncertainWrite{ranges: []facts.KeyRange{{Key: r.Key}}, from: rev})
				case r.Kind == history.OpPut:
					add(tlChange{rev: rev, typ: history.EventPut, value: r.Value}, r.Key)
				case resp == nil || resp.Deleted > 0 && r.End != "" && int64(len(resp.PrevKVs)) < resp.Deleted:
					full = false // which keys it deleted is not known
					t.uncertain = append(t.uncertain, uncertainWrite{ranges: []facts.KeyRange{{Key: r.Key, End: r.End}}, from: rev})
				case r.End == "" && resp.Deleted > 0:
					add(tlChange{rev: rev, typ: history.EventDelete}, r.Key)
				case r.End != "":
					for _, kv := range resp.PrevKVs {
						add(tlChange{rev: rev, typ: history.EventDelete}, kv.Key)
					}
				}
			})
			if full {
				t.known[rev] |= allKeysBit
			}
		}
	}
	for _, w := range h.Watches {
		bit := uint64(0)
		if !w.Request.NoPut && !w.Request.NoDelete && !w.Request.Fragment {
			r := facts.KeyRange{Key: w.Request.Key, End: w.Request.End}
			b, ok := t.rangeBit[r]
			if !ok && len(t.ranges) < 63 {
				b, ok = len(t.ranges), true
				t.rangeBit[r] = b
				t.ranges = append(t.ranges, r)
			}
			if ok {
				bit = 1 << b
			}
		}
		for ri := range w.Responses {
			evs := w.Responses[ri].Events
			for ei := range evs {
				ev := &evs[ei]
				rev := ev.Revision()
				if ei > 0 && evs[ei-1].Revision() == rev {
					if t.known[rev]&allKeysBit == 0 {
						add(tlChange{rev: rev, typ: ev.Type, value: ev.KV.Value}, ev.KV.Key)
					}
					continue
				}
				m := t.known[rev]
				if m&allKeysBit == 0 { // an acknowledged write did not already tell all of it
					add(tlChange{rev: rev, typ: ev.Type, value: ev.KV.Value}, ev.KV.Key)
				}
				if m|bit != m {
					t.known[rev] = m | bit
				}
			}
		}
	}
	for key, list := range t.keys {
		sort.Slice(list, func(i, j int) bool { return list[i].rev < list[j].rev })
		t.keys[key] = list
	}
	return t
}

func (t *timeline) info(key string) keyInfo {
	if in, ok := t.keyCache[key]; ok {
		return in
	}
	in := keyInfo{mask: allKeysBit, from: math.MaxInt64}
	for i, r := range t.ranges {
		if r.Contains(key) {
			in.mask |= 1 << i
		}
	}
	for _, u := range t.uncertain {
		for _, r := range u.ranges {
			if r.Contains(key) {
				in.from = min(in.from, u.from)
			}
		}
	}
	t.keyCache[key] = in
	return in
}

// keyState is a key's state just before a revision.
type keyState struct {
	exists bool
	value  string
	mod    int64 // the revision of the change that made the state (0: none)
}

// stateBefore returns key's state just before revision rev (at rev-1),
// and whether the history determines it.
func (t *timeline) stateBefore(key string, rev int64) (keyState, bool) {
	list := t.keys[key]
	i := sort.Search(len(list), func(i int) bool { return list[i].rev >= rev })
	var st keyState
	if i > 0 {
		p := list[i-1]
		st = keyState{exists: p.typ == history.EventPut, value: p.value, mod: p.rev}
	}
	var cache *int8
	if i < len(list) && list[i].rev == rev {
		cache = &list[i].before
		if *cache != 0 {
			return st, *cache == 1
		}
	}
	ok := t.determined(key, st.mod, rev)
	if cache != nil {
		*cache = 2
		if ok {
			*cache = 1
		}
	}
	return st, ok
}

// determined reports whether no unseen change of key can lie strictly
// between revisions after and before.
func (t *timeline) determined(key string, after, before int64) bool {
	in := t.info(key)
	for y := max(after+1, in.from); y < before; y++ {
		if t.known[y]&in.mask == 0 {
			return false
		}
	}
	return true
}

// eventKey names one change: a key at a revision.
type eventKey struct {
	rev int64
	key string
}
