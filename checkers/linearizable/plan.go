package linearizable

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// The plan is the candidate linearization kv/linearizable replays. In etcd
// every change creates exactly one revision and every answer names the
// revision it reflects, so an operation with a response has a fixed place:
// a write at its revision, anything else (a read, a compaction, a write
// that changed nothing) just after the write of its header revision. The
// plan sorts those fixed operations by revision; what remains is small:
//   - flexible operations, a definite error with no header revision or an
//     acknowledged compaction (its header revision is read when etcd
//     answers, so it only bounds where it applied), go at the place inside
//     their interval that suits them best (a compacted error as late as it
//     can, a future-revision error as early); compactions are always
//     searched;
//   - floating operations, writes of unknown outcome no one saw, are left
//     out: with every revision taken by a known write there is nowhere to
//     apply them, and where a revision is missing the replay searches
//     which of them filled it (see lin_run.go).
// Where this order breaks real time (an operation placed before one that
// returned before it was called) the plan records a trouble span, which
// the replay searches instead of trusting the order.

const (
	slotWrite = 0 // the write that creates the revision
	slotRead  = 1 // operations that observe it, after the write
)

type linPlan struct {
	seq []int32 // indexes into linPrep.ops, in witness order
	pos []int32 // op index -> position in seq, -1 if not in seq
	rev []int64 // op index -> revision of a fixed operation, 0 otherwise
	// slot: op index -> slotWrite or slotRead for a fixed operation
	slot []int8
	// lo and hi bound, by op index, where a flexible operation may go: after
	// seq[lo-1] and before seq[hi] (positions of the plan as built).
	lo, hi []int32
	// floaters are the writes (and compactions) of unknown outcome that
	// nothing placed. By op index: floorPos is the last position in seq of
	// a fixed operation that returned before it was called (-1 if none),
	// and floorRev the highest revision among those; flexLo and flexPos are
	// the highest lo and position of a flexible operation that returned
	// before it was called (-1 if none): a search that holds the floater
	// must reach that lo, and then holds that operation too.
	floaters        []int32
	floorPos        []int32
	floorRev        []int64
	flexLo, flexPos []int32
	// class numbers the floaters by what they would do (see floaterClass).
	class []int32
	// gaps are the revisions, sorted, between the lowest and the highest the
	// history shows that no known write holds.
	gaps     []int64
	troubles []trouble
	// obsPos holds, by key, the positions of the fixed operations that show
	// it whole (see observedKeys).
	obsPos map[int32][]int32
	// fixedRev and fixedAt list the fixed operations' revisions and
	// positions, in plan order (so sorted by revision).
	fixedRev []int64
	fixedAt  []int32
	// groupLo and groupHi give, by position, the first and last position of
	// the fixed readers of the same revision (-1 for other operations):
	// their order is the plan's choice, so a search takes them all.
	groupLo, groupHi []int32
}

// trouble is a stretch of the plan [lo, hi] (positions, inclusive) in
// which the sorted order breaks real time: seq[late] returned before
// seq[early] was called, though placed after it.
type trouble struct {
	lo, hi      int32
	early, late int32 // op indexes
}

func (pl *linPlan) flexible(i int32) bool { return pl.lo[i] >= 0 }

// gapPos is the position in the plan where a write at revision g would go:
// before the first fixed operation of a higher revision.
func (pl *linPlan) gapPos(g int64) int32 {
	f := sort.Search(len(pl.fixedRev), func(f int) bool { return pl.fixedRev[f] > g })
	if f == len(pl.fixedRev) {
		return int32(len(pl.seq))
	}
	return pl.fixedAt[f]
}

// nextObs is the first position at or after q that shows key k whole, or
// -1.
func (pl *linPlan) nextObs(k int32, q int32) int32 {
	list := pl.obsPos[k]
	j := sort.Search(len(list), func(j int) bool { return list[j] >= q })
	if j == len(list) {
		return -1
	}
	return list[j]
}

// prefixMax answers, over items sorted by a key, "the largest item index
// among those whose key is below t".
type prefixMax struct {
	keys []int64
	best []int // best[j]: the largest item index among the j+1 smallest keys
}

