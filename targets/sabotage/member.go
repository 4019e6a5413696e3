package sabotage

import "github.com/vigil-suite/vigil/history"

// stale-member-read models a server that answers linearizable reads from
// the state of the member asked, without a read index (or lease) to learn
// first what the cluster has committed. Each wrapped client talks to one
// member, so the faithful model is to send the read on to that same
// member as a serializable one: etcd's serializable read is exactly a
// member's local answer. Sending it to another member instead would model
// a proxy that spreads reads over members, and would also show a client
// a state older than its own last write, which a local-read server never
// does (a member acknowledges a write only once it has applied it).
//
// Such a read is stale only when it reaches a member that has not applied
// a write another member has already acknowledged: the window between two
// members' applies, milliseconds on a healthy local cluster. A read sent
// at random rarely lands in it; the read-after-ack pattern (package
// workload) sends one into it on purpose.

// localReadWhat is the fault record's account of stale-member-read.
const localReadWhat = "from here on, every linearizable range of every client (and every txn that only reads) is sent to " +
	"the member its client talks to as a serializable one: answered from that member's own state, with no read index"

// localRead is req as a server without a read index serves it: a range,
// or a txn that only reads with ranges in its branches, made
// serializable. ok is false for anything else (a write, or a read that is
// serializable already).
func localRead(req history.Request) (history.Request, bool) {
	switch req.Kind {
	case history.OpRange:
		if req.Serializable {
			return req, false
		}
		req.Serializable = true
		return req, true
	case history.OpTxn:
		// etcd serves a txn locally when both branches hold ranges only,
		// every one serializable (its compares read the same state).
		for _, br := range [][]history.Request{req.Success, req.Failure} {
			for _, r := range br {
				if r.Kind != history.OpRange {
					return req, false
				}
			}
		}
		if len(req.Success)+len(req.Failure) == 0 {
			return req, false // compares alone: left as sent
		}
		req.Success, req.Failure = serializable(req.Success), serializable(req.Failure)
		return req, true
	}
	return req, false
}

func serializable(br []history.Request) []history.Request {
	out := make([]history.Request, len(br))
	for i, r := range br {
		r.Serializable = true
		out[i] = r
	}
	return out
}
