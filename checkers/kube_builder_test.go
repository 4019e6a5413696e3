package checkers

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// kb builds small Kubernetes histories by hand. Times are plain integers
// (nanoseconds on the run's clock); RVs are ints.
type kb struct {
	h      *history.History
	nextOp int64
}

func newKB() *kb {
	return &kb{h: history.New(history.Meta{Prefix: "/registry/configmaps/ns/", Target: history.Target{Kind: "kube"}})}
}

func rvs(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

// kobj is an object: name, value, RV and "k=v" labels.
func kobjOf(name, value string, rv int64, labels ...string) history.Object {
	o := history.Object{Name: name, Value: value, ResourceVersion: rvs(rv), UID: "uid-" + name}
	for _, l := range labels {
		k, v, _ := strings.Cut(l, "=")
		if o.Labels == nil {
			o.Labels = map[string]string{}
		}
		o.Labels[k] = v
	}
	return o
}

func (b *kb) add(r history.Record) {
	if err := b.h.Add(r); err != nil {
		panic(err)
	}
}

func (b *kb) op(client, call, ret int, req history.KubeRequest, resp *history.KubeResponse, st *history.KubeStatus, errText string) int64 {
	b.nextOp++
	o := history.KubeOperation{ID: b.nextOp, Client: client, Server: "kube-0", Call: time.Duration(call),
		Return: time.Duration(ret), Request: req, Response: resp, Status: st, Error: errText}
	b.add(history.Record{KubeOp: &o})
	return b.nextOp
}

// create records an acknowledged create at rv.
func (b *kb) create(client, call, ret int, obj history.Object) int64 {
	body := obj
	body.ResourceVersion, body.UID = "", ""
	return b.op(client, call, ret, history.KubeRequest{Verb: history.KubeCreate, Object: &body},
		&history.KubeResponse{Code: 201, Object: &obj}, nil, "")
}

// update records an update with precondition prec, acknowledged at obj's RV.
func (b *kb) update(client, call, ret int, prec int64, obj history.Object) int64 {
	body := obj
	body.ResourceVersion, body.UID = rvs(prec), ""
	return b.op(client, call, ret, history.KubeRequest{Verb: history.KubeUpdate, Name: obj.Name, Object: &body},
		&history.KubeResponse{Code: 200, Object: &obj}, nil, "")
}

// updateRefused records an update answered with code.
func (b *kb) updateRefused(client, call, ret int, prec int64, obj history.Object, code int) int64 {
	body := obj
	body.ResourceVersion, body.UID = rvs(prec), ""
	return b.op(client, call, ret, history.KubeRequest{Verb: history.KubeUpdate, Name: obj.Name, Object: &body},
		nil, &history.KubeStatus{Code: code, Reason: "Conflict"}, "")
}

// updateLost records an update with no answer (unknown outcome).
func (b *kb) updateLost(client, call, ret int, prec int64, obj history.Object) int64 {
	body := obj
	body.ResourceVersion, body.UID = rvs(prec), ""
	return b.op(client, call, ret, history.KubeRequest{Verb: history.KubeUpdate, Name: obj.Name, Object: &body},
		nil, nil, "context deadline exceeded")
}

// del records a delete acknowledged with a Status (no RV), as ConfigMaps answer.
func (b *kb) del(client, call, ret int, name string, prec int64) int64 {
	return b.op(client, call, ret, history.KubeRequest{Verb: history.KubeDelete, Name: name, PreconditionRV: rvs(prec)},
		&history.KubeResponse{Code: 200}, nil, "")
}

func (b *kb) get(client, call, ret int, name, reqRV string, obj *history.Object) int64 {
	req := history.KubeRequest{Verb: history.KubeGet, Name: name, ResourceVersion: reqRV}
	if obj == nil {
		return b.op(client, call, ret, req, nil, &history.KubeStatus{Code: 404, Reason: "NotFound"}, "")
	}
	return b.op(client, call, ret, req, &history.KubeResponse{Code: 200, Object: obj}, nil, "")
}

func (b *kb) list(client, call, ret int, req history.KubeRequest, listRV int64, cont string, items ...history.Object) int64 {
	req.Verb = history.KubeList
	return b.op(client, call, ret, req, &history.KubeResponse{Code: 200, ListRV: rvs(listRV), Continue: cont, Items: items}, nil, "")
}

func (b *kb) listStatus(client, call, ret int, req history.KubeRequest, st history.KubeStatus) int64 {
	req.Verb = history.KubeList
	return b.op(client, call, ret, req, nil, &st, "")
}

func (b *kb) watch(id int64, client, call int, req history.KubeWatchRequest) int64 {
	b.add(history.Record{KubeWatch: &history.KubeWatch{ID: id, Client: client, Server: "kube-0", Call: time.Duration(call), Request: req}})
	return id
}

func (b *kb) resume(id, of int64, client, call int, req history.KubeWatchRequest) int64 {
	b.add(history.Record{KubeWatch: &history.KubeWatch{ID: id, Client: client, Server: "kube-0", Call: time.Duration(call),
		Resumes: of, Request: req}})
	return id
}

func (b *kb) ev(w int64, t int, typ string, obj history.Object) {
	o := obj
	b.add(history.Record{KubeEvent: &history.KubeEvent{Watch: w, Time: time.Duration(t), Type: typ, Object: &o}})
}

func (b *kb) bookmark(w int64, t int, rv int64, initialEnd bool) {
	o := history.Object{ResourceVersion: rvs(rv)}
	if initialEnd {
		o.Annotations = map[string]string{history.AnnotationInitialEventsEnd: "true"}
	}
	b.add(history.Record{KubeEvent: &history.KubeEvent{Watch: w, Time: time.Duration(t), Type: history.KubeBookmark, Object: &o}})
}

func (b *kb) errEv(w int64, t int, code int, reason string) {
	b.add(history.Record{KubeEvent: &history.KubeEvent{Watch: w, Time: time.Duration(t), Type: history.KubeError,
		Status: &history.KubeStatus{Code: code, Reason: reason}}})
}

func (b *kb) end(w int64, t int, reason history.WatchEndReason, st *history.KubeStatus) {
	b.add(history.Record{KubeWatchEnd: &history.KubeWatchEnd{Watch: w, Time: time.Duration(t), Reason: reason, Status: st}})
}

func (b *kb) mark(name string, t int, op, rv int64) {
	b.add(history.Record{Mark: &history.Mark{Name: name, Time: time.Duration(t), Op: op, Revision: rv}})
}

func (b *kb) fault(id int64, name string, start, end int, targets ...string) {
	b.add(history.Record{Fault: &history.Fault{ID: id, Name: name, Start: time.Duration(start), End: time.Duration(end), Targets: targets}})
}

// The base scenario: a (group a) created at 10, b (group b) created at
// 12, a updated at 15, b deleted at 18 (its RV known only from watches),
// a updated at 20 moving it to group b. Other resources take the RVs in
// between.
var (
	a10    = kobjOf("a", "v:a1", 10, "g=a")
	b12    = kobjOf("b", "v:b1", 12, "g=b")
	a15    = kobjOf("a", "v:a2", 15, "g=a")
	b18    = kobjOf("b", "v:b1", 18, "g=b") // DELETED carries b's last state at the deletion's RV
	a20    = kobjOf("a", "v:a3", 20, "g=b")
	a20del = kobjOf("a", "v:a2", 20, "g=a") // a leaving g=a: DELETED with its last matching state
)

func baseWrites(b *kb) {
	b.create(1, 0, 10, a10)
	b.create(1, 20, 30, b12)
	b.update(1, 40, 50, 10, a15)
	b.del(1, 60, 70, "b", 12)
	b.update(1, 80, 90, 15, a20)
}

// fullWatch is a watch from 9 without a selector that saw everything.
func fullWatch(b *kb, id int64) {
	b.watch(id, 5, 1, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true})
	b.ev(id, 11, history.KubeAdded, a10)
	b.ev(id, 31, history.KubeAdded, b12)
	b.ev(id, 51, history.KubeModified, a15)
	b.ev(id, 71, history.KubeDeleted, b18)
	b.ev(id, 91, history.KubeModified, a20)
	b.bookmark(id, 95, 21, false)
	b.end(id, 200, history.EndClient, nil)
}

