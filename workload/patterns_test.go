package workload

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

func TestPatternShares(t *testing.T) {
	g := NewWithT(t)
	cfg := DefaultConfig()
	s, err := cfg.PatternShares()
	g.Expect(err).NotTo(HaveOccurred())
	for _, p := range history.Patterns() {
		g.Expect(s[p]).To(BeNumerically(">", 0), "every pattern is on in the default shape: %s", p)
	}
	cfg.Patterns = "none"
	s, err = cfg.PatternShares()
	g.Expect(err).NotTo(HaveOccurred())
	for _, p := range history.Patterns() {
		g.Expect(s[p]).To(BeZero(), p)
	}
	cfg.Patterns = "none, read-after-ack=100,default"
	s, _ = cfg.PatternShares()
	g.Expect(s[history.PatternReadAfterAck]).To(Equal(100))
	g.Expect(s[history.PatternCompactRace]).To(BeZero())

	cfg.Shape = ShapeFutureWatch
	cfg.Patterns = ""
	s, _ = cfg.PatternShares()
	g.Expect(s[history.PatternWatchAtHead]).To(BeZero(), "future-watch's watchers all open ahead")

	for spec, words := range map[string]string{
		"read-after-ak=5":                           `unknown pattern "read-after-ak"; patterns: read-after-ack,`,
		"read-after-ack=101":                        "0 to 100",
		"read-after-ack":                            "is not NAME=PERCENT",
		"watch-at-head=60,watch-at-compact=50":      "together at most 100",
		"compact-race=-1":                           "0 to 100",
		"fault-start=50,fault-heal=x":               "fault-heal=x",
		"none,watch-at-head=100,watch-at-compact=1": "together at most 100",
	} {
		cfg := DefaultConfig()
		cfg.Patterns = spec
		g.Expect(cfg.Validate()).To(MatchError(ContainSubstring(words)), spec)
	}
}

// memberStore is one store behind several members' clients: each client
// says which member it talks to.
type memberStore struct {
	mu sync.Mutex
	r  *refuser
}

type memberClient struct {
	s      *memberStore
	member string
}

func (c *memberClient) Do(ctx context.Context, req history.Request) (*history.Response, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.r.Do(ctx, req)
}

func (c *memberClient) Watch(ctx context.Context, req history.WatchRequest) <-chan targets.WatchMessage {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.r.Watch(ctx, req)
}

func (c *memberClient) RequestProgress(context.Context) error { return nil }
func (c *memberClient) Lease(context.Context, targets.LeaseRequest) (targets.LeaseAnswer, error) {
	return targets.LeaseAnswer{}, nil
}
func (c *memberClient) Member() string { return c.member }
func (c *memberClient) Close() error   { return nil }

// patternWorkload is a workload of 3 members over one fake store, its
// patterns opened and a segment begun, with chaos (During) when faults.
func patternWorkload(t *testing.T, seed int64, patterns string, faults bool) (*Workload, *history.Recorder) {
	t.Helper()
	st := &memberStore{r: newRefuser(nil)}
	dial := func(_ context.Context, m int) (targets.Client, error) {
		return &memberClient{s: st, member: fmt.Sprintf("m%d", m)}, nil
	}
	cfg := DefaultConfig()
	cfg.Clients, cfg.Prefix, cfg.Patterns = 3, "/v/", patterns
	rec := history.NewRecorder(history.Meta{}, history.NewClock(), nil)
	w := New(cfg, dial, 3, rec, seed, nil)
	if faults {
		w.During = func(context.Context) {}
	}
	var opened []*targets.Recording
	if err := w.openPatterns(context.Background(), func(c *targets.Recording) { opened = append(opened, c) }); err != nil {
		t.Fatal(err)
	}
	w.beginPatterns(context.Background())
	return w, rec
}

// patternOps are the recorded operations a pattern sent.
func patternOps(rec *history.Recorder, p string) []history.Operation {
	var out []history.Operation
	for _, o := range rec.History().Operations {
		if history.PatternOf(o.Draw) == p {
			out = append(out, o)
		}
	}
	return out
}

