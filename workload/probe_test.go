package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
	"github.com/vigil-suite/vigil/workload/grammar"
)

// refuser is a target that serves everything trivially except what its
// refuse function names, which it refuses as kine does (in words).
type refuser struct {
	refuse   func(req history.Request, top bool) string // "": served
	refuseW  map[string]bool                            // watch forms refused
	refuseC  map[history.CallKind]bool                  // lease calls refused
	rev      int64
	kvs      map[string]history.KV
	watch    []history.WatchRequest
	leases   []history.CallKind
	leaseIDs map[int64]bool
}

func newRefuser(refuse func(history.Request, bool) string) *refuser {
	return &refuser{refuse: refuse, refuseW: map[string]bool{}, refuseC: map[history.CallKind]bool{}, rev: 10,
		kvs: map[string]history.KV{}, leaseIDs: map[int64]bool{}}
}

func (r *refuser) no(what string) error {
	return &targets.OpError{Code: history.ErrRefused, Err: errors.New(what + " is not implemented by refuser")}
}

func (r *refuser) Do(_ context.Context, req history.Request) (*history.Response, error) {
	if r.refuse != nil {
		if why := r.refuse(req, true); why != "" {
			return nil, r.no(why)
		}
	}
	return r.apply(req), nil
}

func (r *refuser) apply(req history.Request) *history.Response {
	resp := &history.Response{Revision: r.rev}
	switch req.Kind {
	case history.OpRange:
		for k, kv := range r.kvs {
			if k == req.Key || req.End != "" && k >= req.Key && k < req.End {
				resp.KVs = append(resp.KVs, kv)
			}
		}
	case history.OpPut:
		r.rev++
		r.kvs[req.Key] = history.KV{Key: req.Key, Value: req.Value, ModRevision: r.rev}
		resp.Revision = r.rev
	case history.OpDelete:
		r.rev++
		for k := range r.kvs {
			if k == req.Key || req.End != "" && k >= req.Key && k < req.End {
				delete(r.kvs, k)
			}
		}
		resp.Revision = r.rev
	case history.OpTxn:
		// Apply the success branch: enough for the probe's cleanup.
		for _, b := range req.Success {
			resp.Responses = append(resp.Responses, *r.apply(b))
		}
		resp.Succeeded, resp.Revision = true, r.rev
	case history.OpLeaseGrant:
		id := req.Lease
		if id == 0 {
			id = 100 + int64(len(r.leaseIDs))
		}
		r.leaseIDs[id] = true
		resp.Lease, resp.TTL = id, req.TTL
	case history.OpLeaseRevoke:
		delete(r.leaseIDs, req.Lease)
	}
	return resp
}

func (r *refuser) Watch(ctx context.Context, req history.WatchRequest) <-chan targets.WatchMessage {
	r.watch = append(r.watch, req)
	ch := make(chan targets.WatchMessage, 1)
	m := targets.WatchMessage{Response: history.WatchResponse{Created: true}}
	for _, f := range history.WatchForms(req) {
		if r.refuseW[f] {
			m.Response = history.WatchResponse{Canceled: true, CancelReason: f + " is not supported"}
		}
	}
	ch <- m
	close(ch)
	return ch
}

func (r *refuser) RequestProgress(context.Context) error {
	if r.refuseW["progress"] {
		return r.no("progress")
	}
	return nil
}

func (r *refuser) Lease(_ context.Context, req targets.LeaseRequest) (targets.LeaseAnswer, error) {
	r.leases = append(r.leases, req.Kind)
	if r.refuseC[req.Kind] {
		return targets.LeaseAnswer{}, r.no(string(req.Kind))
	}
	id := req.ID
	switch req.Kind {
	case history.CallLeaseGrant:
		id = 100 + int64(len(r.leaseIDs))
		r.leaseIDs[id] = true
	case history.CallLeaseRevoke:
		delete(r.leaseIDs, id)
	}
	return targets.LeaseAnswer{ID: id, TTL: req.TTL}, nil
}

func (r *refuser) Member() string { return "m" }
func (r *refuser) Close() error   { return nil }

// kineLike refuses as kine does: serializable and keys-only reads, sorts
// on anything but the key, the revision filters, plain deletes (served
// in the storage layer's guarded delete), every txn but the storage
// layer's (one compare of the mod revision, a put or a delete, a read or
// nothing when it fails), HashKV.
func kineLike(req history.Request, top bool) string {
	switch req.Kind {
	case history.OpRange:
		switch {
		case req.Serializable:
			return "serializable"
		case req.KeysOnly:
			return "keysOnly"
		case req.SortTarget != "" && req.SortTarget != history.SortByKey:
			return "not key sortTarget"
		case req.MinModRevision != 0 || req.MaxModRevision != 0 || req.MinCreateRevision != 0 || req.MaxCreateRevision != 0:
			return "revision filters"
		}
	case history.OpDelete:
		if top {
			return "delete"
		}
	case history.OpHashKV:
		return "hashkv"
	case history.OpTxn:
		storage := len(req.Compares) == 1 && req.Compares[0].Target == "mod" && req.Compares[0].Result == "=" &&
			len(req.Success) == 1 && (req.Success[0].Kind == history.OpPut || req.Success[0].Kind == history.OpDelete) &&
			len(req.Failure) <= 1 && (len(req.Failure) == 0 || req.Failure[0].Kind == history.OpRange)
		if !storage {
			return "unsupported transaction"
		}
	}
	return ""
}

