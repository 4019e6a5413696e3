package linearizable

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func TestLinearizable(t *testing.T) {
	unk := history.ErrUnknown
	cases := []struct {
		name  string
		build func(b *histbuild.Builder) int64 // returns the operation the violation must name first (0 on pass)
		want  check.Verdict
		msg   string // a fragment the violation's message must hold
	}{
		{name: "kv/linearizable - sequential writes and reads from an unknown start revision - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 101)
				b.Get(2, 20, 30, "a", 101, histbuild.Kv("a", "v1", 101, 101, 1))
				b.Put(1, 40, 50, "a", "v2", 102)
				b.Get(2, 60, 70, "a", 102, histbuild.Kv("a", "v2", 101, 102, 2))
				b.Get(2, 80, 90, "b", 102)
				return 0
			}},
		{name: "kv/linearizable - concurrent put and reads see either order - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 60, "a", "v2", 12)
				b.Get(2, 25, 30, "a", 11, histbuild.Kv("a", "v1", 11, 11, 1))
				b.Get(3, 25, 35, "a", 12, histbuild.Kv("a", "v2", 11, 12, 2))
				b.Get(2, 40, 50, "a", 12, histbuild.Kv("a", "v2", 11, 12, 2))
				return 0
			}},
		{name: "kv/linearizable - failed write that was applied - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.PutFail(1, 20, 30, "a", "v2")
				b.Get(2, 40, 50, "a", 12, histbuild.Kv("a", "v2", 11, 12, 2))
				return 0
			}},
		{name: "kv/linearizable - failed write that was not applied - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.PutFail(1, 20, 30, "a", "v2")
				b.Get(2, 40, 50, "a", 11, histbuild.Kv("a", "v1", 11, 11, 1))
				b.Put(1, 60, 70, "a", "v3", 12)
				b.Get(2, 80, 90, "a", 12, histbuild.Kv("a", "v3", 11, 12, 2))
				return 0
			}},
		{name: "kv/linearizable - unseen failed write applied, shown by a revision gap - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.PutFail(2, 20, 30, "b", "w1")
				b.Put(1, 40, 50, "a", "v2", 13)
				b.Get(3, 60, 70, "a", 13, histbuild.Kv("a", "v2", 11, 13, 2))
				return 0
			}},
		// A run judged while it goes on (a cut) has every request still in
		// flight as one of unknown outcome, while its watches may already
		// show what those did: revisions above every answered request.
		{name: "kv/linearizable - failed delete and put seen applied by a watch above every answer - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Created(w, 1, 10)
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Events(w, 12, history.Event{Type: history.EventPut, KV: histbuild.Kv("a", "v1", 11, 11, 1)})
				b.Op(2, 20, 60, history.Request{Kind: history.OpDelete, Key: histbuild.K("a")}, nil, unk)
				b.PutFail(3, 25, 60, "b", "w1")
				b.Events(w, 40, history.Event{Type: history.EventDelete, KV: history.KV{Key: histbuild.K("a"), ModRevision: 12}})
				b.Events(w, 41, history.Event{Type: history.EventPut, KV: histbuild.Kv("b", "w1", 13, 13, 1)})
				return 0
			}},
		{name: "kv/linearizable - a watch shows a revision no write of the history can have made - fail", want: check.Fail,
			build: func(b *histbuild.Builder) int64 {
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Created(w, 1, 10)
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Events(w, 12, history.Event{Type: history.EventPut, KV: histbuild.Kv("a", "v1", 11, 11, 1)})
				id := b.PutFail(3, 25, 60, "b", "w1")
				b.Events(w, 40, history.Event{Type: history.EventDelete, KV: history.KV{Key: histbuild.K("a"), ModRevision: 12}})
				b.Events(w, 41, history.Event{Type: history.EventPut, KV: histbuild.Kv("b", "w1", 13, 13, 1)})
				return id
			}},
		{name: "kv/linearizable - failed write applied after it returned - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.PutFail(2, 20, 30, "a", "v2")
				b.Get(3, 40, 50, "a", 11, histbuild.Kv("a", "v1", 11, 11, 1))
				b.Get(3, 60, 70, "a", 12, histbuild.Kv("a", "v2", 11, 12, 2))
				return 0
			}},
		{name: "kv/linearizable - first write of the run failed but was applied - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.PutFail(1, 0, 10, "a", "v1")
				b.Get(2, 20, 30, "a", 1001, histbuild.Kv("a", "v1", 1001, 1001, 1))
				return 0
			}},
		{name: "kv/linearizable - compaction answers and errors - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Compact(1, 20, 30, 11, 11, "")
				b.Compact(1, 40, 50, 10, 0, history.ErrCompacted)
				b.Compact(1, 60, 70, 50, 0, history.ErrFutureRevision)
				b.GetAt(2, 80, 90, "a", 5, 0, history.ErrCompacted)
				b.GetAt(2, 100, 110, "a", 50, 0, history.ErrFutureRevision)
				b.GetAt(2, 120, 130, "a", 11, 11, "", histbuild.Kv("a", "v1", 11, 11, 1))
				return 0
			}},
		{name: "kv/linearizable - failed compaction that was applied explains a compacted error - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "a", "v2", 12)
				b.Put(1, 40, 50, "a", "v3", 13)
				b.Compact(2, 60, 70, 11, 13, "")
				b.Op(2, 80, 90, history.Request{Kind: history.OpCompact, Revision: 13}, nil, unk)
				b.GetAt(3, 100, 110, "a", 12, 0, history.ErrCompacted)
				b.Compact(2, 120, 130, 12, 0, history.ErrCompacted)
				return 0
			}},
		{name: "kv/linearizable - compaction answered late, its header revision above where it applied - pass", want: check.Pass,
			// etcd reads a compaction's header revision when it answers,
			// so writes that came after it was applied can raise it. Here
			// compaction at 12 applied before the read at 11 failed, and
			// answered only after writes 13 and 14 (seed 1014 of a
			// 30 s run on v3.6.16 tripped over this).
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "a", "v2", 12)
				b.Compact(2, 40, 200, 12, 14, "")
				b.GetAt(3, 50, 60, "a", 11, 0, history.ErrCompacted)
				b.Put(1, 70, 80, "a", "v3", 13)
				b.Put(1, 90, 100, "a", "v4", 14)
				b.GetAt(3, 110, 120, "a", 12, 14, "", histbuild.Kv("a", "v2", 11, 12, 2))
				return 0
			}},
		{name: "kv/linearizable - compaction that applied after a read it would have failed - fail", want: check.Fail, msg: "compacted",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "a", "v2", 12)
				b.Compact(2, 40, 50, 12, 12, "")
				return b.GetAt(3, 60, 70, "a", 11, 12, "", histbuild.Kv("a", "v1", 11, 11, 1))
			}},
		{name: "kv/linearizable - compacted error no compaction explains - fail", want: check.Fail, msg: "compacted",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "a", "v2", 12)
				b.Compact(2, 60, 70, 11, 12, "")
				return b.GetAt(3, 100, 110, "a", 11, 0, history.ErrCompacted)
			}},
		{name: "kv/linearizable - compacted before the run - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.GetAt(2, 0, 10, "a", 5, 0, history.ErrCompacted)
				b.Put(1, 20, 30, "a", "v1", 11)
				return 0
			}},
		{name: "kv/linearizable - txn compare and swap both ways - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Cas(1, 20, 30, "a", 11, "v2", true, 12)
				b.Cas(2, 40, 50, "a", 11, "v3", false, 12, histbuild.Kv("a", "v2", 11, 12, 2))
				b.Cas(2, 60, 70, "b", 0, "w1", true, 13)
				return 0
			}},
		{name: "kv/linearizable - prefix range with limit, delete - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "b", "w1", 12)
				b.Put(1, 40, 50, "c", "x1", 13)
				b.Op(2, 60, 70, history.Request{Kind: history.OpRange, Key: histbuild.TestPrefix, End: "/p0", Limit: 2},
					&history.Response{Revision: 13, KVs: []history.KV{histbuild.Kv("a", "v1", 11, 11, 1), histbuild.Kv("b", "w1", 12, 12, 1)},
						Count: 3, More: true}, "")
				b.Del(1, 80, 90, "b", 1, 14)
				b.Del(1, 100, 110, "b", 0, 14)
				b.Op(2, 120, 130, history.Request{Kind: history.OpRange, Key: histbuild.TestPrefix, End: "/p0", KeysOnly: true},
					&history.Response{Revision: 14, KVs: []history.KV{histbuild.Kv("a", "", 11, 11, 1), histbuild.Kv("c", "", 13, 13, 1)},
						Count: 2}, "")
				return 0
			}},
		{name: "kv/linearizable - failed write seen only by a watch - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Events(w, 11, histbuild.PutEv("a", "v1", 11, 11, 1))
				b.PutFail(1, 20, 30, "a", "v2")
				b.Events(w, 31, histbuild.PutEv("a", "v2", 11, 12, 2))
				b.Put(2, 40, 50, "b", "w1", 13)
				b.Events(w, 51, histbuild.PutEv("b", "w1", 13, 13, 1))
				b.Get(3, 60, 70, "a", 13, histbuild.Kv("a", "v2", 11, 12, 2))
				return 0
			}},
		{name: "kv/linearizable - unseen failed writes next to a watch-seen one - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Events(w, 11, histbuild.PutEv("a", "v1", 11, 11, 1))
				b.PutFail(2, 12, 13, "b", "x1")
				b.PutFail(3, 14, 15, "c", "y1")
				b.PutFail(1, 20, 30, "a", "v2")
				b.Events(w, 31, histbuild.PutEv("a", "v2", 11, 12, 2))
				b.Put(2, 40, 50, "b", "w1", 13)
				b.Events(w, 51, histbuild.PutEv("b", "w1", 13, 13, 1))
				b.Get(3, 60, 70, "b", 13, histbuild.Kv("b", "w1", 13, 13, 1))
				return 0
			}},
		{name: "kv/linearizable - stale read - fail", want: check.Fail, msg: "written by operation 2",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "a", "v2", 12)
				return b.Get(2, 40, 50, "a", 11, histbuild.Kv("a", "v1", 11, 11, 1))
			}},
		{name: "kv/linearizable - read of a never-written value - fail", want: check.Fail, msg: "no operation ever wrote",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				return b.Get(2, 20, 30, "a", 11, histbuild.Kv("a", "zzz", 11, 11, 1))
			}},
		{name: "kv/linearizable - lost write - fail", want: check.Fail, msg: "in the store",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				return b.Get(2, 20, 30, "a", 11)
			}},
		{name: "kv/linearizable - wrong header revision - fail", want: check.Fail, msg: "header revision",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				return b.Put(1, 20, 30, "b", "w1", 13)
			}},
		{name: "kv/linearizable - txn succeeded though its compare fails - fail", want: check.Fail, msg: "compares evaluate to false",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				return b.Cas(1, 20, 30, "a", 10, "v2", true, 12)
			}},
		{name: "kv/linearizable - failed write seen applied and not applied - fail", want: check.Fail, msg: "operation 4 read a",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				id := b.PutFail(1, 20, 30, "a", "v2")
				b.Get(2, 40, 50, "a", 12, histbuild.Kv("a", "v2", 11, 12, 2))
				b.Get(2, 60, 70, "a", 12, histbuild.Kv("a", "v1", 11, 11, 1))
				return id
			}},
		{name: "kv/linearizable - read at a compacted revision returns data - fail", want: check.Fail, msg: "compacted",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "a", "v2", 12)
				b.Compact(1, 40, 50, 12, 12, "")
				return b.GetAt(2, 60, 70, "a", 11, 12, "", histbuild.Kv("a", "v1", 11, 11, 1))
			}},
		{name: "kv/linearizable - revision goes backwards - fail", want: check.Fail, msg: "header revision",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "a", "v2", 12)
				return b.Get(2, 40, 50, "b", 11)
			}},
		{name: "kv/linearizable - compacted error though the revision was never compacted - fail", want: check.Fail, msg: "compacted",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Compact(1, 20, 30, 5, 11, "")
				return b.GetAt(2, 40, 50, "a", 8, 0, history.ErrCompacted)
			}},
		{name: "kv/linearizable - unknown outcome alone - skipped", want: check.Skipped,
			build: func(b *histbuild.Builder) int64 {
				b.PutFail(1, 0, 10, "a", "v1")
				b.Op(1, 20, 30, history.Request{Kind: history.OpRange, Key: histbuild.K("a")}, nil, unk)
				return 0
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := histbuild.New()
			id := c.build(b)
			r := Check(b.H, check.DefaultConfig())
			if r.Verdict != c.want {
				t.Fatalf("verdict %s (%s), want %s; violations %+v", r.Verdict, r.Reason, c.want, r.Violations)
			}
			if c.want != check.Fail {
				return
			}
			if len(r.Violations) != 1 {
				t.Fatalf("%d violations, want 1", len(r.Violations))
			}
			v := r.Violations[0]
			if !errors.Is(v, Err) {
				t.Errorf("violation does not wrap Err: %v", v)
			}
			if len(v.Operations) == 0 || v.Operations[0] != id {
				t.Errorf("violation names operations %v, want %d first: %s", v.Operations, id, v.Message)
			}
			if !strings.Contains(v.Message, c.msg) {
				t.Errorf("message %q lacks %q", v.Message, c.msg)
			}
		})
	}
}

