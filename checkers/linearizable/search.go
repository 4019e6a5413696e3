package linearizable

import (
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/vigil-suite/vigil/history"
)

// searchSet is what one porcupine search gets: the operations of a window
// of the plan, the floating writes that could take one of its revisions,
// and the synthetic end of the window, all starting from start.
type searchSet struct {
	a, b  int32
	start kvState
	ops   []*linOp // indexed like pops
	pops  []porcupine.Operation
	cands []int32 // op indexes of the floating writes included
	// excluded counts floating writes left out because an earlier window
	// applied them.
	excluded int
	// needB is where the window must end to hold every flexible operation
	// that returned before a candidate was called, and the next read that
	// shows whole each key a candidate could write (within linVerifyReach);
	// open holds the keys whose next such read lies beyond that.
	needB int32
	open  map[int32]bool
	// touched holds every key an operation of the set reads, compares or
	// changes; compactions whether any of them depends on compactions.
	touched     map[int32]bool
	compactions bool
	// class numbers the fixed operations of the window in plan order, one
	// number per revision's write and one per revision's readers (-1 for
	// the others); size counts each class.
	class map[*linOp]int32
	size  []int32
}

func (set *searchSet) add(op *linOp, pop porcupine.Operation) {
	pop.Input, pop.ClientId = op, op.client
	set.ops = append(set.ops, op)
	set.pops = append(set.pops, pop)
}

// dependsOnCompaction reports whether an operation's verdict depends on the
// compaction revision: a compaction, or a request that reads at a revision
// (a range, or a txn holding one at any depth).
func dependsOnCompaction(op *linOp) bool {
	if op.mode == modeEnd {
		return false
	}
	if op.req.Kind == history.OpCompact {
		return true
	}
	reads := false
	op.req.Walk(func(r *history.Request) bool {
		reads = reads || r.Kind == history.OpRange && r.Revision > 0
		return !reads
	})
	return reads
}

// searchOutcome is how one search ended.
type searchOutcome struct {
	ok, timedOut, exhausted bool
	order                   []int // a linearization (ok)
	info                    porcupine.LinearizationInfo
	limit                   int64
}

// winState is the state of a window's search: the store, and how far the
// search got through the window's fixed operations (see searchSet.class):
// every class before cls is done, and count operations of cls.
type winState struct {
	kv         kvState
	cls, count int32
}

// searchSet gathers the window [a, b) and its candidates.
func (r *linRun) searchSet(a, b int32, excludeUsed bool) *searchSet {
	p, pl := r.p, r.pl
	set := &searchSet{a: a, b: b, start: r.states[a], touched: map[int32]bool{}, class: map[*linOp]int32{}}
	maxClient := 0
	var last, maxRev int64
	undated := false
	prevRev, prevSlot := int64(-1), int8(-1)
	for q := a; q < b; q++ {
		i := pl.seq[q]
		op := p.ops[i]
		set.add(op, p.pops[i])
		if pl.rev[i] > 0 {
			if pl.rev[i] != prevRev || pl.slot[i] != prevSlot || pl.slot[i] == slotWrite {
				set.size = append(set.size, 0)
				prevRev, prevSlot = pl.rev[i], pl.slot[i]
			}
			set.class[op] = int32(len(set.size) - 1)
			set.size[len(set.size)-1]++
		}
		last = max(last, p.pops[i].Return)
		maxRev = max(maxRev, pl.rev[i])
		maxClient = max(maxClient, op.client)
		r.touchedKeys(op, set.touched)
		if dependsOnCompaction(op) {
			set.compactions = true
		}
		undated = undated || op.mode == modeMust && op.pin == 0
	}
	revLo := int64(-1) // the revision at the start, if known
	if set.start.base != 0 {
		revLo = set.start.current()
	}
	// The window fills free revisions up to its highest fixed one; those
	// after are the next window's. The last window has none after it: the
	// store may end anywhere up to the highest revision the history shows
	// (a write seen applied, with no read to date it, may take one above
	// every fixed operation's: a cut of a running history).
	endRev := maxRev
	if endRev == 0 {
		endRev = max(0, revLo)
	}
	switch {
	case b == int32(len(pl.seq)):
		endRev = max(endRev, p.ks.horizon)
	case undated:
		// A write seen applied but undated (no read shows its revision)
		// is the window's to place, and may take a free revision above
		// its highest fixed one: up to what the operation after it needs.
		next := pl.seq[b]
		if need := pl.rev[next]; need > 0 {
			if pl.slot[next] == slotWrite {
				need--
			}
			endRev = max(endRev, need)
		}
	}
	revHi := endRev
	for _, i := range pl.floaters {
		if pl.floorPos[i] >= b || pl.flexLo[i] >= b {
			continue // something after the window returned before it was called
		}
		op := p.ops[i]
		switch {
		case op.req.Kind == history.OpCompact:
			if !set.compactions {
				continue
			}
		case a == 0 && pl.floorPos[i] < 0:
			// It may precede every fixed operation, before the first
			// revision the history shows.
		case !r.fitsGap(op, max(revLo, pl.floorRev[i]), revHi):
			continue
		}
		if _, used := r.used[i]; used && excludeUsed {
			set.excluded++
			continue
		}
		set.cands = append(set.cands, i)
		r.touchedKeys(op, set.touched)
	}
	set.cands = r.fewestOfEachClass(set.cands, revLo, revHi, a == 0)
	set.open = map[int32]bool{}
	for _, i := range set.cands {
		last = max(last, p.pops[i].Call)
		maxClient = max(maxClient, p.ops[i].client)
		set.needB = max(set.needB, pl.flexPos[i]+1)
		r.verifyReach(set, i, revLo, revHi)
	}
	end := &linOp{id: -1, client: maxClient + 1, mode: modeEnd, maxRev: endRev}
	for _, i := range set.cands {
		pop := p.pops[i]
		pop.Return = last + 3
		set.add(p.ops[i], pop)
	}
	set.add(end, porcupine.Operation{ClientId: end.client, Call: last + 1, Return: last + 2})
	return set
}

