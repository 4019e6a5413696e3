package history

import "time"

// CallKind names a request that is neither a KV operation nor a watch
// stream of its own: a progress request on a client's watch stream, a
// lease call. Format 2 records every one of them with its outcome, so a
// check can tell a request the run never sent from one the server left
// unanswered.
type CallKind string

const (
	// CallProgress is WatchClient.RequestProgress: it asks the server for
	// a progress notification on every watch of the client's stream. Its
	// answer is that notification, on the watches of the same client.
	CallProgress CallKind = "progress"
	// CallLeaseGrant, CallLeaseKeepAlive and CallLeaseRevoke are the Lease
	// service's calls; Lease and TTL say which lease and for how long.
	CallLeaseGrant     CallKind = "lease-grant"
	CallLeaseKeepAlive CallKind = "lease-keepalive"
	CallLeaseRevoke    CallKind = "lease-revoke"
	// CallLeaseTimeToLive asks a lease's remaining TTL and, with Attached,
	// the keys attached to it (format 4).
	CallLeaseTimeToLive CallKind = "lease-ttl"
)

// Call is one such request: when it was sent and what came back. For a
// progress request, Return is when the request was handed to the stream
// (the answer comes on the watches); Error is set when it could not be.
type Call struct {
	ID     int64    `json:"id"`
	Client int      `json:"client"`
	Member string   `json:"member,omitempty"`
	Kind   CallKind `json:"kind"`
	// Watches are the ids of the client's watches that were open when the
	// call was sent (a progress request answers on them).
	Watches []int64       `json:"watches,omitempty"`
	Call    time.Duration `json:"call_ns"`
	Return  time.Duration `json:"return_ns"`
	// Lease is the lease's id (the one granted, kept alive or revoked);
	// TTL the one asked for (grant) or answered (grant, keep-alive).
	Lease int64 `json:"lease,omitempty"`
	TTL   int64 `json:"ttl,omitempty"`
	// Attached asks a time-to-live call for the lease's keys; Keys are
	// the keys it answered (format 4). A TTL of -1 answers a lease that
	// does not exist (expired or revoked).
	Attached bool     `json:"attached,omitempty"`
	Keys     []string `json:"keys,omitempty"`
	// Draw names the grammar productions the call was drawn from, as
	// Operation.Draw (format 4).
	Draw []string `json:"draw,omitempty"`
	// Revision is the header revision of the answer, where it has one.
	Revision int64     `json:"revision,omitempty"`
	Error    string    `json:"error,omitempty"`
	Code     ErrorCode `json:"code,omitempty"`
}

// Failed reports whether the call got an error instead of an answer.
func (c *Call) Failed() bool { return c.Error != "" }

// CallsOf returns the calls of kind k, in the order they were recorded.
func (h *History) CallsOf(k CallKind) []*Call {
	var out []*Call
	for i := range h.Calls {
		if h.Calls[i].Kind == k {
			out = append(out, &h.Calls[i])
		}
	}
	return out
}

// RecordsCalls reports whether the history's format records every call
// (format 2 on): in an older history, no call record does not mean no
// call was sent.
func (h *History) RecordsCalls() bool { return h.Meta.Format >= 2 }