// read-after-ack: which acknowledged writes are chased is drawn from the
// seed alone, the reads go to every other member, each from a client of
// its own, and they read a key the write wrote (or the prefix).
func TestReadAfterAckIsSeeded(t *testing.T) {
	g := NewWithT(t)
	chased := func(seed int64) ([]bool, *history.Recorder) {
		w, rec := patternWorkload(t, seed, "", false)
		var out []bool
		for i := range 60 {
			before := len(patternOps(rec, history.PatternReadAfterAck))
			key := w.key(i % 4)
			req := history.Request{Kind: history.OpPut, Key: key, Value: fmt.Sprintf("1.%d", i)}
			w.chase(context.Background(), 1, req, &history.Response{Revision: int64(20 + i)})
			out = append(out, len(patternOps(rec, history.PatternReadAfterAck)) > before)
		}
		return out, rec
	}
	a, rec := chased(1)
	b, _ := chased(1)
	c, _ := chased(2)
	g.Expect(a).To(Equal(b), "the same seed chases the same writes")
	g.Expect(a).NotTo(Equal(c), "another seed chases others")
	n := 0
	for _, x := range a {
		if x {
			n++
		}
	}
	g.Expect(n).To(BeNumerically("~", 60*20/100, 8), "about the default share of 20%%")

	ops := patternOps(rec, history.PatternReadAfterAck)
	g.Expect(ops).To(HaveLen(2 * n))
	clients := map[int]string{}
	for _, o := range ops {
		g.Expect(o.Request.Kind).To(Equal(history.OpRange))
		g.Expect(o.Request.Serializable).To(BeFalse())
		g.Expect(o.Member).NotTo(Equal("m1"), "client 1 talks to m1: its reads go to the others")
		g.Expect(o.Client).NotTo(Equal(1))
		if o.Request.End == "" {
			g.Expect(o.Request.Key).To(HavePrefix("/v/k00"))
		} else {
			g.Expect(o.Request.Key).To(Equal("/v/"))
		}
		if m, ok := clients[o.Client]; ok {
			g.Expect(o.Member).To(Equal(m), "one member per chaser")
		}
		clients[o.Client] = o.Member
	}
	g.Expect(clients).To(HaveLen(2), "a chaser per other member")

	// A read, or a txn that wrote nothing, is not chased.
	w, rec := patternWorkload(t, 1, "read-after-ack=100", false)
	w.chase(context.Background(), 0, history.Request{Kind: history.OpRange, Key: "/v/k000"}, &history.Response{Revision: 5})
	w.chase(context.Background(), 0, history.Request{Kind: history.OpTxn, Success: []history.Request{{Kind: history.OpPut, Key: "/v/k000"}},
		Failure: []history.Request{{Kind: history.OpRange, Key: "/v/k000"}}}, &history.Response{Revision: 5, Responses: []history.Response{{}}})
	g.Expect(patternOps(rec, history.PatternReadAfterAck)).To(BeEmpty())
	w.chase(context.Background(), 0, history.Request{Kind: history.OpTxn, Success: []history.Request{{Kind: history.OpPut, Key: "/v/k003"}}},
		&history.Response{Revision: 5, Succeeded: true, Responses: []history.Response{{}}})
	g.Expect(patternOps(rec, history.PatternReadAfterAck)).To(HaveLen(2))

	// Share 0: no client is even dialed, nothing is drawn.
	w, rec = patternWorkload(t, 1, "none", true)
	w.chase(context.Background(), 0, history.Request{Kind: history.OpPut, Key: "/v/k000"}, &history.Response{Revision: 5})
	w.FaultEdge(false)
	w.endPatterns()
	g.Expect(rec.History().Operations).To(BeEmpty())
	g.Expect(w.pat.chasers).To(BeEmpty())
	g.Expect(w.pat.bursters).To(BeEmpty())
}

