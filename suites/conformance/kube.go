package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onsi/gomega"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/vigil-suite/vigil/targets/kube"
)

// KubeProbe is one behaviour of the Kubernetes API. Every behaviour is
// probed on each resource of the run (ConfigMaps and a custom resource by
// default), each its own probe named "<family>/<behaviour>@<resource>".
type KubeProbe struct {
	Info
	// Run is the scenario; it may branch on k.Custom where built-in and
	// custom resources legitimately differ.
	Run func(k *K)
}

// KubeConfig says where the Kubernetes probes go.
type KubeConfig struct {
	// Server is how to reach the API server; its Namespace and Resource
	// are ignored (every probe makes a namespace of its own).
	Server kube.Config
	// Resources to probe; default ConfigMaps and kube.VigilObjects (whose
	// CustomResourceDefinition the run creates unless it exists).
	Resources []kube.Resource
	// Only runs the probes with these names, or with these prefixes when
	// they end in "/" (a family) or "@" (a behaviour on every resource);
	// empty: all.
	Only []string
	// Timeout bounds one probe; default 20 s.
	Timeout time.Duration
	// Compact, if set, compacts the server's storage at revision rev, or
	// at its current revision when rev is 0 (vigil does it through etcd
	// when it started the server, whose resourceVersions are etcd's
	// revisions). Probes of expiry (410 Gone) need it and are skipped
	// without it.
	Compact func(ctx context.Context, rev int64) error
	// Wrap, if set, wraps every probe's HTTP transport (tests corrupt the
	// server's answers with it).
	Wrap func(http.RoundTripper) http.RoundTripper
}

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

	cfg     KubeConfig
	c       *kube.Client
	rec     *kubeRecorder
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
	} `json:"metadata"`
	Data  map[string]string `json:"data"`
	Items []KObj            `json:"items"`
	// A Status's fields.
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Details *struct {
		Causes []struct {
			Reason string `json:"reason"`
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

// RVNum reads a resourceVersion as the number every known server uses;
// the probe fails if it is not one.
func (k *K) RVNum(rv string) int64 {
	n, err := strconv.ParseInt(rv, 10, 64)
	k.Expect(err).NotTo(gomega.HaveOccurred(), "resourceVersion %q is not a number", rv)
	return n
}

// Skip ends the probe as skipped, with the reason.
func (k *K) Skip(reason string) { SkipProbe(reason) }

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
	path := k.Res.CollectionPath(k.NS)
	if name != "" {
		path += "/" + url.PathEscape(name)
	}
	resp, err := k.c.Raw(k.Ctx, method, path, q, body)
	k.Expect(err).NotTo(gomega.HaveOccurred(), "%s %s: no answer", method, path)
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	k.Expect(err).NotTo(gomega.HaveOccurred(), "%s %s: reading the answer", method, path)
	var out KResp
	out.Code = resp.StatusCode
	if json.Unmarshal(raw, &out.KObj) != nil {
		out.Reason = "undecodable answer: " + trimTo(string(raw), 200)
	}
	k.rec.add(kubeStep{call: verb, method: method, path: path, query: q, body: body, code: resp.StatusCode, answer: raw})
	return out
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
	k.rec.add(kubeStep{call: "BRANCH", note: "the server chose: " + choice, branch: true})
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
	k.rec.add(kubeStep{call: "COMPACT", method: "etcd", query: q,
		note: "the server's storage (etcd) compacted, outside the Kubernetes API, at the revision of resourceVersion (or, without one, at its current revision)"})
}

// KWatch is one open watch of a probe.
type KWatch struct {
	k    *K
	name string
	ch   <-chan kubeFrame
	stop context.CancelFunc
	// Refused is the HTTP error answer to the watch request, if any.
	Refused *KResp
}

// KEvent is one frame of a watch: its type and object (a Status for
// ERROR).
type KEvent struct {
	Type   string
	Object KObj
}

type kubeFrame struct {
	ev  *KEvent
	raw json.RawMessage
	err error // the stream broke or ended (io.EOF: closed cleanly)
	at  time.Time
}

// Watch opens a recorded watch on the probe's collection. A refusal (an
// HTTP error answer) is kept in Refused; the probe decides what it means.
func (k *K) Watch(q url.Values) *KWatch {
	k.watches++
	w := &KWatch{k: k, name: fmt.Sprintf("WATCH#%d", k.watches)}
	wq := url.Values{}
	for key, v := range q {
		wq[key] = v
	}
	wq.Set("watch", "true")
	ctx, cancel := context.WithCancel(k.Ctx)
	w.stop = cancel
	path := k.Res.CollectionPath(k.NS)
	resp, err := k.c.Raw(ctx, http.MethodGet, path, wq, nil)
	k.Expect(err).NotTo(gomega.HaveOccurred(), "watch %s: no answer", path)
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		r := KResp{Code: resp.StatusCode}
		_ = json.Unmarshal(raw, &r.KObj)
		w.Refused = &r
		k.rec.add(kubeStep{call: w.name + " open", method: http.MethodGet, path: path, query: wq, code: resp.StatusCode, answer: raw})
		cancel()
		return w
	}
	k.rec.add(kubeStep{call: w.name + " open", method: http.MethodGet, path: path, query: wq, code: resp.StatusCode})
	ch := make(chan kubeFrame, 64)
	w.ch = ch
	go func() {
		defer resp.Body.Close()
		defer close(ch)
		dec := json.NewDecoder(resp.Body)
		for {
			var f struct {
				Type   string          `json:"type"`
				Object json.RawMessage `json:"object"`
			}
			err := dec.Decode(&f)
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = io.EOF
				}
				select {
				case ch <- kubeFrame{err: err, at: time.Now()}:
				case <-ctx.Done():
				}
				return
			}
			ev := &KEvent{Type: f.Type}
			_ = json.Unmarshal(f.Object, &ev.Object)
			select {
			case ch <- kubeFrame{ev: ev, raw: f.Object, at: time.Now()}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return w
}

// Next returns the next event within d, or nil when none came (timeout)
// or the stream ended; Ended tells which.
func (w *KWatch) Next(d time.Duration) *KEvent {
	ev, _ := w.next(d)
	return ev
}

// next returns the next event, or nil and whether the stream ended.
func (w *KWatch) next(d time.Duration) (*KEvent, bool) {
	w.k.Expect(w.Refused).To(gomega.BeNil(), "%s was refused", w.name)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case f, ok := <-w.ch:
		if !ok {
			return nil, true
		}
		if f.err != nil {
			end := "the server closed the stream"
			if f.err != io.EOF {
				end = "the stream broke: " + f.err.Error()
			}
			w.k.rec.add(kubeStep{call: w.name + ".end", note: end})
			w.k.Expect(f.err).To(gomega.Equal(io.EOF), "%s broke", w.name)
			return nil, true
		}
		w.k.rec.add(kubeStep{call: w.name + ".event", event: f.ev.Type, answer: f.raw})
		return f.ev, false
	case <-t.C:
		return nil, false
	}
}

