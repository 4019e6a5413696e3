package suites

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/linearizable"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
	etcdtarget "github.com/vigil-suite/vigil/targets/etcd"
)

// The model behind kv/linearizable agrees with a real etcd on every field
// of the grammar: clients send random requests of every shape (nested
// txns, compares on every target over keys and ranges, sorted and filtered
// ranges, puts that keep their value or lease, lease grants and revokes,
// ranges inside txns at past, compacted and future revisions, compactions)
// concurrently to one member, and the recorded history must pass. A
// request etcd refuses as malformed (a key written twice on a path) is
// allowed: the model leaves it out.
func TestModelAgreesWithEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real etcd")
	}
	versions := []string{binaries.DefaultEtcdVersion, "v3.5.17"}
	if v := os.Getenv("VIGIL_MODEL_VERSIONS"); v != "" {
		versions = strings.Split(v, ",")
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) { modelAgreesWith(t, v) })
	}
}

func modelAgreesWith(t *testing.T, version string) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fx, _ := startCluster(ctx, t, g, version, 1)
	prefix := fmt.Sprintf("/model-%d/", time.Now().UnixNano())
	rec := history.NewRecorder(history.Meta{Prefix: prefix}, history.NewClock(), nil)

	const clients, perClient = 4, 400
	var leases leasePool
	var wg sync.WaitGroup
	var compact sync.Mutex
	for c := 1; c <= clients; c++ {
		raw, err := etcdtarget.Dial(fx.Endpoints()[0], 5*time.Second, fixtures.Security{})
		g.Expect(err).NotTo(HaveOccurred())
		defer raw.Close()
		cl := targets.Record(raw, c, rec)
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			gen := &modelGen{rng: rand.New(rand.NewPCG(uint64(c), 7)), prefix: prefix, client: c, leases: &leases}
			for i := 0; i < perClient; i++ {
				req := gen.next()
				if req.Kind == history.OpCompact {
					compact.Lock()
					req.Revision = max(1, gen.head-int64(gen.rng.IntN(20)))
				}
				rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
				resp, err := cl.Do(rctx, req)
				rcancel()
				if req.Kind == history.OpCompact {
					compact.Unlock()
				}
				if err == nil {
					gen.head = max(gen.head, resp.Revision)
					if req.Kind == history.OpLeaseGrant {
						leases.add(resp.Lease)
					}
					if req.Kind == history.OpLeaseRevoke {
						leases.revoke(req.Lease)
					}
				}
			}
		}(c)
	}
	wg.Wait()
	h := rec.History()
	codes := map[history.ErrorCode]int{}
	for _, o := range h.Operations {
		if o.Failed() {
			codes[o.Code]++
		}
	}
	t.Logf("%d operations; errors by code: %v", len(h.Operations), codes)
	r := linearizable.Check(h, check.DefaultConfig())
	g.Expect(r.Verdict).To(Equal(check.Pass), "%s %v", r.Reason, r.Violations)
	// Each definite error the model judges was met at least once.
	for _, c := range []history.ErrorCode{history.ErrKeyNotFound, history.ErrLeaseNotFound, history.ErrFutureRevision, history.ErrCompacted} {
		g.Expect(codes[c]).To(BeNumerically(">", 0), "no request failed with %s", c)
	}

	// The must-fail side: one answer of each new kind, altered, fails.
	for _, c := range grammarCorruptions {
		bad := copyOps(h)
		id := int64(0)
		for i := range bad.Operations {
			if o := &bad.Operations[i]; c.alter(o) {
				id = o.ID
				break
			}
		}
		g.Expect(id).NotTo(BeZero(), "%s: no operation to alter", c.name)
		r := linearizable.Check(bad, check.DefaultConfig())
		g.Expect(r.Verdict).To(Equal(check.Fail), "%s (operation %d): %s", c.name, id, r.Reason)
		t.Logf("%s (operation %d): %s", c.name, id, r.Violations[0].Message)
	}
}

