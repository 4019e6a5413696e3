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
// outcome (any branch). A put in the branch a txn did not take wrote
// nothing; a put with ignore_value names no value.
func PossibleWrites(h *history.History) map[KeyValue]WrittenValue {
	out := map[KeyValue]WrittenValue{}
	// On a key a put with ignore_value may rewrite, a value stays at later
	// revisions than the one that wrote it: its revision is not known.
	kept := map[string]bool{}
	all := h.OperationsWithContext() // a segment's context wrote values too
	for _, ops := range all {
		for i := range ops {
			ops[i].Request.Writes(func(r *history.Request, _ bool) {
				if r.Kind == history.OpPut && r.IgnoreValue {
					kept[r.Key] = true
				}
			})
		}
	}
	add := func(r *history.Request, rev, op int64) {
		if kept[r.Key] {
			rev = 0
		}
		kv := KeyValue{r.Key, r.Value}
		if old, dup := out[kv]; dup {
			out[kv] = WrittenValue{Op: old.Op} // ambiguous: revision unknown
			return
		}
		out[kv] = WrittenValue{Rev: rev, Op: op}
	}
	for _, ops := range all {
		for i := range ops {
			o := &ops[i]
			if o.Definite() {
				continue
			}
			// A put with ignore_value writes the value the key held: no value
			// of its own to name it by.
			put := func(r *history.Request, rev int64) {
				if r.Kind == history.OpPut && !r.IgnoreValue {
					add(r, rev, o.ID)
				}
			}
			if o.Failed() {
				o.Request.Writes(func(r *history.Request, _ bool) { put(r, 0) })
				continue
			}
			history.Executed(&o.Request, o.Response, func(r *history.Request, _ *history.Response) { put(r, o.Response.Revision) })
		}
	}
	return out
}
