// Package histbuild builds histories for the checks' tests: small ones
// by hand (Builder, KubeBuilder), large valid ones by simulation
// (Generate, GenWatchHistory, GenKubeHistory), and the table runners the
// tests of each family share.
package histbuild

import (
	"time"

	"github.com/vigil-suite/vigil/history"
)

// hb builds small histories by hand. Times are plain integers (nanoseconds
// on the run's clock); the prefix is "/p/" and keys are given short.
type Builder struct {
	H      *history.History
	nextOp int64
}

const TestPrefix = "/p/"

func New() *Builder { return &Builder{H: history.New(history.Meta{Prefix: TestPrefix})} }

func K(short string) string { return TestPrefix + short }

func Kv(key, val string, create, mod, ver int64) history.KV {
	return history.KV{Key: K(key), Value: val, CreateRevision: create, ModRevision: mod, Version: ver}
}

func (b *Builder) Op(client, call, ret int, req history.Request, resp *history.Response, code history.ErrorCode) int64 {
	b.nextOp++
	o := history.Operation{ID: b.nextOp, Client: client, Call: time.Duration(call), Return: time.Duration(ret),
		Request: req, Response: resp, Code: code}
	if resp == nil {
		o.Error = string(code)
	}
	if err := b.H.Add(history.Record{Op: &o}); err != nil {
		panic(err)
	}
	return b.nextOp
}

func (b *Builder) Put(client, call, ret int, key, val string, rev int64) int64 {
	return b.Op(client, call, ret, history.Request{Kind: history.OpPut, Key: K(key), Value: val},
		&history.Response{Revision: rev}, "")
}

// PutFail records a put whose outcome is unknown.
func (b *Builder) PutFail(client, call, ret int, key, val string) int64 {
	return b.Op(client, call, ret, history.Request{Kind: history.OpPut, Key: K(key), Value: val}, nil, history.ErrUnknown)
}

func (b *Builder) Get(client, call, ret int, key string, rev int64, kvs ...history.KV) int64 {
	return b.Op(client, call, ret, history.Request{Kind: history.OpRange, Key: K(key)},
		&history.Response{Revision: rev, KVs: kvs, Count: int64(len(kvs))}, "")
}

func (b *Builder) GetAt(client, call, ret int, key string, at, rev int64, code history.ErrorCode, kvs ...history.KV) int64 {
	req := history.Request{Kind: history.OpRange, Key: K(key), Revision: at}
	if code != "" {
		return b.Op(client, call, ret, req, nil, code)
	}
	return b.Op(client, call, ret, req, &history.Response{Revision: rev, KVs: kvs, Count: int64(len(kvs))}, "")
}

func (b *Builder) Del(client, call, ret int, key string, deleted, rev int64) int64 {
	return b.Op(client, call, ret, history.Request{Kind: history.OpDelete, Key: K(key)},
		&history.Response{Revision: rev, Deleted: deleted}, "")
}

// Cas records the workload's txn: if mod(key) = mod then put(key, val)
// else get(key), answered with succeeded, header rev and, on failure, the
// key-values the failure branch read.
func (b *Builder) Cas(client, call, ret int, key string, mod int64, val string, succeeded bool, rev int64, read ...history.KV) int64 {
	req := casReq(key, mod, val)
	resp := &history.Response{Revision: rev, Succeeded: succeeded}
	if succeeded {
		resp.Responses = []history.Response{{Revision: rev}}
	} else {
		resp.Responses = []history.Response{{Revision: rev, KVs: read, Count: int64(len(read))}}
	}
	return b.Op(client, call, ret, req, resp, "")
}

func casReq(key string, mod int64, val string) history.Request {
	return history.Request{Kind: history.OpTxn,
		Compares: []history.Compare{{Key: K(key), Target: "mod", Result: "=", Int: mod}},
		Success:  []history.Request{{Kind: history.OpPut, Key: K(key), Value: val}},
		Failure:  []history.Request{{Kind: history.OpRange, Key: K(key)}}}
}

func (b *Builder) Compact(client, call, ret int, at, rev int64, code history.ErrorCode) int64 {
	req := history.Request{Kind: history.OpCompact, Revision: at}
	if code != "" {
		return b.Op(client, call, ret, req, nil, code)
	}
	return b.Op(client, call, ret, req, &history.Response{Revision: rev}, "")
}

// Watch opens a watch on the prefix (end "" for a single key via req).
func (b *Builder) Watch(id int64, client, call int, req history.WatchRequest) int64 {
	w := history.Watch{ID: id, Client: client, Call: time.Duration(call), Request: req}
	if err := b.H.Add(history.Record{Watch: &w}); err != nil {
		panic(err)
	}
	return id
}

func PrefixWatch() history.WatchRequest { return history.WatchRequest{Key: TestPrefix, End: "/p0"} }

