package checkers

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// More builders for hand-made histories (see builder_test.go).

// on sets the member that answered operation id.
func (b *hb) on(member string, id int64) int64 {
	b.h.Operations[id-1].Member = member
	return id
}

// sget records an acknowledged serializable get.
func (b *hb) sget(client, call, ret int, key string, rev int64, kvs ...history.KV) int64 {
	return b.op(client, call, ret, history.Request{Kind: history.OpRange, Key: k(key), Serializable: true},
		&history.Response{Revision: rev, KVs: kvs, Count: int64(len(kvs))}, "")
}

// sgetAt is a serializable get at a revision.
func (b *hb) sgetAt(client, call, ret int, key string, at, rev int64, code history.ErrorCode, kvs ...history.KV) int64 {
	id := b.getAt(client, call, ret, key, at, rev, code, kvs...)
	b.h.Operations[id-1].Request.Serializable = true
	return id
}

// txn2 records an acknowledged txn that puts two keys at one revision.
func (b *hb) txn2(client, call, ret int, k1, v1, k2, v2 string, rev int64) int64 {
	return b.op(client, call, ret, history.Request{Kind: history.OpTxn, Success: []history.Request{
		{Kind: history.OpPut, Key: k(k1), Value: v1}, {Kind: history.OpPut, Key: k(k2), Value: v2}}},
		&history.Response{Revision: rev, Succeeded: true, Responses: []history.Response{{Revision: rev}, {Revision: rev}}}, "")
}

// delFail records a delete whose outcome is unknown.
func (b *hb) delFail(client, call, ret int, key string) int64 {
	return b.op(client, call, ret, history.Request{Kind: history.OpDelete, Key: k(key)}, nil, history.ErrUnknown)
}

func (b *hb) status(member string, client, call, ret int, rev int64) int64 {
	return b.on(member, b.op(client, call, ret, history.Request{Kind: history.OpStatus}, &history.Response{Revision: rev}, ""))
}

func (b *hb) hashKV(member string, client, call, ret int, at, rev, compact int64, hash uint32) int64 {
	return b.on(member, b.op(client, call, ret, history.Request{Kind: history.OpHashKV, Revision: at},
		&history.Response{Revision: rev, CompactRevision: compact, Hash: hash}, ""))
}

func (b *hb) fault(name string, start, end int) {
	f := history.Fault{ID: int64(len(b.h.Faults) + 1), Name: name, Start: time.Duration(start), End: time.Duration(end)}
	if err := b.h.Add(history.Record{Fault: &f}); err != nil {
		panic(err)
	}
}

// watchAt opens a watch with every field given.
func (b *hb) watchAt(w history.Watch) int64 {
	if err := b.h.Add(history.Record{Watch: &w}); err != nil {
		panic(err)
	}
	return w.ID
}

func (b *hb) endWith(w int64, t int, reason history.WatchEndReason, err string) {
	if e := b.h.Add(history.Record{WatchEnd: &history.WatchEnd{Watch: w, Time: time.Duration(t), Reason: reason, Error: err}}); e != nil {
		panic(e)
	}
}

func withPrev(ev history.Event, prev history.KV) history.Event {
	ev.PrevKV = &prev
	return ev
}

// kvCase is one hand-built history judged by one KV check.
type kvCase struct {
	name  string
	build func(b *hb)
	want  Verdict
	// On fail: the first violation names this client, revision (and key
	// when set), cites operation op when set, and its message holds msg.
	client int
	rev    int64
	key    string
	op     int64
	msg    string
}

func runKVCases(t *testing.T, run func(*history.History, Config) Result, sentinel error, cases []kvCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newHB()
			c.build(b)
			r := run(b.h, DefaultConfig())
			if r.Verdict != c.want {
				t.Fatalf("verdict %s (%s), want %s; violations %+v", r.Verdict, r.Reason, c.want, r.Violations)
			}
			if r.Verdict == Skipped || r.Verdict == Unknown {
				if r.Reason == "" {
					t.Errorf("%s without a reason", r.Verdict)
				}
			}
			if c.want != Fail {
				return
			}
			v := r.Violations[0]
			if !errors.Is(v, sentinel) {
				t.Errorf("violation does not wrap %v", sentinel)
			}
			if v.Client != c.client || v.Revision != c.rev || (c.key != "" && v.Key != k(c.key)) {
				t.Errorf("violation names client %d revision %d key %s, want %d %d %s: %s",
					v.Client, v.Revision, v.Key, c.client, c.rev, c.key, v.Message)
			}
			if c.op != 0 && !containsOp(v.Operations, c.op) {
				t.Errorf("violation cites operations %v, want %d among them: %s", v.Operations, c.op, v.Message)
			}
			if !strings.Contains(v.Message, c.msg) {
				t.Errorf("message %q lacks %q", v.Message, c.msg)
			}
		})
	}
}

func containsOp(ops []int64, id int64) bool {
	for _, o := range ops {
		if o == id {
			return true
		}
	}
	return false
}

func durationOf(t int) time.Duration { return time.Duration(t) }
