package linearizable

import (
	"fmt"
	"sort"
	"strings"

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