// Expect reads the next event, which must come within 10 s and have the
// type and object name given ("" for any name); it returns it.
func (w *KWatch) Expect(typ, name string) KEvent {
	ev, ended := w.next(10 * time.Second)
	w.k.Expect(ended).To(gomega.BeFalse(), "%s ended while a %s event of %q was expected", w.name, typ, name)
	w.k.Expect(ev).NotTo(gomega.BeNil(), "%s: no event within 10 s; expected %s %q", w.name, typ, name)
	w.k.Expect(ev.Type).To(gomega.Equal(typ), "%s: event type (object %q, rv %s)", w.name, ev.Object.Metadata.Name, ev.Object.RV())
	if name != "" {
		w.k.Expect(ev.Object.Metadata.Name).To(gomega.Equal(name), "%s: the %s event's object", w.name, typ)
	}
	return *ev
}

// NextNonBookmark reads events, passing over BOOKMARKs, and returns the
// first of another type; nil when none came within d or the stream ended.
func (w *KWatch) NextNonBookmark(d time.Duration) *KEvent {
	for range 1000 {
		ev, ended := w.next(d)
		if ev == nil || ended || ev.Type != "BOOKMARK" {
			return ev
		}
	}
	return nil
}

// Ends waits up to d for the server to end the stream cleanly, failing
// the probe on any event in between but BOOKMARKs, and if it does not end.
func (w *KWatch) Ends(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		ev, ended := w.next(time.Until(deadline))
		if ended {
			return
		}
		if ev != nil {
			w.k.Expect(ev.Type).To(gomega.Equal("BOOKMARK"), "%s: an event where the stream should end", w.name)
		}
	}
	w.k.Expect(false).To(gomega.BeTrue(), "%s did not end within %v", w.name, d)
}