func TestLinearizableGenerated(t *testing.T) {
	h := histbuild.Generate(histbuild.GenConfig{Ops: 3000, Clients: 10, Keys: 8, Seed: 7})
	r := Check(h, check.DefaultConfig())
	if r.Verdict != check.Pass {
		t.Fatalf("generated valid history: %s %s %+v", r.Verdict, r.Reason, r.Violations)
	}
	// Corrupt one read: it must now fail, naming that read.
	for i := len(h.Operations) / 2; i < len(h.Operations); i++ {
		o := &h.Operations[i]
		if o.Request.Kind == history.OpRange && o.Response != nil && len(o.Response.KVs) == 1 && o.Request.Revision == 0 {
			o.Response.KVs[0].Value = "corrupt"
			r := Check(h, check.DefaultConfig())
			if r.Verdict != check.Fail || r.Violations[0].Operations[0] != o.ID {
				t.Fatalf("corrupted read %d: %s %+v", o.ID, r.Verdict, r.Violations)
			}
			return
		}
	}
	t.Fatal("no read to corrupt")
}

// TestLinearizableBudgetsAreUnknown searches a whole history of 6,000
// operations as one window, and runs each budget out.
func TestLinearizableBudgetsAreUnknown(t *testing.T) {
	h := histbuild.Generate(histbuild.GenConfig{Ops: 6000, Clients: 10, Keys: 8, Seed: 3})
	all := func(r *linRun) { r.searchAll = true }
	if r := checkLinearizable(h, check.DefaultConfig(), all); r.Verdict != check.Pass {
		t.Fatalf("within its budgets: %s %s %v", r.Verdict, r.Reason, r.Violations)
	}
	cases := []struct {
		name   string
		cfg    func(*check.Config)
		tune   func(*linRun)
		reason string
	}{
		{name: "time", cfg: func(c *check.Config) { c.LinearizabilityTimeout = time.Nanosecond }, reason: "time budget of 1ns"},
		{name: "operations", tune: func(r *linRun) { r.maxOps = 1000 }, reason: "more than its cap of 1000"},
		{name: "memory", tune: func(r *linRun) { r.memory = 1 << 20 }, reason: "ran out of its memory budget"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := check.DefaultConfig()
			if c.cfg != nil {
				c.cfg(&cfg)
			}
			r := checkLinearizable(h, cfg, func(r *linRun) {
				all(r)
				if c.tune != nil {
					c.tune(r)
				}
			})
			if r.Verdict != check.Unknown || !strings.Contains(r.Reason, c.reason) {
				t.Fatalf("verdict %s (%q), want unknown with %q", r.Verdict, r.Reason, c.reason)
			}
		})
	}
}

