// Package history holds what a vigil run recorded: KV operations, watch
// streams, fault intervals and run metadata. Every other package speaks it;
// it imports none of them.
//
// Times are durations since the run's base time, read from one monotonic
// clock (see Clock). Writes carry unique values so that an observed value
// names the write that produced it.
package history

import "time"

// FormatVersion is the version of the JSON-lines encoding. It is written in
// the meta record; a loader refuses histories of a newer version and reads
// every older one. Format 2 added call records (progress requests, lease
// calls): a format-1 history sent them unrecorded. Format 3 added segments
// (Segment, the segment marks): a long run cut into parts judged one by one.
// Format 4 added the rest of the etcd API's grammar: every range option
// (sort, the revision filters), put's ignore_value and ignore_lease, nested
// txns, compares on lease and over a key range, physical compaction, the
// lease time-to-live call, the definite errors that come with them
// (key-not-found, lease-not-found, invalid), and the productions a request
// was drawn from (Draw). Format 5 added the Kubernetes write paths
// controllers use: patch in its four types (server-side apply with field
// managers and force), delete-collection, dryRun, the status subresource,
// generateName, fieldSelector, and the object fields they move
// (finalizers, deletionTimestamp, generation, status).
const FormatVersion = 5

// OpKind names an etcd v3 API call.
type OpKind string

const (
	OpRange   OpKind = "range"
	OpPut     OpKind = "put"
	OpDelete  OpKind = "delete"
	OpTxn     OpKind = "txn"
	OpCompact OpKind = "compact"
	OpStatus  OpKind = "status"
	OpHashKV  OpKind = "hashkv"
	// OpDefrag defragments one member's backend (Maintenance.Defragment);
	// it changes no key and answers from that member alone.
	OpDefrag OpKind = "defrag"
	// OpLeaseGrant and OpLeaseRevoke are lease calls the model judges
	// (format 4): a grant makes a lease that puts may attach keys to, a
	// revoke deletes the keys attached, in one revision when there are
	// any. Leases the workload keeps in the background (granted for the
	// whole run, revoked with no key attached) are calls instead.
	OpLeaseGrant  OpKind = "lease-grant"
	OpLeaseRevoke OpKind = "lease-revoke"
)

// IsWrite reports whether an operation of this kind can change the store.
func (k OpKind) IsWrite() bool {
	return k == OpPut || k == OpDelete || k == OpTxn || k == OpLeaseRevoke
}

// KV is one key-value pair as the server returned it.
type KV struct {
	Key            string `json:"key"`
	Value          string `json:"value,omitempty"`
	CreateRevision int64  `json:"create_revision,omitempty"`
	ModRevision    int64  `json:"mod_revision,omitempty"`
	Version        int64  `json:"version,omitempty"`
}

// Compare is one condition of a Txn.
type Compare struct {
	Key string `json:"key"`
	// End, when set, makes the compare hold over every key in [Key, End)
	// ("\x00": every key from Key on); format 4.
	End string `json:"end,omitempty"`
	// Target is what is compared: "mod", "create", "version", "value" or
	// "lease" (format 4).
	Target string `json:"target"`
	// Result is the operator: "=", "!=", "<" or ">".
	Result string `json:"result"`
	// Int is the operand for mod, create, version and lease; Value for value.
	Int   int64  `json:"int,omitempty"`
	Value string `json:"value,omitempty"`
}

// The compare targets.
const (
	CompareMod     = "mod"
	CompareCreate  = "create"
	CompareVersion = "version"
	CompareValue   = "value"
	CompareLease   = "lease"
)

// The sort orders and targets of a range (RangeRequest.sort_order and
// sort_target); "" is etcd's default (none; key).
const (
	SortAscend  = "ascend"
	SortDescend = "descend"

	SortByKey     = "key"
	SortByVersion = "version"
	SortByCreate  = "create"
	SortByMod     = "mod"
	SortByValue   = "value"
)

