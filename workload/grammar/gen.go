package grammar

import (
	"math/rand/v2"
	"strconv"

	"github.com/vigil-suite/vigil/history"
)

// Config sets up one client's generator.
type Config struct {
	Weights *Weights
	// Prefix is the run's (every key drawn is under it); Keys are the
	// run's keys under it, sorted.
	Prefix string
	Keys   []string
	// Leases and Pruner are shared by the run's generators.
	Leases *Leases
	Pruner *Pruner
	// Client names the values of this generator's puts:
	// "<Client>.<seq>", and "<Client>.<seq>.<n>" for the n-th put after
	// the first in one request: every value is unique in the run.
	Client string
	// LeaseTTL is the TTL of every lease granted: longer than the run can
	// last, so that none expires while it is judged.
	LeaseTTL int64
	// ChosenBase sets the high bits of the lease ids this run chooses in
	// its grants (the API lets a client choose), unique to the run.
	ChosenBase int64
	// Explore: one field draw in Explore picks, among the classes of
	// the field this generator never drew, one at random, so a short run
	// reaches them all (0: never; 1: always while there are some).
	Explore int
}

// Gen draws requests from the grammar for one client. It is not safe for
// concurrent use: each client has its own, sharing Leases and Pruner.
type Gen struct {
	cfg Config
	rng *rand.Rand
	k   *knowledge
	// Seq numbers this generator's requests (and names their values); it
	// goes on across segments when the caller carries it.
	Seq   int
	drawn []bool

	// force holds a class per field that a probe asks for, or nil.
	force       map[int]int
	forceFailed bool
	forceDepth  int

	// The draw under way.
	rev    Revisions
	tags   []Tag
	puts   int
	focus  string
	budget int
	revoke *lease
	attach []leaseKey
	chosen int64
}

type leaseKey struct {
	id  int64
	key string
}

// New is a generator drawing with rng, which it alone uses.
func New(cfg Config, rng *rand.Rand) *Gen {
	if cfg.Leases == nil {
		cfg.Leases = &Leases{}
	}
	return &Gen{cfg: cfg, rng: rng, k: newKnowledge(cfg.Keys), drawn: make([]bool, len(tagNames))}
}

// LeaseCall is a lease call (keep-alive, time-to-live) an Action makes.
type LeaseCall struct {
	Kind     history.CallKind
	ID, TTL  int64
	Attached bool
}

// Action is one drawn request: an operation (Op, sent with Do) or a lease
// call (Call), and the productions it was drawn from (Draw, for the
// history). Skip: nothing the target serves could be drawn.
type Action struct {
	Op   *history.Request
	Call *LeaseCall
	Draw []string
	Skip bool

	tags   []Tag
	sig    uint64
	revoke *lease
}

// Next draws the next request. A draw that lands on a combination the
// target refused is drawn again (at most a few times).
func (g *Gen) Next(rev Revisions) Action {
	defer func() { g.Seq++ }()
	for attempt := 0; attempt < 10; attempt++ {
		a, ok := g.attempt(rev)
		if !ok || g.cfg.Pruner.comboPruned(a.sig) {
			continue
		}
		g.commit(&a)
		return a
	}
	return Action{Skip: true}
}

func (g *Gen) start(rev Revisions) {
	g.rev, g.tags, g.puts, g.focus, g.budget, g.revoke, g.attach = rev, g.tags[:0], 0, "", maxOps, nil, g.attach[:0]
}