// compact-race: a write, then at once a compaction to its revision and a
// write of the key from every member, then reads at the compact revision
// and one below; each is tagged.
func TestCompactRace(t *testing.T) {
	g := NewWithT(t)
	w, rec := patternWorkload(t, 1, "compact-race=100", false)
	control := targets.Record(&memberClient{s: &memberStore{r: newRefuser(nil)}, member: "m0"}, 99, rec)
	rev, done := w.compactRace(context.Background(), control, 0)
	g.Expect(done).To(BeTrue())
	ops := patternOps(rec, history.PatternCompactRace)
	g.Expect(ops[0].Request.Kind).To(Equal(history.OpPut))
	g.Expect(rev).To(Equal(ops[0].Response.Revision))
	var kinds []history.OpKind
	members := map[string]bool{}
	for _, o := range ops[1:5] {
		kinds = append(kinds, o.Request.Kind)
		if o.Request.Kind == history.OpPut {
			g.Expect(o.Request.Key).To(Equal(ops[0].Request.Key), "the writes race on the first write's key")
			members[o.Member] = true
		} else {
			g.Expect(o.Request.Revision).To(Equal(rev))
		}
	}
	g.Expect(kinds).To(ConsistOf(history.OpCompact, history.OpPut, history.OpPut, history.OpPut))
	g.Expect(members).To(HaveLen(3), "a write from every member")
	g.Expect(ops[5:]).To(HaveLen(2))
	g.Expect(ops[5].Request.Revision).To(Equal(rev))
	g.Expect(ops[6].Request.Revision).To(Equal(rev - 1))
	g.Expect(w.Stats.CompactRevision.Load()).To(Equal(rev))

	// Drawn from the seed: the same seed races at the same turns.
	turns := func(seed int64) []bool {
		w, _ := patternWorkload(t, seed, "", false)
		var out []bool
		for range 30 {
			_, done := w.compactRace(context.Background(), control, 0)
			out = append(out, done)
		}
		return out
	}
	g.Expect(turns(3)).To(Equal(turns(3)))
	g.Expect(turns(3)).NotTo(Equal(turns(4)))
	g.Expect(turns(3)).To(ContainElements(true, false))
}

// watch-at-compact and watch-at-head move a watcher's start to the
// compact revision or the head, as drawn from the watcher's stream.
func TestWatchPatterns(t *testing.T) {
	g := NewWithT(t)
	w, _ := patternWorkload(t, 1, "watch-at-compact=50,watch-at-head=50", false)
	w.Stats.CompactRevision.Store(40)
	w.Stats.StoreRevision.Store(90)
	draws := func(seed int64) []string {
		rng := w.seeded(fmt.Sprintf("patterns/watcher-%d", seed))
		var out []string
		for range 40 {
			start := int64(7)
			draw := w.watchPattern(rng, &start)
			switch history.PatternOf(draw) {
			case history.PatternWatchAtCompact:
				g.Expect(start).To(Equal(int64(40)))
			case history.PatternWatchAtHead:
				g.Expect(start).To(Equal(int64(90)))
			default:
				g.Fail("with shares making 100 every opening is a pattern's")
			}
			out = append(out, history.PatternOf(draw))
		}
		return out
	}
	g.Expect(draws(1)).To(Equal(draws(1)))
	g.Expect(draws(1)).NotTo(Equal(draws(2)))
	g.Expect(draws(1)).To(ContainElements(history.PatternWatchAtCompact, history.PatternWatchAtHead))

	// No compaction yet, or one below the run's first revision: left alone.
	w, _ = patternWorkload(t, 1, "watch-at-head=0,watch-at-compact=100", false)
	w.watchFloor.Store(50)
	w.Stats.CompactRevision.Store(40)
	start := int64(7)
	g.Expect(w.watchPattern(w.seeded("x"), &start)).To(BeNil())
	g.Expect(start).To(Equal(int64(7)))
}

// A fault's edge sends a burst to every member, each through its own
// client; none once the segment ended.
func TestFaultEdgeBursts(t *testing.T) {
	g := NewWithT(t)
	w, rec := patternWorkload(t, 1, "", true)
	w.FaultEdge(false)
	w.pat.bursts.Wait() // else the heal's burst may find a member's client busy, and skip it
	w.FaultEdge(true)
	w.endPatterns()
	for _, p := range []string{history.PatternFaultStart, history.PatternFaultHeal} {
		ops := patternOps(rec, p)
		g.Expect(ops).To(HaveLen(3*burstLength), p)
		byMember := map[string][]history.OpKind{}
		for _, o := range ops {
			byMember[o.Member] = append(byMember[o.Member], o.Request.Kind)
		}
		g.Expect(byMember).To(HaveLen(3))
		for m, kinds := range byMember {
			g.Expect(kinds).To(Equal([]history.OpKind{history.OpPut, history.OpRange, history.OpPut, history.OpRange}), m)
		}
	}
	n := len(rec.History().Operations)
	w.FaultEdge(false)
	g.Expect(rec.History().Operations).To(HaveLen(n), "no burst once the segment ended")

	// The values a pattern writes are unique: client id and a count.
	var vals []string
	for _, o := range rec.History().Operations {
		if o.Request.Kind == history.OpPut {
			g.Expect(slices.Contains(vals, o.Request.Value)).To(BeFalse(), o.Request.Value)
			vals = append(vals, o.Request.Value)
		}
	}
}
