package histbuild

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// kb builds small Kubernetes histories by hand. Times are plain integers
// (nanoseconds on the run's clock); RVs are ints.
type KubeBuilder struct {
	H      *history.History
	nextOp int64
}

func NewKube() *KubeBuilder {
	return &KubeBuilder{H: history.New(history.Meta{Prefix: "/registry/configmaps/ns/", Target: history.Target{Kind: "kube"}})}
}

func rvs(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

// kobj is an object: name, value, RV and "k=v" labels.
func KobjOf(name, value string, rv int64, labels ...string) history.Object {
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

func (b *KubeBuilder) Add(r history.Record) {
	if err := b.H.Add(r); err != nil {
		panic(err)
	}
}

func (b *KubeBuilder) Op(client, call, ret int, req history.KubeRequest, resp *history.KubeResponse, st *history.KubeStatus, errText string) int64 {
	b.nextOp++
	o := history.KubeOperation{ID: b.nextOp, Client: client, Server: "kube-0", Call: time.Duration(call),
		Return: time.Duration(ret), Request: req, Response: resp, Status: st, Error: errText}
	b.Add(history.Record{KubeOp: &o})
	return b.nextOp
}

// Create records an acknowledged create at rv.
func (b *KubeBuilder) Create(client, call, ret int, obj history.Object) int64 {
	body := obj
	body.ResourceVersion, body.UID = "", ""
	return b.Op(client, call, ret, history.KubeRequest{Verb: history.KubeCreate, Object: &body},
		&history.KubeResponse{Code: 201, Object: &obj}, nil, "")
}

// Update records an update with precondition prec, acknowledged at obj's RV.
func (b *KubeBuilder) Update(client, call, ret int, prec int64, obj history.Object) int64 {
	body := obj
	body.ResourceVersion, body.UID = rvs(prec), ""
	return b.Op(client, call, ret, history.KubeRequest{Verb: history.KubeUpdate, Name: obj.Name, Object: &body},
		&history.KubeResponse{Code: 200, Object: &obj}, nil, "")
}

// UpdateRefused records an update answered with code.
func (b *KubeBuilder) UpdateRefused(client, call, ret int, prec int64, obj history.Object, code int) int64 {
	body := obj
	body.ResourceVersion, body.UID = rvs(prec), ""
	return b.Op(client, call, ret, history.KubeRequest{Verb: history.KubeUpdate, Name: obj.Name, Object: &body},
		nil, &history.KubeStatus{Code: code, Reason: "Conflict"}, "")
}

// UpdateLost records an update with no answer (unknown outcome).
func (b *KubeBuilder) UpdateLost(client, call, ret int, prec int64, obj history.Object) int64 {
	body := obj
	body.ResourceVersion, body.UID = rvs(prec), ""
	return b.Op(client, call, ret, history.KubeRequest{Verb: history.KubeUpdate, Name: obj.Name, Object: &body},
		nil, nil, "context deadline exceeded")
}

// Del records a delete acknowledged with a Status (no RV), as ConfigMaps answer.
func (b *KubeBuilder) Del(client, call, ret int, name string, prec int64) int64 {
	return b.Op(client, call, ret, history.KubeRequest{Verb: history.KubeDelete, Name: name, PreconditionRV: rvs(prec)},
		&history.KubeResponse{Code: 200}, nil, "")
}

func (b *KubeBuilder) Get(client, call, ret int, name, reqRV string, obj *history.Object) int64 {
	req := history.KubeRequest{Verb: history.KubeGet, Name: name, ResourceVersion: reqRV}
	if obj == nil {
		return b.Op(client, call, ret, req, nil, &history.KubeStatus{Code: 404, Reason: "NotFound"}, "")
	}
	return b.Op(client, call, ret, req, &history.KubeResponse{Code: 200, Object: obj}, nil, "")
}

func (b *KubeBuilder) List(client, call, ret int, req history.KubeRequest, listRV int64, cont string, items ...history.Object) int64 {
	req.Verb = history.KubeList
	return b.Op(client, call, ret, req, &history.KubeResponse{Code: 200, ListRV: rvs(listRV), Continue: cont, Items: items}, nil, "")
}

func (b *KubeBuilder) ListStatus(client, call, ret int, req history.KubeRequest, st history.KubeStatus) int64 {
	req.Verb = history.KubeList
	return b.Op(client, call, ret, req, nil, &st, "")
}

func (b *KubeBuilder) Watch(id int64, client, call int, req history.KubeWatchRequest) int64 {
	b.Add(history.Record{KubeWatch: &history.KubeWatch{ID: id, Client: client, Server: "kube-0", Call: time.Duration(call), Request: req}})
	return id
}

func (b *KubeBuilder) Resume(id, of int64, client, call int, req history.KubeWatchRequest) int64 {
	b.Add(history.Record{KubeWatch: &history.KubeWatch{ID: id, Client: client, Server: "kube-0", Call: time.Duration(call),
		Resumes: of, Request: req}})
	return id
}

func (b *KubeBuilder) Ev(w int64, t int, typ string, obj history.Object) {
	o := obj
	b.Add(history.Record{KubeEvent: &history.KubeEvent{Watch: w, Time: time.Duration(t), Type: typ, Object: &o}})
}

func (b *KubeBuilder) Bookmark(w int64, t int, rv int64, initialEnd bool) {
	o := history.Object{ResourceVersion: rvs(rv)}
	if initialEnd {
		o.Annotations = map[string]string{history.AnnotationInitialEventsEnd: "true"}
	}
	b.Add(history.Record{KubeEvent: &history.KubeEvent{Watch: w, Time: time.Duration(t), Type: history.KubeBookmark, Object: &o}})
}

func (b *KubeBuilder) ErrEv(w int64, t int, code int, reason string) {
	b.Add(history.Record{KubeEvent: &history.KubeEvent{Watch: w, Time: time.Duration(t), Type: history.KubeError,
		Status: &history.KubeStatus{Code: code, Reason: reason}}})
}

func (b *KubeBuilder) End(w int64, t int, reason history.WatchEndReason, st *history.KubeStatus) {
	b.Add(history.Record{KubeWatchEnd: &history.KubeWatchEnd{Watch: w, Time: time.Duration(t), Reason: reason, Status: st}})
}

func (b *KubeBuilder) Mark(name string, t int, op, rv int64) {
	b.Add(history.Record{Mark: &history.Mark{Name: name, Time: time.Duration(t), Op: op, Revision: rv}})
}

// Fault records a fault. Targets named kube-N are API servers, and the
// fault says so as chaos does (layer "apiserver"); others are etcd members.
func (b *KubeBuilder) Fault(id int64, name string, start, end int, targets ...string) {
	f := &history.Fault{ID: id, Name: name, Start: time.Duration(start), End: time.Duration(end), Targets: targets}
	for _, t := range targets {
		if strings.HasPrefix(t, "kube-") {
			f.Details = map[string]string{"layer": "apiserver"}
		}
	}
	b.Add(history.Record{Fault: f})
}

// The base scenario: a (group a) created at 10, b (group b) created at
// 12, a updated at 15, b deleted at 18 (its RV known only from watches),
// a updated at 20 moving it to group b. Other resources take the RVs in
// between.
var (
	A10    = KobjOf("a", "v:a1", 10, "g=a")
	B12    = KobjOf("b", "v:b1", 12, "g=b")
	A15    = KobjOf("a", "v:a2", 15, "g=a")
	B18    = KobjOf("b", "v:b1", 18, "g=b") // DELETED carries b's last state at the deletion's RV
	A20    = KobjOf("a", "v:a3", 20, "g=b")
	A20del = KobjOf("a", "v:a2", 20, "g=a") // a leaving g=a: DELETED with its last matching state
)

func BaseWrites(b *KubeBuilder) {
	b.Create(1, 0, 10, A10)
	b.Create(1, 20, 30, B12)
	b.Update(1, 40, 50, 10, A15)
	b.Del(1, 60, 70, "b", 12)
	b.Update(1, 80, 90, 15, A20)
}

// FullWatch is a watch from 9 without a selector that saw everything.
func FullWatch(b *KubeBuilder, id int64) {
	b.Watch(id, 5, 1, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true})
	FullWatchEvents(b, id)
	b.Bookmark(id, 95, 21, false)
	b.End(id, 200, history.EndClient, nil)
}

// FullWatchEvents are the events of BaseWrites a watch from 9 without a
// selector delivers.
func FullWatchEvents(b *KubeBuilder, id int64) {
	b.Ev(id, 11, history.KubeAdded, A10)
	b.Ev(id, 31, history.KubeAdded, B12)
	b.Ev(id, 51, history.KubeModified, A15)
	b.Ev(id, 71, history.KubeDeleted, B18)
	b.Ev(id, 91, history.KubeModified, A20)
}

// SelWatch is a watch from 9 with selector g=a that saw everything.
func SelWatch(b *KubeBuilder, id int64) {
	b.Watch(id, 6, 1, history.KubeWatchRequest{ResourceVersion: "9", LabelSelector: "g=a"})
	b.Ev(id, 11, history.KubeAdded, A10)
	b.Ev(id, 51, history.KubeModified, A15)
	b.Ev(id, 91, history.KubeDeleted, A20del)
	b.End(id, 200, history.EndClient, nil)
}

// Kcase is one hand-built history and the verdict a check must give it.
type Kcase struct {
	Name  string
	Want  check.Verdict
	Watch int64
	Key   string
	Rev   int64
	Op    int64 // an operation the first violation must name (0: any)
	Msg   string
	// Any: the violation to match may be any of them (a history that
	// breaks the guarantee twice over), not only the first.
	Any bool
	// Excused, when set: the result's excused counts by reason.
	Excused map[string]int
	Build   func(b *KubeBuilder)
}

func RunKubeCases(t *testing.T, run func(*history.History, check.Config) check.Result, sentinel error, cases []Kcase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			b := NewKube()
			c.Build(b)
			r := run(b.H, check.DefaultConfig())
			if r.Verdict != c.Want {
				t.Fatalf("verdict %s (%s), want %s; violations %s", r.Verdict, r.Reason, c.Want, ViolationTexts(r.Violations))
			}
			checkExcused(t, r, c.Excused)
			if c.Want != check.Fail {
				return
			}
			v := r.Violations[0]
			if c.Any {
				for _, x := range r.Violations {
					if strings.Contains(x.Message, c.Msg) {
						v = x
						break
					}
				}
			}
			if !errors.Is(v, sentinel) {
				t.Errorf("violation does not wrap %v", sentinel)
			}
			if v.Watch != c.Watch || (c.Rev != 0 && v.Revision != c.Rev) || (c.Key != "" && v.Key != c.Key) {
				t.Errorf("violation names watch %d RV %d key %q, want %d %d %q: %s", v.Watch, v.Revision, v.Key,
					c.Watch, c.Rev, c.Key, v.Message)
			}
			if c.Op != 0 && !slices.Contains(v.Operations, c.Op) {
				t.Errorf("violation names operations %v, want %d among them: %s", v.Operations, c.Op, v.Message)
			}
			if !strings.Contains(v.Message, c.Msg) {
				t.Errorf("message %q lacks %q", v.Message, c.Msg)
			}
		})
	}
}

