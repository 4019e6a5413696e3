package kubeprobes

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/vigil-suite/vigil/suites/conformance"
	"github.com/vigil-suite/vigil/targets/kube"
)

// corruption makes a Kubernetes API server look wrong in one way, from
// the client's side: it rewrites requests before they leave and answers
// (or watch frames) before the probe sees them.
type corruption struct {
	name string
	// request rewrites a request (its URL query or body) before it leaves.
	request func(r *http.Request)
	// answer rewrites a decoded non-watch answer; code can be changed.
	answer func(r *http.Request, code *int, body map[string]any)
	// frame rewrites one watch frame; false drops it.
	frame func(r *http.Request, f map[string]any) bool
	// mustFail are the behaviours (probe names without the resource) that
	// own the broken guarantee; mayFail lean on it. Every other probe
	// must pass.
	mustFail, mayFail []string
	// resources and only, if set, narrow the run (probes of the status
	// subresource need the custom resource).
	resources []kube.Resource
	only      []string
}

func isWatch(r *http.Request) bool { return r.URL.Query().Get("watch") == "true" }

func (c corruption) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if c.request != nil {
			c.request(r)
		}
		resp, err := rt.RoundTrip(r)
		if err != nil || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, err
		}
		if isWatch(r) && resp.StatusCode == http.StatusOK {
			if c.frame != nil {
				resp.Body = rewriteFrames(resp.Body, func(f map[string]any) bool { return c.frame(r, f) })
			}
			return resp, nil
		}
		if c.answer == nil {
			return resp, nil
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		var body map[string]any
		if json.Unmarshal(raw, &body) == nil {
			code := resp.StatusCode
			c.answer(r, &code, body)
			resp.StatusCode = code
			raw, _ = json.Marshal(body)
		}
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		resp.ContentLength = int64(len(raw))
		resp.Header.Del("Content-Length")
		return resp, nil
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// rewriteFrames passes a JSON watch stream through keep, frame by frame.
func rewriteFrames(body io.ReadCloser, keep func(map[string]any) bool) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		defer body.Close()
		dec := json.NewDecoder(body)
		enc := json.NewEncoder(pw)
		for {
			var f map[string]any
			if err := dec.Decode(&f); err != nil {
				pw.CloseWithError(err)
				return
			}
			if keep(f) {
				if err := enc.Encode(f); err != nil {
					return
				}
			}
		}
	}()
	return struct {
		io.Reader
		io.Closer
	}{pr, multiCloser{pr, body}}
}

type multiCloser []io.Closer

func (m multiCloser) Close() error {
	for _, c := range m {
		c.Close()
	}
	return nil
}

func dropQuery(key string) func(r *http.Request) {
	return func(r *http.Request) {
		q := r.URL.Query()
		q.Del(key)
		r.URL.RawQuery = q.Encode()
	}
}

// str is v as a string, "" if it is none.
func str(v any) string { s, _ := v.(string); return s }

func metaOf(o map[string]any) map[string]any {
	m, _ := o["metadata"].(map[string]any)
	if m == nil {
		m = map[string]any{}
		o["metadata"] = m
	}
	return m
}

// shiftRV moves a resourceVersion by d.
func shiftRV(meta map[string]any, d int64) {
	if s, ok := meta["resourceVersion"].(string); ok {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			meta["resourceVersion"] = strconv.FormatInt(n+d, 10)
		}
	}
}

