package facts

import (
	"github.com/vigil-suite/vigil/history"
)

// AckedWriteRevision returns the revision an acknowledged write created,
// if it created one: a put always, a delete that deleted something, a txn
// whose taken branch put or deleted something.
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
		br := req.Failure
		if resp.Succeeded {
			br = req.Success
		}
		for i, b := range br {
			if b.Kind == history.OpPut {
				return resp.Revision, true
			}
			if b.Kind == history.OpDelete && i < len(resp.Responses) && resp.Responses[i].Deleted > 0 {
				return resp.Revision, true
			}
		}
	}
	return 0, false
}
