package kube

import (
	"encoding/json"
	"fmt"

	"github.com/vigil-suite/vigil/history"
)

// The JSON shapes vigil reads and writes, reduced to the fields it looks
// at. Unknown fields are ignored, so any Kubernetes-API server's answers
// decode.

type wireMeta struct {
	Name              string            `json:"name,omitempty"`
	GenerateName      string            `json:"generateName,omitempty"`
	Generation        int64             `json:"generation,omitempty"`
	Finalizers        []string          `json:"finalizers,omitempty"`
	DeletionTimestamp string            `json:"deletionTimestamp,omitempty"`
	Namespace         string            `json:"namespace,omitempty"`
	UID               string            `json:"uid,omitempty"`
	ResourceVersion   string            `json:"resourceVersion,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
}

// wireObject is a ConfigMap (or a Status: Kind tells).
type wireObject struct {
	APIVersion string            `json:"apiVersion,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	Metadata   wireMeta          `json:"metadata"`
	Data       map[string]string `json:"data,omitempty"`
	// Status is a custom resource's status (status.value); ConfigMaps
	// have none.
	Status statusMap `json:"status,omitempty"`
}

// statusMap is an object's status map. A metav1.Status, which a delete
// may answer with instead of the object, has a string there ("Success"):
// that decodes to nothing rather than failing the answer.
type statusMap map[string]string

func (m *statusMap) UnmarshalJSON(b []byte) error {
	var v map[string]string
	if json.Unmarshal(b, &v) == nil {
		*m = v
	}
	return nil
}

type wireListMeta struct {
	ResourceVersion    string `json:"resourceVersion,omitempty"`
	Continue           string `json:"continue,omitempty"`
	RemainingItemCount *int64 `json:"remainingItemCount,omitempty"`
}

type wireList struct {
	Kind     string       `json:"kind,omitempty"`
	Metadata wireListMeta `json:"metadata"`
	Items    []wireObject `json:"items"`
}

// wireStatus is a metav1.Status.
type wireStatus struct {
	Kind     string       `json:"kind,omitempty"`
	Status   string       `json:"status,omitempty"`
	Code     int          `json:"code,omitempty"`
	Reason   string       `json:"reason,omitempty"`
	Message  string       `json:"message,omitempty"`
	Metadata wireListMeta `json:"metadata"`
	Details  *struct {
		Causes []struct {
			Type    string `json:"reason,omitempty"`
			Message string `json:"message,omitempty"`
			Field   string `json:"field,omitempty"`
		} `json:"causes,omitempty"`
	} `json:"details,omitempty"`
}

// wireEvent is one frame of a JSON watch stream.
type wireEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// deleteOptions is the body of a delete with preconditions.
type deleteOptions struct {
	APIVersion    string `json:"apiVersion"`
	Kind          string `json:"kind"`
	Preconditions *struct {
		ResourceVersion string `json:"resourceVersion,omitempty"`
		UID             string `json:"uid,omitempty"`
	} `json:"preconditions,omitempty"`
	// DryRun: kube-apiserver reads a DELETE's options from its body when
	// it has one, and then ignores the query's dryRun (handlers/delete.go):
	// a body's dry run must say so itself.
	DryRun []string `json:"dryRun,omitempty"`
}

// ValueKey is the data key that carries an object's unique value.
const ValueKey = "value"

// toObject keeps what the history records of an object. Annotations only
// when keepAnnotations (BOOKMARKs), so histories stay small.
func toObject(o wireObject, keepAnnotations bool) *history.Object {
	out := &history.Object{Name: o.Metadata.Name, UID: o.Metadata.UID,
		ResourceVersion: o.Metadata.ResourceVersion, Value: o.Data[ValueKey], GenerateName: o.Metadata.GenerateName,
		Finalizers: o.Metadata.Finalizers, DeletionTimestamp: o.Metadata.DeletionTimestamp,
		Generation: o.Metadata.Generation, Status: o.Status[ValueKey]}
	if len(o.Metadata.Labels) > 0 {
		out.Labels = o.Metadata.Labels
	}
	if keepAnnotations && len(o.Metadata.Annotations) > 0 {
		out.Annotations = o.Metadata.Annotations
	}
	return out
}

// fromObject is the body vigil sends for a create or update: a ConfigMap
// with data["value"] and the labels; metadata.resourceVersion (and uid)
// are the update's preconditions.
func (r Resource) fromObject(o *history.Object, namespace string) wireObject {
	w := wireObject{APIVersion: r.apiVersion(), Kind: r.Kind, Metadata: wireMeta{Name: o.Name, Namespace: namespace,
		UID: o.UID, ResourceVersion: o.ResourceVersion, Labels: o.Labels, GenerateName: o.GenerateName,
		Finalizers: o.Finalizers}}
	if o.Value != "" {
		w.Data = map[string]string{ValueKey: o.Value}
	}
	if o.Status != "" {
		w.Status = map[string]string{ValueKey: o.Status}
	}
	return w
}

// toStatus converts a metav1.Status.
func toStatus(s wireStatus) *history.KubeStatus {
	out := &history.KubeStatus{Code: s.Code, Reason: s.Reason, Message: s.Message, Continue: s.Metadata.Continue}
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Type != "" {
				out.Causes = append(out.Causes, c.Type)
			}
			if c.Field != "" {
				out.Fields = append(out.Fields, c.Field)
			}
		}
	}
	return out
}

// fromWireEvent converts one watch frame. An ERROR frame carries a
// Status; every other type an object (a BOOKMARK only its RV and
// annotations).
func fromWireEvent(we wireEvent) (history.KubeEvent, error) {
	ev := history.KubeEvent{Type: we.Type}
	switch we.Type {
	case history.KubeAdded, history.KubeModified, history.KubeDeleted, history.KubeBookmark:
		var o wireObject
		if err := json.Unmarshal(we.Object, &o); err != nil {
			return ev, fmt.Errorf("watch %s frame with an undecodable object: %w", we.Type, err)
		}
		ev.Object = toObject(o, we.Type == history.KubeBookmark)
	case history.KubeError:
		var s wireStatus
		if err := json.Unmarshal(we.Object, &s); err != nil {
			return ev, fmt.Errorf("watch ERROR frame with an undecodable Status: %w", err)
		}
		ev.Status = toStatus(s)
	default:
		return ev, fmt.Errorf("watch frame of unknown type %q", we.Type)
	}
	return ev, nil
}
