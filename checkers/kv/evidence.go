package kv

import (
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// The evidence of each KV check: the operations it judges, answered when
// a response or a definite error came back.

func linearizableOps(h *history.History) check.Evidence {
	return facts.OpEvidence(h, "linearizable read or write", "response", facts.IsLinearizableOp)
}

func serializableReads(h *history.History) check.Evidence {
	return facts.OpEvidence(h, "serializable range", "response", func(o *history.Operation) bool {
		return o.Request.Kind == history.OpRange && o.Request.Serializable
	})
}

func compactionOps(h *history.History) check.Evidence {
	return facts.OpEvidence(h, "compaction or read at a revision", "response or definite error", func(o *history.Operation) bool {
		return o.Request.Kind == history.OpCompact || (o.Request.Kind == history.OpRange && o.Request.Revision > 0)
	})
}

// memberReads is kv/convergence's evidence: the members asked for their
// Status and HashKV after the final write, answered when a Status came
// back. With fewer than two members asked there is nothing to compare, so
// nothing was asked of the check.
func memberReads(h *history.History) check.Evidence {
	e := check.Evidence{Request: "member read after the final write", Answer: "Status", Records: check.RecordOperations}
	mark, ok := h.Mark(history.MarkFinalWrite)
	if !ok {
		e.Why = "the run was cut short before its final write"
		if h.NotLast() {
			e.Why = "only the run's last segment has the final write"
		}
		return e
	}
	asked, answered := map[string]bool{}, map[string]bool{}
	for i := range h.Operations {
		o := &h.Operations[i]
		if !convergenceRead(o, mark) {
			continue
		}
		asked[o.Member] = true
		if o.Request.Kind == history.OpStatus && !o.Failed() {
			answered[o.Member] = true
		}
	}
	if len(asked) < 2 {
		e.Why = "fewer than two members were asked after the final write: nothing to compare"
		return e
	}
	e.Asked, e.Answered = len(asked), len(answered)
	return e
}

// memberAnswers is kv/member-agreement's evidence: HashKV requests and
// ranges at a revision, answered when a response came back. With fewer
// than two members asked there is nothing to compare, so nothing was
// asked of the check.
func memberAnswers(h *history.History) check.Evidence {
	e := check.Evidence{Request: "HashKV or range at a revision", Answer: "response", Records: check.RecordOperations}
	members := map[string]bool{}
	for i := range h.Operations {
		o := &h.Operations[i]
		if !atRevision(o) {
			continue
		}
		members[o.Member] = true
		e.Asked++
		switch {
		case o.Code == history.ErrRefused:
			e.Refused++
		case !o.Failed():
			e.Answered++
		}
	}
	if len(members) < 2 {
		e.Asked, e.Answered, e.Refused = 0, 0, 0
		e.Why = "fewer than two members were asked for HashKV or a range at a revision: nothing to compare"
	}
	return e
}

// atRevision: a HashKV or range at a revision, sent to a known member.
func atRevision(o *history.Operation) bool {
	return (o.Request.Kind == history.OpHashKV || o.Request.Kind == history.OpRange) && o.Request.Revision > 0 && o.Member != ""
}