// The probe asks every production once, by its plainest request, and
// finds exactly what the target refuses, with its words; a field of a
// request the target refuses alone (kine's deletes) is asked inside the
// storage layer's txn, and served there. The names older histories used
// come too. The probe leaves no key behind, and the run starts above it.
func TestProbeFindsRefusedProductions(t *testing.T) {
	g := NewWithT(t)
	r := newRefuser(kineLike)
	r.refuseC[history.CallLeaseKeepAlive] = true
	r.refuseW[history.FormWatchNoPut] = true
	p := probeForms(context.Background(), r, "/v/", grammar.MustFor(ShapeDefault), 100, time.Second)
	refused := func(name string) bool { _, ok := p.refused[name]; return ok }
	for _, pr := range []string{"range.serializable=true", "range.keys_only=true", "range.sort=ascend/version",
		"range.sort=none/value", "range.min_mod=past", "range.max_create=head", "request.kind=delete", "request.kind=hashkv",
		"txn.compares=0", "txn.compares=2", "txn.then=0", "txn.then=2", "txn.else=2", "txn.op=then/range",
		"txn.op=then/txn", "txn.op=else/put", "txn.depth=2", "compare.test=version/=", "compare.test=mod/<",
		"txn.writes=duplicate", "lease-keepalive.lease=live", "watch.filter=no_put",
		history.CapDelete, history.CapSerializable, history.CapTxn, history.CapHashKV, history.FormWatchNoPut,
		string(history.CallLeaseKeepAlive)} {
		g.Expect(refused(pr)).To(BeTrue(), "%s not refused", pr)
	}
	for _, pr := range []string{"range.limit=1", "range.sort=descend/key", "range.revision=head", "request.kind=put",
		"put.prev_kv=true", "put.lease=live", "put.ignore_value=true", "delete.prev_kv=true", "delete.span=key",
		"txn.else=0", "txn.op=then/delete", "compare.operand=zero", "request.kind=lease-grant", "lease-ttl.keys=true",
		"watch.prev_kv=true", "watch.start=future"} {
		g.Expect(refused(pr)).To(BeFalse(), "%s refused: %s", pr, p.refused[pr])
	}
	g.Expect(p.refused["range.serializable=true"]).To(Equal("serializable is not implemented by refuser"))
	g.Expect(p.asked).To(BeNumerically(">", 150), "productions asked")
	g.Expect(r.kvs).To(BeEmpty(), "the probe's keys are removed (by the storage layer's delete: plain ones are refused)")
	g.Expect(r.leaseIDs).To(BeEmpty(), "the probe's leases are revoked")
	g.Expect(p.dirty).To(BeFalse())
	g.Expect(p.head).To(Equal(r.rev))

	cfg := DefaultConfig()
	cfg.Prefix = "/v/"
	g.Expect(cfg.adapt(p)).To(Succeed())
	g.Expect(cfg.MinRevision).To(Equal(r.rev + 1))
	g.Expect(cfg.Prefix).To(Equal("/v/"))
	for _, pr := range cfg.Productions() {
		g.Expect(refused(pr)).To(BeFalse(), "%s: refused, yet listed as one the run may draw", pr)
	}

	// The generators draw none of what was refused.
	w := New(cfg, nil, 1, nil, 1, nil)
	gen := w.generator("0", rand.New(rand.NewPCG(1, 2)), 32)
	for range 20000 {
		a := gen.Next(grammar.Revisions{Head: 100, Compact: 50, Floor: 12})
		for _, d := range a.Draw {
			g.Expect(refused(d)).To(BeFalse(), "drew %s", d)
		}
	}

	// A target that serves no delete keeps the probe's keys: the run moves
	// to a prefix without them. churn cannot do without plain deletes.
	r = newRefuser(func(req history.Request, top bool) string {
		if req.Kind == history.OpDelete || req.Kind == history.OpTxn {
			return "deletes"
		}
		return ""
	})
	p = probeForms(context.Background(), r, "/v/", grammar.MustFor(ShapeDefault), 100, time.Second)
	g.Expect(p.dirty).To(BeTrue())
	cfg = DefaultConfig()
	cfg.Prefix = "/v/"
	g.Expect(cfg.adapt(p)).To(Succeed())
	g.Expect(cfg.Prefix).To(Equal("/v/run/"))
	cfg.Shape = ShapeChurn
	g.Expect(fmt.Sprint(cfg.adapt(p))).To(ContainSubstring("needs plain deletes"))

	// A target that refuses every request of the shape cannot be run.
	r = newRefuser(func(history.Request, bool) string { return "everything" })
	p = probeForms(context.Background(), r, "/v/", grammar.MustFor(ShapeWriteHeavy), 100, time.Second)
	cfg = DefaultConfig()
	cfg.Prefix, cfg.Shape = "/v/", ShapeWriteHeavy
	g.Expect(fmt.Sprint(cfg.adapt(p))).To(ContainSubstring("refuses every request"))
}