// TestLinearizableMultiKey holds the violations a check per key alone
// would miss: each key's own history is fine, the store as a whole is not.
func TestLinearizableMultiKey(t *testing.T) {
	twoPuts := func(b *histbuild.Builder, client, call, ret int, ka, va, KubeBuilder, vb string, rev int64) int64 {
		return b.Op(client, call, ret, history.Request{Kind: history.OpTxn, Success: []history.Request{
			{Kind: history.OpPut, Key: histbuild.K(ka), Value: va}, {Kind: history.OpPut, Key: histbuild.K(KubeBuilder), Value: vb}}},
			&history.Response{Revision: rev, Succeeded: true, Responses: []history.Response{{}, {}}}, "")
	}
	prefixGet := func(b *histbuild.Builder, client, call, ret int, rev int64, kvs ...history.KV) int64 {
		return b.Op(client, call, ret, history.Request{Kind: history.OpRange, Key: histbuild.TestPrefix, End: "/p0"},
			&history.Response{Revision: rev, KVs: kvs, Count: int64(len(kvs))}, "")
	}
	runOpCases(t, []opCase{
		{name: "kv/linearizable - txn putting two keys, both seen at its revision - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "c", "z1", 11)
				twoPuts(b, 1, 20, 30, "a", "x1", "b", "y1", 12)
				b.Get(2, 40, 50, "a", 12, histbuild.Kv("a", "x1", 12, 12, 1))
				prefixGet(b, 3, 40, 60, 12, histbuild.Kv("a", "x1", 12, 12, 1), histbuild.Kv("b", "y1", 12, 12, 1), histbuild.Kv("c", "z1", 11, 11, 1))
				return 0
			}},
		{name: "kv/linearizable - txn putting two keys, seen at different revisions - fail", want: check.Fail, msg: "range b",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "c", "z1", 11)
				twoPuts(b, 1, 20, 30, "a", "x1", "b", "y1", 12)
				b.Put(1, 40, 50, "c", "z2", 13)
				b.Get(2, 60, 70, "a", 13, histbuild.Kv("a", "x1", 12, 12, 1))
				return b.Get(2, 80, 90, "b", 13, histbuild.Kv("b", "y1", 13, 13, 1))
			}},
		{name: "kv/linearizable - prefix read mixing two revisions - fail", want: check.Fail, msg: "range",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "b", "w1", 12)
				b.Put(2, 40, 50, "a", "v2", 13)
				// At revision 12 a was still v1; v2 comes from 13.
				return prefixGet(b, 3, 35, 60, 12, histbuild.Kv("a", "v2", 11, 13, 2), histbuild.Kv("b", "w1", 12, 12, 1))
			}},
		{name: "kv/linearizable - read shows the later write of one key but not the earlier of another - fail",
			want: check.Fail, msg: "range",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "b", "w1", 12)
				b.Put(2, 40, 50, "b", "w2", 13) // b first ...
				b.Put(2, 60, 70, "a", "v2", 14) // ... then a, in real time
				return prefixGet(b, 3, 80, 90, 14, histbuild.Kv("a", "v2", 11, 14, 2), histbuild.Kv("b", "w1", 12, 12, 1))
			}},
		{name: "kv/linearizable - each key fine alone, revisions against real time - fail", want: check.Fail, msg: "header revision",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 12)
				id := b.Put(2, 20, 30, "b", "w1", 11)
				b.Get(3, 40, 50, "a", 12, histbuild.Kv("a", "v1", 12, 12, 1))
				b.Get(3, 60, 70, "b", 12, histbuild.Kv("b", "w1", 11, 11, 1))
				return id
			}},
		{name: "kv/linearizable - txn compares a key another key's write changed - fail", want: check.Fail, msg: "compares",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				twoPuts(b, 1, 20, 30, "b", "w1", "a", "v2", 12)
				// a was changed at 12 by the txn on b: mod(a) = 11 is false.
				return b.Cas(2, 40, 50, "a", 11, "v3", true, 13)
			}},
	})

}

