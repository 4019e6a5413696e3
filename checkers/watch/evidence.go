package watch

import (
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// The evidence of each watch check: the watches (or progress requests,
// or transactions) it judges and the answers it needs from them.

func allWatches(*history.WatchStream) bool { return true }

// watchesWith returns the evidence of the watches match selects, answered
// when they delivered an event.
func watchesWith(request string, match func(*history.WatchStream) bool) check.Evidencer {
	return func(h *history.History) check.Evidence {
		return facts.WatchEvidence(h, request, "event", match, facts.DeliveredEvents)
	}
}

var (
	watchEvents  = watchesWith("watch", allWatches)
	prevKVEvents = watchesWith("watch with prev_kv", func(w *history.WatchStream) bool { return w.Request.PrevKV })
)

// observedRevisions: watches answered when they vouch for some revisions
// (an event or a progress notification), which watch/reliable judges.
func observedRevisions(h *history.History) check.Evidence {
	return facts.WatchEvidence(h, "watch", "observed revision", allWatches,
		func(w *history.WatchStream) bool { return facts.ObservedWindow(w).Ok })
}

// startedWatches: watches that asked for a start revision, answered by
// any response (their first event, a created or a compacted cancel).
func startedWatches(h *history.History) check.Evidence {
	return facts.WatchEvidence(h, "watch with a start revision", "response",
		func(w *history.WatchStream) bool { return w.Request.StartRevision > 0 }, facts.Responded)
}

// endedWatches: every watch, answered when its end is recorded.
func endedWatches(h *history.History) check.Evidence {
	return facts.WatchEvidence(h, "watch", "recorded end", allWatches,
		func(w *history.WatchStream) bool { return w.End != nil })
}

// comparedWatches: watch/agreement compares watches, so with fewer than
// two nothing was asked of it.
func comparedWatches(h *history.History) check.Evidence {
	if len(h.Watches) < 2 {
		return check.Evidence{Request: "watch", Answer: "event", Why: "fewer than two watches: nothing to compare"}
	}
	return watchEvents(h)
}

// multiKeyTxns: watch/atomic needs revisions that change several keys,
// which only a transaction writing several keys makes; answered when one
// was acknowledged as succeeded.
func multiKeyTxns(h *history.History) check.Evidence {
	e := facts.OpEvidence(h, "transaction writing several keys", "commit", func(o *history.Operation) bool {
		return o.Request.Kind == history.OpTxn && pathWrites(&o.Request) > 1
	})
	// OpEvidence counts a failed compare as an answer; only a commit
	// makes a revision with several changes.
	e.Answered = 0
	for i := range h.Operations {
		o := &h.Operations[i]
		if o.Request.Kind == history.OpTxn && o.Response != nil && executedWrites(o) > 1 {
			e.Answered++
		}
	}
	return e
}

// pathWrites is the most puts and deletes one branch of a txn holds,
// nested txns counted in.
func pathWrites(r *history.Request) int {
	most := 0
	for _, br := range [][]history.Request{r.Success, r.Failure} {
		n := 0
		for i := range br {
			if br[i].Kind == history.OpTxn {
				n += pathWrites(&br[i])
			} else if br[i].Kind.IsWrite() {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// executedWrites counts the puts and deletes an answered txn executed.
func executedWrites(o *history.Operation) int {
	n := 0
	history.Executed(&o.Request, o.Response, func(r *history.Request, _ *history.Response) {
		if r.Kind == history.OpPut || r.Kind == history.OpDelete {
			n++
		}
	})
	return n
}

// progressAnswers: watch/bookmarkable's evidence, the progress requests
// and their notifications. A server that serves watches owes them an
// answer, so if every owed one went unanswered the check fails.
func progressAnswers(h *history.History) check.Evidence { return facts.ProgressEvidence(h, nil) }

// progressFromStart: progress requests for watches with a start revision.
// A watch still ahead of its store is right to get none (etcd #20221), so
// none is owed here: watch/bookmarkable owns the silence.
func progressFromStart(h *history.History) check.Evidence {
	e := facts.ProgressEvidence(h, func(w *history.WatchStream) bool { return w.Request.StartRevision > 0 })
	e.Owed, e.Ignored, e.Unanswered = 0, 0, nil
	return e
}

// finalReach: watch/liveness's evidence, the watches open at the final
// write that cover it or get progress notifications, answered when they
// (or the watches resuming them) reached its revision.
func finalReach(h *history.History) check.Evidence {
	e := check.Evidence{Request: "watch open at the final write", Answer: "final revision reached", Records: check.RecordWatches}
	mark, finals, ok := finalWrite(h, committedChanges(h))
	if !ok {
		e.Why = "the run was cut short before its final write"
		return e
	}
	resumedBy := map[int64][]*history.WatchStream{}
	for _, w := range h.Watches {
		if w.Resumes != 0 {
			resumedBy[w.Resumes] = append(resumedBy[w.Resumes], w)
		}
	}
	for _, w := range h.Watches {
		if !openAtMark(w, mark) || !(coversAny(w, finals) || facts.GotProgress(w)) {
			continue
		}
		e.Asked++
		if reached, _, _ := chainReach(w, resumedBy, map[int64]bool{}); reached >= mark.Revision {
			e.Answered++
		}
	}
	if e.Asked == 0 {
		e.Why = "no watch open at the final write covers it or receives progress notifications"
	}
	return e
}
