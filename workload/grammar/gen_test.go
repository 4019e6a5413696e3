package grammar

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/history"
)

const testPrefix = "/v/"

func testKeys(n int) []string {
	var ks []string
	for i := range n {
		ks = append(ks, fmt.Sprintf("%sk%03d", testPrefix, i))
	}
	return ks
}

// run is a run in miniature: clients drawing in turn against the sim,
// each learning from its answers, a compactor now and then.
type run struct {
	s       *sim
	gens    []*Gen
	actions []Action
	real    int // compactions that changed the store
}

func newRun(shape string, clients int, seed int64) *run {
	r := &run{s: newSim()}
	leases, pruner := &Leases{}, NewPruner()
	leases.AddBackground(7) // the workload's own, granted by a call
	r.s.leases[7] = true
	for c := range clients {
		r.gens = append(r.gens, New(Config{Weights: MustFor(shape), Prefix: testPrefix, Keys: testKeys(16), Leases: leases,
			Pruner: pruner, Client: fmt.Sprint(c), LeaseTTL: 100, ChosenBase: 3, Explore: 32},
			rand.New(rand.NewPCG(uint64(seed), uint64(c)))))
	}
	return r
}

// step makes n requests; every 400th request's turn also compacts (the
// compactor's real compactions) and every 50th sends one that must fail.
func (r *run) step(n int, keep bool) {
	comp := New(Config{Weights: r.gens[0].cfg.Weights, Prefix: testPrefix, Keys: testKeys(16), Client: "c", Explore: 1},
		rand.New(rand.NewPCG(9, 9)))
	for i := range n {
		g := r.gens[i%len(r.gens)]
		a := g.Next(r.s.revisions())
		r.answer(g, a)
		if keep {
			r.actions = append(r.actions, a)
		}
		if i%50 == 49 {
			if a, ok := comp.Compaction(r.s.revisions(), i%400 == 399); ok {
				if _, code := r.s.do(a.Op); code == "" {
					r.real++
				}
				if keep {
					r.actions = append(r.actions, a)
				}
			}
		}
	}
}

func (r *run) answer(g *Gen, a Action) {
	if a.Skip {
		return
	}
	if a.Op == nil {
		g.Learn(a, nil, "", "")
		return
	}
	resp, code := r.s.do(a.Op)
	g.Learn(a, resp, code, string(code))
}

// The same seed draws the same requests; another seed others.
func TestDrawIsDeterministicBySeed(t *testing.T) {
	g := NewWithT(t)
	draw := func(seed int64) string {
		r := newRun(ShapeDefault, 4, seed)
		r.step(3000, true)
		b, err := json.Marshal(r.actions)
		g.Expect(err).NotTo(HaveOccurred())
		return string(b)
	}
	a, b, c := draw(1), draw(1), draw(2)
	g.Expect(a == b).To(BeTrue(), "seed 1 drew two different sequences")
	g.Expect(a == c).To(BeFalse(), "seeds 1 and 2 drew the same sequence")
}

// Over many draws, every production of each shape is drawn and none the
// shape leaves out (compaction's and the watches' are the compactor's and
// the watchers'); and every request keeps the rules the checkers rest on.
func TestEveryProductionDrawnAndEveryDrawSound(t *testing.T) {
	for _, shape := range []string{ShapeDefault, ShapeKubeLike, ShapeWriteHeavy, ShapeChurn, ShapeDeleteHeavy} {
		t.Run(shape, func(t *testing.T) {
			g := NewWithT(t)
			r := newRun(shape, 8, 5)
			n := 100_000
			if testing.Short() || shape != ShapeDefault {
				n = 20_000
			}
			r.step(n, true)
			drawn := map[string]int{}
			for _, a := range r.actions {
				for _, d := range a.Draw {
					drawn[d]++
				}
			}
			ws := MustFor(shape)
			for _, p := range ws.Reachable() {
				if strings.HasPrefix(p, "watch.") {
					continue
				}
				g.Expect(drawn).To(HaveKey(p), "never drawn in %d requests", n)
			}
			reach := ws.Reachable()
			for p := range drawn {
				g.Expect(slices.Contains(reach, p)).To(BeTrue(), "%s drawn, though the shape leaves it out", p)
			}
			expectSound(g, r.actions)
			g.Expect(r.real).To(BeNumerically(">", 0), "real compactions")
		})
	}
}

