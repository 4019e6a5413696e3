package history

import (
	"strings"
	"time"
)

// The Kubernetes side of a history: requests to one namespaced resource of
// a Kubernetes API server (ConfigMaps by default) and the watch events it
// served. Resource versions are kept as the strings the server sent, since
// kube/rv-format judges exactly that string.

// KubeVerb names a Kubernetes API call.
type KubeVerb string

const (
	KubeCreate KubeVerb = "create"
	KubeGet    KubeVerb = "get"
	KubeList   KubeVerb = "list"
	KubeUpdate KubeVerb = "update"
	KubeDelete KubeVerb = "delete"
	// KubePatch is a PATCH of one object, of the request's PatchType.
	KubePatch KubeVerb = "patch"
	// KubeDeleteCollection deletes every object a selector picks, each
	// with its own DELETED event.
	KubeDeleteCollection KubeVerb = "deletecollection"
)

// IsWrite reports whether a call of this verb can change the collection.
// A dry run is still a write call: that it changed nothing is for the
// checks to judge.
func (v KubeVerb) IsWrite() bool {
	return v == KubeCreate || v == KubeUpdate || v == KubeDelete || v == KubePatch || v == KubeDeleteCollection
}

// Patch types (the PATCH request's Content-Type).
const (
	PatchJSON      = "json"      // application/json-patch+json (RFC 6902)
	PatchMerge     = "merge"     // application/merge-patch+json (RFC 7386)
	PatchStrategic = "strategic" // application/strategic-merge-patch+json (built-in types only)
	PatchApply     = "apply"     // application/apply-patch+yaml: server-side apply
)

// SubresourceStatus is the status subresource of a custom resource.
const SubresourceStatus = "status"

// Object is the part of a Kubernetes object vigil looks at.
type Object struct {
	Name            string `json:"name"`
	UID             string `json:"uid,omitempty"`
	ResourceVersion string `json:"rv,omitempty"`
	// Value is the object's data["value"]: unique per write, so an observed
	// value names the write that produced it.
	Value  string            `json:"value,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	// GenerateName is a create's metadata.generateName (Name then empty):
	// the server picks the name.
	GenerateName string `json:"generate_name,omitempty"`
	// Finalizers, DeletionTimestamp and Generation are the metadata
	// fields of the same names: an object with finalizers is only marked
	// by a delete (DeletionTimestamp set) until the last one is removed;
	// Generation moves with the object's spec (data), not its status.
	Finalizers        []string `json:"finalizers,omitempty"`
	DeletionTimestamp string   `json:"deletion_ts,omitempty"`
	Generation        int64    `json:"generation,omitempty"`
	// Status is status.value of a custom resource with a status
	// subresource: its own unique value per status write.
	Status string `json:"status,omitempty"`
	// Annotations are kept only where a check needs them (the
	// k8s.io/initial-events-end annotation of a BOOKMARK).
	Annotations map[string]string `json:"annotations,omitempty"`
}

// KubeRequest is the input of one Kubernetes API call. Empty strings are
// query parameters that were not sent.
type KubeRequest struct {
	Verb KubeVerb `json:"verb"`
	// Name is the object's name (get, update, delete; create takes it from Object).
	Name                 string `json:"name,omitempty"`
	ResourceVersion      string `json:"rv,omitempty"`
	ResourceVersionMatch string `json:"rv_match,omitempty"`
	Limit                int64  `json:"limit,omitempty"`
	Continue             string `json:"continue,omitempty"`
	LabelSelector        string `json:"label_selector,omitempty"`
	// FieldSelector is a list's, watch's or delete-collection's
	// fieldSelector (e.g. metadata.name=x).
	FieldSelector string `json:"field_selector,omitempty"`
	// Object is the body of create and update; for update its
	// ResourceVersion is the optimistic-concurrency precondition (none:
	// the update is unconditional). For a patch it is what the patch sets,
	// for the checks to read without parsing Patch: the name, the value
	// (each patch sets a unique data value or status value), and the
	// labels or finalizers when it sets them.
	Object *Object `json:"object,omitempty"`
	// PatchType and Patch are a patch's type and its body exactly as
	// sent (JSON, or YAML for apply). A precondition inside the body (a
	// metadata.resourceVersion or uid) is in the body, as the server sees it.
	PatchType string `json:"patch_type,omitempty"`
	Patch     string `json:"patch,omitempty"`
	// FieldManager and Force are server-side apply's (and any write's
	// fieldManager query parameter).
	FieldManager string `json:"field_manager,omitempty"`
	Force        bool   `json:"force,omitempty"`
	// DryRun is dryRun=All: the server must validate and answer as if it
	// wrote, and change nothing anyone can see.
	DryRun bool `json:"dry_run,omitempty"`
	// Subresource is "status" for a write or read of the status
	// subresource; empty for the object itself.
	Subresource string `json:"subresource,omitempty"`
	// PreconditionRV and PreconditionUID are a delete's preconditions.
	PreconditionRV  string `json:"precondition_rv,omitempty"`
	PreconditionUID string `json:"precondition_uid,omitempty"`
}

// KubeStatus is a metav1.Status the server answered with (an error code,
// or the object of a watch ERROR event).
type KubeStatus struct {
	Code    int    `json:"code"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Causes are the types of the Status's details.causes, e.g.
	// "ResourceVersionTooLarge" on the 504 that answers a future RV
	// (added for kube/future-rv).
	Causes []string `json:"causes,omitempty"`
	// Fields are the details.causes[].field of the Status: on an apply
	// conflict (409 with FieldManagerConflict causes), the fields owned
	// by another manager.
	Fields []string `json:"fields,omitempty"`
	// Continue is the Status's metadata.continue: the fresh, inconsistent
	// continue token a 410 on an expired continue token carries (added for
	// kube/continue-expired).
	Continue string `json:"continue,omitempty"`
}