// Close stops the watch.
func (w *KWatch) Close() {
	if w.stop != nil {
		w.stop()
	}
}

// Fence writes a fence object and reads w up to its ADDED event, failing
// the probe on any other event before it: the watch delivered nothing
// else that was written before the fence. BOOKMARKs are passed over.
func (w *KWatch) Fence(name string) KEvent {
	obj := w.k.Create(name, "fence", nil)
	ev := w.NextNonBookmark(10 * time.Second)
	w.k.Expect(ev).NotTo(gomega.BeNil(), "%s: the fence %q never came", w.name, name)
	w.k.Expect(ev.Type+" "+ev.Object.Metadata.Name).To(gomega.Equal("ADDED "+name),
		"%s: an event before the fence (rv %s; the fence is at %s)", w.name, ev.Object.RV(), obj.RV())
	return *ev
}

// kubeStep is one recorded request (or watch frame) with its raw answer.
type kubeStep struct {
	call         string
	method, path string
	query        url.Values
	body         any
	code         int
	answer       []byte
	event        string // a watch frame's type
	note         string // what happened where there is no request
	branch       bool   // from here on, the server's legitimate choice
}

type kubeRecorder struct {
	mu    sync.Mutex
	steps []kubeStep
}

func (r *kubeRecorder) add(s kubeStep) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = append(r.steps, s)
}

func (r *kubeRecorder) snapshot() []kubeStep {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]kubeStep(nil), r.steps...)
}

// kubeProbeName is the probe's name on one resource.
func kubeProbeName(name string, r kube.Resource) string { return name + "@" + r.Plural }

// KubeProbeInfos lists the probes a run over these resources has (the
// default resources if none), each behaviour once per resource.
func KubeProbeInfos(resources []kube.Resource) []Info {
	if len(resources) == 0 {
		resources = defaultKubeResources
	}
	var out []Info
	for _, p := range KubeProbes() {
		for _, r := range resources {
			info := p.Info
			info.Name = kubeProbeName(p.Name, r)
			out = append(out, info)
		}
	}
	return out
}

var defaultKubeResources = []kube.Resource{kube.ConfigMaps, kube.VigilObjects}

// RunKubeProbes runs every probe on every resource, one after another,
// and returns one result each. Probes assume nothing else writes in the
// namespaces they make.
func RunKubeProbes(ctx context.Context, cfg KubeConfig, probes []KubeProbe) ([]Result, error) {
	if cfg.Server.Server == "" {
		return nil, errors.New("conformance: no Kubernetes API server to probe")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 20 * time.Second
	}
	if len(cfg.Resources) == 0 {
		cfg.Resources = defaultKubeResources
	}
	run := fmt.Sprintf("vc-%x", time.Now().UnixNano()%0xffffffff)
	setup := cfg.Server
	setup.Namespace = "default"
	admin, err := kube.New(setup)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	pctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := admin.Ping(pctx); err != nil {
		return nil, err
	}
	var out []Result
	for _, r := range cfg.Resources {
		want := false
		for _, p := range probes {
			want = want || Selected(kubeProbeName(p.Name, r), cfg.Only)
		}
		if !want {
			continue
		}
		if r.Group != "" {
			rc := setup
			rc.Resource = r
			c, err := kube.New(rc)
			if err != nil {
				return nil, err
			}
			err = c.EnsureCRD(pctx)
			c.Close()
			if err != nil {
				return nil, err
			}
		}
		for i, p := range probes {
			name := kubeProbeName(p.Name, r)
			if !Selected(name, cfg.Only) {
				continue
			}
			ns := fmt.Sprintf("%s-%s-%d", run, strings.ToLower(r.Kind), i)
			out = append(out, runKubeProbe(ctx, cfg, admin, p, r, ns))
		}
	}
	return out, nil
}

