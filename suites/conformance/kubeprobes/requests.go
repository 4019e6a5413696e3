package kubeprobes

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"sync"

	"github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/suites/conformance"
	"github.com/vigil-suite/vigil/targets/kube"
)

// K is what a Kubernetes probe runs with: a namespace of its own, a
// recorded client and gomega assertions that end the probe on the first
// failure.
type K struct {
	gomega.Gomega
	Ctx context.Context
	// NS is the probe's own namespace.
	NS string
	// Res is the resource probed; Custom reports whether it is a custom
	// resource (served by the apiextensions server).
	Res    kube.Resource
	Custom bool

	cfg     Config
	c       *kube.Client
	rec     *recorder
	watches int
}

// KResp is an answer: the HTTP code and the decoded body (an object, a
// list or a Status).
type KResp struct {
	Code int
	KObj
}

// KObj is the part of an object, list or Status the probes look at.
type KObj struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name               string            `json:"name"`
		UID                string            `json:"uid"`
		ResourceVersion    string            `json:"resourceVersion"`
		Labels             map[string]string `json:"labels"`
		Annotations        map[string]string `json:"annotations"`
		Continue           string            `json:"continue"`
		RemainingItemCount *int64            `json:"remainingItemCount"`
		CreationTimestamp  string            `json:"creationTimestamp"`
		GenerateName       string            `json:"generateName"`
		Finalizers         []string          `json:"finalizers"`
		DeletionTimestamp  string            `json:"deletionTimestamp"`
		Generation         int64             `json:"generation"`
		ManagedFields      []struct {
			Manager   string `json:"manager"`
			Operation string `json:"operation"`
		} `json:"managedFields"`
	} `json:"metadata"`
	Data  map[string]string `json:"data"`
	Items []KObj            `json:"items"`
	// StatusField is an object's status (a map of strings on the custom
	// resource) or a Status's status ("Failure"): raw, see ObjStatus.
	StatusField json.RawMessage `json:"status"`
	// A Status's fields.
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Details *struct {
		Causes []struct {
			Reason string `json:"reason"`
			Field  string `json:"field"`
		} `json:"causes"`
	} `json:"details"`
}

// RV is the object's (or list's) resourceVersion.
func (o KObj) RV() string { return o.Metadata.ResourceVersion }

// Value is data["value"].
func (o KObj) Value() string { return o.Data[kube.ValueKey] }

// Names lists the items' names, in order.
func (o KObj) Names() []string {
	out := []string{}
	for _, it := range o.Items {
		out = append(out, it.Metadata.Name)
	}
	return out
}

// Causes lists a Status's cause reasons.
func (o KObj) Causes() []string {
	var out []string
	if o.Details != nil {
		for _, c := range o.Details.Causes {
			out = append(out, c.Reason)
		}
	}
	return out
}

// ObjStatus is an object's status map (nil when it has none).
func (o KObj) ObjStatus() map[string]string {
	var m map[string]string
	_ = json.Unmarshal(o.StatusField, &m)
	return m
}

// Managers lists the field managers of the object's managedFields, in
// order.
func (o KObj) Managers() []string {
	out := []string{}
	for _, m := range o.Metadata.ManagedFields {
		out = append(out, m.Manager+":"+m.Operation)
	}
	return out
}

// CauseFields lists a Status's causes as "reason field".
func (o KObj) CauseFields() []string {
	var out []string
	if o.Details != nil {
		for _, c := range o.Details.Causes {
			out = append(out, c.Reason+" "+c.Field)
		}
	}
	return out
}

// RVNum reads a resourceVersion as the number every known server uses;
// the probe fails if it is not one.
func (k *K) RVNum(rv string) int64 {
	n, err := strconv.ParseInt(rv, 10, 64)
	k.Expect(err).NotTo(gomega.HaveOccurred(), "resourceVersion %q is not a number", rv)
	return n
}

// Skip ends the probe as skipped, with the reason.
func (k *K) Skip(reason string) { conformance.SkipProbe(reason) }

// Q builds a query from key, value pairs.
func Q(kv ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return q
}

// Obj is the body of a create or update: the resource's kind with name,
// data["value"] and labels; rv, if not "", as metadata.resourceVersion.
func (k *K) Obj(name, value, rv string, labels map[string]string) map[string]any {
	meta := map[string]any{"name": name}
	if rv != "" {
		meta["resourceVersion"] = rv
	}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	o := map[string]any{"apiVersion": apiVersionOf(k.Res), "kind": k.Res.Kind, "metadata": meta}
	if value != "" {
		o["data"] = map[string]string{kube.ValueKey: value}
	}
	return o
}

func apiVersionOf(r kube.Resource) string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// Call sends one recorded request on the probe's collection: name "" is
// the collection itself. It fails the probe only if no answer came.
func (k *K) Call(verb, method, name string, q url.Values, body any) KResp {
	return k.Send(Req{Verb: verb, Method: method, Name: name, Query: q, Body: body})
}

// Req is one request of a probe, for the verbs Call does not cover: a
// patch (its content type), a subresource.
type Req struct {
	Verb, Method, Name string
	// Sub is a subresource ("status"), after the name.
	Sub   string
	Query url.Values
	Body  any
	// ContentType, if set, replaces application/json (a patch's type).
	ContentType string
}

// Patch content types, as the API server takes them.
const (
	JSONPatch      = "application/json-patch+json"
	MergePatch     = "application/merge-patch+json"
	StrategicPatch = "application/strategic-merge-patch+json"
	ApplyPatch     = "application/apply-patch+yaml"
)

