// Package kube is the target adapter for any server that speaks the
// Kubernetes API, for one namespaced resource (ConfigMaps by default). It
// talks plain HTTPS and JSON rather than client-go: vigil must see the exact
// status codes, query parameters and watch frames, with no retries, caches
// or conversions in between. Recording puts every call and every watch
// event into the history.
package kube

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// Resource names the collection vigil works on.
type Resource struct {
	Group, Version, Plural, Kind string
}

// ConfigMaps is the default resource: core/v1 configmaps, data["value"]
// carrying each write's unique value.
var ConfigMaps = Resource{Version: "v1", Plural: "configmaps", Kind: "ConfigMap"}

// APIVersion is the resource's apiVersion: group/version, or the version
// of a core resource.
func (r Resource) APIVersion() string { return r.apiVersion() }

func (r Resource) apiVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// path is the collection's path in namespace ns.
func (r Resource) path(ns string) string {
	root := "/api/" + r.Version
	if r.Group != "" {
		root = "/apis/" + r.Group + "/" + r.Version
	}
	return root + "/namespaces/" + url.PathEscape(ns) + "/" + r.Plural
}

// Config says how to reach one API server.
type Config struct {
	// Server is the API server's base URL, e.g. https://127.0.0.1:6443.
	Server string
	// Name is how the history names this server (e.g. kube-0); default
	// the URL's host.
	Name string
	// Token is sent as a bearer token when set.
	Token string
	// CAFile is the PEM bundle the server's certificate must chain to;
	// CA is the same as PEM bytes (either, or both).
	CAFile string
	CA     []byte
	// Insecure skips verifying the server's certificate.
	Insecure bool
	// ClientCert and ClientKey (PEM) authenticate with a client
	// certificate, as kubeconfigs of kind or kubeadm clusters do.
	ClientCert, ClientKey []byte
	// Namespace is where the resource lives.
	Namespace string
	// Resource defaults to ConfigMaps.
	Resource Resource
	// UserAgent is sent with every request.
	UserAgent string
	// Rest, when set (a kubeconfig, in-cluster), is client-go's view of
	// the server: New takes TLS and authentication from it (client
	// certificates, bearer tokens, exec credential plugins) instead of
	// the fields above, and keeps its own transport for the calls it times.
	Rest *rest.Config
}

// Client is a connection to one API server. Safe for concurrent use; each
// Client has its own connection pool, so the workload gives every
// recorded client its own.
type Client struct {
	cfg  Config
	base *url.URL
	http *http.Client
}

// New prepares a client; it does not connect.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.Server)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("kube API server %q is not a URL like https://host:port", cfg.Server)
	}
	if cfg.Namespace == "" {
		return nil, errors.New("kube client: no namespace given")
	}
	if cfg.Resource == (Resource{}) {
		cfg.Resource = ConfigMaps
	}
	if cfg.Name == "" {
		cfg.Name = u.Host
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "vigil"
	}
	var tlsCfg *tls.Config
	if cfg.Rest != nil {
		tlsCfg, err = rest.TLSConfigFor(cfg.Rest)
	} else {
		tlsCfg, err = tlsConfig(cfg)
	}
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		Proxy:               nil, // vigil talks to the server it was given, never through a proxy from the environment
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 5 * time.Second}).DialContext,
		TLSClientConfig:     tlsCfg,
		TLSHandshakeTimeout: 5 * time.Second,
		// HTTP/2 as client-go speaks it: every watch of a client is a
		// stream on one connection.
		ForceAttemptHTTP2: true,
		// A server that stops answering (paused, cut off) is noticed by
		// pings, as client-go does, instead of holding watches forever.
		HTTP2:               &http.HTTP2Config{SendPingTimeout: 30 * time.Second, PingTimeout: 15 * time.Second},
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     30 * time.Second,
	}
	var rt http.RoundTripper = tr
	if cfg.Rest != nil {
		// client-go's wrappers add what authenticates each request: a
		// bearer token (from a file, or an exec plugin, refreshed as it
		// expires), basic auth, impersonation.
		if rt, err = rest.HTTPWrappersForConfig(cfg.Rest, tr); err != nil {
			return nil, err
		}
	}
	return &Client{cfg: cfg, base: u, http: &http.Client{Transport: rt}}, nil
}