func runKubeProbe(ctx context.Context, cfg KubeConfig, admin *kube.Client, pr KubeProbe, r kube.Resource, ns string) (res Result) {
	res = Result{Info: pr.Info}
	res.Name = kubeProbeName(pr.Name, r)
	begin := time.Now()
	defer func() { res.Duration = time.Since(begin) }()
	pctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if err := admin.EnsureNamespace(pctx, ns); err != nil {
		res.Verdict, res.Reason = Error, "cannot make the probe's namespace: "+err.Error()
		return res
	}
	defer func() {
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer dcancel()
		_ = admin.DeleteNamespace(dctx, ns)
	}()
	sc := cfg.Server
	sc.Namespace, sc.Resource = ns, r
	c, err := kube.New(sc)
	if err != nil {
		res.Verdict, res.Reason = Error, err.Error()
		return res
	}
	defer c.Close()
	if cfg.Wrap != nil {
		c.WrapTransport(cfg.Wrap)
	}
	k := &K{Ctx: pctx, NS: ns, Res: r, Custom: r.Group != "", cfg: cfg, c: c, rec: &kubeRecorder{}}
	k.Gomega = gomega.NewGomega(func(msg string, _ ...int) { FailProbe(msg) })
	res.Verdict, res.Reason, res.Failure = RunGuarded(func() { pr.Run(k) })
	if res.Verdict == Fail && pctx.Err() != nil && ctx.Err() == nil {
		res.Failure = fmt.Sprintf("the probe ran out of its %v: %s", cfg.Timeout, res.Failure)
	}
	steps := k.rec.snapshot()
	if res.Verdict == Fail && notServed(steps) {
		res.Verdict, res.Reason = Unsupported, "the server does not serve a request of the probe (404 on the resource's path or 405)"
	}
	res.SetReproduction("kube", (&kubeReproData{steps: steps, ns: ns}).reproduction)
	n := newKubeNormalizer(ns, steps)
	branched := false
	for _, s := range steps {
		if s.branch && !branched && len(res.Transcript) > 0 {
			res.Transcript[len(res.Transcript)-1].Unstable = true
		}
		st := n.step(s)
		branched = branched || s.branch
		st.Unstable = st.Unstable || branched
		res.Transcript = append(res.Transcript, st)
	}
	return res
}

// notServed reports a 405, or a 404 whose Status is not about an object
// (a server that does not serve the path answers 404 with no details).
func notServed(steps []kubeStep) bool {
	for _, s := range steps {
		if s.code == http.StatusMethodNotAllowed {
			return true
		}
		if s.code == http.StatusNotFound {
			var st struct {
				Details *struct {
					Name string `json:"name"`
				} `json:"details"`
			}
			if json.Unmarshal(s.answer, &st) != nil || st.Details == nil || st.Details.Name == "" {
				return true
			}
		}
	}
	return false
}

// kubeNormalizer rewrites one Kubernetes probe's requests and answers so
// two servers compare: the namespace as {ns}; uids and continue tokens as
// tokens in order of appearance; resourceVersions as symbols — "w3" for
// the RV of the probe's third distinct object version, "w3+" for an RV
// between that and the next one (a bookmark's RV, which other writes on
// the server may move; a list's own RV is "w3+" from w3 on, see listRV),
// "w0+" below the first; creation times,
// managed fields and messages masked.
type kubeNormalizer struct {
	ns     string
	rvs    []int64 // the object RVs of the transcript, sorted
	tokens Tokens
}

func newKubeNormalizer(ns string, steps []kubeStep) *kubeNormalizer {
	n := &kubeNormalizer{ns: ns, tokens: Tokens{}}
	seen := map[int64]bool{}
	var collect func(v any)
	collect = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if meta, ok := x["metadata"].(map[string]any); ok {
				if _, named := meta["name"]; named {
					if rv, ok := meta["resourceVersion"].(string); ok {
						if r, err := strconv.ParseInt(rv, 10, 64); err == nil {
							seen[r] = true
						}
					}
				}
			}
			for _, e := range x {
				collect(e)
			}
		case []any:
			for _, e := range x {
				collect(e)
			}
		}
	}
	for _, s := range steps {
		var v any
		if json.Unmarshal(s.answer, &v) == nil {
			collect(v)
		}
	}
	for r := range seen {
		n.rvs = append(n.rvs, r)
	}
	slices.Sort(n.rvs)
	return n
}

// rv writes a resourceVersion as its symbol.
func (n *kubeNormalizer) rv(s string) string {
	r, err := strconv.ParseInt(s, 10, 64)
	if err != nil || s == "0" {
		return s
	}
	below := 0
	for i, w := range n.rvs {
		if w == r {
			return fmt.Sprintf("w%d", i+1)
		}
		if w < r {
			below = i + 1
		}
	}
	return fmt.Sprintf("w%d+", below)
}