// KubeResponse is a successful answer (HTTP 2xx).
type KubeResponse struct {
	Code int `json:"code"`
	// Object answers create, get, update and delete.
	Object *Object `json:"object,omitempty"`
	// Items, ListRV, Continue and RemainingItemCount answer list; Items
	// also answers delete-collection (the objects it deleted, as the
	// server returned them).
	Items              []Object `json:"items,omitempty"`
	ListRV             string   `json:"list_rv,omitempty"`
	Continue           string   `json:"continue,omitempty"`
	RemainingItemCount *int64   `json:"remaining,omitempty"`
}

// KubeOperation is one Kubernetes API call. Exactly one of Response,
// Status and Error is set: Status when the server answered with an error
// code (a definite answer), Error when no answer came (the outcome of a
// write is then unknown).
type KubeOperation struct {
	ID     int64  `json:"id"`
	Client int    `json:"client"`
	Server string `json:"server,omitempty"`
	// Call and Return are read from the run's clock.
	Call     time.Duration `json:"call_ns"`
	Return   time.Duration `json:"return_ns"`
	Request  KubeRequest   `json:"request"`
	Response *KubeResponse `json:"response,omitempty"`
	Status   *KubeStatus   `json:"status,omitempty"`
	Error    string        `json:"error,omitempty"`
}

// NeverSent reports whether the call failed before its request left the
// client: the TCP connection to the server was refused, so no server saw
// it, and a write that failed so surely did not happen.
func (o *KubeOperation) NeverSent() bool {
	return o.Response == nil && o.Status == nil && strings.Contains(o.Error, "dial tcp") &&
		strings.Contains(o.Error, "connect: connection refused")
}

// KubeWatchRequest is what a Kubernetes watch asked for. Nil booleans were
// not sent.
type KubeWatchRequest struct {
	ResourceVersion      string `json:"rv,omitempty"`
	ResourceVersionMatch string `json:"rv_match,omitempty"`
	AllowBookmarks       bool   `json:"allow_bookmarks,omitempty"`
	SendInitialEvents    *bool  `json:"send_initial_events,omitempty"`
	TimeoutSeconds       int64  `json:"timeout_seconds,omitempty"`
	LabelSelector        string `json:"label_selector,omitempty"`
	FieldSelector        string `json:"field_selector,omitempty"`
	// Continue is sent only by the watchlist-validation probes.
	Continue string `json:"continue,omitempty"`
}

// KubeWatch is the opening of one Kubernetes watch.
type KubeWatch struct {
	ID     int64         `json:"id"`
	Client int           `json:"client"`
	Server string        `json:"server,omitempty"`
	Call   time.Duration `json:"call_ns"`
	// Resumes is the ID of the watch this one continues from its last RV; 0 if none.
	Resumes int64 `json:"resumes,omitempty"`
	// AfterList is the ID of the list operation whose RV this watch starts from; 0 if none.
	AfterList int64            `json:"after_list,omitempty"`
	Request   KubeWatchRequest `json:"request"`
}

// Kubernetes watch event types.
const (
	KubeAdded    = "ADDED"
	KubeModified = "MODIFIED"
	KubeDeleted  = "DELETED"
	KubeBookmark = "BOOKMARK"
	KubeError    = "ERROR"
)

// AnnotationInitialEventsEnd marks the BOOKMARK that ends a streaming list's initial events.
const AnnotationInitialEventsEnd = "k8s.io/initial-events-end"

// KubeEvent is one event received on a Kubernetes watch.
type KubeEvent struct {
	Watch int64         `json:"watch"`
	Time  time.Duration `json:"time_ns"`
	Type  string        `json:"type"`
	// Object is set for every type but ERROR; Status for ERROR.
	Object *Object     `json:"object,omitempty"`
	Status *KubeStatus `json:"status,omitempty"`
}

// KubeEventAt is an event with its place in its watch: Index counts the
// watch's events from 0, in arrival order. Violations cite events this way.
type KubeEventAt struct {
	Index int       `json:"index"`
	Event KubeEvent `json:"event"`
}

// KubeWatchEnd records how a Kubernetes watch ended, as the client saw it.
type KubeWatchEnd struct {
	Watch int64         `json:"watch"`
	Time  time.Duration `json:"time_ns"`
	// Reason: EndClient (vigil closed it), EndServer (the server closed the
	// stream cleanly, e.g. at timeoutSeconds), EndError (it broke, or was refused).
	Reason WatchEndReason `json:"reason"`
	// Status is set when the server refused the watch with an HTTP error
	// (e.g. 400 for an invalid request, 410 from some servers).
	Status *KubeStatus `json:"status,omitempty"`
	Error  string      `json:"error,omitempty"`
}

// KubeWatchStream is one Kubernetes watch with everything it received.
type KubeWatchStream struct {
	KubeWatch
	Events []KubeEvent
	// End is nil when the history does not say how the watch ended.
	End *KubeWatchEnd
}

// KubeWatchByID returns the Kubernetes watch with the given id, or nil.
func (h *History) KubeWatchByID(id int64) *KubeWatchStream {
	if h.kubeWatchIndex == nil || len(h.kubeWatchIndex) != len(h.KubeWatches) {
		h.kubeWatchIndex = map[int64]*KubeWatchStream{}
		for _, w := range h.KubeWatches {
			h.kubeWatchIndex[w.ID] = w
		}
	}
	return h.kubeWatchIndex[id]
}