// TestLinearizableLargeHistoryViolations corrupts one operation of a large
// valid history at a time: the check finds each, naming it, with a search
// of a few operations around it rather than of the whole history.
func TestLinearizableLargeHistoryViolations(t *testing.T) {
	base := histbuild.Generate(histbuild.GenConfig{Ops: 20000, Clients: 16, Keys: 16, Watches: 1, FailPct: 2, ApplyPct: 50, Seed: 9})
	if r := Check(base, check.DefaultConfig()); r.Verdict != check.Pass {
		t.Fatalf("valid history: %s %s %v", r.Verdict, r.Reason, r.Violations)
	}
	find := func(h *history.History, ok func(o *history.Operation) bool) *history.Operation {
		for i := len(h.Operations) / 2; i < len(h.Operations); i++ {
			if o := &h.Operations[i]; o.Response != nil && ok(o) {
				return o
			}
		}
		t.Fatal("nothing to corrupt")
		return nil
	}
	cases := []struct {
		name    string
		corrupt func(h *history.History) int64
	}{
		{"prefix read returns an older version of one key", func(h *history.History) int64 {
			o := find(h, func(o *history.Operation) bool {
				return o.Request.End != "" && !o.Request.KeysOnly && len(o.Response.KVs) > 1 && o.Response.KVs[1].Version > 1
			})
			o.Response.KVs[1].Version--
			o.Response.KVs[1].ModRevision--
			return o.ID
		}},
		{"two-key txn: the second key's write is lost", func(h *history.History) int64 {
			o := find(h, func(o *history.Operation) bool {
				return o.Request.Kind == history.OpTxn && o.Response.Succeeded && len(o.Request.Success) == 2 &&
					o.Request.Success[1].Kind == history.OpPut
			})
			// Whoever reads the second key next at a later revision now
			// sees what was there before: simplest, make the txn claim
			// it wrote only the first key.
			o.Request.Success = o.Request.Success[:1]
			o.Response.Responses = o.Response.Responses[:1]
			return -1
		}},
		{"a write's header revision goes back in time", func(h *history.History) int64 {
			o := find(h, func(o *history.Operation) bool { return o.Request.Kind == history.OpPut })
			o.Response.Revision -= 3
			return -1
		}},
		{"a txn claims success its compare forbids", func(h *history.History) int64 {
			o := find(h, func(o *history.Operation) bool {
				return o.Request.Kind == history.OpTxn && !o.Response.Succeeded && len(o.Request.Success) == 1 &&
					o.Request.Compares[0].Target == "mod"
			})
			o.Response.Succeeded = true
			o.Response.Responses = []history.Response{{}}
			o.Response.Revision++
			return -1
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := histbuild.Generate(histbuild.GenConfig{Ops: 20000, Clients: 16, Keys: 16, Watches: 1, FailPct: 2, ApplyPct: 50, Seed: 9})
			id := c.corrupt(h)
			r := Check(h, check.DefaultConfig())
			if r.Verdict != check.Fail {
				t.Fatalf("verdict %s (%s)", r.Verdict, r.Reason)
			}
			v := r.Violations[0]
			if id > 0 && v.Operations[0] != id {
				t.Errorf("violation names %v, want %d first: %s", v.Operations, id, v.Message)
			}
			if n := r.Figures["search_max_operations"]; n > 500 {
				t.Errorf("the largest search took %v operations", n)
			}
			t.Logf("%s (largest search %v operations)", v.Message, r.Figures["search_max_operations"])
		})
	}
}