// listRV writes a list's own resourceVersion: "wN+" for any RV from the
// probe's Nth object version up to the next. A list (or a page) answered
// from the current state carries the store's revision, which writes to
// other resources move: seen at w2 exactly on one run and above it on the
// next (kube-apiserver v1.36.3 with its watch cache, a NotOlderThan list),
// it says the same.
func (n *kubeNormalizer) listRV(s string) string {
	sym := n.rv(s)
	if strings.HasPrefix(sym, "w") && !strings.HasSuffix(sym, "+") {
		return sym + "+"
	}
	return sym
}

var maskedKubeFields = map[string]bool{"creationTimestamp": true, "managedFields": true, "deletionTimestamp": true,
	"message": true, "selfLink": true}

func (n *kubeNormalizer) walk(field string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == "retryAfterSeconds" {
				continue // a hint some servers add to a 504, others not
			}
			if maskedKubeFields[k] {
				out[k] = "*"
				continue
			}
			if rv, ok := e.(string); ok && k == "resourceVersion" && field == "metadata" && x["name"] == nil {
				out[k] = n.listRV(rv)
				continue
			}
			out[k] = n.walk(k, e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = n.walk(field, e)
		}
		return out
	case string:
		switch field {
		case "resourceVersion":
			return n.rv(x)
		case "uid":
			return n.tokens.Token("uid", x)
		case "continue":
			if x == "" {
				return x
			}
			return n.tokens.Token("continue", x)
		case "namespace":
			if x == n.ns {
				return "{ns}"
			}
		}
		return strings.ReplaceAll(x, n.ns, "{ns}")
	}
	return v
}

func (n *kubeNormalizer) json(v any) json.RawMessage {
	b, err := json.Marshal(n.walk("", v))
	if err != nil {
		return json.RawMessage(strconv.Quote(err.Error()))
	}
	return b
}

func (n *kubeNormalizer) step(s kubeStep) Step {
	out := Step{Call: s.call}
	if s.method != "" {
		req := map[string]any{"method": s.method, "path": strings.ReplaceAll(s.path, n.ns, "{ns}")}
		if len(s.query) > 0 {
			q := map[string]any{}
			for k, v := range s.query {
				q[k] = strings.Join(v, ",")
			}
			req["query"] = q
		}
		if s.body != nil {
			b, _ := json.Marshal(s.body)
			var v any
			_ = json.Unmarshal(b, &v)
			req["body"] = v
		}
		out.Request = n.json(req)
	}
	if len(s.answer) > 0 {
		var v any
		if json.Unmarshal(s.answer, &v) == nil {
			if s.event != "" {
				v = map[string]any{"type": s.event, "object": v}
			}
			out.Answer = n.json(v)
		} else {
			out.Answer = json.RawMessage(strconv.Quote(trimTo(string(s.answer), 200)))
		}
	} else if s.event != "" {
		out.Answer = n.json(map[string]any{"type": s.event})
	}
	if s.code != 0 && (s.code < 200 || s.code > 299) {
		out.Error = fmt.Sprintf("HTTP %d", s.code)
	}
	if s.note != "" {
		out.Answer = n.json(map[string]any{"note": s.note})
	}
	// Bookmarks come as the server's timers fire: whether one came is
	// timing, not behaviour.
	out.Unstable = s.event == "BOOKMARK" && !initialEventsEnd(s.answer) ||
		// resourceVersion=0 reads any state the server holds, however old.
		s.method == http.MethodGet && s.query.Get("resourceVersion") == "0" && s.query.Get("watch") == ""
	return out
}

func initialEventsEnd(raw []byte) bool {
	var o KObj
	return json.Unmarshal(raw, &o) == nil && o.Metadata.Annotations["k8s.io/initial-events-end"] == "true"
}

var spaceRe = regexp.MustCompile(`\s+`)

func trimTo(s string, n int) string {
	s = spaceRe.ReplaceAllString(s, " ")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// EtcdCompactor returns a KubeConfig.Compact that compacts the etcd under
// an API server (at endpoints) to its current revision.
func EtcdCompactor(endpoints []string) func(ctx context.Context, rev int64) error {
	return func(ctx context.Context, rev int64) error {
		cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 3 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			return err
		}
		defer cli.Close()
		if rev == 0 {
			head, err := cli.Get(ctx, "/vigil-conform-head")
			if err != nil {
				return err
			}
			rev = head.Header.Revision
		}
		_, err = cli.Compact(ctx, rev, clientv3.WithCompactPhysical())
		if errors.Is(err, rpctypes.ErrCompacted) {
			return nil // compacted past rev already: what the probe needs
		}
		return err
	}
}