func ViolationTexts(vs []check.Violation) string {
	var s []string
	for _, v := range vs {
		s = append(s, v.Message)
	}
	return "[" + strings.Join(s, " | ") + "]"
}

// EtcdWatch records vigil's etcd watch of the API server's keys with
// one response per change: name, revision, "PUT"/"DELETE", value.
func (b *KubeBuilder) EtcdWatch(id int64, from int64, changes ...etcdEv) {
	p := b.H.Meta.Prefix
	b.Add(history.Record{Watch: &history.Watch{ID: id, Client: 50, Request: history.WatchRequest{Key: p, End: p[:len(p)-1] + "0",
		StartRevision: from, ProgressNotify: true}}})
	b.Add(history.Record{WatchResponse: &history.WatchResponse{Watch: id, Time: 1, Revision: from - 1, Created: true}})
	for i, c := range changes {
		ev := history.Event{Type: history.EventPut, KV: history.KV{Key: p + c.name, Value: c.value, ModRevision: c.rev,
			CreateRevision: c.create}}
		if c.del {
			ev = history.Event{Type: history.EventDelete, KV: history.KV{Key: p + c.name, ModRevision: c.rev}}
		}
		ev.IsCreate = !c.del && c.create == c.rev
		b.Add(history.Record{WatchResponse: &history.WatchResponse{Watch: id, Time: time.Duration(10 + i), Revision: c.rev,
			Events: []history.Event{ev}}})
	}
}

type etcdEv struct {
	name        string
	rev, create int64
	value       string
	del         bool
}

func EtcdBase() []etcdEv {
	return []etcdEv{{"a", 10, 10, "v:a1", false}, {"b", 12, 12, "v:b1", false}, {"a", 15, 10, "v:a2", false},
		{"b", 18, 0, "", true}, {"a", 20, 10, "v:a3", false}}
}

// CompactEtcd records a compaction of the etcd under the API server.
func (b *KubeBuilder) CompactEtcd(call, ret int, rev int64) {
	b.Add(history.Record{Op: &history.Operation{ID: 1000 + rev, Client: 99, Call: time.Duration(call), Return: time.Duration(ret),
		Request: history.Request{Kind: history.OpCompact, Revision: rev}, Response: &history.Response{Revision: rev + 5}}})
}