func (b *Builder) Wresp(r history.WatchResponse) {
	if err := b.H.Add(history.Record{WatchResponse: &r}); err != nil {
		panic(err)
	}
}

func (b *Builder) Created(w int64, t int, rev int64) {
	b.Wresp(history.WatchResponse{Watch: w, Time: time.Duration(t), Revision: rev, Created: true})
}

func (b *Builder) Events(w int64, t int, evs ...history.Event) {
	rev := int64(0)
	for _, e := range evs {
		rev = max(rev, e.Revision())
	}
	b.Wresp(history.WatchResponse{Watch: w, Time: time.Duration(t), Revision: rev, Events: evs})
}

func (b *Builder) Progress(w int64, t int, rev int64) {
	b.Wresp(history.WatchResponse{Watch: w, Time: time.Duration(t), Revision: rev, Progress: true})
}

func (b *Builder) End(w int64, t int, reason history.WatchEndReason) {
	if err := b.H.Add(history.Record{WatchEnd: &history.WatchEnd{Watch: w, Time: time.Duration(t), Reason: reason}}); err != nil {
		panic(err)
	}
}

func (b *Builder) Mark(name string, t int, op, rev int64) {
	if err := b.H.Add(history.Record{Mark: &history.Mark{Name: name, Time: time.Duration(t), Op: op, Revision: rev}}); err != nil {
		panic(err)
	}
}

func PutEv(key, val string, create, mod, ver int64) history.Event {
	return history.Event{Type: history.EventPut, KV: Kv(key, val, create, mod, ver), IsCreate: create == mod}
}

func DelEv(key string, rev int64) history.Event {
	return history.Event{Type: history.EventDelete, KV: history.KV{Key: K(key), ModRevision: rev}}
}

// On sets the member that answered operation id.
func (b *Builder) On(member string, id int64) int64 {
	b.H.Operations[id-1].Member = member
	return id
}

// Sget records an acknowledged serializable get.
func (b *Builder) Sget(client, call, ret int, key string, rev int64, kvs ...history.KV) int64 {
	return b.Op(client, call, ret, history.Request{Kind: history.OpRange, Key: K(key), Serializable: true},
		&history.Response{Revision: rev, KVs: kvs, Count: int64(len(kvs))}, "")
}

// SgetAt is a serializable get at a revision.
func (b *Builder) SgetAt(client, call, ret int, key string, at, rev int64, code history.ErrorCode, kvs ...history.KV) int64 {
	id := b.GetAt(client, call, ret, key, at, rev, code, kvs...)
	b.H.Operations[id-1].Request.Serializable = true
	return id
}

// Txn2 records an acknowledged txn that puts two keys at one revision.
func (b *Builder) Txn2(client, call, ret int, k1, v1, k2, v2 string, rev int64) int64 {
	return b.Op(client, call, ret, history.Request{Kind: history.OpTxn, Success: []history.Request{
		{Kind: history.OpPut, Key: K(k1), Value: v1}, {Kind: history.OpPut, Key: K(k2), Value: v2}}},
		&history.Response{Revision: rev, Succeeded: true, Responses: []history.Response{{Revision: rev}, {Revision: rev}}}, "")
}

// DelFail records a delete whose outcome is unknown.
func (b *Builder) DelFail(client, call, ret int, key string) int64 {
	return b.Op(client, call, ret, history.Request{Kind: history.OpDelete, Key: K(key)}, nil, history.ErrUnknown)
}

func (b *Builder) Status(member string, client, call, ret int, rev int64) int64 {
	return b.On(member, b.Op(client, call, ret, history.Request{Kind: history.OpStatus}, &history.Response{Revision: rev}, ""))
}

func (b *Builder) HashKV(member string, client, call, ret int, at, rev, compact int64, hash uint32) int64 {
	return b.On(member, b.Op(client, call, ret, history.Request{Kind: history.OpHashKV, Revision: at},
		&history.Response{Revision: rev, CompactRevision: compact, Hash: hash}, ""))
}

func (b *Builder) Fault(name string, start, end int) {
	f := history.Fault{ID: int64(len(b.H.Faults) + 1), Name: name, Start: time.Duration(start), End: time.Duration(end)}
	if err := b.H.Add(history.Record{Fault: &f}); err != nil {
		panic(err)
	}
}

// WatchAt opens a watch with every field given.
func (b *Builder) WatchAt(w history.Watch) int64 {
	if err := b.H.Add(history.Record{Watch: &w}); err != nil {
		panic(err)
	}
	return w.ID
}

func (b *Builder) EndWith(w int64, t int, reason history.WatchEndReason, err string) {
	if e := b.H.Add(history.Record{WatchEnd: &history.WatchEnd{Watch: w, Time: time.Duration(t), Reason: reason, Error: err}}); e != nil {
		panic(e)
	}
}
