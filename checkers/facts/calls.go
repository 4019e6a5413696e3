package facts

import (
	"sort"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// answered reports whether the system answered the call: a response, or a
// definite error (compacted, future revision, refused as unsupported; for Kubernetes, an HTTP
// Status). A timeout, a reset or a refused connection is no answer.
func answered(o *history.Operation) bool {
	return o.Response != nil || o.Code == history.ErrCompacted || o.Code == history.ErrFutureRevision || o.Code == history.ErrRefused
}

// call is when a call returned and whether the system answered it.
type call struct {
	Ret time.Duration
	Ok  bool
}

// Calls lists the calls on the system under test, by return time: the
// Kubernetes calls of a Kubernetes target (its etcd is vigil's oracle, not
// what the clients use), every KV call otherwise.
func Calls(h *history.History) []call {
	var out []call
	if h.Meta.Target.Kind != "kube" {
		for i := range h.Operations {
			o := &h.Operations[i]
			out = append(out, call{o.Return, answered(o)})
		}
	}
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		out = append(out, call{o.Return, o.Response != nil || o.Status != nil})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ret < out[j].Ret })
	return out
}