func newPrefixMax(n int, key func(int) int64) prefixMax {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return key(idx[a]) < key(idx[b]) })
	pm := prefixMax{keys: make([]int64, n), best: make([]int, n)}
	for j, i := range idx {
		pm.keys[j] = key(i)
		pm.best[j] = i
		if j > 0 {
			pm.best[j] = max(pm.best[j], pm.best[j-1])
		}
	}
	return pm
}

// before returns the largest index whose key is < t, or -1.
func (pm prefixMax) before(t int64) int {
	j := sort.Search(len(pm.keys), func(j int) bool { return pm.keys[j] >= t })
	if j == 0 {
		return -1
	}
	return pm.best[j-1]
}

// prefixMaxValue is prefixMax over a value of each item instead of its index.
type prefixMaxValue struct {
	keys []int64
	best []int64
}

func newPrefixMaxValue(n int, key, value func(int) int64) prefixMaxValue {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return key(idx[a]) < key(idx[b]) })
	pm := prefixMaxValue{keys: make([]int64, n), best: make([]int64, n)}
	for j, i := range idx {
		pm.keys[j] = key(i)
		pm.best[j] = value(i)
		if j > 0 {
			pm.best[j] = max(pm.best[j], pm.best[j-1])
		}
	}
	return pm
}

// before returns the largest value among items whose key is < t, or -1.
func (pm prefixMaxValue) before(t int64) int64 {
	j := sort.Search(len(pm.keys), func(j int) bool { return pm.keys[j] >= t })
	if j == 0 {
		return -1
	}
	return pm.best[j-1]
}

// suffixMin answers "the smallest item index among those whose key is
// above t" (n if none).
type suffixMin struct {
	keys []int64
	best []int
}

func newSuffixMin(n int, key func(int) int64) suffixMin {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return key(idx[a]) < key(idx[b]) })
	sm := suffixMin{keys: make([]int64, n), best: make([]int, n)}
	for j := n - 1; j >= 0; j-- {
		sm.keys[j] = key(idx[j])
		sm.best[j] = idx[j]
		if j < n-1 {
			sm.best[j] = min(sm.best[j], sm.best[j+1])
		}
	}
	return sm
}

// after returns the smallest index whose key is > t, or the item count.
func (sm suffixMin) after(t int64) int {
	j := sort.Search(len(sm.keys), func(j int) bool { return sm.keys[j] > t })
	if j == len(sm.keys) {
		return len(sm.keys)
	}
	return sm.best[j]
}

// floaterClass names what a write of unknown outcome no one saw would do if
// applied: its request, without the values of its puts (no read, watch or
// prev_kv ever showed them, so nothing can tell them apart) unless some
// txn compares that key's value. Two floaters of one class differ only in
// when they were called, and the earlier can stand in for the later
// anywhere: a search needs no more of a class than it has free revisions,
// the earliest called.
func floaterClass(r *history.Request, valueCompared map[string]bool) string {
	var b strings.Builder
	var one func(r *history.Request)
	one = func(r *history.Request) {
		fmt.Fprintf(&b, "%s|%q|%q|%d|", r.Kind, r.Key, r.End, r.Revision)
		if r.Kind == history.OpPut && valueCompared[r.Key] {
			fmt.Fprintf(&b, "%q|", r.Value)
		}
		for _, c := range r.Compares {
			fmt.Fprintf(&b, "c%q%s%s%d%q|", c.Key, c.Target, c.Result, c.Int, c.Value)
		}
		for i := range r.Success {
			b.WriteString("s(")
			one(&r.Success[i])
			b.WriteString(")")
		}
		for i := range r.Failure {
			b.WriteString("f(")
			one(&r.Failure[i])
			b.WriteString(")")
		}
	}
	one(r)
	return b.String()
}

