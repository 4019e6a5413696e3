package checkers

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/history"
)

func TestLinearizable(t *testing.T) {
	unk := history.ErrUnknown
	cases := []struct {
		name  string
		build func(b *hb) int64 // returns the operation the violation must name first (0 on pass)
		want  Verdict
		msg   string // a fragment the violation's message must hold
	}{
		{name: "kv/linearizable - sequential writes and reads from an unknown start revision - pass", want: Pass,
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 101)
				b.get(2, 20, 30, "a", 101, kv("a", "v1", 101, 101, 1))
				b.put(1, 40, 50, "a", "v2", 102)
				b.get(2, 60, 70, "a", 102, kv("a", "v2", 101, 102, 2))
				b.get(2, 80, 90, "b", 102)
				return 0
			}},
		{name: "kv/linearizable - concurrent put and reads see either order - pass", want: Pass,
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				b.put(1, 20, 60, "a", "v2", 12)
				b.get(2, 25, 30, "a", 11, kv("a", "v1", 11, 11, 1))
				b.get(3, 25, 35, "a", 12, kv("a", "v2", 11, 12, 2))
				b.get(2, 40, 50, "a", 12, kv("a", "v2", 11, 12, 2))
				return 0
			}},
		{name: "kv/linearizable - failed write that was applied - pass", want: Pass,
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				b.putFail(1, 20, 30, "a", "v2")
				b.get(2, 40, 50, "a", 12, kv("a", "v2", 11, 12, 2))
				return 0
			}},
		{name: "kv/linearizable - failed write that was not applied - pass", want: Pass,
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				b.putFail(1, 20, 30, "a", "v2")
				b.get(2, 40, 50, "a", 11, kv("a", "v1", 11, 11, 1))
				b.put(1, 60, 70, "a", "v3", 12)
				b.get(2, 80, 90, "a", 12, kv("a", "v3", 11, 12, 2))
				return 0
			}},
		{name: "kv/linearizable - unseen failed write applied, shown by a revision gap - pass", want: Pass,
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				b.putFail(2, 20, 30, "b", "w1")
				b.put(1, 40, 50, "a", "v2", 13)
				b.get(3, 60, 70, "a", 13, kv("a", "v2", 11, 13, 2))
				return 0
			}},
		{name: "kv/linearizable - failed write applied after it returned - pass", want: Pass,
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				b.putFail(2, 20, 30, "a", "v2")
				b.get(3, 40, 50, "a", 11, kv("a", "v1", 11, 11, 1))
				b.get(3, 60, 70, "a", 12, kv("a", "v2", 11, 12, 2))
				return 0
			}},
		{name: "kv/linearizable - first write of the run failed but was applied - pass", want: Pass,
			build: func(b *hb) int64 {
				b.putFail(1, 0, 10, "a", "v1")
				b.get(2, 20, 30, "a", 1001, kv("a", "v1", 1001, 1001, 1))
				return 0
			}},
		{name: "kv/linearizable - compaction answers and errors - pass", want: Pass,
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				b.compact(1, 20, 30, 11, 11, "")
				b.compact(1, 40, 50, 10, 0, history.ErrCompacted)
				b.compact(1, 60, 70, 50, 0, history.ErrFutureRevision)
				b.getAt(2, 80, 90, "a", 5, 0, history.ErrCompacted)
				b.getAt(2, 100, 110, "a", 50, 0, history.ErrFutureRevision)
				b.getAt(2, 120, 130, "a", 11, 11, "", kv("a", "v1", 11, 11, 1))
				return 0
			}},
		{name: "kv/linearizable - failed compaction that was applied explains a compacted error - pass", want: Pass,
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				b.put(1, 20, 30, "a", "v2", 12)
				b.put(1, 40, 50, "a", "v3", 13)
				b.compact(2, 60, 70, 11, 13, "")
				b.op(2, 80, 90, history.Request{Kind: history.OpCompact, Revision: 13}, nil, unk)
				b.getAt(3, 100, 110, "a", 12, 0, history.ErrCompacted)
				b.compact(2, 120, 130, 12, 0, history.ErrCompacted)
				return 0
			}},
		{name: "kv/linearizable - compacted error no compaction explains - fail", want: Fail, msg: "compacted",
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				b.put(1, 20, 30, "a", "v2", 12)
				b.compact(2, 60, 70, 11, 12, "")
				return b.getAt(3, 100, 110, "a", 11, 0, history.ErrCompacted)
			}},
		{name: "kv/linearizable - compacted before the run - pass", want: Pass,
			build: func(b *hb) int64 {
				b.getAt(2, 0, 10, "a", 5, 0, history.ErrCompacted)
				b.put(1, 20, 30, "a", "v1", 11)
				return 0
			}},
		{name: "kv/linearizable - txn compare and swap both ways - pass", want: Pass,
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				b.cas(1, 20, 30, "a", 11, "v2", true, 12)
				b.cas(2, 40, 50, "a", 11, "v3", false, 12, kv("a", "v2", 11, 12, 2))
				b.cas(2, 60, 70, "b", 0, "w1", true, 13)
				return 0
			}},
		{name: "kv/linearizable - prefix range with limit, delete - pass", want: Pass,
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				b.put(1, 20, 30, "b", "w1", 12)
				b.put(1, 40, 50, "c", "x1", 13)
				b.op(2, 60, 70, history.Request{Kind: history.OpRange, Key: testPrefix, End: "/p0", Limit: 2},
					&history.Response{Revision: 13, KVs: []history.KV{kv("a", "v1", 11, 11, 1), kv("b", "w1", 12, 12, 1)},
						Count: 3, More: true}, "")
				b.del(1, 80, 90, "b", 1, 14)
				b.del(1, 100, 110, "b", 0, 14)
				b.op(2, 120, 130, history.Request{Kind: history.OpRange, Key: testPrefix, End: "/p0", KeysOnly: true},
					&history.Response{Revision: 14, KVs: []history.KV{kv("a", "", 11, 11, 1), kv("c", "", 13, 13, 1)},
						Count: 2}, "")
				return 0
			}},
		{name: "kv/linearizable - failed write seen only by a watch - pass", want: Pass,
			build: func(b *hb) int64 {
				w := b.watch(1, 9, 0, prefixWatch())
				b.put(1, 0, 10, "a", "v1", 11)
				b.events(w, 11, putEv("a", "v1", 11, 11, 1))
				b.putFail(1, 20, 30, "a", "v2")
				b.events(w, 31, putEv("a", "v2", 11, 12, 2))
				b.put(2, 40, 50, "b", "w1", 13)
				b.events(w, 51, putEv("b", "w1", 13, 13, 1))
				b.get(3, 60, 70, "a", 13, kv("a", "v2", 11, 12, 2))
				return 0
			}},
		{name: "kv/linearizable - unseen failed writes next to a watch-seen one - pass", want: Pass,
			build: func(b *hb) int64 {
				w := b.watch(1, 9, 0, prefixWatch())
				b.put(1, 0, 10, "a", "v1", 11)
				b.events(w, 11, putEv("a", "v1", 11, 11, 1))
				b.putFail(2, 12, 13, "b", "x1")
				b.putFail(3, 14, 15, "c", "y1")
				b.putFail(1, 20, 30, "a", "v2")
				b.events(w, 31, putEv("a", "v2", 11, 12, 2))
				b.put(2, 40, 50, "b", "w1", 13)
				b.events(w, 51, putEv("b", "w1", 13, 13, 1))
				b.get(3, 60, 70, "b", 13, kv("b", "w1", 13, 13, 1))
				return 0
			}},
		{name: "kv/linearizable - stale read - fail", want: Fail, msg: "written by operation 2",
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				b.put(1, 20, 30, "a", "v2", 12)
				return b.get(2, 40, 50, "a", 11, kv("a", "v1", 11, 11, 1))
			}},
		{name: "kv/linearizable - read of a never-written value - fail", want: Fail, msg: "no operation ever wrote",
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				return b.get(2, 20, 30, "a", 11, kv("a", "zzz", 11, 11, 1))
			}},
		{name: "kv/linearizable - lost write - fail", want: Fail, msg: "in the store",
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				return b.get(2, 20, 30, "a", 11)
			}},
		{name: "kv/linearizable - wrong header revision - fail", want: Fail, msg: "header revision",
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				return b.put(1, 20, 30, "b", "w1", 13)
			}},
		{name: "kv/linearizable - txn succeeded though its compare fails - fail", want: Fail, msg: "compares evaluate to false",
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				return b.cas(1, 20, 30, "a", 10, "v2", true, 12)
			}},
		{name: "kv/linearizable - failed write seen applied and not applied - fail", want: Fail, msg: "operation 4 read a",
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				id := b.putFail(1, 20, 30, "a", "v2")
				b.get(2, 40, 50, "a", 12, kv("a", "v2", 11, 12, 2))
				b.get(2, 60, 70, "a", 12, kv("a", "v1", 11, 11, 1))
				return id
			}},
		{name: "kv/linearizable - read at a compacted revision returns data - fail", want: Fail, msg: "compacted",
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				b.put(1, 20, 30, "a", "v2", 12)
				b.compact(1, 40, 50, 12, 12, "")
				return b.getAt(2, 60, 70, "a", 11, 12, "", kv("a", "v1", 11, 11, 1))
			}},
		{name: "kv/linearizable - revision goes backwards - fail", want: Fail, msg: "header revision",
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				b.put(1, 20, 30, "a", "v2", 12)
				return b.get(2, 40, 50, "b", 11)
			}},
		{name: "kv/linearizable - compacted error though the revision was never compacted - fail", want: Fail, msg: "compacted",
			build: func(b *hb) int64 {
				b.put(1, 0, 10, "a", "v1", 11)
				b.compact(1, 20, 30, 5, 11, "")
				return b.getAt(2, 40, 50, "a", 8, 0, history.ErrCompacted)
			}},
		{name: "kv/linearizable - unknown outcome alone - skipped", want: Skipped,
			build: func(b *hb) int64 {
				b.putFail(1, 0, 10, "a", "v1")
				b.op(1, 20, 30, history.Request{Kind: history.OpRange, Key: k("a")}, nil, unk)
				return 0
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newHB()
			id := c.build(b)
			r := CheckLinearizable(b.h, DefaultConfig())
			if r.Verdict != c.want {
				t.Fatalf("verdict %s (%s), want %s; violations %+v", r.Verdict, r.Reason, c.want, r.Violations)
			}
			if c.want != Fail {
				return
			}
			if len(r.Violations) != 1 {
				t.Fatalf("%d violations, want 1", len(r.Violations))
			}
			v := r.Violations[0]
			if !errors.Is(v, ErrLinearizable) {
				t.Errorf("violation does not wrap ErrLinearizable: %v", v)
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
	h := generate(genConfig{ops: 3000, clients: 10, keys: 8, seed: 7})
	r := CheckLinearizable(h, DefaultConfig())
	if r.Verdict != Pass {
		t.Fatalf("generated valid history: %s %s %+v", r.Verdict, r.Reason, r.Violations)
	}
	// Corrupt one read: it must now fail, naming that read.
	for i := len(h.Operations) / 2; i < len(h.Operations); i++ {
		o := &h.Operations[i]
		if o.Request.Kind == history.OpRange && o.Response != nil && len(o.Response.KVs) == 1 && o.Request.Revision == 0 {
			o.Response.KVs[0].Value = "corrupt"
			r := CheckLinearizable(h, DefaultConfig())
			if r.Verdict != Fail || r.Violations[0].Operations[0] != o.ID {
				t.Fatalf("corrupted read %d: %s %+v", o.ID, r.Verdict, r.Violations)
			}
			return
		}
	}
	t.Fatal("no read to corrupt")
}

func TestLinearizableTimeoutIsUnknown(t *testing.T) {
	h := generate(genConfig{ops: 10000, clients: 10, keys: 8, seed: 3})
	cfg := DefaultConfig()
	cfg.LinearizabilityTimeout = time.Nanosecond
	r := CheckLinearizable(h, cfg)
	if r.Verdict != Unknown || r.Reason == "" {
		t.Fatalf("verdict %s (%q), want unknown with a reason", r.Verdict, r.Reason)
	}
}

func TestLinearizabilityVisualize(t *testing.T) {
	b := newHB()
	b.put(1, 0, 10, "a", "v1", 11)
	b.get(2, 20, 30, "a", 10)
	var out bytes.Buffer
	if err := LinearizabilityVisualize(b.h, DefaultConfig(), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "<html") {
		t.Fatalf("no html in %d bytes", out.Len())
	}
}