// TestLinearizableOverTheCap: a search too large for its cap is unknown,
// unless two acknowledged operations at their own revisions contradict
// real time, which needs no search. An operation placed without a
// revision of its own (a compaction) is not such a pair with itself: that
// read, once, as "operation 7 was called after operation 7 returned".
func TestLinearizableOverTheCap(t *testing.T) {
	tiny := func(r *linRun) { r.maxOps = 1 }
	valid := histbuild.Generate(histbuild.GenConfig{Ops: 600, Clients: 4, Keys: 4, FailPct: 2, ApplyPct: 50, Seed: 7})
	if r := checkLinearizable(valid, check.DefaultConfig(), tiny); r.Verdict != check.Unknown {
		t.Errorf("valid history over the cap: %s %v, want unknown", r.Verdict, r.Violations)
	}

	b := histbuild.New()
	b.Put(1, 0, 10, "a", "v1", 11)
	b.Put(2, 20, 30, "b", "v2", 10) // called after revision 11 was acknowledged
	r := checkLinearizable(b.H, check.DefaultConfig(), tiny)
	if r.Verdict != check.Fail || !strings.Contains(r.Violations[0].Message, "went back in time") {
		t.Fatalf("a write back in time over the cap: %s %v, want the real-time violation", r.Verdict, r.Violations)
	}

	reads := histbuild.New()
	reads.Put(1, 0, 10, "a", "v1", 11)
	reads.Get(2, 20, 30, "a", 11, histbuild.Kv("a", "v1", 11, 11, 1))
	reads.Get(3, 40, 50, "a", 11, histbuild.Kv("a", "v1", 11, 11, 1))
	if r := checkLinearizable(reads.H, check.DefaultConfig(), tiny); r.Verdict == check.Fail {
		t.Errorf("two reads at one revision, one after the other, over the cap: %v", r.Violations)
	}
}