// Request is the input of an operation. Fields apply by Kind; a Txn's
// branches are Requests of kind range, put, delete or (format 4) txn.
type Request struct {
	Kind OpKind `json:"kind"`
	Key  string `json:"key,omitempty"`
	// End is the exclusive range end; empty means the single key Key.
	End          string `json:"end,omitempty"`
	Value        string `json:"value,omitempty"`
	Limit        int64  `json:"limit,omitempty"`
	Revision     int64  `json:"revision,omitempty"`
	Serializable bool   `json:"serializable,omitempty"`
	KeysOnly     bool   `json:"keys_only,omitempty"`
	CountOnly    bool   `json:"count_only,omitempty"`
	PrevKV       bool   `json:"prev_kv,omitempty"`
	// Lease attaches a put to a lease (its id, from a lease-grant call).
	Lease int64 `json:"lease,omitempty"`

	// Format 4. A range's sort (SortAscend, SortDescend; by SortByKey,
	// SortByVersion, ...) and its filters on the returned keys' mod and
	// create revisions (0: no bound).
	SortOrder         string `json:"sort_order,omitempty"`
	SortTarget        string `json:"sort_target,omitempty"`
	MinModRevision    int64  `json:"min_mod_revision,omitempty"`
	MaxModRevision    int64  `json:"max_mod_revision,omitempty"`
	MinCreateRevision int64  `json:"min_create_revision,omitempty"`
	MaxCreateRevision int64  `json:"max_create_revision,omitempty"`
	// A put that keeps the key's current value (Value is then empty) or
	// its current lease; either fails with key-not-found on a missing key.
	IgnoreValue bool `json:"ignore_value,omitempty"`
	IgnoreLease bool `json:"ignore_lease,omitempty"`
	// Physical: a compaction that answers once its revisions are removed.
	Physical bool `json:"physical,omitempty"`
	// TTL is a lease grant's, in seconds; a grant's Lease, when not 0, is
	// the id asked for.
	TTL int64 `json:"ttl,omitempty"`

	Compares []Compare `json:"compares,omitempty"`
	Success  []Request `json:"success,omitempty"`
	Failure  []Request `json:"failure,omitempty"`
}

// Response is the output of a successful operation.
type Response struct {
	// Revision is the header revision: the store revision the answer reflects.
	Revision int64  `json:"revision"`
	MemberID uint64 `json:"member_id,omitempty"`
	RaftTerm uint64 `json:"raft_term,omitempty"`

	KVs   []KV  `json:"kvs,omitempty"`
	Count int64 `json:"count,omitempty"`
	More  bool  `json:"more,omitempty"`

	Deleted int64 `json:"deleted,omitempty"`
	PrevKVs []KV  `json:"prev_kvs,omitempty"`

	// Succeeded and Responses answer a txn: one response per request of
	// the branch taken, a nested txn's with its own Succeeded and Responses.
	Succeeded bool       `json:"succeeded,omitempty"`
	Responses []Response `json:"responses,omitempty"`

	// Lease and TTL answer a lease grant: the id granted and its TTL.
	Lease int64 `json:"lease,omitempty"`
	TTL   int64 `json:"ttl,omitempty"`

	// CompactRevision and Hash answer HashKV; Status fills CompactRevision
	// too where the server reports it.
	CompactRevision int64  `json:"compact_revision,omitempty"`
	Hash            uint32 `json:"hash,omitempty"`
}

// ErrorCode classifies an error so checkers need not parse messages.
type ErrorCode string

const (
	// ErrCompacted: the requested revision has been compacted. A definite answer.
	ErrCompacted ErrorCode = "compacted"
	// ErrFutureRevision: the requested revision is above the store's. A definite answer.
	ErrFutureRevision ErrorCode = "future-revision"
	// ErrRefused: the server declined the request as one it does not
	// implement (gRPC Unimplemented, or an error saying "not supported").
	// An answer, so the system was available; checkers still treat a
	// refused write as one that may have been applied, which can hide a
	// violation but never invent one.
	ErrRefused ErrorCode = "refused"
	// ErrKeyNotFound: a put with ignore_value or ignore_lease found no key
	// to keep the value or lease of (format 4). A definite answer: nothing
	// of the request was applied.
	ErrKeyNotFound ErrorCode = "key-not-found"
	// ErrLeaseNotFound: a put named a lease that does not exist (format 4).
	// A definite answer: nothing of the request was applied.
	ErrLeaseNotFound ErrorCode = "lease-not-found"
	// ErrInvalid: the server refused the request as malformed whatever
	// the store holds (gRPC InvalidArgument: a key written twice in a
	// txn, too many operations, ignore_value with a value; format 4). A
	// definite answer: nothing was applied.
	ErrInvalid ErrorCode = "invalid"
	// ErrUnknown: anything else (timeout, lost leader, connection reset). For
	// a write the outcome is unknown: it may or may not have been applied.
	ErrUnknown ErrorCode = "unknown"
)

