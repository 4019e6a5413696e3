package linearizable

import (
	"fmt"
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

// whyExcluded explains, naming its evidence, why a write of unknown
// outcome cannot take revision rev.
func (m kvModel) whyExcluded(s *kvState, op *linOp, br []history.Request, rev int64) *mismatch {
	if id, ok := m.ks.taken[rev]; ok && id != op.id {
		return &mismatch{msg: fmt.Sprintf("revision %d is the revision of operation %d", rev, id), cites: id}
	}
	if rev > m.ks.horizon {
		return &mismatch{msg: fmt.Sprintf("no response shows a revision above %d", m.ks.horizon)}
	}
	why := func(k int32, put bool, value string) *mismatch {
		name := m.ks.short(m.ks.keys[k])
		if m.ks.quietAt(k, rev) {
			for _, e := range m.ks.evidence[k] {
				if e.lo > rev || rev > e.hi {
					continue
				}
				if e.op != 0 {
					return &mismatch{key: m.ks.keys[k], cites: e.op, msg: fmt.Sprintf(
						"operation %d read %s at revision %d and shows no write touched it at revision %d", e.op, name, e.hi, rev)}
				}
				return &mismatch{key: m.ks.keys[k], watch: e.watch, msg: fmt.Sprintf(
					"watch %d vouches that %s did not change at revision %d", e.watch, name, rev)}
			}
		}
		if v, ok := m.ks.pins[revKeyIdx{rev, k}]; ok {
			w := m.ks.pinWatch[revKeyIdx{rev, k}]
			switch {
			case v == -1 && put:
				return &mismatch{key: m.ks.keys[k], watch: w, msg: fmt.Sprintf("watch %d saw %s deleted at revision %d", w, name, rev)}
			case v >= 0 && (!put || m.ks.values[v] != value):
				return &mismatch{key: m.ks.keys[k], watch: w, msg: fmt.Sprintf("watch %d saw %s set to %q at revision %d", w, name, m.ks.values[v], rev)}
			case v == -2:
				return &mismatch{key: m.ks.keys[k], watch: w, msg: fmt.Sprintf("watch %d saw %s set to a value no put wrote at revision %d", w, name, rev)}
			}
		}
		return nil
	}
	for i := range br {
		switch br[i].Kind {
		case history.OpPut:
			value := br[i].Value
			if br[i].IgnoreValue {
				value = m.ks.values[m.get(s, br[i].Key).value]
			}
			if mm := why(m.ks.index[br[i].Key], true, value); mm != nil {
				return mm
			}
		case history.OpLeaseRevoke:
			for _, k := range m.attached(s, br[i].Lease) {
				if mm := why(k, false, ""); mm != nil {
					return mm
				}
			}
		case history.OpDelete:
			lo, hi := m.ks.span(br[i].Key, br[i].End)
			for k := lo; k < hi; k++ {
				if s.get(k).create != 0 {
					if mm := why(k, false, ""); mm != nil {
						return mm
					}
				}
			}
		}
	}
	return &mismatch{msg: fmt.Sprintf("it cannot take revision %d", rev)}
}

// placeable reports whether a branch of op fits at a free revision above
// after.
func (ks *keyspace) placeable(op *linOp, after int64, gaps []int64) bool {
	for i := sort.Search(len(gaps), func(i int) bool { return gaps[i] > after }); i < len(gaps); i++ {
		if ks.pathFits(op, gaps[i]) {
			return true
		}
	}
	return false
}

// pathFits reports whether a path of op could change the store at rev.
func (ks *keyspace) pathFits(op *linOp, rev int64) bool {
	for i := range op.paths {
		if ks.branchFits(op.paths[i].ops, rev) {
			return true
		}
	}
	return false
}

// branchFits reports whether br could change the store at rev: none of its
// puts is excluded there, and at least one of its writes could take effect.
func (ks *keyspace) branchFits(br []history.Request, rev int64) bool {
	effective := false
	for i := range br {
		r := &br[i]
		switch r.Kind {
		case history.OpPut:
			k := ks.index[r.Key]
			if ks.quietAt(k, rev) {
				return false
			}
			// A put that keeps the value writes what the key holds, which
			// only the state tells.
			if v, ok := ks.pins[revKeyIdx{rev, k}]; ok && !r.IgnoreValue && v != ks.valueIdx[r.Value] {
				return false
			}
			effective = true
		case history.OpLeaseRevoke:
			effective = true
		case history.OpDelete:
			if r.End != "" {
				effective = true
				continue
			}
			k, ok := ks.index[r.Key]
			if !ok || ks.quietAt(k, rev) {
				continue
			}
			if v, ok := ks.pins[revKeyIdx{rev, k}]; !ok || v == -1 {
				effective = true
			}
		}
	}
	return effective
}