func corruptions() []corruption {
	isList := func(r *http.Request) bool {
		return r.Method == http.MethodGet && !isWatch(r) && strings.HasSuffix(strings.TrimSuffix(r.URL.Path, "/"), "s") && strings.Contains(r.URL.Path, "/namespaces/") && strings.Count(strings.SplitN(r.URL.Path, "/namespaces/", 2)[1], "/") == 1
	}
	isGet := func(r *http.Request) bool {
		return r.Method == http.MethodGet && !isWatch(r) && strings.Contains(r.URL.Path, "/namespaces/") && strings.Count(strings.SplitN(r.URL.Path, "/namespaces/", 2)[1], "/") == 2
	}
	return []corruption{
		{name: "get-stale-rv", // a get served from a cache one write behind in its resourceVersion
			answer: func(r *http.Request, code *int, b map[string]any) {
				if isGet(r) && *code == http.StatusOK {
					shiftRV(metaOf(b), -1)
				}
			},
			mustFail: []string{"kube-get/rv-unset", "kube-get/rv-not-older-than"},
			// They read an object back and compare its resourceVersion.
			mayFail: []string{"kube-patch/json-patch", "kube-patch/json-patch-test-fails", "kube-patch/merge", "kube-patch/stale-rv", "kube-patch/stale-uid",
				"kube-apply/create", "kube-apply/conflict", "kube-finalizer/delete-marks",
				"kube-dryrun/create", "kube-dryrun/update", "kube-dryrun/patch", "kube-dryrun/delete"}},
		{name: "list-rv-behind", // a list reports a resourceVersion older than its newest item
			answer: func(r *http.Request, code *int, b map[string]any) {
				if !isList(r) || *code != http.StatusOK {
					return
				}
				newest := int64(0)
				items, _ := b["items"].([]any)
				for _, it := range items {
					o, _ := it.(map[string]any)
					if n, err := strconv.ParseInt(str(metaOf(o)["resourceVersion"]), 10, 64); err == nil && n > newest {
						newest = n
					}
				}
				if newest > 0 {
					metaOf(b)["resourceVersion"] = strconv.FormatInt(newest-1, 10)
				}
			},
			mustFail: []string{"kube-list/rv-unset", "kube-list/not-older-than", "kube-list/exact", "kube-list/rv-zero"},
			mayFail:  []string{"kube-list/paging", "kube-list/paging-snapshot", "kube-list/continue-expired"}},
		{name: "list-ignores-label-selector",
			request: func(r *http.Request) {
				if !isWatch(r) {
					dropQuery("labelSelector")(r)
				}
			},
			mustFail: []string{"kube-list/label-selector", "kube-write/delete-collection"}},
		{name: "continue-skips-an-item", // a continued page loses its first item
			answer: func(r *http.Request, code *int, b map[string]any) {
				if isList(r) && *code == http.StatusOK && r.URL.Query().Get("continue") != "" {
					if items, _ := b["items"].([]any); len(items) > 0 {
						b["items"] = items[1:]
					}
				}
			},
			mustFail: []string{"kube-list/paging", "kube-list/paging-snapshot", "kube-list/continue-expired"}},
		{name: "create-conflict-as-500",
			answer: func(r *http.Request, code *int, b map[string]any) {
				if r.Method == http.MethodPost && *code == http.StatusConflict {
					*code, b["code"], b["reason"] = http.StatusInternalServerError, 500, "InternalError"
				}
			},
			mustFail: []string{"kube-write/create-exists"}},
		{name: "delete-ignores-preconditions",
			request: func(r *http.Request) {
				if r.Method == http.MethodDelete {
					r.Body, r.ContentLength, r.GetBody = nil, 0, nil
					r.Header.Del("Content-Type")
				}
			},
			mustFail: []string{"kube-write/delete-precondition-rv", "kube-write/delete-precondition-uid"}},
		{name: "noop-update-bumps-rv", // an update that changes nothing answers a new resourceVersion
			answer: func(r *http.Request, code *int, b map[string]any) {
				if r.Method != http.MethodPut || *code != http.StatusOK || r.GetBody == nil {
					return
				}
				rd, err := r.GetBody()
				if err != nil {
					return
				}
				var sent map[string]any
				if json.NewDecoder(rd).Decode(&sent) == nil && metaOf(sent)["resourceVersion"] == metaOf(b)["resourceVersion"] {
					shiftRV(metaOf(b), 1000)
				}
			},
			mustFail: []string{"kube-write/noop-update"}},
		{name: "watch-drops-deleted",
			frame: func(r *http.Request, f map[string]any) bool { return f["type"] != "DELETED" },
			mustFail: []string{"kube-watch/deleted-rv", "kube-watch/rv-unset", "kube-watch/label-selector", "kube-watch/recreate",
				"kube-write/delete-collection", "kube-finalizer/remove-deletes"}},
		{name: "watch-ignores-label-selector",
			request: func(r *http.Request) {
				if isWatch(r) {
					dropQuery("labelSelector")(r)
				}
			},
			mustFail: []string{"kube-watch/label-selector"}},
		{name: "watch-ignores-timeout",
			request: func(r *http.Request) {
				if isWatch(r) {
					dropQuery("timeoutSeconds")(r)
				}
			},
			mustFail: []string{"kube-watch/timeout"}},
		{name: "watch-first-change-as-added", // a watch from an RV sends the first change as ADDED, as if it were the object's state
			frame: func() func(r *http.Request, f map[string]any) bool {
				var mu sync.Mutex
				done := map[*http.Request]bool{}
				return func(r *http.Request, f map[string]any) bool {
					mu.Lock()
					defer mu.Unlock()
					rv := r.URL.Query().Get("resourceVersion")
					if done[r] || rv == "" || rv == "0" || rv == "1" || f["type"] != "MODIFIED" {
						return true
					}
					done[r] = true
					f["type"] = "ADDED"
					return true
				}
			}(),
			mustFail: []string{"kube-watch/from-rv", "kube-watch/ordered", "kube-watch/resume"},
			mayFail:  []string{"kube-watch/label-selector", "kube-watch/compaction-edge", "kube-watch/field-selector", "kube-watch/bookmarks", "kube-finalizer/delete-marks"}},
		{name: "initial-events-end-missing",
			frame: func(r *http.Request, f map[string]any) bool {
				if f["type"] == "BOOKMARK" {
					o, _ := f["object"].(map[string]any)
					delete(metaOf(o), "annotations")
				}
				return true
			},
			mustFail: []string{"kube-watch/initial-events"}},
	}
}

