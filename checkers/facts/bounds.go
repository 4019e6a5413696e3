// Package facts derives, from a history, what several check families
// need alike: the revision bounds of operations, compactions and who saw
// them, what a put may have written, the revision an acknowledged write
// created, the revisions a watch vouches for, the calls clients made,
// key ranges and resourceVersions.
package facts

import (
	"sort"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// Bounds on the store's revision and compact revision at a moment of the
// run, derived from the operations alone. They are what the KV checks
// (and the watch checks that need to know when a compaction or a write may
// have happened) use to stay sound: a check may only call an answer wrong
// when no interleaving of the recorded operations explains it.

// IsLinearizableOp reports whether o's answer reflects the cluster's
// committed state at one instant inside its call-return interval: writes,
// compactions and lease grants and revokes (all go through raft and answer
// once applied) and ranges and txns not served locally. Serializable
// ranges and txns of serializable ranges alone (no request at all
// included: history.Request.Local), Status and HashKV answer from one
// member's local state, which may lag.
func IsLinearizableOp(o *history.Operation) bool {
	switch o.Request.Kind {
	case history.OpPut, history.OpDelete, history.OpCompact, history.OpLeaseGrant, history.OpLeaseRevoke:
		return true
	case history.OpRange, history.OpTxn:
		return !o.Request.Local()
	}
	return false
}

// soleWriter reports whether the workload (with the faults' own recorded
// requests) may be assumed to be the only client that writes to or
// compacts the cluster. That holds for clusters vigil starts itself, not
// for an external one, which others may use: there, the checks that count
// revisions or compactions to bound the store skip those parts.
func soleWriter(h *history.History) bool { return h.Meta.Target.Fixture != "external" }

// OpRev is a revision and the operation that showed it (0: none).
type OpRev struct {
	Rev int64
	Op  int64
}

// timedMax answers "the highest revision among the items up to time t",
// optionally leaving one operation out, in O(log n). It keeps, for every
// prefix of the items sorted by time, the two highest revisions shown by
// different operations.
type timedMax struct {
	times []time.Duration
	top   [][2]OpRev
}

type timedRev struct {
	t time.Duration
	OpRev
}

func newTimedMax(items []timedRev) *timedMax {
	sort.SliceStable(items, func(i, j int) bool { return items[i].t < items[j].t })
	m := &timedMax{times: make([]time.Duration, len(items)), top: make([][2]OpRev, len(items)+1)}
	for i, it := range items {
		m.times[i] = it.t
		best := m.top[i]
		switch {
		case it.Rev > best[0].Rev || best[0].Op == 0:
			best[1], best[0] = best[0], it.OpRev
		case it.Rev > best[1].Rev || best[1].Op == 0:
			best[1] = it.OpRev
		}
		m.top[i+1] = best
	}
	return m
}

// upTo returns the highest item at or before t (strictly before when
// strict), other than operation exclude; op is 0 when there is none.
func (m *timedMax) upTo(t time.Duration, strict bool, exclude int64) OpRev {
	n := sort.Search(len(m.times), func(i int) bool {
		if strict {
			return m.times[i] >= t
		}
		return m.times[i] > t
	})
	best := m.top[n]
	if best[0].Op == exclude && exclude != 0 {
		return best[1]
	}
	return best[0]
}

// RevBounds bounds the store's revision over time.
type RevBounds struct {
	// floor: header revisions of acknowledged linearizable operations by
	// return time. The store's revision at t is at least floor.upTo(t).
	floor *timedMax
	// called: the same by call time. Every revision that exists at t was
	// created by a write called by t: one whose revision is at most the
	// highest header an acknowledged linearizable operation called by t
	// reports, or one of unknown outcome called by t (at most one revision
	// each).
	called *timedMax
	// UnknownCalls are the call times of writes of unknown outcome, sorted.
	UnknownCalls []time.Duration
	Sole         bool
}

func NewRevBounds(h *history.History) *RevBounds {
	var byRet, byCall []timedRev
	b := &RevBounds{Sole: soleWriter(h)}
	for i := range h.Operations {
		o := &h.Operations[i]
		if o.Failed() || o.Request.Kind == history.OpLeaseRevoke {
			// A revoke's answer does not say whether it deleted keys, so
			// whether it took a revision: as one of unknown outcome.
			if o.Request.Kind.IsWrite() && !o.Definite() {
				b.UnknownCalls = append(b.UnknownCalls, o.Call)
			}
			if o.Failed() {
				continue
			}
		}
		if !IsLinearizableOp(o) {
			continue
		}
		r := OpRev{o.Response.Revision, o.ID}
		byRet = append(byRet, timedRev{o.Return, r})
		byCall = append(byCall, timedRev{o.Call, r})
	}
	sort.Slice(b.UnknownCalls, func(i, j int) bool { return b.UnknownCalls[i] < b.UnknownCalls[j] })
	b.floor, b.called = newTimedMax(byRet), newTimedMax(byCall)
	return b
}

// AtLeast is the highest revision an acknowledged linearizable operation
// that returned before t reports: the store had reached it by t.
func (b *RevBounds) AtLeast(t time.Duration) OpRev { return b.floor.upTo(t, true, 0) }

// AtMost bounds the store's revision at t from above, leaving operation
// exclude out of the evidence; ok is false when nothing bounds it (no
// acknowledged linearizable operation was called by t, or other clients
// may write).
func (b *RevBounds) AtMost(t time.Duration, exclude int64) (ceiling int64, base OpRev, Inconclusive int, ok bool) {
	if !b.Sole {
		return 0, OpRev{}, 0, false
	}
	base = b.called.upTo(t, false, exclude)
	if base.Op == 0 {
		return 0, base, 0, false
	}
	Inconclusive = sort.Search(len(b.UnknownCalls), func(i int) bool { return b.UnknownCalls[i] > t })
	return base.Rev + int64(Inconclusive), base, Inconclusive, true
}

// Compactions indexes the compact operations.
type Compactions struct {
	// done: acknowledged compactions by return time. A compaction to C done
	// before t means every linearizable read called after t sees revisions
	// below C as compacted.
	done *timedMax
	// tried: compactions that may have taken effect (acknowledged or of
	// unknown outcome) by call time. The compact revision at t is at most
	// the highest of those called by t, if the workload is the only client
	// that compacts.
	tried *timedMax
	// seen: compactions the server itself revealed, by the time it did: a
	// read at revision R answered ErrCompacted (so the compact revision is
	// above R: recorded as R+1), a watch canceled with its compact revision.
	seen *timedMax
	n    int
	sole bool
}

// CoveredBy reports whether, by time t, the store may have been compacted
// above revision rev-1: a compaction to rev or higher was requested by the
// run before t, or the server showed one by t. Other clients' compactions
// count only when the server showed them, so an excuse that rests on a
// compaction always rests on a record before t.
func (c *Compactions) CoveredBy(t time.Duration, rev int64) bool {
	return c.tried.upTo(t, false, 0).Rev >= rev || c.seen.upTo(t, false, 0).Rev >= rev
}

// In a segment, the compactions of its context (the segments before, in
// the span its requests may reach back to) count too: they compacted the
// store the segment reads.
func NewCompactions(h *history.History) *Compactions {
	var done, tried []timedRev
	c := &Compactions{sole: soleWriter(h)}
	all := h.OperationsWithContext()
	for k, ops := range all {
		for i := range ops {
			o := &ops[i]
			if o.Request.Kind != history.OpCompact {
				continue
			}
			if k == len(all)-1 {
				c.n++ // the history's own
			}
			r := OpRev{o.Request.Revision, o.ID}
			if !o.Failed() {
				done = append(done, timedRev{o.Return, r})
			}
			if !o.Failed() || (o.Code != history.ErrCompacted && o.Code != history.ErrFutureRevision) {
				tried = append(tried, timedRev{o.Call, r})
			}
		}
	}
	c.done, c.tried = newTimedMax(done), newTimedMax(tried)
	var seen []timedRev
	for i := range h.Operations {
		o := &h.Operations[i]
		if o.Code == history.ErrCompacted && o.Request.Kind != history.OpCompact && o.Request.Revision > 0 {
			seen = append(seen, timedRev{o.Return, OpRev{o.Request.Revision + 1, o.ID}})
		}
	}
	for _, w := range h.Watches {
		for _, r := range w.Responses {
			if r.CompactRevision > 0 {
				seen = append(seen, timedRev{r.Time, OpRev{r.CompactRevision, 0}})
			}
		}
	}
	c.seen = newTimedMax(seen)
	return c
}

// DoneBefore is the highest compaction acknowledged before t.
func (c *Compactions) DoneBefore(t time.Duration) OpRev { return c.done.upTo(t, true, 0) }

// TriedBy is the highest compaction, other than exclude, that may have
// taken effect by t; ok is false when other clients may compact too.
func (c *Compactions) TriedBy(t time.Duration, exclude int64) (OpRev, bool) {
	if !c.sole {
		return OpRev{}, false
	}
	return c.tried.upTo(t, false, exclude), true
}

// harmlessFaults do not restart a member nor roll its state back: a
// member's session survives them. Any other fault (kill, restart, member
// replacement, failpoints, and names this list does not know) may.
var harmlessFaults = []string{"pause-", "isolate-", "split-", "ring", "bridge", "one-way", "client-", "latency",
	"reset", "bandwidth", "compact-storm", "watch-", "failpoint-sleep:",
	// Sabotage changes what clients see, never a member.
	"sabotage:"}

// RestartBetween reports whether a fault that may restart a member
// overlapped [from, to]. Faults name members, operations name endpoints,
// so any member counts.
func RestartBetween(faults []history.Fault, from, to time.Duration) bool {
	for i := range faults {
		f := &faults[i]
		if f.Start > to || f.End < from {
			continue
		}
		harmless := false
		for _, p := range harmlessFaults {
			if strings.HasPrefix(f.Name, p) {
				harmless = true
				break
			}
		}
		if !harmless {
			return true
		}
	}
	return false
}

// WriteKey names the key a write touches first, for violations.
func WriteKey(r *history.Request) string {
	if r.Kind != history.OpTxn {
		return r.Key
	}
	key := ""
	r.Writes(func(w *history.Request, _ bool) {
		if key == "" {
			key = w.Key
		}
	})
	if key == "" && len(r.Compares) > 0 {
		return r.Compares[0].Key
	}
	return key
}