func (g *Gen) attempt(rev Revisions) (Action, bool) {
	g.start(rev)
	var a Action
	kind := g.draw(fRequest, false, nil)
	if kind < 0 {
		return a, false
	}
	switch fields[fRequest].classes[kind] {
	case KindRange:
		r, ok := g.rangeReq(false)
		if !ok {
			return a, false
		}
		a.Op = &r
	case KindPut:
		r, ok := g.put(false, nil)
		if !ok {
			return a, false
		}
		a.Op = &r
	case KindDelete:
		r, ok := g.del(false, nil)
		if !ok {
			return a, false
		}
		a.Op = &r
	case KindTxn:
		r, ok := g.topTxn()
		if !ok {
			return a, false
		}
		a.Op = &r
	case KindHashKV:
		c := g.draw(fHashKVRevision, false, g.revOK)
		if c < 0 {
			return a, false
		}
		a.Op = &history.Request{Kind: history.OpHashKV, Revision: g.revValue(fields[fHashKVRevision].classes[c])}
	case KindLeaseGrant:
		c := g.draw(fGrantID, false, nil)
		if c < 0 {
			return a, false
		}
		r := history.Request{Kind: history.OpLeaseGrant, TTL: g.cfg.LeaseTTL}
		if fields[fGrantID].classes[c] == "chosen" {
			g.chosen++
			r.Lease = g.cfg.ChosenBase<<40 | int64(g.cfg.clientID())<<24 | g.chosen&0xffffff
		}
		a.Op = &r
	case KindLeaseRevoke:
		id, ok := g.leaseOf(fRevokeLease, true)
		if !ok {
			return a, false
		}
		a.Op = &history.Request{Kind: history.OpLeaseRevoke, Lease: id}
	case KindLeaseKeepAlive:
		id, ok := g.leaseOf(fKeepAliveLease, false)
		if !ok {
			return a, false
		}
		a.Call = &LeaseCall{Kind: history.CallLeaseKeepAlive, ID: id, TTL: g.cfg.LeaseTTL}
	case KindLeaseTTL:
		id, ok := g.leaseOf(fTTLLease, false)
		c := g.draw(fTTLKeys, false, nil)
		if !ok || c < 0 {
			return a, false
		}
		a.Call = &LeaseCall{Kind: history.CallLeaseTimeToLive, ID: id, Attached: c == 1}
	}
	a.tags = normalize(append([]Tag(nil), g.tags...))
	a.sig = signature(a.tags)
	a.revoke = g.revoke
	return a, true
}

// clientID is the client's number in a chosen lease id (its name's
// digits, or a hash of it).
func (c Config) clientID() int {
	if n, err := strconv.Atoi(c.Client); err == nil {
		return n & 0xffff
	}
	h := 0
	for _, b := range []byte(c.Client) {
		h = h*31 + int(b)
	}
	return 0x8000 | h&0x7fff
}

// commit makes the draw the client's: its productions are drawn, the
// lease it revokes leaves the live ones, the leases its puts name get
// their keys.
func (g *Gen) commit(a *Action) {
	a.Draw = make([]string, len(a.tags))
	for i, t := range a.tags {
		a.Draw[i] = tagNames[t]
		g.drawn[t] = true
	}
	if a.revoke != nil {
		g.cfg.Leases.take(a.revoke)
	}
	for _, lk := range g.attach {
		g.cfg.Leases.attach(lk.id, lk.key)
	}
}

// draw picks a class of field f by the weights (inside a txn or not),
// among those ok accepts (nil: all) and the target did not refuse; now
// and then one this generator never drew. It records the class's tag and
// returns the class, or -1 when none can be drawn.
func (g *Gen) draw(f int, inTxn bool, ok func(int) bool) int {
	if c, forced := g.force[f]; forced {
		if ok == nil || ok(c) {
			g.tags = append(g.tags, tagOf(f, c))
			return c
		}
		g.forceFailed = true
	}
	ws := g.cfg.Weights
	n := len(fields[f].classes)
	avail := func(c int) bool {
		return ws.weight(f, c, inTxn) > 0 && !g.cfg.Pruner.pruned(tagOf(f, c)) && (ok == nil || ok(c))
	}
	if e := g.cfg.Explore; e > 0 && (e == 1 || g.rng.IntN(e) == 0) {
		undrawn := 0
		for c := 0; c < n; c++ {
			if !g.drawn[tagOf(f, c)] && avail(c) {
				undrawn++
			}
		}
		if undrawn > 0 {
			p := g.rng.IntN(undrawn)
			for c := 0; c < n; c++ {
				if !g.drawn[tagOf(f, c)] && avail(c) {
					if p == 0 {
						g.tags = append(g.tags, tagOf(f, c))
						return c
					}
					p--
				}
			}
		}
	}
	total := 0
	var okc [32]bool
	for c := 0; c < n; c++ {
		if okc[c] = avail(c); okc[c] {
			total += ws.weight(f, c, inTxn)
		}
	}
	if total == 0 {
		return -1
	}
	p := g.rng.IntN(total)
	for c := 0; c < n; c++ {
		if !okc[c] {
			continue
		}
		if p < ws.weight(f, c, inTxn) {
			g.tags = append(g.tags, tagOf(f, c))
			return c
		}
		p -= ws.weight(f, c, inTxn)
	}
	panic("grammar: draw beyond its total")
}