// pathCorruptions break the write paths of probes_paths.go.
func pathCorruptions() []corruption {
	ctypeOf := func(r *http.Request) string { ct, _ := r.Context().Value(contentTypeKey{}).(string); return ct }
	isCollection := func(r *http.Request) bool {
		rest := strings.SplitN(r.URL.Path, "/namespaces/", 2)
		return len(rest) == 2 && strings.Count(rest[1], "/") == 1
	}
	// rewriteBody decodes a request's JSON body, lets f change it, and
	// sends the result.
	rewriteBody := func(r *http.Request, f func(v any) any) {
		if r.Body == nil {
			return
		}
		raw, err := io.ReadAll(r.Body)
		r.Body.Close()
		var v any
		if err == nil && json.Unmarshal(raw, &v) == nil {
			raw, _ = json.Marshal(f(v))
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		r.ContentLength = int64(len(raw))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
	}
	isStatus := func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/status") }
	allPatches := []string{"kube-patch/json-patch", "kube-patch/json-patch-test-fails", "kube-patch/merge", "kube-patch/strategic",
		"kube-patch/stale-rv", "kube-patch/stale-uid", "kube-apply/create", "kube-apply/update", "kube-apply/conflict", "kube-apply/force", "kube-dryrun/patch"}
	status := []kube.Resource{kube.VigilObjects}
	return []corruption{
		{name: "patch-not-applied", // every patch arrives empty
			request: func(r *http.Request) {
				switch ctypeOf(r) {
				case "":
				case JSONPatch:
					rewriteBody(r, func(any) any { return []any{} })
				default:
					rewriteBody(r, func(any) any { return map[string]any{} })
				}
			},
			mustFail: allPatches},
		{name: "json-patch-test-dropped",
			request: func(r *http.Request) {
				if ctypeOf(r) == JSONPatch {
					rewriteBody(r, func(v any) any {
						ops, _ := v.([]any)
						return slices.DeleteFunc(ops, func(o any) bool { m, _ := o.(map[string]any); return m["op"] == "test" })
					})
				}
			},
			mustFail: []string{"kube-patch/json-patch-test-fails"}},
		{name: "patch-ignores-preconditions", // a patch's resourceVersion and uid dropped
			request: func(r *http.Request) {
				if ctypeOf(r) == MergePatch {
					rewriteBody(r, func(v any) any {
						if m, ok := v.(map[string]any); ok {
							delete(metaOf(m), "resourceVersion")
							delete(metaOf(m), "uid")
						}
						return v
					})
				}
			},
			mustFail: []string{"kube-patch/stale-rv", "kube-patch/stale-uid"}},
		{name: "apply-always-forced",
			request: func(r *http.Request) {
				if ctypeOf(r) == ApplyPatch {
					q := r.URL.Query()
					q.Set("force", "true")
					r.URL.RawQuery = q.Encode()
				}
			},
			mustFail: []string{"kube-apply/conflict", "kube-apply/force"}},
		{name: "apply-conflict-without-fields",
			answer: func(r *http.Request, code *int, b map[string]any) {
				if *code == http.StatusConflict {
					if d, ok := b["details"].(map[string]any); ok {
						delete(d, "causes")
					}
				}
			},
			mustFail: []string{"kube-apply/conflict", "kube-apply/force"}},
		{name: "delete-collection-ignores-selector",
			request: func(r *http.Request) {
				if r.Method == http.MethodDelete && isCollection(r) {
					dropQuery("labelSelector")(r)
				}
			},
			mustFail: []string{"kube-write/delete-collection"}},
		{name: "collection-deletes-share-rv", // every DELETED of a watch at the first one's resourceVersion
			frame: func() func(r *http.Request, f map[string]any) bool {
				var mu sync.Mutex
				first := map[*http.Request]any{}
				return func(r *http.Request, f map[string]any) bool {
					mu.Lock()
					defer mu.Unlock()
					if f["type"] != "DELETED" {
						return true
					}
					meta := metaOf(f["object"].(map[string]any))
					if rv, ok := first[r]; ok {
						meta["resourceVersion"] = rv
					} else {
						first[r] = meta["resourceVersion"]
					}
					return true
				}
			}(),
			mustFail: []string{"kube-write/delete-collection"}},
		{name: "finalizers-dropped",
			request: func(r *http.Request) {
				if r.Method == http.MethodPost || r.Method == http.MethodPut {
					rewriteBody(r, func(v any) any {
						if m, ok := v.(map[string]any); ok {
							delete(metaOf(m), "finalizers")
						}
						return v
					})
				}
			},
			mustFail: []string{"kube-finalizer/delete-marks", "kube-finalizer/remove-deletes"}},
		{name: "deletion-mark-not-watched", // the MODIFIED that marks a deletion is not delivered
			frame: func(r *http.Request, f map[string]any) bool {
				o, _ := f["object"].(map[string]any)
				return f["type"] != "MODIFIED" || metaOf(o)["deletionTimestamp"] == nil
			},
			mustFail: []string{"kube-finalizer/delete-marks"}},
		{name: "dry-run-dropped",
			request:  dropQuery("dryRun"),
			mustFail: []string{"kube-dryrun/create", "kube-dryrun/update", "kube-dryrun/patch", "kube-dryrun/delete"}},
		{name: "generate-name-fixed", // the server makes the same name every time
			request: func(r *http.Request) {
				if r.Method == http.MethodPost {
					rewriteBody(r, func(v any) any {
						if m, ok := v.(map[string]any); ok {
							if g := str(metaOf(m)["generateName"]); g != "" {
								metaOf(m)["name"] = g + "fixed"
							}
						}
						return v
					})
				}
			},
			mustFail: []string{"kube-write/generate-name"}},
		{name: "status-write-to-object", // the status subresource written as the object
			request: func(r *http.Request) {
				if isStatus(r) {
					r.URL.Path = strings.TrimSuffix(r.URL.Path, "/status")
				}
			},
			resources: status, only: []string{"kube-status/"},
			mustFail: []string{"kube-status/status-write", "kube-status/data-write"}},
		{name: "generation-moves-with-status",
			answer: func(r *http.Request, code *int, b map[string]any) {
				if isStatus(r) && *code == http.StatusOK {
					if g, ok := metaOf(b)["generation"].(float64); ok {
						metaOf(b)["generation"] = g + 1
					}
				}
			},
			resources: status, only: []string{"kube-status/"},
			mustFail: []string{"kube-status/status-write"}},
		{name: "object-write-loses-status",
			answer: func(r *http.Request, code *int, b map[string]any) {
				if r.Method == http.MethodPut && !isStatus(r) && *code == http.StatusOK {
					delete(b, "status")
				}
			},
			resources: status, only: []string{"kube-status/"},
			mustFail: []string{"kube-status/data-write"}},
	}
}

// Every Kubernetes probe family is shown to fail: each corruption of a
// real kube-apiserver's answers fails the probes that own the broken
// guarantee, and no probe outside its list.
func TestKubeProbesFailOnCorruptAnswers(t *testing.T) {
	base := startKube(t, true)
	cs := append(corruptions(), pathCorruptions()...)
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cfg := base
			cfg.Wrap = c.wrap
			// ConfigMaps only: the custom resource runs the same code in
			// the probes, and the test stays short.
			cfg.Resources = []kube.Resource{kube.ConfigMaps}
			if c.resources != nil {
				cfg.Resources, cfg.Only = c.resources, c.only
			}
			res, err := Run(context.Background(), cfg, Probes())
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				return
			}
			var failed []string
			for _, r := range res {
				behaviour, _, _ := strings.Cut(r.Name, "@")
				if r.Verdict.Failed() || r.Verdict == conformance.Unsupported {
					failed = append(failed, r.Name)
					if !slices.Contains(c.mustFail, behaviour) && !slices.Contains(c.mayFail, behaviour) {
						t.Errorf("%s: %s failed, which does not own the guarantee: %s%s", c.name, r.Name, r.Reason, r.Failure)
					}
					continue
				}
				if slices.Contains(c.mustFail, behaviour) {
					t.Errorf("%s: %s %s, where it must fail", c.name, r.Name, r.Verdict)
				}
			}
			sort.Strings(failed)
			t.Logf("%s: failed %s", c.name, strings.Join(failed, " "))
		}()
	}
	wg.Wait()
}
