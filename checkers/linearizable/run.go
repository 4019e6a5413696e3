package linearizable

import (
	"fmt"
	"sort"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// The replay walks the plan, stepping the model operation by operation.
// Where a step fails, or the plan breaks real time, it searches (porcupine,
// the same model) a window of the plan around that place instead, starting
// from the state the replay reached there, with every floating write that
// could fill a revision of the window. The search finds the order and the
// unknown outcomes there; the replay then goes on after the window.
//
// Why the verdicts hold:
//   - pass: the replay and the windows' linearizations together are one
//     order of every operation the search judges; every step was taken by
//     the model and the order respects real time (windows hold every
//     stretch where the plan does not). That is a linearization.
//   - fail: a window's search found no order. That proves the history is
//     not linearizable if the window's start state is forced — every
//     linearization of the history reaches it there — and the window holds
//     every operation that could go inside it: the fixed operations of its
//     revisions (no other place is open to them), the flexible operations
//     whose whole interval it covers (the others change no key; leaving a
//     check out only makes the search more permissive), and every floating
//     write that could take a revision in it (including those an earlier
//     window applied: the search may not rely on them being used up). The
//     start state is forced when no earlier choice reaches it: a window
//     chose which floating writes filled its revisions, and each key such
//     a write could change stays open until a read shows it whole again;
//     likewise a compaction of unknown outcome the window applied, until an
//     acknowledged compaction. Writes of unknown outcome that could precede
//     every fixed operation leave their keys open from the start. When a
//     window fails on a key still open (or on compactions while those are
//     open), the search goes back to include the window that opened it.
//   - unknown: a window ran out of its time or memory budget or grew past
//     its operation cap, or the history is too large to keep the plan's
//     order where it fails.

// Budgets of one window's search, besides cfg.LinearizabilityTimeout.
const (
	// linWindowMaxOps caps the operations of one search. porcupine's
	// bookkeeping costs O(n) per state, so a search of n operations costs
	// at least n²/8 bytes; 20,000 operations is about 50 MB of it.
	linWindowMaxOps = 20000
	// linSearchMemory is the memory one search may use for the states it
	// keeps, estimated from their count (see stateBytes).
	linSearchMemory = 1 << 30
	// linVerifyReach is how far (in operations) a search reaches past a
	// free revision for the next read of a key a floating write could have
	// changed there; a key read only later stays open (see leak).
	linVerifyReach = 400
)

// stateBytes estimates what porcupine keeps for one state of a search of n
// operations: its bitset of linearized operations, the cache entry and the
// model state with its copied chunk.
func stateBytes(n int) int64 { return int64(n)/8 + 512 }

type linRun struct {
	p   *linPrep
	pl  *linPlan
	m   kvModel
	cfg check.Config
	// maxOps and memory are the budgets of one search: linWindowMaxOps
	// and linSearchMemory unless a test says otherwise.
	maxOps int
	memory int64
	// deadline ends every search once cfg.LinearizabilityTimeout has passed
	// since the check began (zero: no limit). It is the one clock a checker
	// reads, and it can only turn a verdict into unknown.
	deadline time.Time
	// searchAll makes the whole plan one search (tests of the budgets).
	searchAll bool
	// last and lastOut are the latest search and how it ended: the one
	// that proved a violation, when there is one (what Drawing shows).
	last    *searchSet
	lastOut searchOutcome
	// states[q] is the store before seq[q], valid up to where the replay
	// got.
	states  []kvState
	windows []*linWindow
	// used maps a floating write to the index in windows of the window
	// that applied it.
	used map[int32]int
	// obs holds, per key, the positions where the replay saw it whole;
	// compObs those of acknowledged compactions.
	obs     map[int32][]int32
	compObs []int32
	// early are the keys floating writes that could precede every fixed
	// operation write: open from the start.
	early map[int32]bool
	st    searchStats
}

// linWindow is a searched stretch of the plan, [a, b).
type linWindow struct {
	a, b      int32
	keys      map[int32]bool // keys its floating writes could change
	compacted bool           // it applied a compaction of unknown outcome
	applied   []int32        // floating writes it applied
}

type searchStats struct {
	windows, rewinds       int
	ops, maxOps            int
	steps, states          int64
	disagreements          int    // free searches that passed where ordered ones failed (never, by design)
	reason                 string // why the check is unknown, when it is
	stopped                bool
	violation              *check.Violation
	forcedViolationFromOps bool
}

// run replays the plan. It returns with st.violation set (fail), st.reason
// set (unknown), or neither (pass).
func (r *linRun) run() {
	seq, troubles := r.pl.seq, r.pl.troubles
	ti := 0
	if r.searchAll && len(seq) > 0 {
		r.search(0, int32(len(seq)), nil)
		return
	}
	for q := int32(0); q < int32(len(seq)); {
		if ti < len(troubles) && troubles[ti].lo <= q {
			t := troubles[ti]
			ti++
			if t.hi < q && len(r.windows) > 0 && r.windows[len(r.windows)-1].a <= t.lo {
				continue // searched whole inside the last window
			}
			next, done := r.search(t.lo, t.hi+1, &t)
			if done {
				return
			}
			q = next
			continue
		}
		i := seq[q]
		if s, mm := r.m.step(r.states[q], r.p.ops[i], false); mm == nil {
			r.states[q+1] = s
			r.observe(q, r.p.ops[i])
			q++
			continue
		}
		next, done := r.search(q, q+1, nil)
		if done {
			return
		}
		q = next
	}
}

// search searches the window [a, b) (grown as needed) and returns where the
// replay goes on, or done when the check has its verdict.
func (r *linRun) search(a, b int32, tr *trouble) (next int32, done bool) {
	excludeUsed := true
	for {
		a, b = r.expand(a, b)
		a = r.rewind(a)
		a, b = r.expand(a, b)
		set := r.searchSet(a, b, excludeUsed)
		if set.needB > b {
			b = set.needB
			continue
		}
		n := len(set.pops)
		if n > r.maxOps {
			if tr != nil && r.provesRealTime(tr) {
				v := r.realTimeViolation(tr)
				r.st.violation = &v
				return 0, true
			}
			r.st.reason = fmt.Sprintf("the search around revisions %s needs %d operations, more than its cap of %d",
				r.revRange(a, b), n, r.maxOps)
			return 0, true
		}
		out := r.porcupine(set, true)
		r.last, r.lastOut = set, out
		var free searchOutcome
		if !out.ok && !out.timedOut && !out.exhausted && !(excludeUsed && set.excluded > 0) && r.leak(set) == noLeak {
			// About to fail. The search in plan order stops where that
			// order does; a free search, if it ends within its budgets,
			// finds the longest prefix in any order, which explains
			// better. (It cannot pass where the ordered one failed, every
			// linearization keeps that order; if it ever did, its order
			// stands.)
			if free = r.porcupine(set, false); free.ok {
				r.st.disagreements++
				out = free
			}
		}
		switch {
		case out.ok:
			end, applied, compacted, err := r.replayWindow(set, out.order)
			if err != nil {
				r.st.reason = fmt.Sprintf("internal error: %v", err)
				return 0, true
			}
			if !excludeUsed {
				if w := r.earliestUser(applied); w >= 0 {
					a, excludeUsed = r.windows[w].a, true
					r.st.rewinds++
					continue
				}
			}
			w := &linWindow{a: a, b: b, keys: set.open, compacted: compacted, applied: applied}
			for _, c := range applied {
				r.used[c] = len(r.windows)
			}
			r.windows = append(r.windows, w)
			r.states[b] = end
			return b, false
		case out.timedOut:
			r.st.reason = fmt.Sprintf("the check's time budget of %s (--check-timeout) ran out in the search around revisions %s (%d operations)",
				r.cfg.LinearizabilityTimeout, r.revRange(a, b), n)
			return 0, true
		case out.exhausted:
			r.st.reason = fmt.Sprintf("the search around revisions %s (%d operations) ran out of its memory budget "+
				"(%d states, about %d MiB)", r.revRange(a, b), n, out.limit, r.memory>>20)
			return 0, true
		}
		// No order fits the window.
		if excludeUsed && set.excluded > 0 {
			excludeUsed = false
			continue
		}
		if w := r.leak(set); w != noLeak {
			if w == leakFromStart {
				a = 0
			} else {
				a = r.windows[w].a
			}
			excludeUsed = true
			r.st.rewinds++
			continue
		}
		info := out.info
		if !free.timedOut && !free.exhausted {
			info = free.info
		}
		v := r.p.explain(set, info)
		r.st.violation = &v
		return 0, true
	}
}

// expand grows [a, b) until it holds the whole range of every flexible
// operation in it and every trouble span it touches.
func (r *linRun) expand(a, b int32) (int32, int32) {
	pl := r.pl
	for changed := true; changed; {
		changed = false
		for q := a; q < b; q++ {
			i := pl.seq[q]
			if pl.flexible(i) && (pl.lo[i] < a || pl.hi[i] > b) {
				a, b, changed = min(a, pl.lo[i]), max(b, pl.hi[i]), true
			}
			if lo, hi := pl.groupLo[q], pl.groupHi[q]; lo >= 0 && (lo < a || hi >= b) {
				a, b, changed = min(a, lo), max(b, hi+1), true
			}
		}
		for _, t := range pl.troubles {
			if t.lo > b {
				break
			}
			if t.hi >= a && t.lo < b && (t.lo < a || t.hi >= b) {
				a, b, changed = min(a, t.lo), max(b, t.hi+1), true
			}
		}
	}
	return a, min(b, int32(len(pl.seq)))
}

// rewind undoes every window that ends after a, so that a search may start
// there; it returns the new start (the start of the earliest window undone
// if that is earlier).
func (r *linRun) rewind(a int32) int32 {
	for len(r.windows) > 0 && r.windows[len(r.windows)-1].b > a {
		w := r.windows[len(r.windows)-1]
		a = min(a, w.a)
		for _, c := range w.applied {
			delete(r.used, c)
		}
		r.windows = r.windows[:len(r.windows)-1]
	}
	for k, list := range r.obs {
		r.obs[k] = list[:sort.Search(len(list), func(j int) bool { return list[j] >= a })]
	}
	r.compObs = r.compObs[:sort.Search(len(r.compObs), func(j int) bool { return r.compObs[j] >= a })]
	return a
}

const (
	noLeak        = -1
	leakFromStart = -2
)

// leak finds the latest earlier choice the failed search set depends on:
// a window whose floating writes could have changed a key the set touches,
// with no full read of that key since (or, for a set that depends on
// compactions, a window that applied a compaction of unknown outcome with
// no acknowledged compaction since), or the writes that could precede every
// fixed operation.
func (r *linRun) leak(set *searchSet) int {
	touched := set.touched
	for w := len(r.windows) - 1; w >= 0; w-- {
		win := r.windows[w]
		for k := range win.keys {
			if touched[k] && !r.observedIn(k, win.b, set.a) {
				return w
			}
		}
		if set.compactions && win.compacted && !inRange(r.compObs, win.b, set.a) {
			return w
		}
	}
	if set.a > 0 {
		for k := range r.early {
			if touched[k] && !r.observedIn(k, 0, set.a) {
				return leakFromStart
			}
		}
	}
	return noLeak
}

func (r *linRun) observedIn(k int32, from, to int32) bool { return inRange(r.obs[k], from, to) }

// inRange reports whether the sorted list holds a position in [from, to).
func inRange(list []int32, from, to int32) bool {
	j := sort.Search(len(list), func(j int) bool { return list[j] >= from })
	return j < len(list) && list[j] < to
}

// earliestUser returns the earliest window that applied one of the given
// floating writes, or -1.
func (r *linRun) earliestUser(applied []int32) int {
	w := -1
	for _, c := range applied {
		if u, ok := r.used[c]; ok && (w < 0 || u < w) {
			w = u
		}
	}
	return w
}

// observe records what a replayed operation showed whole (see
// observedKeys) and the acknowledged compactions.
func (r *linRun) observe(q int32, op *linOp) {
	if op.mode != modeAcked {
		return
	}
	if op.req.Kind == history.OpCompact {
		r.compObs = append(r.compObs, q)
		return
	}
	observedKeys(r.p.ks, op, func(k int32) { r.obs[k] = append(r.obs[k], q) })
}

// observedKeys calls f for every key an acknowledged operation shows whole,
// so that the store's entry for it is known after it whatever came before:
// the keys a read at the current revision returned with their values or
// proved absent, the keys a delete left absent.
func observedKeys(ks *keyspace, op *linOp, f func(k int32)) {
	if op.mode != modeAcked {
		return
	}
	wrote := false
	see := func(req *history.Request, resp *history.Response) {
		switch req.Kind {
		case history.OpDelete:
			wrote = true
			lo, hi := ks.span(req.Key, req.End)
			for k := lo; k < hi; k++ {
				f(k)
			}
		case history.OpPut, history.OpLeaseRevoke:
			wrote = true
		case history.OpRange:
			if resp == nil || req.KeysOnly || req.CountOnly || (req.Revision > 0 && (wrote || req.Revision != op.resp.Revision)) {
				return
			}
			if order, _ := effectiveSort(req); order != "" || filtered(req) {
				// Sorted otherwise than by key, or filtered: the keys it
				// returns are shown whole, the others it says nothing of.
				for _, kv := range resp.KVs {
					if k, ok := ks.index[kv.Key]; ok {
						f(k)
					}
				}
				return
			}
			lo, hi := ks.span(req.Key, req.End)
			if req.Limit > 0 && resp.More {
				if len(resp.KVs) == 0 {
					return
				}
				last, ok := ks.index[resp.KVs[len(resp.KVs)-1].Key]
				if !ok {
					return
				}
				hi = min(hi, last+1)
			}
			for k := lo; k < hi; k++ {
				f(k)
			}
		}
	}
	history.Executed(op.req, op.resp, see)
}

// writtenKeys are the keys an operation may change.
func (r *linRun) writtenKeys(op *linOp) map[int32]bool {
	out := map[int32]bool{}
	for _, p := range op.paths {
		for i := range p.ops {
			r.p.ks.writes(&p.ops[i], func(k int32) { out[k] = true })
		}
	}
	return out
}

// touchedKeys adds the keys an operation reads, compares or changes.
func (r *linRun) touchedKeys(op *linOp, out map[int32]bool) {
	ks := r.p.ks
	add := func(req *history.Request) {
		if req.Kind == history.OpCompact {
			return
		}
		lo, hi := ks.span(req.Key, req.End)
		for k := lo; k < hi; k++ {
			out[k] = true
		}
	}
	if op.mode == modeEnd {
		return
	}
	add(op.req)
	for _, p := range op.paths {
		for i := range p.ops {
			add(&p.ops[i])
			ks.writes(&p.ops[i], func(k int32) { out[k] = true })
		}
		for _, c := range p.conds {
			for _, cm := range c.cmps {
				for k := cm.lo; k < cm.hi; k++ {
					out[k] = true
				}
			}
		}
	}
}

// revRange names the revisions a stretch of the plan covers.
func (r *linRun) revRange(a, b int32) string {
	lo, hi := int64(-1), int64(-1)
	for q := a; q < b; q++ {
		if rv := r.pl.rev[r.pl.seq[q]]; rv > 0 {
			if lo < 0 || rv < lo {
				lo = rv
			}
			hi = max(hi, rv)
		}
	}
	if lo < 0 {
		return "(none fixed)"
	}
	return fmt.Sprintf("%d..%d", lo, hi)
}

// provesRealTime says whether a trouble is, alone, a violation: two
// different acknowledged operations, both fixed at their own revision,
// the one called after the other returned at the lower revision. Any other
// trouble (an operation with no revision to place, two reads at the same
// revision in either order) needs a search.
func (r *linRun) provesRealTime(t *trouble) bool {
	if t.early == t.late || r.p.ops[t.early].mode != modeAcked || r.p.ops[t.late].mode != modeAcked {
		return false
	}
	e, l := r.pl.rev[t.early], r.pl.rev[t.late]
	return e > 0 && l > 0 && e < l
}

// realTimeViolation reports, without a search, two acknowledged operations
// whose header revisions contradict their order in real time.
func (r *linRun) realTimeViolation(t *trouble) check.Violation {
	e, l := r.p.ops[t.early], r.p.ops[t.late]
	ep, lp := r.p.pops[t.early], r.p.pops[t.late]
	return check.Violation{Guarantee: Err, Client: e.client, Key: e.req.Key, Revision: e.resp.Revision,
		Operations: []int64{e.id, l.id},
		Want:       fmt.Sprintf("header revision >= %d", l.resp.Revision), Got: fmt.Sprint(e.resp.Revision),
		Message: fmt.Sprintf("operation %d (client %d, %s) was called at %d, after operation %d (client %d, %s) "+
			"returned at %d, yet its header revision %d comes before revision %d: the store went back in time",
			e.id, e.client, r.p.describe(e), ep.Call, l.id, l.client, r.p.describe(l), lp.Return,
			e.resp.Revision, l.resp.Revision)}
}

func (p *linPrep) newRun(pl *linPlan, cfg check.Config) *linRun {
	r := &linRun{p: p, pl: pl, m: kvModel{ks: p.ks}, cfg: cfg, maxOps: linWindowMaxOps, memory: linSearchMemory,
		states: make([]kvState, len(pl.seq)+1),
		used:   map[int32]int{}, obs: map[int32][]int32{}, early: map[int32]bool{}}
	if cfg.LinearizabilityTimeout > 0 {
		r.deadline = time.Now().Add(cfg.LinearizabilityTimeout)
	}
	r.states[0] = initialState(p.ks)
	for _, i := range pl.floaters {
		if pl.floorPos[i] < 0 {
			for k := range r.writtenKeys(p.ops[i]) {
				r.early[k] = true
			}
		}
	}
	return r
}
