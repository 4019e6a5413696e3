package watch

import (
	"fmt"
	"sort"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// CheckResumable is watch/resumable, for every watch that asked for
// a start revision R > 0 (resumed watches included: they continue their
// predecessor from the start revision the workload chose):
//   - it delivers no event below R, and its first event is the first
//     change it covers at a revision >= R that an acknowledged write proves
//     committed: no such change lies in [R, first event). A watch with no
//     event vouches by its first progress notification P for [R, P];
//   - canceled for compaction, its compact revision is above R (etcd
//     cancels exactly when R is below the compact revision);
//   - when a compaction to C > R was acknowledged before the watch was
//     called and the member serving the watch is shown to have applied it
//     by then, the watch is canceled with a compact revision >= C and
//     delivers no event: it is never silently started later.
//
// The member is shown to have applied the compaction when the compaction
// itself was answered by that member, or when an acknowledged linearizable
// operation on that member was called after the compaction returned and
// returned before the watch was called — and no fault that may restart a
// member overlaps that span. A lagging member may legitimately serve a
// watch from a revision the leader compacted; the first rule still holds
// it to deliver every change from R on.
func CheckResumable(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	changes := committedChanges(h)
	proof := newAppliedProof(h)
	figures := map[string]float64{}
	lagging := 0
	for _, w := range h.Watches {
		start := w.Request.StartRevision
		if start <= 0 || w.Request.Fragment {
			continue
		}
		figures["watches_judged"]++
		if w.Resumes != 0 {
			figures["resumed_watches"]++
		}
		cancel := compactionCancel(w)
		first := firstEvent(w)
		if cancel != nil {
			figures["canceled_for_compaction"]++
			if cancel.CompactRevision <= start {
				col.Add(check.Violation{
					Guarantee: ErrResumable,
					Message: fmt.Sprintf("watch %d (client %d) started at revision %d was canceled for compaction with compact "+
						"revision %d, which does not compact its start", w.ID, w.Client, start, cancel.CompactRevision),
					Watch: w.ID, Client: w.Client, Revision: start,
					Want: fmt.Sprintf("compact revision > %d", start), Got: fmt.Sprint(cancel.CompactRevision),
				})
			}
		}
		c, via := proof.compactedFor(w)
		if c.Op == 0 && cancel == nil && proof.compactedBefore(w) {
			// A member not shown to have applied the compaction may lag
			// and serve the start from its own history.
			lagging++
		}
		if c.Op != 0 {
			figures["started_below_applied_compaction"]++
			switch {
			case first != nil || cancel == nil && w.End != nil && w.End.Reason == history.EndClient && facts.GotProgress(w):
				v := check.Violation{
					Guarantee: ErrResumable,
					Message: fmt.Sprintf("watch %d (client %d) started at revision %d, below compaction %d to revision %d "+
						"that member %s had applied before the watch was called (%s), but it was not canceled for compaction",
						w.ID, w.Client, start, c.Op, c.Rev, w.Member, via),
					Watch: w.ID, Client: w.Client, Revision: start,
					Want: fmt.Sprintf("canceled with compact revision >= %d", c.Rev), Got: "started", Operations: []int64{c.Op},
				}
				if first != nil {
					v.Message += fmt.Sprintf("; it delivered %s %s at revision %d first",
						first.Event.Type, facts.ShortKey(h.Meta.Prefix, first.Event.KV.Key), first.Event.Revision())
					v.Got, v.Key, v.Events = fmt.Sprintf("events from revision %d", first.Event.Revision()), first.Event.KV.Key,
						[]history.EventAt{*first}
				} else {
					v.Got = "progress notifications"
				}
				col.Add(v)
			case cancel != nil && cancel.CompactRevision < c.Rev:
				col.Add(check.Violation{
					Guarantee: ErrResumable,
					Message: fmt.Sprintf("watch %d (client %d) started at revision %d was canceled with compact revision %d, "+
						"below compaction %d to revision %d that member %s had applied before the watch was called (%s)",
						w.ID, w.Client, start, cancel.CompactRevision, c.Op, c.Rev, w.Member, via),
					Watch: w.ID, Client: w.Client, Revision: start,
					Want: fmt.Sprintf(">= %d", c.Rev), Got: fmt.Sprint(cancel.CompactRevision), Operations: []int64{c.Op},
				})
			}
		}
		judgeFirstDelivery(h, w, start, first, changes, col)
	}
	if figures["watches_judged"] == 0 {
		return check.Skip(NameResumable, "no watch asked for a start revision", figures)
	}
	r := col.Result(NameResumable, figures)
	r.Judged, r.Excused = int(figures["watches_judged"])-lagging, map[string]int{"member_lag": lagging}
	return r
}

// judgeFirstDelivery finds the first committed change w covers at or
// above start and checks w did not skip it.
func judgeFirstDelivery(h *history.History, w *history.WatchStream, start int64, first *history.EventAt,
	changes []change, col *check.Collector) {
	v := check.Violation{Guarantee: ErrResumable, Watch: w.ID, Client: w.Client}
	prefix := h.Meta.Prefix
	if first != nil && first.Event.Revision() < start {
		v.Message = fmt.Sprintf("watch %d (client %d) started at revision %d delivered %s %s at revision %d, below its start",
			w.ID, w.Client, start, first.Event.Type, facts.ShortKey(prefix, first.Event.KV.Key), first.Event.Revision())
		v.Key, v.Revision, v.Events = first.Event.KV.Key, first.Event.Revision(), []history.EventAt{*first}
		v.Want, v.Got = fmt.Sprintf(">= %d", start), fmt.Sprint(first.Event.Revision())
		col.Add(v)
		return
	}
	var until int64 // exclusive end of the span the watch vouches for before its first event
	got := "nothing"
	switch {
	case first != nil:
		until, got = first.Event.Revision(), fmt.Sprintf("%s %s at %d first", first.Event.Type,
			facts.ShortKey(prefix, first.Event.KV.Key), first.Event.Revision())
	default:
		for _, r := range w.Responses {
			if r.Progress {
				until, got = r.Revision+1, fmt.Sprintf("a progress notification at %d first", r.Revision)
				break
			}
		}
	}
	i := sort.Search(len(changes), func(i int) bool { return changes[i].rev >= start })
	for ; i < len(changes) && changes[i].rev < until; i++ {
		c := changes[i]
		if !facts.Covers(w, c.key, c.typ) {
			continue
		}
		v.Message = fmt.Sprintf("watch %d (client %d) started at revision %d skipped the %s of %s at revision %d, "+
			"committed by operation %d: it delivered %s", w.ID, w.Client, start, c.typ, facts.ShortKey(prefix, c.key), c.rev, c.op, got)
		if w.Resumes != 0 {
			v.Message += fmt.Sprintf(" (it resumes watch %d)", w.Resumes)
		}
		v.Key, v.Revision, v.Operations = c.key, c.rev, []int64{c.op}
		v.Want, v.Got = fmt.Sprintf("%s %s at %d first", c.typ, c.key, c.rev), got
		if first != nil {
			v.Events = []history.EventAt{*first}
		}
		col.Add(v)
		return
	}
}

// compactionCancel returns the response that canceled w for compaction.
func compactionCancel(w *history.WatchStream) *history.WatchResponse {
	for i := range w.Responses {
		if r := &w.Responses[i]; r.Canceled && r.CompactRevision > 0 {
			return r
		}
	}
	return nil
}

func firstEvent(w *history.WatchStream) *history.EventAt {
	for ri := range w.Responses {
		if len(w.Responses[ri].Events) > 0 {
			return &history.EventAt{Watch: w.ID, Response: ri, Index: 0, Event: w.Responses[ri].Events[0]}
		}
	}
	return nil
}

// appliedProof tells whether a member had applied a compaction by a time.
type appliedProof struct {
	h     *history.History
	comps []*history.Operation // acknowledged compactions
	// byMember: acknowledged linearizable operations per member, sorted by
	// call, with the earliest return among those called at or after each.
	byMember map[string]*memberOps
}

type memberOps struct {
	calls   []time.Duration
	minRet  []time.Duration
	minOpID []int64
}

func newAppliedProof(h *history.History) *appliedProof {
	p := &appliedProof{h: h, byMember: map[string]*memberOps{}}
	ops := map[string][]*history.Operation{}
	for i := range h.Operations {
		o := &h.Operations[i]
		if o.Failed() || !facts.IsLinearizableOp(o) || o.Member == "" {
			continue
		}
		if o.Request.Kind == history.OpCompact {
			p.comps = append(p.comps, o)
		}
		ops[o.Member] = append(ops[o.Member], o)
	}
	for m, list := range ops {
		sort.Slice(list, func(i, j int) bool { return list[i].Call < list[j].Call })
		mo := &memberOps{calls: make([]time.Duration, len(list)), minRet: make([]time.Duration, len(list)),
			minOpID: make([]int64, len(list))}
		for i := len(list) - 1; i >= 0; i-- {
			mo.calls[i], mo.minRet[i], mo.minOpID[i] = list[i].Call, list[i].Return, list[i].ID
			if i+1 < len(list) && mo.minRet[i+1] < mo.minRet[i] {
				mo.minRet[i], mo.minOpID[i] = mo.minRet[i+1], mo.minOpID[i+1]
			}
		}
		p.byMember[m] = mo
	}
	return p
}

// compactedBefore reports whether a compaction above w's start revision
// was acknowledged before w was called, applied by w's member or not.
func (p *appliedProof) compactedBefore(w *history.WatchStream) bool {
	for _, c := range p.comps {
		if c.Request.Revision > w.Request.StartRevision && c.Return < w.Call {
			return true
		}
	}
	return false
}

// compactedFor returns the highest compaction above w's start revision
// that w's member is shown to have applied before w was called, and how
// that is shown.
func (p *appliedProof) compactedFor(w *history.WatchStream) (facts.OpRev, string) {
	var best facts.OpRev
	var how string
	for _, c := range p.comps {
		if c.Request.Revision <= w.Request.StartRevision || c.Request.Revision <= best.Rev || c.Return >= w.Call {
			continue
		}
		if w.Member == "" {
			break // which member served the watch is not recorded
		}
		if c.Member == w.Member && !facts.RestartBetween(p.h.Faults, c.Call, w.Call) {
			best, how = facts.OpRev{Rev: c.Request.Revision, Op: c.ID}, "it answered the compaction itself"
			continue
		}
		mo := p.byMember[w.Member]
		if mo == nil {
			continue
		}
		i := sort.Search(len(mo.calls), func(i int) bool { return mo.calls[i] >= c.Return })
		if i < len(mo.calls) && mo.minRet[i] < w.Call && !facts.RestartBetween(p.h.Faults, c.Call, w.Call) {
			best = facts.OpRev{Rev: c.Request.Revision, Op: c.ID}
			how = fmt.Sprintf("operation %d, called on it after the compaction returned, returned before the watch was called",
				mo.minOpID[i])
		}
	}
	return best, how
}
