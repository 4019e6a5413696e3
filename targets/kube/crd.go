package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// VigilObjects is the custom resource vigil can test instead of ConfigMaps
// (vigil run --resource crd): namespaced, served and stored as v1, with the
// same top-level data map a ConfigMap has, so the workload and the history
// do not change. It goes through the apiextensions API server's code and is
// stored as JSON in etcd (ConfigMaps as protobuf).
var VigilObjects = Resource{Group: "vigil.dev", Version: "v1", Plural: "vigilobjects", Kind: "VigilObject"}

// crdBody is the CustomResourceDefinition of r: a structural schema with
// data (the spec: a map of strings, as a ConfigMap's) and status (a map of
// strings), served with the status subresource, so status writes go
// through /status and leave data alone, and generation moves with data only.
func crdBody(r Resource) map[string]any {
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": r.Plural + "." + r.Group},
		"spec": map[string]any{
			"group": r.Group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": r.Plural, "singular": strings.ToLower(r.Kind), "kind": r.Kind, "listKind": r.Kind + "List"},
			"versions": []any{map[string]any{
				"name": r.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"data":   map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
						"status": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
					},
				}},
				"subresources": map[string]any{"status": map[string]any{}},
			}},
		},
	}
}

// EnsureCRD creates the client's resource's CustomResourceDefinition unless
// it exists, and waits (bounded by ctx) until the resource is served. It is
// the run's setup, not recorded; the definition is left in place (other
// runs against the same server use it too).
func (c *Client) EnsureCRD(ctx context.Context) error {
	r := c.cfg.Resource
	if r.Group == "" {
		return fmt.Errorf("%s is a built-in resource, not a custom one", r.Plural)
	}
	hreq, err := c.newRequest(ctx, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", nil, crdBody(r))
	if err != nil {
		return err
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return fmt.Errorf("creating the %s.%s CustomResourceDefinition: %w", r.Plural, r.Group, err)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict && (resp.StatusCode < 200 || resp.StatusCode > 299) {
		return fmt.Errorf("creating the %s.%s CustomResourceDefinition: %w", r.Plural, r.Group, &StatusError{Status: *statusFrom(resp.StatusCode, b)})
	}
	// Served once a list of the namespace answers 200 (the definition is
	// Established and the API server's handlers know it).
	for {
		hreq, err := c.newRequest(ctx, http.MethodGet, r.path(c.cfg.Namespace), nil, nil)
		if err != nil {
			return err
		}
		resp, err := c.http.Do(hreq)
		if err == nil {
			var l struct {
				Kind string `json:"kind"`
			}
			ok := resp.StatusCode == http.StatusOK && json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&l) == nil
			resp.Body.Close()
			if ok {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the %s.%s custom resource is not served yet: %w", r.Plural, r.Group, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ResourceNamed maps the --resource flag's names to resources.
func ResourceNamed(name string) (Resource, bool) {
	switch name {
	case "configmaps", "":
		return ConfigMaps, true
	case "crd", VigilObjects.Plural:
		return VigilObjects, true
	}
	return Resource{}, false
}

// EtcdPrefix is where a Kubernetes API server with --etcd-prefix root keeps
// the resource's objects of namespace ns: root/configmaps/ns/ for core
// resources, root/<group>/<plural>/ns/ for custom ones.
func (r Resource) EtcdPrefix(root, ns string) string {
	p := root
	if len(p) == 0 || p[len(p)-1] != '/' {
		p += "/"
	}
	if r.Group != "" {
		p += r.Group + "/"
	}
	return p + r.Plural + "/" + ns + "/"
}

// String names the resource as kubectl does: plural, or plural.group.
func (r Resource) String() string {
	if r.Group == "" {
		return r.Plural
	}
	return r.Plural + "." + r.Group
}
