package linearizable

import (
	"math"
	"sort"

	"github.com/anishathalye/porcupine"

	"github.com/vigil-suite/vigil/history"
)

// This file narrows where writes of unknown outcome can go: before the
// search, those that fit nowhere are left out; during it, whyExcluded
// explains a refusal.

// dropUnplaceable leaves out the writes of unknown outcome no response
// showed that fit at no free revision: above every header revision
// acknowledged before their call, no acknowledged write's revision, and
// not excluded by quiet spans or watch pins for every key they write.
// Such a write can only have been applied where nobody could see it, which
// is the same as not at all. It returns how many it dropped.
func dropUnplaceable(ops []*linOp, times []porcupine.Operation, ks *keyspace) ([]*linOp, []porcupine.Operation, int) {
	type acked struct{ ret, rev int64 }
	var done []acked
	minRev := int64(math.MaxInt64)
	for i, op := range ops {
		if op.mode == modeAcked {
			done = append(done, acked{times[i].Return, op.resp.Revision})
			minRev = min(minRev, op.resp.Revision)
		}
	}
	if len(done) == 0 {
		return ops, times, 0
	}
	sort.Slice(done, func(a, b int) bool { return done[a].ret < done[b].ret })
	for i := 1; i < len(done); i++ {
		done[i].rev = max(done[i].rev, done[i-1].rev)
	}
	var gaps []int64
	for r := minRev + 1; r <= ks.horizon; r++ {
		if _, held := ks.taken[r]; !held {
			gaps = append(gaps, r)
		}
	}
	keptOps, keptTimes, dropped := ops[:0:0], times[:0:0], 0
	for i, op := range ops {
		if op.mode == modeMaybe && op.req.Kind != history.OpCompact {
			j := sort.Search(len(done), func(j int) bool { return done[j].ret >= times[i].Call })
			if j > 0 && !ks.placeable(op, done[j-1].rev, gaps) {
				dropped++
				continue
			}
		}
		keptOps, keptTimes = append(keptOps, op), append(keptTimes, times[i])
	}
	return keptOps, keptTimes, dropped
}