// Operation is one KV call: its request, its response or error, and the
// interval in which it happened.
type Operation struct {
	ID     int64  `json:"id"`
	Client int    `json:"client"`
	Member string `json:"member,omitempty"`
	// Call and Return are read from the run's clock, before sending and after
	// the answer arrived.
	Call     time.Duration `json:"call_ns"`
	Return   time.Duration `json:"return_ns"`
	Request  Request       `json:"request"`
	Response *Response     `json:"response,omitempty"`
	Error    string        `json:"error,omitempty"`
	Code     ErrorCode     `json:"code,omitempty"`
	// Draw names the productions of the API's grammar the request was
	// drawn from, and the value class of each field the request alone
	// does not tell (format 4): "range.revision=compact" says the
	// revision was the compact revision when it was sent.
	Draw []string `json:"draw,omitempty"`
}

// Failed reports whether the operation got no response.
func (o *Operation) Failed() bool { return o.Response == nil }

// Definite reports whether the operation failed with an answer that says
// what happened: a read or compaction refused at its revision, or a
// write the server refused without applying any of it (a range of the
// txn at a compacted or future revision, a missing key or lease, a
// malformed request). ErrRefused is not definite: a refused write is
// treated as one that may have been applied.
func (o *Operation) Definite() bool { return o.Failed() && o.Code.Definite() }

// Definite reports whether an error of this code says the request took
// no effect (see Operation.Definite).
func (c ErrorCode) Definite() bool {
	switch c {
	case ErrCompacted, ErrFutureRevision, ErrKeyNotFound, ErrLeaseNotFound, ErrInvalid:
		return true
	}
	return false
}

// WatchRequest is what a watch asked for.
type WatchRequest struct {
	Key string `json:"key"`
	// End is the exclusive range end; empty means the single key Key.
	End string `json:"end,omitempty"`
	// StartRevision 0 means "from the current revision on".
	StartRevision  int64 `json:"start_revision,omitempty"`
	PrevKV         bool  `json:"prev_kv,omitempty"`
	ProgressNotify bool  `json:"progress_notify,omitempty"`
	Fragment       bool  `json:"fragment,omitempty"`
	NoPut          bool  `json:"no_put,omitempty"`
	NoDelete       bool  `json:"no_delete,omitempty"`
}

// Watch is the opening of one watch stream.
type Watch struct {
	ID     int64         `json:"id"`
	Client int           `json:"client"`
	Member string        `json:"member,omitempty"`
	Call   time.Duration `json:"call_ns"`
	// Resumes is the ID of the watch this one continues (started from the
	// revision after the last one that watch saw); 0 if none.
	Resumes int64        `json:"resumes,omitempty"`
	Request WatchRequest `json:"request"`
	// Draw names the grammar productions the watch was drawn from (its
	// start's class, each option), and "pattern=NAME" when a placement
	// and timing pattern opened it; as Operation.Draw (format 4).
	Draw []string `json:"draw,omitempty"`
}

// EventType is PUT or DELETE.
type EventType string

const (
	EventPut    EventType = "PUT"
	EventDelete EventType = "DELETE"
)

// Event is one change delivered on a watch.
type Event struct {
	Type     EventType `json:"type"`
	KV       KV        `json:"kv"`
	PrevKV   *KV       `json:"prev_kv,omitempty"`
	IsCreate bool      `json:"is_create,omitempty"`
}

// Revision is the revision of the change the event reports.
func (e Event) Revision() int64 { return e.KV.ModRevision }

// WatchResponse is one message received on a watch stream.
type WatchResponse struct {
	Watch int64         `json:"watch"`
	Time  time.Duration `json:"time_ns"`
	// Revision is the header revision.
	Revision        int64   `json:"revision"`
	Events          []Event `json:"events,omitempty"`
	Created         bool    `json:"created,omitempty"`
	Progress        bool    `json:"progress,omitempty"`
	Canceled        bool    `json:"canceled,omitempty"`
	CancelReason    string  `json:"cancel_reason,omitempty"`
	CompactRevision int64   `json:"compact_revision,omitempty"`
	Error           string  `json:"error,omitempty"`
}

// WatchEndReason says who ended a watch stream.
type WatchEndReason string

const (
	// EndClient: vigil closed the watch (end of run, or to resume it elsewhere).
	EndClient WatchEndReason = "client"
	// EndServer: the server canceled it (the last response says why).
	EndServer WatchEndReason = "server"
	// EndError: the stream broke with an error.
	EndError WatchEndReason = "error"
)

// QuietClose is the Error of a WatchEnd whose stream closed with neither
// a cancel response nor an error: an ending the etcd watch API does not
// have (facts.WatchEnding classifies it as unexplained).
const QuietClose = "stream closed without a cancel reason or error"

