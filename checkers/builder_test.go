package checkers

import (
	"time"

	"github.com/vigil-suite/vigil/history"
)

// hb builds small histories by hand. Times are plain integers (nanoseconds
// on the run's clock); the prefix is "/p/" and keys are given short.
type hb struct {
	h      *history.History
	nextOp int64
}

const testPrefix = "/p/"

func newHB() *hb { return &hb{h: history.New(history.Meta{Prefix: testPrefix})} }

func k(short string) string { return testPrefix + short }

func kv(key, val string, create, mod, ver int64) history.KV {
	return history.KV{Key: k(key), Value: val, CreateRevision: create, ModRevision: mod, Version: ver}
}

func (b *hb) op(client, call, ret int, req history.Request, resp *history.Response, code history.ErrorCode) int64 {
	b.nextOp++
	o := history.Operation{ID: b.nextOp, Client: client, Call: time.Duration(call), Return: time.Duration(ret),
		Request: req, Response: resp, Code: code}
	if resp == nil {
		o.Error = string(code)
	}
	if err := b.h.Add(history.Record{Op: &o}); err != nil {
		panic(err)
	}
	return b.nextOp
}

func (b *hb) put(client, call, ret int, key, val string, rev int64) int64 {
	return b.op(client, call, ret, history.Request{Kind: history.OpPut, Key: k(key), Value: val},
		&history.Response{Revision: rev}, "")
}

// putFail records a put whose outcome is unknown.
func (b *hb) putFail(client, call, ret int, key, val string) int64 {
	return b.op(client, call, ret, history.Request{Kind: history.OpPut, Key: k(key), Value: val}, nil, history.ErrUnknown)
}

func (b *hb) get(client, call, ret int, key string, rev int64, kvs ...history.KV) int64 {
	return b.op(client, call, ret, history.Request{Kind: history.OpRange, Key: k(key)},
		&history.Response{Revision: rev, KVs: kvs, Count: int64(len(kvs))}, "")
}

func (b *hb) getAt(client, call, ret int, key string, at, rev int64, code history.ErrorCode, kvs ...history.KV) int64 {
	req := history.Request{Kind: history.OpRange, Key: k(key), Revision: at}
	if code != "" {
		return b.op(client, call, ret, req, nil, code)
	}
	return b.op(client, call, ret, req, &history.Response{Revision: rev, KVs: kvs, Count: int64(len(kvs))}, "")
}

func (b *hb) del(client, call, ret int, key string, deleted, rev int64) int64 {
	return b.op(client, call, ret, history.Request{Kind: history.OpDelete, Key: k(key)},
		&history.Response{Revision: rev, Deleted: deleted}, "")
}

// cas records the workload's txn: if mod(key) = mod then put(key, val)
// else get(key), answered with succeeded, header rev and, on failure, the
// key-values the failure branch read.
func (b *hb) cas(client, call, ret int, key string, mod int64, val string, succeeded bool, rev int64, read ...history.KV) int64 {
	req := casReq(key, mod, val)
	resp := &history.Response{Revision: rev, Succeeded: succeeded}
	if succeeded {
		resp.Responses = []history.Response{{Revision: rev}}
	} else {
		resp.Responses = []history.Response{{Revision: rev, KVs: read, Count: int64(len(read))}}
	}
	return b.op(client, call, ret, req, resp, "")
}

func casReq(key string, mod int64, val string) history.Request {
	return history.Request{Kind: history.OpTxn,
		Compares: []history.Compare{{Key: k(key), Target: "mod", Result: "=", Int: mod}},
		Success:  []history.Request{{Kind: history.OpPut, Key: k(key), Value: val}},
		Failure:  []history.Request{{Kind: history.OpRange, Key: k(key)}}}
}

func (b *hb) compact(client, call, ret int, at, rev int64, code history.ErrorCode) int64 {
	req := history.Request{Kind: history.OpCompact, Revision: at}
	if code != "" {
		return b.op(client, call, ret, req, nil, code)
	}
	return b.op(client, call, ret, req, &history.Response{Revision: rev}, "")
}

// watch opens a watch on the prefix (end "" for a single key via req).
func (b *hb) watch(id int64, client, call int, req history.WatchRequest) int64 {
	w := history.Watch{ID: id, Client: client, Call: time.Duration(call), Request: req}
	if err := b.h.Add(history.Record{Watch: &w}); err != nil {
		panic(err)
	}
	return id
}

func prefixWatch() history.WatchRequest { return history.WatchRequest{Key: testPrefix, End: "/p0"} }

func (b *hb) wresp(r history.WatchResponse) {
	if err := b.h.Add(history.Record{WatchResponse: &r}); err != nil {
		panic(err)
	}
}

func (b *hb) created(w int64, t int, rev int64) {
	b.wresp(history.WatchResponse{Watch: w, Time: time.Duration(t), Revision: rev, Created: true})
}

func (b *hb) events(w int64, t int, evs ...history.Event) {
	rev := int64(0)
	for _, e := range evs {
		rev = max(rev, e.Revision())
	}
	b.wresp(history.WatchResponse{Watch: w, Time: time.Duration(t), Revision: rev, Events: evs})
}

func (b *hb) progress(w int64, t int, rev int64) {
	b.wresp(history.WatchResponse{Watch: w, Time: time.Duration(t), Revision: rev, Progress: true})
}

func (b *hb) end(w int64, t int, reason history.WatchEndReason) {
	if err := b.h.Add(history.Record{WatchEnd: &history.WatchEnd{Watch: w, Time: time.Duration(t), Reason: reason}}); err != nil {
		panic(err)
	}
}

func (b *hb) mark(name string, t int, op, rev int64) {
	if err := b.h.Add(history.Record{Mark: &history.Mark{Name: name, Time: time.Duration(t), Op: op, Revision: rev}}); err != nil {
		panic(err)
	}
}

func putEv(key, val string, create, mod, ver int64) history.Event {
	return history.Event{Type: history.EventPut, KV: kv(key, val, create, mod, ver), IsCreate: create == mod}
}

func delEv(key string, rev int64) history.Event {
	return history.Event{Type: history.EventDelete, KV: history.KV{Key: k(key), ModRevision: rev}}
}
