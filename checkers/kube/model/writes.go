package model

import (
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// PreconditionRV is the RV precondition of an update (the body's
// resourceVersion) or a delete; 0 if none.
func PreconditionRV(o *history.KubeOperation) int64 {
	var s string
	switch o.Request.Verb {
	case history.KubeUpdate:
		if o.Request.Object != nil {
			s = o.Request.Object.ResourceVersion
		}
	case history.KubeDelete:
		s = o.Request.PreconditionRV
	}
	n, _ := facts.ParseRV(s)
	return n
}

// PreconditionUID is the uid precondition of an update or delete.
func PreconditionUID(o *history.KubeOperation) string {
	if o.Request.Verb == history.KubeUpdate && o.Request.Object != nil {
		return o.Request.Object.UID
	}
	return o.Request.PreconditionUID
}