// copyOps is a deep copy of a history of operations alone.
func copyOps(h *history.History) *history.History {
	out := history.New(h.Meta)
	b, err := json.Marshal(h.Operations)
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(b, &out.Operations); err != nil {
		panic(err)
	}
	return out
}

// grammarCorruptions alter one answer of a kind only the grammar sends.
var grammarCorruptions = []struct {
	name  string
	alter func(o *history.Operation) bool
}{
	{"nested txn answered down its other branch", func(o *history.Operation) bool {
		if o.Failed() || o.Request.Kind != history.OpTxn {
			return false
		}
		br := o.Request.Branch(o.Response.Succeeded)
		for i := range br {
			if br[i].Kind == history.OpTxn && i < len(o.Response.Responses) && len(br[i].Compares) > 0 {
				in := &o.Response.Responses[i]
				if len(br[i].Branch(!in.Succeeded)) == len(in.Responses) {
					in.Succeeded = !in.Succeeded
					return true
				}
			}
		}
		return false
	}},
	{"sorted range in the wrong order", func(o *history.Operation) bool {
		if o.Failed() || o.Request.Kind != history.OpRange || o.Request.SortTarget != history.SortByValue ||
			o.Request.Revision != 0 || o.Request.KeysOnly || len(o.Response.KVs) < 2 {
			return false
		}
		o.Response.KVs[0], o.Response.KVs[1] = o.Response.KVs[1], o.Response.KVs[0]
		return true
	}},
	{"count-only range off by one", func(o *history.Operation) bool {
		if o.Failed() || o.Request.Kind != history.OpRange || !o.Request.CountOnly || o.Request.Revision != 0 {
			return false
		}
		o.Response.Count++
		return true
	}},
	{"key-not-found where the key existed", func(o *history.Operation) bool {
		if o.Failed() || o.Request.Kind != history.OpPut || !o.Request.IgnoreValue || o.Request.Lease != 0 {
			return false
		}
		o.Response, o.Code, o.Error = nil, history.ErrKeyNotFound, "etcdserver: key not found"
		return true
	}},
}

// leasePool holds the leases granted, live or revoked, shared by clients.
type leasePool struct {
	mu            sync.Mutex
	live, revoked []int64
}

func (p *leasePool) add(id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live = append(p.live, id)
}

func (p *leasePool) revoke(id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, l := range p.live {
		if l == id {
			p.live = append(p.live[:i], p.live[i+1:]...)
			p.revoked = append(p.revoked, id)
			return
		}
	}
}

// pick returns a live lease, a revoked one, one never granted or none.
func (p *leasePool) pick(rng *rand.Rand) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch n := rng.IntN(10); {
	case n < 5 && len(p.live) > 0:
		return p.live[rng.IntN(len(p.live))]
	case n < 7 && len(p.revoked) > 0:
		return p.revoked[rng.IntN(len(p.revoked))]
	case n == 7:
		return 0x7fff0000 + int64(rng.IntN(3)) // never granted
	}
	return 0
}

// modelGen draws random requests over a few keys.
type modelGen struct {
	rng    *rand.Rand
	prefix string
	client int
	seq    int
	head   int64
	leases *leasePool
}

func (g *modelGen) key() string { return g.prefix + string(rune('a'+g.rng.IntN(6))) }

func (g *modelGen) value() string {
	g.seq++
	return fmt.Sprintf("%d.%d", g.client, g.seq)
}

func (g *modelGen) rev() int64 {
	switch g.rng.IntN(4) {
	case 0:
		return 0
	case 1:
		return g.head + 1 + int64(g.rng.IntN(3)) // the future
	}
	return max(1, g.head-int64(g.rng.IntN(30)))
}