// Send sends one recorded request; it fails the probe only if no answer
// came.
func (k *K) Send(rq Req) KResp {
	verb, method, q, body := rq.Verb, rq.Method, rq.Query, rq.Body
	path := k.Res.CollectionPath(k.NS)
	if rq.Name != "" {
		path += "/" + url.PathEscape(rq.Name)
	}
	if rq.Sub != "" {
		path += "/" + rq.Sub
	}
	ctx := k.Ctx
	if rq.ContentType != "" {
		ctx = context.WithValue(ctx, contentTypeKey{}, rq.ContentType)
	}
	resp, err := k.c.Raw(ctx, method, path, q, body)
	k.Expect(err).NotTo(gomega.HaveOccurred(), "%s %s: no answer", method, path)
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	k.Expect(err).NotTo(gomega.HaveOccurred(), "%s %s: reading the answer", method, path)
	var out KResp
	out.Code = resp.StatusCode
	if json.Unmarshal(raw, &out.KObj) != nil {
		out.Reason = "undecodable answer: " + trimTo(string(raw), 200)
	}
	k.rec.add(rawStep{call: verb, method: method, path: path, query: q, body: body, ctype: rq.ContentType, code: resp.StatusCode, answer: raw})
	return out
}

// Patch sends a patch of type ctype to name (sub: a subresource, or "").
func (k *K) Patch(name, sub, ctype string, q url.Values, body any) KResp {
	return k.Send(Req{Verb: "PATCH", Method: http.MethodPatch, Name: name, Sub: sub, Query: q, Body: body, ContentType: ctype})
}

// Apply sends a server-side apply of obj to name as manager (force: take
// the fields other managers own).
func (k *K) Apply(name, manager string, force bool, obj map[string]any) KResp {
	q := Q("fieldManager", manager)
	if force {
		q.Set("force", "true")
	}
	return k.Send(Req{Verb: "APPLY", Method: http.MethodPatch, Name: name, Query: q, Body: obj, ContentType: ApplyPatch})
}

// contentTypeKey carries a request's content type to the probe's
// transport (kube.Client.Raw sends application/json).
type contentTypeKey struct{}

// contentTyped sets the Content-Type a probe asked for on the way out.
type contentTyped struct{ next http.RoundTripper }

func (t contentTyped) RoundTrip(r *http.Request) (*http.Response, error) {
	if ct, ok := r.Context().Value(contentTypeKey{}).(string); ok && r.Body != nil {
		r = r.Clone(r.Context())
		r.Header.Set("Content-Type", ct)
	}
	return t.next.RoundTrip(r)
}

// Create creates name and expects 201; it returns the created object.
func (k *K) Create(name, value string, labels map[string]string) KObj {
	r := k.Call("CREATE", http.MethodPost, "", nil, k.Obj(name, value, "", labels))
	k.Expect(r.Code).To(gomega.Equal(http.StatusCreated), "create %s: %s %s", name, r.Reason, r.Message)
	return r.KObj
}

// Update writes name with value (and labels) conditionally on rv, expects
// 200 and returns the new object.
func (k *K) Update(name, value, rv string, labels map[string]string) KObj {
	r := k.Call("UPDATE", http.MethodPut, name, nil, k.Obj(name, value, rv, labels))
	k.Expect(r.Code).To(gomega.Equal(http.StatusOK), "update %s: %s %s", name, r.Reason, r.Message)
	return r.KObj
}

// Delete deletes name with an optional body (DeleteOptions) and returns
// the answer.
func (k *K) Delete(name string, opts map[string]any) KResp {
	var body any
	if opts != nil {
		opts["apiVersion"], opts["kind"] = "v1", "DeleteOptions"
		body = opts
	}
	return k.Call("DELETE", http.MethodDelete, name, nil, body)
}

// Get reads name.
func (k *K) Get(name string, q url.Values) KResp { return k.Call("GET", http.MethodGet, name, q, nil) }

// List lists the probe's namespace.
func (k *K) List(q url.Values) KResp { return k.Call("LIST", http.MethodGet, "", q, nil) }

// Branch marks the point where the server made a choice the contract
// leaves open (keep a snapshot or expire it): the last request and every
// step after it are shown but not compared with the reference's, which
// may have chosen the other way.
func (k *K) Branch(choice string) {
	k.rec.add(rawStep{call: "BRANCH", note: "the server chose: " + choice, branch: true})
}

// Compact compacts the server's storage at the revision of resourceVersion
// rv ("" for its current revision), or skips the probe when the run has no
// way to.
func (k *K) Compact(rv string) {
	if k.cfg.Compact == nil {
		k.Skip("needs the storage compacted, which vigil does only for a server it started")
	}
	at, q := int64(0), url.Values{}
	if rv != "" {
		at = k.RVNum(rv)
		q.Set("resourceVersion", rv)
	}
	k.Expect(k.cfg.Compact(k.Ctx, at)).To(gomega.Succeed(), "compacting the storage")
	k.rec.add(rawStep{call: "COMPACT", method: "etcd", query: q,
		note: "the server's storage (etcd) compacted, outside the Kubernetes API, at the revision of resourceVersion (or, without one, at its current revision)"})
}

// rawStep is one recorded request (or watch frame) with its raw answer.
type rawStep struct {
	call         string
	method, path string
	query        url.Values
	body         any
	ctype        string // the Content-Type, if not application/json
	code         int
	answer       []byte
	event        string // a watch frame's type
	note         string // what happened where there is no request
	branch       bool   // from here on, the server's legitimate choice
}

type recorder struct {
	mu    sync.Mutex
	steps []rawStep
}

func (r *recorder) add(s rawStep) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = append(r.steps, s)
}

func (r *recorder) snapshot() []rawStep {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]rawStep(nil), r.steps...)
}

var spaceRe = regexp.MustCompile(`\s+`)

func trimTo(s string, n int) string {
	s = spaceRe.ReplaceAllString(s, " ")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