// plan builds the witness order of the prepared operations.
func (p *linPrep) plan() *linPlan {
	n := len(p.ops)
	pl := &linPlan{pos: make([]int32, n), rev: make([]int64, n), lo: make([]int32, n), hi: make([]int32, n),
		floorPos: make([]int32, n), floorRev: make([]int64, n), flexLo: make([]int32, n), flexPos: make([]int32, n)}
	slot := make([]int8, n)
	pl.slot = slot
	tie := make([]int64, n)
	var fixed, flex []int32
	for i, op := range p.ops {
		pl.pos[i], pl.lo[i], pl.hi[i] = -1, -1, -1
		switch {
		case op.mode == modeAcked && op.req.Kind == history.OpCompact:
			// etcd reads a compaction's header revision when it answers,
			// not when it applies it (v3_server.go): writes in between
			// raise it. So it only bounds the place from above; the
			// compaction is flexible and always searched.
			flex = append(flex, int32(i))
		case op.mode == modeAcked:
			pl.rev[i], slot[i] = op.resp.Revision, slotRead
			if _, wrote := facts.WriteRevision(op.req, op.resp); wrote {
				slot[i] = slotWrite
			}
			tie[i] = p.pops[i].Call
			if slot[i] == slotWrite {
				tie[i] = p.pops[i].Return
			}
			fixed = append(fixed, int32(i))
		case op.mode == modeMust:
			if op.pin > 0 {
				pl.rev[i], slot[i], tie[i] = op.pin, slotWrite, p.pops[i].Return
				fixed = append(fixed, int32(i))
			} else {
				flex = append(flex, int32(i))
			}
		case op.mode == modeDefinite:
			flex = append(flex, int32(i))
		case op.mode == modeMaybe:
			pl.floaters = append(pl.floaters, int32(i))
		}
	}
	sort.Slice(fixed, func(a, b int) bool {
		x, y := fixed[a], fixed[b]
		switch {
		case pl.rev[x] != pl.rev[y]:
			return pl.rev[x] < pl.rev[y]
		case slot[x] != slot[y]:
			return slot[x] < slot[y]
		case tie[x] != tie[y]:
			return tie[x] < tie[y]
		}
		return x < y
	})

	// Where each flexible operation may go, in indexes of fixed: after the
	// last fixed operation that returned before its call, before the first
	// that was called after its return.
	preds := newPrefixMax(len(fixed), func(f int) int64 { return p.pops[fixed[f]].Return })
	succs := newSuffixMin(len(fixed), func(f int) int64 { return p.pops[fixed[f]].Call })
	type flexAt struct{ op, lo, hi, at int32 }
	places := make([]flexAt, 0, len(flex))
	for _, i := range flex {
		lo := int32(preds.before(p.pops[i].Call) + 1) // first fixed index it may precede... or sit after lo-1
		hi := int32(succs.after(p.pops[i].Return))
		at := hi // late: a compacted error, an unseen-revision write
		if p.ops[i].mode == modeDefinite && p.ops[i].code == history.ErrFutureRevision {
			at = lo
		}
		places = append(places, flexAt{i, lo, max(lo, hi), max(lo, min(at, hi))})
	}
	sort.Slice(places, func(a, b int) bool {
		x, y := places[a], places[b]
		if x.at != y.at {
			return x.at < y.at
		}
		if cx, cy := p.pops[x.op].Call, p.pops[y.op].Call; cx != cy {
			return cx < cy
		}
		return x.op < y.op
	})
	pl.seq = make([]int32, 0, len(fixed)+len(flex))
	fixedPos := make([]int32, len(fixed)+1)
	k := 0
	for f := 0; f <= len(fixed); f++ {
		for ; k < len(places) && int(places[k].at) == f; k++ {
			pl.seq = append(pl.seq, places[k].op)
		}
		fixedPos[f] = int32(len(pl.seq))
		if f < len(fixed) {
			pl.seq = append(pl.seq, fixed[f])
		}
	}
	for q, i := range pl.seq {
		pl.pos[i] = int32(q)
	}
	pl.obsPos = map[int32][]int32{}
	for q, i := range pl.seq {
		observedKeys(p.ks, p.ops[i], func(k int32) { pl.obsPos[k] = append(pl.obsPos[k], int32(q)) })
	}
	for f, i := range fixed {
		pl.fixedRev = append(pl.fixedRev, pl.rev[i])
		pl.fixedAt = append(pl.fixedAt, fixedPos[f])
	}
	pl.groupLo, pl.groupHi = make([]int32, len(pl.seq)), make([]int32, len(pl.seq))
	for f := 0; f < len(fixed); {
		g := f
		for g+1 < len(fixed) && slot[fixed[f]] == slotRead && slot[fixed[g+1]] == slotRead &&
			pl.rev[fixed[g+1]] == pl.rev[fixed[f]] {
			g++
		}
		for h := f; h <= g; h++ {
			pl.groupLo[fixedPos[h]], pl.groupHi[fixedPos[h]] = fixedPos[f], fixedPos[g]
		}
		f = g + 1
	}
	for _, x := range places {
		q := pl.pos[x.op]
		pl.groupLo[q], pl.groupHi[q] = -1, -1
	}
	for _, x := range places {
		// After the fixed operation lo-1 and before the fixed operation hi.
		lo := int32(0)
		if x.lo > 0 {
			lo = fixedPos[x.lo-1] + 1
		}
		pl.lo[x.op], pl.hi[x.op] = lo, fixedPos[x.hi]
		if p.ops[x.op].mode == modeMust || p.ops[x.op].mode == modeAcked { // no revision to place it at: search it
			pl.troubles = append(pl.troubles, trouble{lo: lo, hi: max(lo, fixedPos[x.hi]-1), early: x.op, late: x.op})
		}
	}

	// Real time: an operation may not follow, in the plan, one that was
	// called after it returned.
	byRet := newPrefixMax(len(pl.seq), func(q int) int64 { return p.pops[pl.seq[q]].Return })
	for q, i := range pl.seq {
		if last := byRet.before(p.pops[i].Call); last > q {
			pl.troubles = append(pl.troubles, trouble{lo: int32(q), hi: int32(last), early: i, late: pl.seq[last]})
		}
	}
	sort.Slice(pl.troubles, func(a, b int) bool { return pl.troubles[a].lo < pl.troubles[b].lo })

	// Where floaters may go.
	revByRet := newPrefixMaxValue(len(fixed), func(f int) int64 { return p.pops[fixed[f]].Return },
		func(f int) int64 { return pl.rev[fixed[f]] })
	posByRet := newPrefixMaxValue(len(fixed), func(f int) int64 { return p.pops[fixed[f]].Return },
		func(f int) int64 { return int64(pl.pos[fixed[f]]) })
	flexLoByRet := newPrefixMaxValue(len(places), func(f int) int64 { return p.pops[places[f].op].Return },
		func(f int) int64 { return int64(pl.lo[places[f].op]) })
	flexPosByRet := newPrefixMaxValue(len(places), func(f int) int64 { return p.pops[places[f].op].Return },
		func(f int) int64 { return int64(pl.pos[places[f].op]) })
	for _, i := range pl.floaters {
		call := p.pops[i].Call
		pl.floorPos[i] = int32(posByRet.before(call))
		pl.floorRev[i] = revByRet.before(call)
		pl.flexLo[i], pl.flexPos[i] = int32(flexLoByRet.before(call)), int32(flexPosByRet.before(call))
	}

	pl.class = make([]int32, n)
	classes := map[string]int32{}
	valueCompared := map[string]bool{}
	for _, op := range p.ops {
		if op.req != nil {
			for _, c := range op.req.Compares {
				if strings.EqualFold(c.Target, "value") {
					valueCompared[c.Key] = true
				}
			}
		}
	}
	for _, i := range pl.floaters {
		key := floaterClass(p.ops[i].req, valueCompared)
		c, ok := classes[key]
		if !ok {
			c = int32(len(classes))
			classes[key] = c
		}
		pl.class[i] = c
	}

	// Free revisions: between the revision before the lowest the plan
	// shows and the highest any response shows.
	low := int64(-1)
	for _, i := range fixed {
		r := pl.rev[i]
		if slot[i] == slotWrite {
			r--
		}
		if low < 0 || r < low {
			low = r
		}
	}
	if low >= 0 {
		for r := low + 1; r <= p.ks.horizon; r++ {
			if _, held := p.ks.taken[r]; !held {
				pl.gaps = append(pl.gaps, r)
			}
		}
	}
	return pl
}
