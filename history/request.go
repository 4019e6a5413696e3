package history

// Walk calls f on every request r holds, depth first and in order: r
// itself, then, for a txn, each request of its success branch and of its
// failure branch, nested txns' own branches included. f returns false to
// skip what a request holds.
func (r *Request) Walk(f func(*Request) bool) {
	if !f(r) || r.Kind != OpTxn {
		return
	}
	for i := range r.Success {
		r.Success[i].Walk(f)
	}
	for i := range r.Failure {
		r.Failure[i].Walk(f)
	}
}

// Writes calls f on every put and delete r may execute: r itself, or
// those in any branch of a txn at any depth, with whether each lies on
// the success side of every txn around it.
func (r *Request) Writes(f func(w *Request, allSuccess bool)) {
	r.writes(true, f)
}

func (r *Request) writes(success bool, f func(*Request, bool)) {
	switch r.Kind {
	case OpPut, OpDelete:
		f(r, success)
	case OpTxn:
		for i := range r.Success {
			r.Success[i].writes(success, f)
		}
		for i := range r.Failure {
			r.Failure[i].writes(false, f)
		}
	}
}

// Branch is the branch a txn took by its response's Succeeded.
func (r *Request) Branch(succeeded bool) []Request {
	if succeeded {
		return r.Success
	}
	return r.Failure
}

// Executed calls f on every range, put and delete an answered request
// executed, with its response: r itself, or, for a txn, the requests of
// the branch its response says it took, in order, nested txns by their
// own responses. A response with fewer entries than its branch (a broken
// answer) ends the walk there; a missing response is passed as nil.
func Executed(r *Request, resp *Response, f func(*Request, *Response)) {
	if r.Kind != OpTxn {
		f(r, resp)
		return
	}
	if resp == nil {
		return
	}
	br := r.Branch(resp.Succeeded)
	for i := range br {
		if i >= len(resp.Responses) {
			return
		}
		Executed(&br[i], &resp.Responses[i], f)
	}
}

// Nested reports whether a txn holds another txn in a branch.
func (r *Request) Nested() bool {
	for _, br := range [][]Request{r.Success, r.Failure} {
		for i := range br {
			if br[i].Kind == OpTxn {
				return true
			}
		}
	}
	return false
}

// Depth is how deep txns nest in r: 0 for a request that is no txn, 1 for
// a txn of plain requests.
func (r *Request) Depth() int {
	if r.Kind != OpTxn {
		return 0
	}
	d := 0
	for _, br := range [][]Request{r.Success, r.Failure} {
		for i := range br {
			d = max(d, br[i].Depth())
		}
	}
	return d + 1
}

// Local reports whether etcd answers the request from the member's own
// state, with no read index: a serializable range, or a txn whose
// branches hold only serializable ranges — none at all included — which
// etcd serves as a serializable read (etcdserver/txn IsTxnSerializable).
// Its answer may be stale, so linearizability does not judge it.
func (r *Request) Local() bool {
	switch r.Kind {
	case OpRange:
		return r.Serializable
	case OpTxn:
		for _, br := range [][]Request{r.Success, r.Failure} {
			for i := range br {
				if br[i].Kind != OpRange || !br[i].Serializable {
					return false
				}
			}
		}
		return true
	}
	return false
}
