package facts

import (
	"sort"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// answered reports whether the system answered the call: a response, or a
// definite error (compacted, future revision, key or lease not found,
// invalid, refused as unsupported; for Kubernetes, an HTTP
// Status). A timeout, a reset or a refused connection is no answer.
func answered(o *history.Operation) bool {
	return o.Response != nil || o.Definite() || o.Code == history.ErrRefused
}

// Call is when a call was made and returned, what kind it was and whether
// the system answered it: Ok for any answer, Failed when that answer was a
// definite error (compacted, future revision, refused, an HTTP Status,
// whose code is Status).
type Call struct {
	Start, Ret time.Duration
	Kind       string
	Ok         bool
	Failed     bool
	Status     int
}

// Calls lists the calls on the system under test, by return time: the
// Kubernetes calls of a Kubernetes target (its etcd is vigil's oracle, not
// what the clients use), every KV call otherwise.
func Calls(h *history.History) []Call {
	var out []Call
	if h.Meta.Target.Kind != "kube" {
		for i := range h.Operations {
			o := &h.Operations[i]
			ok := answered(o)
			out = append(out, Call{Start: o.Call, Ret: o.Return, Kind: string(o.Request.Kind), Ok: ok, Failed: ok && o.Response == nil})
		}
	}
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		c := Call{Start: o.Call, Ret: o.Return, Kind: string(o.Request.Verb), Ok: o.Response != nil || o.Status != nil, Failed: o.Status != nil}
		if o.Status != nil {
			c.Status = o.Status.Code
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ret < out[j].Ret })
	return out
}

// Outage is a span in which clients called and got no answer: from the
// answer before the first unanswered call (or the first call's return,
// when nothing had been answered yet: Never) to the next answer. Open
// marks the last one when no answer came after it; To is then the return
// of its last unanswered call.
type Outage struct {
	From, To   time.Duration
	Unanswered int
	Open       bool
	Never      bool
}

// Outages lists the outages of calls sorted by return time (Calls).
func Outages(cs []Call) []Outage {
	var out []Outage
	prev := time.Duration(-1) // the last answer's return; -1: none yet
	cur := Outage{}           // the calls unanswered since prev
	for _, c := range cs {
		if !c.Ok {
			if cur.Unanswered == 0 {
				cur.From, cur.Never = prev, prev < 0
				if cur.Never {
					cur.From = c.Ret
				}
			}
			cur.Unanswered, cur.To = cur.Unanswered+1, c.Ret
			continue
		}
		if cur.Unanswered > 0 {
			cur.To = c.Ret
			out = append(out, cur)
		}
		prev, cur = c.Ret, Outage{}
	}
	if cur.Unanswered > 0 {
		cur.Open = true
		out = append(out, cur)
	}
	return out
}