// A refusal met during the run prunes what it names from then on: the
// productions of the request that no answer showed served (reads at the
// compact revision here, which the probe could not ask: nothing was
// compacted yet), and nothing the probe saw served.
func TestRefusalDuringTheRunPrunes(t *testing.T) {
	g := NewWithT(t)
	compact := int64(0)
	r := newRefuser(func(req history.Request, _ bool) string {
		atCompact := false
		req.Walk(func(q *history.Request) bool {
			atCompact = atCompact || q.Kind == history.OpRange && compact > 0 && q.Revision == compact
			return true
		})
		if atCompact {
			return "reading at the compact revision"
		}
		return ""
	})
	cfg := DefaultConfig()
	cfg.Prefix, cfg.Clients = "/v/", 1
	g.Expect(cfg.Probe(context.Background(), r)).To(Succeed())
	w := New(cfg, nil, 1, nil, 1, nil)
	c := targets.Record(r, 0, history.NewRecorder(history.Meta{}, history.NewClock(), nil))
	gen := w.generator("0", rand.New(rand.NewPCG(1, 2)), 32)
	r.rev += 20
	compact = cfg.MinRevision + 5
	w.Stats.CompactRevision.Store(compact)
	w.Stats.StoreRevision.Store(r.rev)
	refusedAt := -1
	for i := range 5000 {
		a := gen.Next(w.revisions())
		if a.Skip {
			continue
		}
		w.send(context.Background(), c, gen, a)
		if refusedAt < 0 && w.pruner.Refused("range.revision=compact") {
			refusedAt = i
		}
		if refusedAt >= 0 && i > refusedAt {
			g.Expect(a.Draw).NotTo(ContainElement("range.revision=compact"), "drawn after its refusal")
		}
	}
	g.Expect(refusedAt).To(BeNumerically(">=", 0), "never pruned")
	pruned := w.Pruned()
	g.Expect(pruned).To(ContainSubstring("range.revision=compact (reading at the compact revision is not implemented by refuser)"))
	for _, served := range []string{"range.revision=0", "range.span=key", "request.kind=range", "txn.compares=1"} {
		g.Expect(pruned).NotTo(ContainSubstring(served + " "))
	}
	g.Expect(strings.Count(pruned, "(")).To(BeNumerically("<=", 4), "pruned more than what was refused: %s", pruned)
	g.Expect(w.PrunedDuring()).To(HavePrefix("1 production(s); range.revision=compact (reading at the compact revision"))
}

// A segment's leases outlive the whole run, not only their segment: one
// expiring during a later segment would delete keys at a revision that
// segment's history cannot explain.
func TestLeasesOutliveTheRun(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Duration, cfg.Segment = time.Hour, 30*time.Second
	w := New(cfg, nil, 1, nil, 1, nil)
	w.cfg.Duration = cfg.Segment // as while a segment runs
	if ttl := w.leaseTTL(); ttl < int64(time.Hour/time.Second) {
		t.Errorf("a segment's lease TTL is %ds: shorter than the 1h run", ttl)
	}
}

// The workload may draw every production of the default shape, watches
// and compactions included, with its default watchers and compactor.
func TestDefaultConfigDrawsEveryProduction(t *testing.T) {
	g := NewWithT(t)
	cfg := DefaultConfig()
	cfg.Prefix = "/v/"
	g.Expect(cfg.Productions()).To(Equal(grammar.Productions()))
	cfg.Watchers, cfg.CompactEvery = 0, 0
	for _, p := range cfg.Productions() {
		g.Expect(p).NotTo(Or(HavePrefix("watch."), HavePrefix("compact.")))
	}
	// A run shorter than the compaction period compacts nothing: what
	// needs a compaction is out of its reach.
	cfg = DefaultConfig()
	cfg.Duration, cfg.CompactEvery = 5*time.Second, 8*time.Second
	g.Expect(cfg.Productions()).NotTo(ContainElements("range.revision=compact", "watch.start=below-compact", "compact.revision=past"))
	g.Expect(cfg.Productions()).To(ContainElements("range.revision=past", "compact.revision=future"))
}
