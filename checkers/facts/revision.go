package facts

import (
	"fmt"

	"github.com/vigil-suite/vigil/history"
)

// AckedWriteRevision returns the revision an acknowledged write created,
// if it created one: a put always, a delete that deleted something, a txn
// whose taken path (nested txns included) put or deleted something. A
// lease revoke's answer does not say whether it deleted keys, so it is
// not counted: its header revision may be another write's.
func AckedWriteRevision(o *history.Operation) (int64, bool) {
	if o.Failed() {
		return 0, false
	}
	return WriteRevision(&o.Request, o.Response)
}

// WriteRevision is ackedWriteRevision on a request and its response.
func WriteRevision(req *history.Request, resp *history.Response) (int64, bool) {
	switch req.Kind {
	case history.OpPut:
		return resp.Revision, true
	case history.OpDelete:
		return resp.Revision, resp.Deleted > 0
	case history.OpTxn:
		wrote := false
		history.Executed(req, resp, func(r *history.Request, in *history.Response) {
			wrote = wrote || r.Kind == history.OpPut || r.Kind == history.OpDelete && in.Deleted > 0
		})
		return resp.Revision, wrote
	}
	return 0, false
}

// LeaseKeys lists, by lease id, the keys some put of the history attaches
// to it: the keys a revoke of that lease may delete.
func LeaseKeys(h *history.History) map[int64][]string {
	out := map[int64][]string{}
	seen := map[KeyValue]bool{}
	for i := range h.Operations {
		h.Operations[i].Request.Writes(func(r *history.Request, _ bool) {
			if r.Kind == history.OpPut && r.Lease != 0 {
				if k := (KeyValue{r.Key, fmt.Sprint(r.Lease)}); !seen[k] {
					seen[k] = true
					out[r.Lease] = append(out[r.Lease], r.Key)
				}
			}
		})
	}
	return out
}
