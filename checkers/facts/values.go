package facts

import (
	"github.com/vigil-suite/vigil/history"
)

// WrittenValue is what the history says about one (key, value) a put may
// have written: the revision it was written at when an acknowledged write
// proves it (0 when unknown: the write's outcome is unknown, or several
// puts tried the same value).
type WrittenValue struct {
	Rev int64
	Op  int64
}

type KeyValue struct{ Key, Value string }

// PossibleWrites maps every (key, value) a put may have written to what is
// known of it: puts of acknowledged writes that took effect (a put, or a
// put in the branch a txn took) and every put of a write of unknown
// outcome (either branch). A put in the branch a txn did not take wrote
// nothing.
func PossibleWrites(h *history.History) map[KeyValue]WrittenValue {
	out := map[KeyValue]WrittenValue{}
	add := func(r *history.Request, rev, op int64) {
		kv := KeyValue{r.Key, r.Value}
		if old, dup := out[kv]; dup {
			out[kv] = WrittenValue{Op: old.Op} // ambiguous: revision unknown
			return
		}
		out[kv] = WrittenValue{Rev: rev, Op: op}
	}
	for i := range h.Operations {
		o := &h.Operations[i]
		if o.Failed() && (o.Code == history.ErrCompacted || o.Code == history.ErrFutureRevision) {
			continue
		}
		rev := int64(0)
		if !o.Failed() {
			rev = o.Response.Revision
		}
		switch o.Request.Kind {
		case history.OpPut:
			add(&o.Request, rev, o.ID)
		case history.OpTxn:
			for _, br := range []struct {
				reqs    []history.Request
				success bool
			}{{o.Request.Success, true}, {o.Request.Failure, false}} {
				if !o.Failed() && o.Response.Succeeded != br.success {
					continue
				}
				for j := range br.reqs {
					if br.reqs[j].Kind == history.OpPut {
						add(&br.reqs[j], rev, o.ID)
					}
				}
			}
		}
	}
	return out
}
