package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// Every form of the default mix makes requests of the form it is named
// for, whatever the draw, so the accounting (history.FormOf) counts them
// under the name the probe asked for; the shares make 100.
func TestDefaultMixFormsNameTheirRequests(t *testing.T) {
	g := NewWithT(t)
	total := 0
	for _, f := range defaultMix {
		total += f.share
		for seed := range 20 {
			gn := &gen{rng: rand.New(rand.NewPCG(uint64(seed), 1)), prefix: "/v/", key: "/v/k001", other: "/v/k002",
				value: "1.1", modRev: map[string]int64{"/v/k001": 5}, vals: map[string]string{}, head: 900, floor: 3, lease: 7}
			g.Expect(history.FormOf(f.make(gn))).To(Equal(f.name), "form %s, draw %d", f.name, seed)
		}
	}
	g.Expect(total).To(Equal(100))
	fin := finalWrite("/v/final", "/v/final-del", "x")
	g.Expect(history.FormOf(fin)).To(Equal(formFinal))
}

// kine's refusals (v0.17.5, as asked): no plain delete, no txn but the
// storage layer's, no serializable read. The mix keeps every form kine
// serves (plain puts above all) and moves the refused writes' shares to
// the txn forms that replace them; nothing refused is sent.
func TestMixForKine(t *testing.T) {
	g := NewWithT(t)
	refused := map[string]string{}
	for _, f := range []string{"delete", "delete-prev-kv", "range-serializable", "txn-version-else-read",
		"txn-create-else-read", "txn-value-else-read", "txn-mod-multi-else-read", formFinal} {
		refused[f] = f + " is not implemented"
	}
	shares := map[string]int{}
	for _, m := range mixFor(refused) {
		shares[m.form.name] = m.share
	}
	for f := range refused {
		g.Expect(shares).NotTo(HaveKey(f))
	}
	g.Expect(shares["put"]).To(Equal(12))
	g.Expect(shares["put-prev-kv"]).To(Equal(5))
	g.Expect(shares["put-lease"]).To(Equal(5))
	g.Expect(shares["range-prefix-count-only"]).To(Equal(3))
	g.Expect(shares[formKubeUpdate]).To(Equal(12+3+3+3+4), "the refused txn writes become updates")
	g.Expect(shares[formKubeDelete]).To(Equal(3+4+3), "the refused deletes become guarded deletes")

	// A target serving neither a write nor its replacement loses both.
	refused[formKubeDelete] = "no"
	shares = map[string]int{}
	for _, m := range mixFor(refused) {
		shares[m.form.name] = m.share
	}
	g.Expect(shares).NotTo(HaveKey(formKubeDelete))
	g.Expect(shares["put"]).To(Equal(12))
}

// refuser is a target that serves everything trivially except the forms
// it names, which it refuses as kine does (gRPC Unimplemented's words).
type refuser struct {
	refuse map[string]bool
	rev    int64
	kvs    map[string]history.KV
	watch  []history.WatchRequest
	leases []history.CallKind
}

func (r *refuser) no(form string) error {
	return &targets.OpError{Code: history.ErrRefused, Err: errors.New(form + " is not implemented by refuser")}
}

func (r *refuser) Do(_ context.Context, req history.Request) (*history.Response, error) {
	if f := history.FormOf(req); r.refuse[f] {
		return nil, r.no(f)
	}
	return r.apply(req), nil
}

func (r *refuser) apply(req history.Request) *history.Response {
	resp := &history.Response{Revision: r.rev}
	switch req.Kind {
	case history.OpRange:
		if kv, ok := r.kvs[req.Key]; ok && req.End == "" {
			resp.KVs = []history.KV{kv}
		}
	case history.OpPut:
		r.rev++
		r.kvs[req.Key] = history.KV{Key: req.Key, Value: req.Value, ModRevision: r.rev}
		resp.Revision = r.rev
	case history.OpDelete:
		r.rev++
		delete(r.kvs, req.Key)
		resp.Revision = r.rev
	case history.OpTxn:
		// Apply the success branch's writes: enough for the probe's cleanup.
		for _, b := range req.Success {
			r.apply(b)
		}
		resp.Succeeded, resp.Revision = true, r.rev
	}
	return resp
}

