package kv

import (
	"fmt"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// CheckCompaction is kv/compaction. etcd keeps the compact revision
// itself: a read at revision R fails with ErrCompacted when R is below the
// compact revision C, and returns data at R = C.
//
// Reads at a revision (Request.Revision > 0):
//   - a linearizable read called after a compaction to C was acknowledged,
//     at R < C, fails with ErrCompacted (not data, not future revision);
//   - a read that returned data at R has R at most its own header revision,
//     and at most the store's revision when it returned (see revBounds:
//     only when the workload is the only writer);
//   - a linearizable read that failed with future revision asked for R
//     above what the store had reached when it was called;
//   - a read that failed with ErrCompacted asked for R below some
//     compaction called before it returned (only when the workload is the
//     only client that compacts).
//
// Compactions: one to C' at or below a compaction acknowledged before it
// was called fails with ErrCompacted; one that failed with ErrCompacted
// had a compaction at or above C' called before it returned (the only
// compactor, again).
//
// Serializable reads are left out of the compacted rule: the member they
// read may not have applied the compaction yet.
func CheckCompaction(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	comp := facts.NewCompactions(h)
	bounds := facts.NewRevBounds(h)
	figures := map[string]float64{}
	for i := range h.Operations {
		o := &h.Operations[i]
		switch {
		case o.Request.Kind == history.OpRange && o.Request.Revision > 0:
			figures["reads_at_revision"]++
			judgeReadAtRevision(h, o, comp, bounds, col)
		case o.Request.Kind == history.OpCompact:
			figures["compactions"]++
			judgeCompaction(o, comp, col)
		}
	}
	if figures["reads_at_revision"]+figures["compactions"] == 0 {
		return check.Skip(NameCompaction, "no read at a revision and no compaction", figures)
	}
	return col.Result(NameCompaction, figures)
}

func judgeReadAtRevision(h *history.History, o *history.Operation, comp *facts.Compactions, bounds *facts.RevBounds, col *check.Collector) {
	at := o.Request.Revision
	kind := "linearizable"
	if o.Request.Serializable {
		kind = "serializable"
	}
	what := fmt.Sprintf("client %d's %s range %d of %s", o.Client, kind, o.ID, rangeText(h.Meta.Prefix, &o.Request))
	v := check.Violation{Guarantee: ErrCompaction, Client: o.Client, Key: o.Request.Key, Revision: at, Operations: []int64{o.ID}}
	answer := "returned data"
	if o.Failed() {
		answer = fmt.Sprintf("failed with %q", o.Code)
	}
	if c := comp.DoneBefore(o.Call); !o.Request.Serializable && c.Op != 0 && at < c.Rev &&
		(!o.Failed() || o.Code == history.ErrFutureRevision) {
		v.Message = fmt.Sprintf("%s %s, but compaction %d to revision %d was acknowledged before it was called",
			what, answer, c.Op, c.Rev)
		v.Want, v.Got, v.Operations = string(history.ErrCompacted), answerText(o), []int64{c.Op, o.ID}
		col.Add(v)
		return
	}
	switch {
	case !o.Failed():
		if head := o.Response.Revision; at > head {
			v.Message = fmt.Sprintf("%s returned data, though its own header revision %d is below the requested revision", what, head)
			v.Want, v.Got = string(history.ErrFutureRevision), fmt.Sprintf("data at header revision %d", head)
			col.Add(v)
		} else if ceil, from, Inconclusive, ok := bounds.AtMost(o.Return, o.ID); ok && at > ceil {
			v.Message = fmt.Sprintf("%s returned data, but the store's revision when it returned was at most %d "+
				"(operation %d, called by then, reported %d, and %d writes of unknown outcome were called by then)",
				what, ceil, from.Op, from.Rev, Inconclusive)
			v.Want, v.Got, v.Operations = string(history.ErrFutureRevision), "data", []int64{from.Op, o.ID}
			col.Add(v)
		}
	case o.Code == history.ErrFutureRevision && !o.Request.Serializable:
		if floor := bounds.AtLeast(o.Call); floor.Op != 0 && at <= floor.Rev {
			v.Message = fmt.Sprintf("%s failed with %q, but operation %d had returned header revision %d before it was called",
				what, o.Code, floor.Op, floor.Rev)
			v.Want, v.Got, v.Operations = "data or "+string(history.ErrCompacted), string(o.Code), []int64{floor.Op, o.ID}
			col.Add(v)
		}
	case o.Code == history.ErrCompacted:
		if c, ok := comp.TriedBy(o.Return, 0); ok && at >= c.Rev {
			v.Message = fmt.Sprintf("%s failed with %q, but no compaction above revision %d was requested before it returned%s",
				what, o.Code, at, highestCompaction(c))
			v.Want, v.Got = "data or "+string(history.ErrFutureRevision), string(o.Code)
			if c.Op != 0 {
				v.Operations = []int64{c.Op, o.ID}
			}
			col.Add(v)
		}
	}
}

func judgeCompaction(o *history.Operation, comp *facts.Compactions, col *check.Collector) {
	to := o.Request.Revision
	v := check.Violation{Guarantee: ErrCompaction, Client: o.Client, Revision: to, Operations: []int64{o.ID}}
	if c := comp.DoneBefore(o.Call); c.Op != 0 && to <= c.Rev && !o.Failed() {
		v.Message = fmt.Sprintf("client %d's compaction %d to revision %d succeeded, but compaction %d to revision %d "+
			"was acknowledged before it was called", o.Client, o.ID, to, c.Op, c.Rev)
		v.Want, v.Got, v.Operations = string(history.ErrCompacted), answerText(o), []int64{c.Op, o.ID}
		col.Add(v)
		return
	}
	if o.Code != history.ErrCompacted {
		return
	}
	if c, ok := comp.TriedBy(o.Return, o.ID); ok && to > c.Rev {
		v.Message = fmt.Sprintf("client %d's compaction %d to revision %d failed with %q, but no compaction at or above "+
			"it was requested before it returned%s", o.Client, o.ID, to, o.Code, highestCompaction(c))
		v.Want, v.Got = "success", string(o.Code)
		if c.Op != 0 {
			v.Operations = []int64{c.Op, o.ID}
		}
		col.Add(v)
	}
}

func highestCompaction(c facts.OpRev) string {
	if c.Op == 0 {
		return " (none was)"
	}
	return fmt.Sprintf(" (the highest, operation %d, to %d)", c.Op, c.Rev)
}

func answerText(o *history.Operation) string {
	if o.Failed() {
		return string(o.Code)
	}
	return fmt.Sprintf("data at header revision %d", o.Response.Revision)
}