// expectSound checks the rules the checkers rest on, over every request
// (plain conditions: gomega's matchers are too slow for 100k requests).
func expectSound(g Gomega, actions []Action) {
	values := map[string]bool{}
	fail := func(format string, args ...any) { g.Expect(fmt.Sprintf(format, args...)).To(BeEmpty()) }
	for _, a := range actions {
		if a.Skip {
			continue
		}
		if len(a.Draw) == 0 || !slices.IsSortedFunc(a.Draw, Order) {
			fail("draw empty or out of the vocabulary's order: %v", a.Draw)
		}
		if a.Call != nil {
			if a.Call.Kind != history.CallLeaseKeepAlive && a.Call.Kind != history.CallLeaseTimeToLive {
				fail("call %s", a.Call.Kind)
			}
			continue
		}
		r := a.Op
		has := func(d string) bool { return slices.Contains(a.Draw, d) }
		bad := has("txn.writes=duplicate") || has("txn.writes=overlap")
		ops := -1
		r.Walk(func(q *history.Request) bool {
			ops++
			switch q.Kind {
			case history.OpPut:
				switch {
				case q.IgnoreValue && q.Value != "":
					fail("a put with ignore_value carries a value: %s", mustJSON(q))
				case !q.IgnoreValue && values[q.Value]:
					fail("value %q written twice", q.Value)
				case q.IgnoreLease && q.Lease != 0:
					fail("a lease beside ignore_lease: %s", mustJSON(q))
				}
				values[q.Value] = true
				fallthrough
			case history.OpRange, history.OpDelete:
				if !strings.HasPrefix(q.Key, testPrefix) || q.End != "" && !strings.HasPrefix(q.End, testPrefix) && q.End != history.PrefixEnd(testPrefix) {
					fail("outside the prefix: %s", mustJSON(q))
				}
			case history.OpTxn:
				if len(q.Compares) > 4 {
					fail("%d compares", len(q.Compares))
				}
				for _, c := range q.Compares {
					if !strings.HasPrefix(c.Key, testPrefix) {
						fail("a compare outside the prefix: %s", mustJSON(c))
					}
				}
			case history.OpCompact:
				if !has("compact.revision=compact") && !has("compact.revision=below-compact") && !has("compact.revision=future") && q.Revision < 5 {
					fail("a compaction below the floor: %s", mustJSON(q))
				}
			}
			return true
		})
		if ops > maxOps || r.Depth() > maxDepth {
			fail("%d requests, depth %d: %s", ops, r.Depth(), mustJSON(r))
		}
		if r.Kind == history.OpRange && r.Revision > 0 && r.Revision < 5 && !has("range.revision=below-compact") {
			fail("a read below the floor: %s", mustJSON(a))
		}
		if r.Kind != history.OpTxn {
			continue
		}
		if invalidTxn(r) != bad {
			fail("etcd's check of %s says invalid %v, drawn invalid %v", mustJSON(a), invalidTxn(r), bad)
		}
		if bad {
			continue
		}
		for _, p := range paths(r) {
			for i := range p {
				for j := i + 1; j < len(p); j++ {
					if overlaps(p[i], p[j]) {
						fail("one path writes a key twice: %s", mustJSON(r))
					}
				}
			}
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A lease drawn as revoked is one whose revoke was acknowledged; one
// never granted is negative, as no server grants; a revoke takes only
// leases granted by operations, never the workload's background ones.
func TestLeaseClasses(t *testing.T) {
	g := NewWithT(t)
	r := newRun(ShapeDefault, 4, 3)
	revoked := map[int64]bool{}
	for i := range 20000 {
		gen := r.gens[i%4]
		a := gen.Next(r.s.revisions())
		if a.Op != nil && a.Op.Kind == history.OpLeaseRevoke {
			g.Expect(a.Op.Lease).NotTo(Equal(int64(7)), "the background lease revoked")
		}
		if a.Op != nil && a.Op.Kind == history.OpPut {
			switch {
			case slices.Contains(a.Draw, "put.lease=revoked"):
				g.Expect(revoked).To(HaveKey(a.Op.Lease))
			case slices.Contains(a.Draw, "put.lease=never"):
				g.Expect(a.Op.Lease).To(BeNumerically("<", 0))
			}
		}
		var resp *history.Response
		var code history.ErrorCode
		if a.Op != nil {
			resp, code = r.s.do(a.Op)
		}
		if a.Op != nil && a.Op.Kind == history.OpLeaseRevoke && code == "" && a.Op.Lease > 0 {
			revoked[a.Op.Lease] = true
		}
		gen.Learn(a, resp, code, string(code))
	}
	g.Expect(revoked).NotTo(BeEmpty())
}

// Watchers take their start classes by the weights, those that need a
// compaction opening last; the future-watch shape opens all ahead.
func TestWatchStarts(t *testing.T) {
	g := NewWithT(t)
	starts := MustFor(ShapeDefault).WatchStarts(12)
	g.Expect(starts).To(HaveLen(12))
	for _, c := range []string{"0", "head", "past", "compact", "below-compact", "future"} {
		g.Expect(starts).To(ContainElement(c))
	}
	g.Expect(starts[len(starts)-1]).To(Equal("below-compact"))
	g.Expect(MustFor(ShapeFutureWatch).WatchStarts(5)).To(Equal([]string{"future", "future", "future", "future", "future"}))
}

// The vocabulary names every production once, as production.field=class.
func TestVocabulary(t *testing.T) {
	g := NewWithT(t)
	ps := Productions()
	g.Expect(len(ps)).To(BeNumerically(">", 150))
	seen := map[string]bool{}
	for _, p := range ps {
		g.Expect(p).To(MatchRegexp(`^[a-z-]+\.[a-z_]+=[a-z0-9/=!<>@_-]+$`))
		g.Expect(seen[p]).To(BeFalse(), p)
		seen[p] = true
	}
	for _, p := range MustFor(ShapeDefault).Reachable() {
		g.Expect(seen).To(HaveKey(p))
	}
	g.Expect(MustFor(ShapeDefault).Reachable()).To(HaveLen(len(ps)), "the default shape reaches every production")
}

// Refusing every class of a request's field takes the request out, and
// refusing revokes takes out what needs a revoked lease; nothing else.
func TestWithoutRefused(t *testing.T) {
	g := NewWithT(t)
	refused := map[string]bool{"lease-keepalive.lease=live": true, "lease-keepalive.lease=revoked": true,
		"lease-keepalive.lease=never": true, "request.kind=lease-revoke": true, "range.serializable=true": true}
	reach := MustFor(ShapeDefault).Without(func(p string) bool { return refused[p] }).Reachable()
	for _, p := range []string{"request.kind=lease-keepalive", "lease-keepalive.lease=never", "put.lease=revoked",
		"lease-ttl.lease=revoked", "range.serializable=true", "request.kind=lease-revoke"} {
		g.Expect(reach).NotTo(ContainElement(p))
	}
	for _, p := range []string{"request.kind=lease-ttl", "put.lease=never", "range.serializable=false", "txn.op=then/put"} {
		g.Expect(reach).To(ContainElement(p))
	}
	g.Expect(len(reach)).To(Equal(len(Productions())-12), "the keep-alive (4), the revoke (5), two revoked leases, serializable reads")
}

// BenchmarkNext is what drawing one request costs a client, with the
// default weights, against the test store (its answers included).
func BenchmarkNext(b *testing.B) {
	r := newRun(ShapeDefault, 1, 1)
	g := r.gens[0]
	b.ReportAllocs()
	for b.Loop() {
		r.answer(g, g.Next(r.s.revisions()))
	}
}