func tlsConfig(cfg Config) (*tls.Config, error) {
	t := &tls.Config{InsecureSkipVerify: cfg.Insecure} //nolint:gosec // only when the user asks for it
	if len(cfg.ClientCert) > 0 || len(cfg.ClientKey) > 0 {
		cert, err := tls.X509KeyPair(cfg.ClientCert, cfg.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	if cfg.CAFile == "" && len(cfg.CA) == 0 {
		return t, nil
	}
	pem := append([]byte(nil), cfg.CA...)
	if cfg.CAFile != "" {
		b, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading the CA file: %w", err)
		}
		pem = append(pem, b...)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA %s holds no PEM certificate", cmp(cfg.CAFile, "(inline)"))
	}
	t.RootCAs = pool
	return t, nil
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Server is how the history names this API server.
func (c *Client) Server() string { return c.cfg.Name }

// Namespace is the namespace the client works in.
func (c *Client) Namespace() string { return c.cfg.Namespace }

// Close drops the client's idle connections.
func (c *Client) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// StatusError is a definite answer of the server: an HTTP error code with
// the metav1.Status it sent (or one made up from the code if the body was
// not a Status).
type StatusError struct {
	Status history.KubeStatus
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("server answered %d", e.Status.Code)
	if e.Status.Reason != "" {
		s += " " + e.Status.Reason
	}
	if e.Status.Message != "" {
		s += ": " + e.Status.Message
	}
	return s
}

// StatusOf returns the Status of a server's error answer, or nil for
// errors that carry none (transport errors, timeouts).
func StatusOf(err error) *history.KubeStatus {
	var se *StatusError
	if errors.As(err, &se) {
		return &se.Status
	}
	return nil
}

// Do runs one call on the resource.
func (c *Client) Do(ctx context.Context, req history.KubeRequest) (*history.KubeResponse, error) {
	hreq, err := c.request(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the answer to %s: %w", req.Verb, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &StatusError{Status: *statusFrom(resp.StatusCode, body)}
	}
	return decodeResponse(req.Verb, resp.StatusCode, body)
}

// patchContentTypes are the Content-Types of the four patch types.
var patchContentTypes = map[string]string{
	history.PatchJSON:      "application/json-patch+json",
	history.PatchMerge:     "application/merge-patch+json",
	history.PatchStrategic: "application/strategic-merge-patch+json",
	history.PatchApply:     "application/apply-patch+yaml",
}

// rawBody is a body sent as it is, with its own Content-Type (a patch).
type rawBody struct {
	data        []byte
	contentType string
}

// request builds the HTTP request of one call.
func (c *Client) request(ctx context.Context, req history.KubeRequest) (*http.Request, error) {
	var method, path string
	var body any
	coll := c.cfg.Resource.path(c.cfg.Namespace)
	// one is the object's path, or its subresource's.
	one := func(name string) string {
		p := coll + "/" + url.PathEscape(name)
		if req.Subresource != "" {
			p += "/" + url.PathEscape(req.Subresource)
		}
		return p
	}
	switch req.Verb {
	case history.KubeCreate:
		if req.Object == nil {
			return nil, errors.New("kube create without an object")
		}
		method, path, body = http.MethodPost, coll, c.cfg.Resource.fromObject(req.Object, c.cfg.Namespace)
	case history.KubeGet:
		method, path = http.MethodGet, one(req.Name)
	case history.KubeList:
		method, path = http.MethodGet, coll
	case history.KubeUpdate:
		if req.Object == nil {
			return nil, errors.New("kube update without an object")
		}
		name := cmp(req.Name, req.Object.Name)
		method, path, body = http.MethodPut, one(name), c.cfg.Resource.fromObject(req.Object, c.cfg.Namespace)
	case history.KubePatch:
		ct, ok := patchContentTypes[req.PatchType]
		if !ok {
			return nil, fmt.Errorf("kube patch of unknown type %q", req.PatchType)
		}
		name := req.Name
		if name == "" && req.Object != nil {
			name = req.Object.Name
		}
		method, path, body = http.MethodPatch, one(name), rawBody{[]byte(req.Patch), ct}
	case history.KubeDelete:
		method, path = http.MethodDelete, coll+"/"+url.PathEscape(req.Name)
		if req.PreconditionRV != "" || req.PreconditionUID != "" {
			opts := deleteOptions{APIVersion: "v1", Kind: "DeleteOptions"}
			opts.Preconditions = &struct {
				ResourceVersion string `json:"resourceVersion,omitempty"`
				UID             string `json:"uid,omitempty"`
			}{req.PreconditionRV, req.PreconditionUID}
			if req.DryRun {
				opts.DryRun = []string{"All"}
			}
			body = opts
		}
	case history.KubeDeleteCollection:
		method, path = http.MethodDelete, coll
	default:
		return nil, fmt.Errorf("kube target: unsupported verb %q", req.Verb)
	}
	return c.newRequest(ctx, method, path, query(req), body)
}

func (c *Client) newRequest(ctx context.Context, method, path string, q url.Values, body any) (*http.Request, error) {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = q.Encode()
	var rd io.Reader
	contentType := "application/json"
	switch b := body.(type) {
	case nil:
	case rawBody:
		rd, contentType = bytes.NewReader(b.data), b.contentType
	default:
		j, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(j)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Accept", "application/json")
	if body != nil {
		hreq.Header.Set("Content-Type", contentType)
	}
	if c.cfg.Token != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	}
	hreq.Header.Set("User-Agent", c.cfg.UserAgent)
	return hreq, nil
}

// query is the query of a call: every parameter the request sets, and
// none it leaves empty. Reads send their resourceVersion options and
// selectors; writes dryRun=All, fieldManager and force; a
// delete-collection its selectors. An update's resourceVersion is in its
// body, not here.
func query(req history.KubeRequest) url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	switch req.Verb {
	case history.KubeGet, history.KubeList:
		// Everything the request sets is sent, even where the verb ignores it
		// (a get has no limit): the history records what was asked.
		set("resourceVersion", req.ResourceVersion)
		set("resourceVersionMatch", req.ResourceVersionMatch)
		if req.Limit > 0 {
			q.Set("limit", fmt.Sprint(req.Limit))
		}
		set("continue", req.Continue)
		set("labelSelector", req.LabelSelector)
		set("fieldSelector", req.FieldSelector)
		return q
	case history.KubeDeleteCollection:
		set("labelSelector", req.LabelSelector)
		set("fieldSelector", req.FieldSelector)
	}
	if req.DryRun {
		q.Set("dryRun", "All")
	}
	set("fieldManager", req.FieldManager)
	if req.Force {
		q.Set("force", "true")
	}
	return q
}

// readQuery is the query of a get or list (query, for the tests that
// predate the writes' parameters).
func readQuery(req history.KubeRequest) url.Values {
	if req.Verb != history.KubeGet && req.Verb != history.KubeList {
		return url.Values{}
	}
	return query(req)
}

// statusFrom reads the Status of an error answer; a body that is not one
// (a proxy's text, say) gives a Status with the code and the text.
func statusFrom(code int, body []byte) *history.KubeStatus {
	var s wireStatus
	if err := json.Unmarshal(body, &s); err == nil && s.Kind == "Status" {
		st := toStatus(s)
		if st.Code == 0 {
			st.Code = code
		}
		return st
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return &history.KubeStatus{Code: code, Reason: http.StatusText(code), Message: msg}
}

// decodeResponse reads a 2xx answer.
func decodeResponse(verb history.KubeVerb, code int, body []byte) (*history.KubeResponse, error) {
	out := &history.KubeResponse{Code: code}
	if verb == history.KubeDeleteCollection {
		// The objects it deleted, as a list (or, from some servers, a
		// Status of success, which names none).
		var l wireList
		if err := json.Unmarshal(body, &l); err != nil {
			return nil, fmt.Errorf("undecodable deletecollection answer: %w", err)
		}
		if l.Kind == "Status" {
			return out, nil
		}
		for _, it := range l.Items {
			out.Items = append(out.Items, *toObject(it, false))
		}
		return out, nil
	}
	if verb == history.KubeList {
		var l wireList
		if err := json.Unmarshal(body, &l); err != nil {
			return nil, fmt.Errorf("undecodable list answer: %w", err)
		}
		out.ListRV, out.Continue, out.RemainingItemCount = l.Metadata.ResourceVersion, l.Metadata.Continue, l.Metadata.RemainingItemCount
		out.Items = make([]history.Object, len(l.Items))
		for i, it := range l.Items {
			out.Items[i] = *toObject(it, false)
		}
		return out, nil
	}
	var o wireObject
	if err := json.Unmarshal(body, &o); err != nil {
		return nil, fmt.Errorf("undecodable %s answer: %w", verb, err)
	}
	// Older servers answer a delete with a Status of success instead of
	// the deleted object; that carries no object.
	if o.Kind != "Status" {
		out.Object = toObject(o, false)
	}
	return out, nil
}

// EnsureNamespace creates namespace ns unless it exists. Not recorded: it
// is the run's setup, not a call on the resource under test.
func (c *Client) EnsureNamespace(ctx context.Context, ns string) error {
	body := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]string{"name": ns}}
	hreq, err := c.newRequest(ctx, http.MethodPost, "/api/v1/namespaces", nil, body)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return fmt.Errorf("creating namespace %s on %s: %w", ns, c.cfg.Server, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode == http.StatusConflict || (resp.StatusCode >= 200 && resp.StatusCode <= 299) {
		return nil
	}
	return fmt.Errorf("creating namespace %s on %s: %w", ns, c.cfg.Server, &StatusError{Status: *statusFrom(resp.StatusCode, b)})
}

// DeleteNamespace deletes namespace ns (and so everything vigil made in
// it, once the server's namespace controller gets to it). Not recorded.
func (c *Client) DeleteNamespace(ctx context.Context, ns string) error {
	hreq, err := c.newRequest(ctx, http.MethodDelete, "/api/v1/namespaces/"+url.PathEscape(ns), nil, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode == http.StatusNotFound || (resp.StatusCode >= 200 && resp.StatusCode <= 299) {
		return nil
	}
	return &StatusError{Status: *statusFrom(resp.StatusCode, b)}
}

// Ping asks the server for /readyz (falling back to /version), so a wrong
// URL, token or CA fails at once and by name.
func (c *Client) Ping(ctx context.Context) error {
	var last error
	for _, p := range []string{"/readyz", "/version"} {
		hreq, err := c.newRequest(ctx, http.MethodGet, p, nil, nil)
		if err != nil {
			return err
		}
		resp, err := c.http.Do(hreq)
		if err != nil {
			return fmt.Errorf("kube API server %s is unreachable: %w", c.cfg.Server, err)
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			return nil
		case resp.StatusCode == http.StatusUnauthorized:
			return fmt.Errorf("kube API server %s refused the credentials (401); check --token or --kubeconfig", c.cfg.Server)
		}
		last = fmt.Errorf("kube API server %s: GET %s: %w", c.cfg.Server, p, &StatusError{Status: *statusFrom(resp.StatusCode, b)})
	}
	return last
}

// Version asks the server for its version (GET /version): gitVersion, or
// "" if it does not say.
func (c *Client) Version(ctx context.Context) (string, error) {
	hreq, err := c.newRequest(ctx, http.MethodGet, "/version", nil, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /version answered %d", resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&v); err != nil {
		return "", err
	}
	return v.GitVersion, nil
}

// Features of the Kubernetes target, for the history's metadata. Whether a
// server supports streaming lists shows in its answers, not here.
const (
	FeatureCRUD       targets.Feature = "kube-crud"
	FeatureList       targets.Feature = "kube-list"
	FeaturePagination targets.Feature = "kube-pagination"
	FeatureWatch      targets.Feature = "kube-watch"
	FeatureBookmarks  targets.Feature = "kube-watch-bookmarks"
	FeatureWatchList  targets.Feature = "kube-watchlist"
)

// Supports lists what the Kubernetes adapter can ask for.
func Supports() []targets.Feature {
	return []targets.Feature{FeatureCRUD, FeatureList, FeaturePagination, FeatureWatch, FeatureBookmarks, FeatureWatchList}
}

// Raw sends one request the way the client's other calls go (same TLS,
// credentials and user agent) and hands back the raw answer, for callers
// that must see every byte of it (the conformance probes). path is
// absolute ("/api/v1/namespaces/x/configmaps"); body, if not nil, is sent
// as JSON. The caller closes the answer's body.
func (c *Client) Raw(ctx context.Context, method, path string, q url.Values, body any) (*http.Response, error) {
	hreq, err := c.newRequest(ctx, method, path, q, body)
	if err != nil {
		return nil, err
	}
	return c.http.Do(hreq)
}

// WrapTransport puts wrap around the client's transport: tests use it to
// corrupt a server's answers on their way in.
func (c *Client) WrapTransport(wrap func(http.RoundTripper) http.RoundTripper) {
	c.http.Transport = wrap(c.http.Transport)
}

// CollectionPath is the resource's collection path in namespace ns.
func (r Resource) CollectionPath(ns string) string { return r.path(ns) }

// ReleaseFinalizers removes every finalizer from the objects of the
// client's namespace, so that deleting them (or the namespace) does not
// wait for a controller that never comes. Not recorded: it is the run's
// cleanup. It returns how many objects it released.
func (c *Client) ReleaseFinalizers(ctx context.Context) (int, error) {
	resp, err := c.Do(ctx, history.KubeRequest{Verb: history.KubeList})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range resp.Items {
		if len(o.Finalizers) == 0 {
			continue
		}
		_, err := c.Do(ctx, history.KubeRequest{Verb: history.KubePatch, Name: o.Name, PatchType: history.PatchMerge,
			Patch: `{"metadata":{"finalizers":null}}`})
		if err != nil && (StatusOf(err) == nil || StatusOf(err).Code != http.StatusNotFound) {
			return n, fmt.Errorf("releasing the finalizers of %s: %w", o.Name, err)
		}
		n++
	}
	return n, nil
}
