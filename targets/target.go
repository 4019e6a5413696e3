// Package targets holds the client adapters vigil drives a system under test
// through. An adapter (targets/etcd, later the Kubernetes one) translates
// history requests into the system's API; Recording wraps any adapter and
// puts every call and every watch message into the history. Sabotage
// wrappers sit between the two, so the history records what clients saw.
package targets

import (
	"context"
	"errors"

	"github.com/vigil-suite/vigil/history"
)

// Client is one connection to one member of an etcd-API system. A client is
// used by one workload goroutine at a time for Do; watches may run beside.
type Client interface {
	// Do runs one KV request. Errors should be *OpError where the adapter
	// can classify them.
	Do(ctx context.Context, req history.Request) (*history.Response, error)
	// Watch opens a watch stream. The channel carries every response and is
	// closed when the stream ends; the last message says why (Err or a
	// canceled response). Canceling ctx closes the stream.
	Watch(ctx context.Context, req history.WatchRequest) <-chan WatchMessage
	// RequestProgress asks the server for a progress notification on the
	// watch streams of this client.
	RequestProgress(ctx context.Context) error
	// Lease makes one call of the Lease service. Errors should be
	// *OpError where the adapter can classify them.
	Lease(ctx context.Context, req LeaseRequest) (LeaseAnswer, error)
	// Member is the endpoint this client talks to.
	Member() string
	Close() error
}

// LeaseRequest is one call of the Lease service: Kind is
// history.CallLeaseGrant (TTL asked for; ID 0 lets the server choose),
// CallLeaseKeepAlive (one keep-alive of lease ID), CallLeaseRevoke (lease
// ID) or CallLeaseTimeToLive (lease ID, with its keys when Attached).
type LeaseRequest struct {
	Kind     history.CallKind
	ID, TTL  int64
	Attached bool
}

// LeaseAnswer is what a lease call answered: the lease's id, its TTL in
// seconds (grant, keep-alive, time-to-live: -1 for a lease that does not
// exist), the keys attached (time-to-live with Attached) and the header
// revision.
type LeaseAnswer struct {
	ID, TTL, Revision int64
	Keys              []string
}

// WatchMessage is one message of a watch stream, without vigil's ids and
// times (Recording adds them).
type WatchMessage struct {
	Response history.WatchResponse
	// Err is set when the stream broke; it is the last message.
	Err error
}

// Feature names what a target supports, so checks that need something the
// target lacks say "skipped: unsupported by target".
type Feature string

const (
	FeatureKV             Feature = "kv"
	FeatureTxn            Feature = "txn"
	FeatureCompact        Feature = "compact"
	FeatureWatch          Feature = "watch"
	FeatureWatchPrevKV    Feature = "watch-prev-kv"
	FeatureProgressNotify Feature = "watch-progress-notify"
	FeatureWatchFilters   Feature = "watch-filters"
	FeatureHashKV         Feature = "hashkv"
)

// OpError is an error classified for the history.
type OpError struct {
	Code history.ErrorCode
	Err  error
}

func (e *OpError) Error() string { return e.Err.Error() }
func (e *OpError) Unwrap() error { return e.Err }

// CodeOf classifies err; unclassified errors have an unknown outcome.
func CodeOf(err error) history.ErrorCode {
	var oe *OpError
	if errors.As(err, &oe) {
		return oe.Code
	}
	return history.ErrUnknown
}

// Forwarder hands watch messages to the caller of a Watch until the caller
// closes it (cancels its ctx); from then on it drops everything. What the
// caller took is thus always a prefix of the stream. A bare select between
// a free slot in the channel and a done ctx picks at random, so it could
// drop one message and still deliver the next: a gap the watch checks
// would rightly call a missed event.
type Forwarder struct{ dropping bool }

// Send delivers m unless the caller has closed the watch, and reports
// whether it did. Use one Forwarder per stream, from one goroutine.
func (f *Forwarder) Send(ctx context.Context, out chan<- WatchMessage, m WatchMessage) bool {
	if f.dropping || ctx.Err() != nil {
		f.dropping = true
		return false
	}
	select {
	case out <- m:
		return true
	case <-ctx.Done():
		f.dropping = true
		return false
	}
}
