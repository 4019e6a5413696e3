package model

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// PreconditionRV is the RV precondition of an update (the body's
// resourceVersion), a patch (a metadata.resourceVersion its body sets) or
// a delete; 0 if none.
func PreconditionRV(o *history.KubeOperation) int64 {
	var s string
	switch o.Request.Verb {
	case history.KubeUpdate:
		if o.Request.Object != nil {
			s = o.Request.Object.ResourceVersion
		}
	case history.KubePatch:
		s, _ = PatchPreconditions(o)
	case history.KubeDelete:
		s = o.Request.PreconditionRV
	}
	n, _ := facts.ParseRV(s)
	return n
}

// PreconditionUID is the uid precondition of an update, patch or delete.
func PreconditionUID(o *history.KubeOperation) string {
	switch o.Request.Verb {
	case history.KubeUpdate:
		if o.Request.Object != nil {
			return o.Request.Object.UID
		}
		return ""
	case history.KubePatch:
		_, uid := PatchPreconditions(o)
		return uid
	}
	return o.Request.PreconditionUID
}

// PatchPreconditions reads the metadata.resourceVersion and metadata.uid a
// patch's body sets. The server applies the patch to the object it read
// and then writes it conditionally on the resulting resourceVersion, so
// one the patch sets is a precondition, as an update's is (409 when it no
// longer holds: k8s.io/apiserver/pkg/endpoints/handlers/patch.go, and the
// store's Update in k8s.io/apiserver/pkg/registry/generic/registry/store.go).
// A JSON patch's "test" operation is not one: it fails with 422.
func PatchPreconditions(o *history.KubeOperation) (rv, uid string) {
	body := strings.TrimSpace(o.Request.Patch)
	if body == "" {
		return "", ""
	}
	if o.Request.PatchType == history.PatchJSON {
		var ops []struct {
			Op, Path string
			Value    any
		}
		if json.Unmarshal([]byte(body), &ops) != nil {
			return "", ""
		}
		for _, op := range ops {
			v, _ := op.Value.(string)
			if op.Op != "add" && op.Op != "replace" {
				continue
			}
			switch op.Path {
			case "/metadata/resourceVersion":
				rv = v
			case "/metadata/uid":
				uid = v
			}
		}
		return rv, uid
	}
	var doc struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
			UID             string `json:"uid"`
		} `json:"metadata"`
	}
	if json.Unmarshal([]byte(body), &doc) == nil {
		return doc.Metadata.ResourceVersion, doc.Metadata.UID
	}
	// An apply body in YAML: the metadata block's keys, indented.
	if m := yamlRV.FindStringSubmatch(body); m != nil {
		rv = m[1]
	}
	if m := yamlUID.FindStringSubmatch(body); m != nil {
		uid = m[1]
	}
	return rv, uid
}

var (
	yamlRV  = regexp.MustCompile(`(?m)^\s+resourceVersion:\s*["']?([0-9]+)["']?\s*$`)
	yamlUID = regexp.MustCompile(`(?m)^\s+uid:\s*["']?([^"'\s]+)["']?\s*$`)
)

// IsStatusWrite reports a write of the status subresource.
func IsStatusWrite(o *history.KubeOperation) bool {
	return o.Request.Subresource == history.SubresourceStatus
}

// SetsFinalizers reports whether a write sets the object's finalizers: an
// update or create always does (its body is the whole object); a patch
// when its body names them.
func SetsFinalizers(o *history.KubeOperation) bool {
	switch o.Request.Verb {
	case history.KubeCreate, history.KubeUpdate:
		return !IsStatusWrite(o)
	case history.KubePatch:
		return !IsStatusWrite(o) && strings.Contains(o.Request.Patch, "finalizers")
	}
	return false
}

// SetsLabels reports whether a write sets the object's labels (a patch
// when its body names them).
func SetsLabels(o *history.KubeOperation) bool {
	switch o.Request.Verb {
	case history.KubeCreate, history.KubeUpdate:
		return !IsStatusWrite(o)
	case history.KubePatch:
		return !IsStatusWrite(o) && strings.Contains(o.Request.Patch, "labels")
	}
	return false
}

// RemovesAllFinalizers reports an update or patch that leaves the object
// no finalizers: on an object being deleted it deletes it.
func RemovesAllFinalizers(o *history.KubeOperation) bool {
	return SetsFinalizers(o) && o.Request.Verb != history.KubeCreate &&
		(o.Request.Object == nil || len(o.Request.Object.Finalizers) == 0)
}

// IsApply reports a server-side apply. An apply creates the object when
// it does not exist (a 201), so it may be a create or an update of it.
func IsApply(o *history.KubeOperation) bool {
	return o.Request.Verb == history.KubePatch && o.Request.PatchType == history.PatchApply
}

// PurgedBy reports an acknowledged update or patch that removed the last
// finalizer of an object marked for deletion, and so deleted it
// (store.go's Update: errEmptiedFinalizers, deleteWithoutFinalizers). As
// kube-apiserver v1.36.3 answers it, measured: the write's own new state
// (its value, no finalizers, still marked) at the RV of the state it
// replaced; the deletion takes an RV of its own, which only the DELETED
// event shows, and carries the state stored before the write.
func PurgedBy(o *history.KubeOperation) bool {
	return RemovesAllFinalizers(o) && o.Response != nil && o.Response.Object != nil &&
		o.Response.Object.DeletionTimestamp != "" && len(o.Response.Object.Finalizers) == 0
}