func (r *refuser) Watch(ctx context.Context, req history.WatchRequest) <-chan targets.WatchMessage {
	r.watch = append(r.watch, req)
	ch := make(chan targets.WatchMessage, 1)
	m := targets.WatchMessage{Response: history.WatchResponse{Created: true}}
	for _, f := range history.WatchForms(req) {
		if r.refuse[f] {
			m.Response = history.WatchResponse{Canceled: true, CancelReason: f + " is not supported"}
		}
	}
	ch <- m
	close(ch)
	return ch
}

func (r *refuser) RequestProgress(context.Context) error {
	if r.refuse["progress"] {
		return r.no("progress")
	}
	return nil
}

func (r *refuser) Lease(_ context.Context, req targets.LeaseRequest) (targets.LeaseAnswer, error) {
	kind, ttl := req.Kind, req.TTL
	r.leases = append(r.leases, kind)
	if r.refuse[string(kind)] {
		return targets.LeaseAnswer{}, r.no(string(kind))
	}
	return targets.LeaseAnswer{ID: 100 + int64(len(r.leases)), TTL: ttl}, nil
}

func (r *refuser) Member() string { return "m" }
func (r *refuser) Close() error   { return nil }

// The probe asks every form once and reports exactly the refused ones,
// with the target's words, plus the capability names older histories
// used; it leaves no key behind, and the run starts above it.
func TestProbeForms(t *testing.T) {
	g := NewWithT(t)
	no := []string{"delete", "delete-prev-kv", "range-serializable", "txn-value-else-read", "lease-revoke",
		"lease-keepalive", history.FormWatchNoPut, "progress"}
	r := &refuser{refuse: map[string]bool{}, rev: 10, kvs: map[string]history.KV{}}
	for _, f := range no {
		r.refuse[f] = true
	}
	p := probeForms(context.Background(), r, "/v/", 100, 1e9)
	want := map[string]string{}
	for _, f := range no {
		want[f] = f + " is not implemented by refuser"
	}
	want[history.FormWatchNoPut] = history.FormWatchNoPut + " is not supported"
	want[history.CapSerializable] = want["range-serializable"]
	want[history.CapTxn] = want["txn-value-else-read"]
	g.Expect(p.refused).To(Equal(want))
	g.Expect(r.kvs).To(BeEmpty(), "the probe's keys are removed (by the storage layer's delete: plain ones are refused)")
	g.Expect(p.dirty).To(BeFalse())
	g.Expect(p.head).To(Equal(r.rev))
	g.Expect(r.watch).To(HaveLen(len(watchOptions)))
	g.Expect(r.leases).To(Equal([]history.CallKind{"lease-grant", "lease-keepalive", "lease-grant", "lease-revoke"}))

	cfg := DefaultConfig()
	cfg.Prefix = "/v/"
	g.Expect(cfg.adapt(p)).To(Succeed())
	g.Expect(cfg.MinRevision).To(Equal(r.rev + 1))
	g.Expect(cfg.Prefix).To(Equal("/v/"))
	for _, m := range cfg.mix {
		g.Expect(p.refused).NotTo(HaveKey(m.form.name))
	}

	// A target that serves no delete keeps the probe's keys: the run moves
	// to a prefix without them. churn cannot do without plain deletes.
	r = &refuser{refuse: map[string]bool{"delete": true, formKubeDelete: true}, rev: 10, kvs: map[string]history.KV{}}
	p = probeForms(context.Background(), r, "/v/", 100, 1e9)
	g.Expect(p.dirty).To(BeTrue())
	cfg = DefaultConfig()
	cfg.Prefix = "/v/"
	g.Expect(cfg.adapt(p)).To(Succeed())
	g.Expect(cfg.Prefix).To(Equal("/v/run/"))
	cfg.Shape = ShapeChurn
	g.Expect(fmt.Sprint(cfg.adapt(p))).To(ContainSubstring("needs plain deletes"))
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