// TestLinearizableNamesTheWatchItTrusts: when the explanation is that a
// watch vouches a key did not change (or saw another write there), the
// violation lists that watch in RestsOn, so that reports can put it under
// a finding that shows the watch unreliable.
func TestLinearizableNamesTheWatchItTrusts(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *histbuild.Builder)
		msg   string
	}{
		{"kv/linearizable - a write a read shows at a revision a watch vouches was quiet - fail", func(b *histbuild.Builder) {
			w := b.Watch(7, 9, 0, histbuild.PrefixWatch())
			b.Put(1, 0, 10, "a", "v1", 11)
			b.Events(w, 11, histbuild.PutEv("a", "v1", 11, 11, 1))
			b.PutFail(2, 20, 30, "c", "y1")
			b.Put(1, 40, 50, "b", "w1", 13)
			b.Events(w, 51, histbuild.PutEv("b", "w1", 13, 13, 1))
			b.Get(3, 60, 70, "c", 13, histbuild.Kv("c", "y1", 12, 12, 1))
		}, "watch 7 vouches that c did not change at revision 12"},
		{"kv/linearizable - a write a read shows where a watch saw another value - fail", func(b *histbuild.Builder) {
			w := b.Watch(7, 9, 0, histbuild.PrefixWatch())
			b.Put(1, 0, 10, "a", "v1", 11)
			b.Events(w, 11, histbuild.PutEv("a", "v1", 11, 11, 1))
			b.PutFail(2, 20, 30, "c", "y1")
			b.Events(w, 31, histbuild.PutEv("c", "y2", 12, 12, 1))
			b.Put(1, 40, 50, "b", "w1", 13)
			b.Events(w, 51, histbuild.PutEv("b", "w1", 13, 13, 1))
			b.Get(3, 60, 70, "c", 13, histbuild.Kv("c", "y1", 12, 12, 1))
		}, "watch 7 saw"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := histbuild.New()
			c.build(b)
			r := Check(b.H, check.DefaultConfig())
			if r.Verdict != check.Fail || len(r.Violations) != 1 {
				t.Fatalf("verdict %s with %d violations, want fail with 1: %s", r.Verdict, len(r.Violations), histbuild.ViolationTexts(r.Violations))
			}
			v := r.Violations[0]
			if !strings.Contains(v.Message, c.msg) {
				t.Errorf("message %q lacks %q", v.Message, c.msg)
			}
			if len(v.RestsOn) != 1 || v.RestsOn[0] != 7 {
				t.Errorf("rests on %v, want watch 7: %s", v.RestsOn, v.Message)
			}
		})
	}
}

// opCase is one hand-built history judged by kv/linearizable: on fail, the
// first violation wraps the guarantee, names the operation build returned
// first, and its message holds msg.
type opCase struct {
	name  string
	build func(b *histbuild.Builder) int64
	want  check.Verdict
	msg   string
}

func runOpCases(t *testing.T, cases []opCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := histbuild.New()
			id := c.build(b)
			r := Check(b.H, check.DefaultConfig())
			if r.Verdict != c.want {
				t.Fatalf("verdict %s (%s), want %s; violations %+v", r.Verdict, r.Reason, c.want, r.Violations)
			}
			if c.want != check.Fail {
				return
			}
			v := r.Violations[0]
			if !errors.Is(v, Err) || len(v.Operations) == 0 || v.Operations[0] != id {
				t.Errorf("violation names operations %v, want %d first: %s", v.Operations, id, v.Message)
			}
			if !strings.Contains(v.Message, c.msg) {
				t.Errorf("message %q lacks %q", v.Message, c.msg)
			}
		})
	}
}