// windowModel is porcupine's model of the etcd KV API starting from start,
// on winState. Step must be a pure function: it returns a new state and
// never changes the one it is given. Equal and Hash satisfy porcupine's
// invariant: states Equal says are equal have equal Hashes.
func (p *linPrep) windowModel(start winState) porcupine.Model {
	m := kvModel{ks: p.ks}
	return porcupine.Model{
		Init: func() interface{} { return start },
		Step: func(state, input, _ interface{}) (bool, interface{}) {
			ws := state.(winState)
			s, mm := m.step(ws.kv, input.(*linOp), false)
			ws.kv = s
			return mm == nil, ws
		},
		Equal: func(a, b interface{}) bool {
			x, y := a.(winState), b.(winState)
			return x.cls == y.cls && x.count == y.count && stateEqual(x.kv, y.kv)
		},
		Hash: func(s interface{}) uint64 {
			ws := s.(winState)
			return mix(hashState(ws.kv) ^ uint64(ws.cls)<<32 ^ uint64(ws.count))
		},
		DescribeOperation: func(in, _ interface{}) string { return p.describe(in.(*linOp)) },
		DescribeState:     func(s interface{}) string { return p.ks.describe(s.(winState).kv) },
	}
}

// verifyReach grows set.needB so that the window holds, for every free
// revision the candidate c could take in it, the next read after it that
// shows whole each key c would write: the window then settles whether c
// went there. Keys not read again within linVerifyReach stay open.
func (r *linRun) verifyReach(set *searchSet, c int32, revLo, revHi int64) {
	pl := r.pl
	op := r.p.ops[c]
	keys := r.writtenKeys(op)
	if len(keys) == 0 {
		return
	}
	need := func(from int32) {
		for k := range keys {
			o := pl.nextObs(k, from)
			if o < 0 || o-from > linVerifyReach {
				set.open[k] = true
				continue
			}
			set.needB = max(set.needB, o+1)
		}
	}
	if set.a == 0 && pl.floorPos[c] < 0 {
		need(0)
	}
	gaps := pl.gaps
	after := max(revLo, pl.floorRev[c])
	for j := sort.Search(len(gaps), func(j int) bool { return gaps[j] > after }); j < len(gaps) && gaps[j] <= revHi; j++ {
		g := gaps[j]
		if r.p.ks.pathFits(op, g) {
			need(pl.gapPos(g))
		}
	}
}