// WatchEnd records how and when a watch stream ended, as the client saw it.
type WatchEnd struct {
	Watch  int64          `json:"watch"`
	Time   time.Duration  `json:"time_ns"`
	Reason WatchEndReason `json:"reason"`
	Error  string         `json:"error,omitempty"`
}

// Fault is the interval of one injected fault.
type Fault struct {
	ID      int64             `json:"id"`
	Name    string            `json:"name"`
	Targets []string          `json:"targets,omitempty"`
	Start   time.Duration     `json:"start_ns"`
	End     time.Duration     `json:"end_ns"`
	Details map[string]string `json:"details,omitempty"`
}

// Mark names a moment of the run that checkers rely on.
type Mark struct {
	Name string        `json:"name"`
	Time time.Duration `json:"time_ns"`
	// Op and Revision locate the mark in the history, where they apply.
	Op       int64 `json:"op,omitempty"`
	Revision int64 `json:"revision,omitempty"`
	// Segment is set on the segment marks (MarkSegment, MarkSegmentEnd).
	Segment *Segment `json:"segment,omitempty"`
}

// Mark names.
const (
	// MarkFinalWrite: the last write of the run, acknowledged at Revision.
	// Every watch still open must reach it.
	MarkFinalWrite = "final-write"
	// MarkConvergence: every member's Status and HashKV were read (the ops
	// just before it), once the members agreed on a revision or the bound ran out.
	MarkConvergence = "convergence"
	// MarkEnd: the workload finished normally and every watch was closed.
	// A history without it was cut short.
	MarkEnd = "end"
	// MarkStopped: vigil stopped the workload early (--fail-fast found a
	// violation, or a server died that no fault would start again): the
	// requests then in flight were canceled by vigil, not left unanswered
	// by the system, and the run has no final phase.
	MarkStopped = "stopped"
)

// FinalKey is the key, under the run's prefix, of the final write; after
// it the workload reads that key linearizably to show the system healthy
// at its end (run/availability).
const FinalKey = "final"

// Target describes the system under test.
type Target struct {
	Kind      string   `json:"kind"`
	Fixture   string   `json:"fixture"`
	Version   string   `json:"version,omitempty"`
	Members   int      `json:"members,omitempty"`
	Endpoints []string `json:"endpoints,omitempty"`
}

// LimitationNoVersions: the target keeps no per-key version (every
// version it returns is 0).
const LimitationNoVersions = "no-versions"

// LimitationNoSizeLimit: the target accepts requests of any size, where
// etcd refuses those over its limit (1.5 MiB by default).
const LimitationNoSizeLimit = "no-size-limit"

// Meta is the first record of every history.
type Meta struct {
	Format   int               `json:"format"`
	Vigil    string            `json:"vigil"`
	Target   Target            `json:"target"`
	Seed     int64             `json:"seed"`
	Started  time.Time         `json:"started"` // wall clock, for people only
	Prefix   string            `json:"prefix"`  // every key the workload touches starts with it
	Flags    map[string]string `json:"flags,omitempty"`
	Supports []string          `json:"supports,omitempty"` // what the target declared it supports
	// Limitations are departures from etcd that the target documents
	// (LimitationNoVersions, ...), with where it says so; checks report
	// what they alone explain as a documented limitation.
	Limitations map[string]string `json:"limitations,omitempty"`
	// Profile is what the run held the target to ("" or "etcd": the whole
	// API; "kubernetes": what Kubernetes relies on); checks outside it are
	// reported but do not decide the verdict.
	Profile string `json:"profile,omitempty"`
	// Refuses names what the target refused when asked before the run,
	// with its words: request forms (FormOf, WatchForms, call kinds) and
	// the capabilities histories named before forms were probed (CapDelete,
	// CapTxn, CapHashKV, CapSerializable), which checks read.
	Refuses map[string]string `json:"refuses,omitempty"`
	// Productions lists the grammar productions (Operation.Draw) the
	// workload could draw: those its shape reaches that the target did
	// not refuse before the run. A report lists the ones never drawn
	// (format 4).
	Productions []string `json:"productions,omitempty"`
	// KubeForms lists the Kubernetes verbs and options (KubeForms) the
	// workload could send, for a report to list the ones never sent.
	KubeForms []string `json:"kube_forms,omitempty"`
	// Segment, in the history of one segment of a segmented run (see
	// Segmenter), places it in the run; nil in a whole history.
	Segment *Segment `json:"segment,omitempty"`
	// Processes are the processes vigil started and watched for exits
	// it did not ask for (ServerExit records), by name; empty where it
	// watched none (a system it does not run) and in older histories.
	Processes []string `json:"processes,omitempty"`
}