func (g *modelGen) rangeReq() history.Request {
	r := history.Request{Kind: history.OpRange, Key: g.key()}
	if g.rng.IntN(2) == 0 {
		r.Key, r.End = g.prefix, history.PrefixEnd(g.prefix)
		if g.rng.IntN(3) == 0 {
			r.Key = g.key()
		}
	}
	r.Limit = int64(g.rng.IntN(4))
	r.KeysOnly = g.rng.IntN(5) == 0
	r.CountOnly = g.rng.IntN(6) == 0
	if g.rng.IntN(3) == 0 {
		r.SortOrder = []string{"", history.SortAscend, history.SortDescend}[g.rng.IntN(3)]
		r.SortTarget = []string{"", history.SortByKey, history.SortByVersion, history.SortByCreate, history.SortByMod, history.SortByValue}[g.rng.IntN(6)]
	}
	if g.rng.IntN(4) == 0 {
		b := max(1, g.head-int64(g.rng.IntN(20)))
		switch g.rng.IntN(4) {
		case 0:
			r.MinModRevision = b
		case 1:
			r.MaxModRevision = b
		case 2:
			r.MinCreateRevision = b
		default:
			r.MaxCreateRevision = b
		}
	}
	return r
}

func (g *modelGen) putReq() history.Request {
	r := history.Request{Kind: history.OpPut, Key: g.key(), Value: g.value(), PrevKV: g.rng.IntN(3) == 0}
	switch g.rng.IntN(6) {
	case 0:
		r.IgnoreValue, r.Value = true, ""
	case 1:
		r.IgnoreLease = true
	case 2, 3:
		r.Lease = g.leases.pick(g.rng)
	}
	return r
}

func (g *modelGen) deleteReq() history.Request {
	r := history.Request{Kind: history.OpDelete, Key: g.key(), PrevKV: g.rng.IntN(2) == 0}
	if g.rng.IntN(3) == 0 {
		r.End = g.key()
	}
	return r
}

func (g *modelGen) compare() history.Compare {
	c := history.Compare{Key: g.key(), Result: []string{"=", "!=", "<", ">"}[g.rng.IntN(4)]}
	c.Target = []string{history.CompareVersion, history.CompareCreate, history.CompareMod, history.CompareValue, history.CompareLease}[g.rng.IntN(5)]
	switch c.Target {
	case history.CompareValue:
		c.Value = fmt.Sprintf("%d.%d", 1+g.rng.IntN(4), g.rng.IntN(g.seq+1))
	case history.CompareVersion:
		c.Int = int64(g.rng.IntN(4))
	case history.CompareLease:
		c.Int = g.leases.pick(g.rng)
	default:
		c.Int = max(0, g.head-int64(g.rng.IntN(10)))
	}
	if g.rng.IntN(4) == 0 {
		c.End = history.PrefixEnd(g.prefix)
	}
	return c
}

// txnReq draws a txn; depth bounds the nesting.
func (g *modelGen) txnReq(depth int) history.Request {
	r := history.Request{Kind: history.OpTxn}
	for i := g.rng.IntN(3); i > 0; i-- {
		r.Compares = append(r.Compares, g.compare())
	}
	branch := func() []history.Request {
		var out []history.Request
		for i := g.rng.IntN(3); i > 0; i-- {
			switch n := g.rng.IntN(10); {
			case n < 3:
				q := g.rangeReq()
				q.Revision = g.rev()
				out = append(out, q)
			case n < 6:
				out = append(out, g.putReq())
			case n < 8:
				out = append(out, g.deleteReq())
			case depth < 2:
				out = append(out, g.txnReq(depth+1))
			}
		}
		return out
	}
	r.Success, r.Failure = branch(), branch()
	return r
}

func (g *modelGen) next() history.Request {
	switch n := g.rng.IntN(100); {
	case n < 20:
		r := g.rangeReq()
		if g.rng.IntN(4) == 0 {
			r.Revision = g.rev()
		}
		return r
	case n < 40:
		return g.putReq()
	case n < 50:
		return g.deleteReq()
	case n < 90:
		return g.txnReq(0)
	case n < 94:
		return history.Request{Kind: history.OpLeaseGrant, TTL: 3600}
	case n < 98:
		if l := g.leases.pick(g.rng); l != 0 {
			return history.Request{Kind: history.OpLeaseRevoke, Lease: l}
		}
		return g.putReq()
	}
	return history.Request{Kind: history.OpCompact, Physical: g.rng.IntN(2) == 0}
}