// fewestOfEachClass keeps, of each class of interchangeable floaters (see
// floaterClass), the earliest called, as many as there are free revisions
// in (revLo, revHi] (all of them when the start is open).
func (r *linRun) fewestOfEachClass(cands []int32, revLo, revHi int64, open bool) []int32 {
	if open || len(cands) < 2 {
		return cands
	}
	gaps := r.pl.gaps
	lo := sort.Search(len(gaps), func(j int) bool { return gaps[j] > revLo })
	hi := sort.Search(len(gaps), func(j int) bool { return gaps[j] > revHi })
	room := hi - lo
	pops := r.p.pops
	sort.SliceStable(cands, func(a, b int) bool { return pops[cands[a]].Call < pops[cands[b]].Call })
	taken := map[int32]int{}
	out := cands[:0:0]
	for _, c := range cands {
		cl := r.pl.class[c]
		if r.p.ops[c].req.Kind != history.OpCompact && taken[cl] >= room {
			continue
		}
		taken[cl]++
		out = append(out, c)
	}
	return out
}

// fitsGap reports whether a floating write could change the store at a
// free revision in (after, upTo].
func (r *linRun) fitsGap(op *linOp, after, upTo int64) bool {
	gaps := r.pl.gaps
	ks := r.p.ks
	for j := sort.Search(len(gaps), func(j int) bool { return gaps[j] > after }); j < len(gaps) && gaps[j] <= upTo; j++ {
		if ks.pathFits(op, gaps[j]) {
			return true
		}
	}
	return false
}

// porcupine searches one set. With ordered, the fixed operations go in
// plan order, class by class, which every linearization does (a write at R
// after the readers of R-1, the readers of R after it), so nothing is lost
// and porcupine does not try the orders of concurrent readers of different
// revisions one by one; floating and flexible operations go anywhere.
// Step is a pure function of (state, operation) but for the budget: past
// r.memory it refuses every step, which can only turn the answer into
// Illegal, read then as exhausted.
func (r *linRun) porcupine(set *searchSet, ordered bool) searchOutcome {
	n := len(set.pops)
	limit := max(1, r.memory/stateBytes(n))
	var steps, kept atomic.Int64
	var exhausted atomic.Bool
	m := r.m
	model := r.p.windowModel(winState{kv: set.start})
	model.Step = func(st, in, _ interface{}) (bool, interface{}) {
		steps.Add(1)
		if exhausted.Load() {
			return false, st
		}
		ws, op := st.(winState), in.(*linOp)
		if c, fixed := set.class[op]; fixed && ordered {
			if c != ws.cls {
				return false, st
			}
			if ws.count++; ws.count == set.size[c] {
				ws.cls, ws.count = ws.cls+1, 0
			}
		}
		s, mm := m.step(ws.kv, op, false)
		if mm != nil {
			return false, st
		}
		if kept.Add(1) > limit {
			exhausted.Store(true)
			return false, st
		}
		ws.kv = s
		return true, ws
	}
	timeout := time.Duration(0)
	if !r.deadline.IsZero() {
		if timeout = time.Until(r.deadline); timeout <= 0 {
			return searchOutcome{timedOut: true, limit: limit}
		}
	}
	res, info := porcupine.CheckOperationsVerbose(model, set.pops, timeout)
	r.st.windows++
	r.st.ops += n
	r.st.maxOps = max(r.st.maxOps, n)
	r.st.steps += steps.Load()
	r.st.states += kept.Load()
	out := searchOutcome{info: info, limit: limit}
	switch res {
	case porcupine.Ok:
		out.ok = true
		for _, part := range info.PartialLinearizations() {
			for _, seq := range part {
				if len(seq) == n {
					out.order = seq
				}
			}
		}
	case porcupine.Unknown:
		out.timedOut = true
	default:
		out.exhausted = exhausted.Load()
	}
	return out
}

// replayWindow steps a window's linearization from its start state and
// returns the state at its end, the floating writes it applied and whether
// one of them was a compaction.
func (r *linRun) replayWindow(set *searchSet, order []int) (kvState, []int32, bool, error) {
	if len(order) != len(set.ops) {
		return kvState{}, nil, false, fmt.Errorf("the search passed without a complete linearization")
	}
	isCand := map[*linOp]int32{}
	for _, c := range set.cands {
		isCand[r.p.ops[c]] = c
	}
	s := set.start
	var applied []int32
	compacted := false
	for _, id := range order {
		op := set.ops[id]
		if op.mode == modeEnd {
			break
		}
		var mm *mismatch
		if s, mm = r.m.step(s, op, false); mm != nil {
			return kvState{}, nil, false, fmt.Errorf("the linearization found does not replay at operation %d", op.id)
		}
		if c, ok := isCand[op]; ok {
			applied = append(applied, c)
			compacted = compacted || op.req.Kind == history.OpCompact
		}
	}
	return s, applied, compacted, nil
}