// selWatch is a watch from 9 with selector g=a that saw everything.
func selWatch(b *kb, id int64) {
	b.watch(id, 6, 1, history.KubeWatchRequest{ResourceVersion: "9", LabelSelector: "g=a"})
	b.ev(id, 11, history.KubeAdded, a10)
	b.ev(id, 51, history.KubeModified, a15)
	b.ev(id, 91, history.KubeDeleted, a20del)
	b.end(id, 200, history.EndClient, nil)
}

// kcase is one hand-built history and the verdict a check must give it.
type kcase struct {
	name  string
	want  Verdict
	watch int64
	key   string
	rev   int64
	op    int64 // an operation the first violation must name (0: any)
	msg   string
	// any: the violation to match may be any of them (a history that
	// breaks the guarantee twice over), not only the first.
	any   bool
	build func(b *kb)
}

func runKubeCases(t *testing.T, run func(*history.History, Config) Result, sentinel error, cases []kcase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newKB()
			c.build(b)
			r := run(b.h, DefaultConfig())
			if r.Verdict != c.want {
				t.Fatalf("verdict %s (%s), want %s; violations %s", r.Verdict, r.Reason, c.want, violationTexts(r.Violations))
			}
			if c.want != Fail {
				return
			}
			v := r.Violations[0]
			if c.any {
				for _, x := range r.Violations {
					if strings.Contains(x.Message, c.msg) {
						v = x
						break
					}
				}
			}
			if !errors.Is(v, sentinel) {
				t.Errorf("violation does not wrap %v", sentinel)
			}
			if v.Watch != c.watch || (c.rev != 0 && v.Revision != c.rev) || (c.key != "" && v.Key != c.key) {
				t.Errorf("violation names watch %d RV %d key %q, want %d %d %q: %s", v.Watch, v.Revision, v.Key,
					c.watch, c.rev, c.key, v.Message)
			}
			if c.op != 0 && !containsID(v.Operations, c.op) {
				t.Errorf("violation names operations %v, want %d among them: %s", v.Operations, c.op, v.Message)
			}
			if !strings.Contains(v.Message, c.msg) {
				t.Errorf("message %q lacks %q", v.Message, c.msg)
			}
		})
	}
}

func violationTexts(vs []Violation) string {
	var s []string
	for _, v := range vs {
		s = append(s, v.Message)
	}
	return "[" + strings.Join(s, " | ") + "]"
}
