package conformance

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
	etcdtarget "github.com/vigil-suite/vigil/targets/etcd"
	"github.com/vigil-suite/vigil/workload/grammar"
)

// The differential mode: sequences of requests drawn from the etcd API's
// grammar (as the workload draws them, by seed), each sent one after
// another to the server and to the reference as a probe of its own, and
// compared after the probes' normalizations. A sequence is no fixed
// expectation: its requests follow what the answers teach the generator,
// so two servers that answer alike are sent the same requests, and the
// first answer that differs is the finding. The sequence the target was
// sent is kept (Sent), so that a difference can be replayed and reduced
// (ReplayProbe).

// GrammarSequences are differential probes drawn from the grammar.
type GrammarSequences struct {
	Probes []EtcdProbe
	// Refused, when set before the probes run, names the productions the
	// target refuses (workload.Refusals): neither server is sent them, so
	// a sequence compares what the target serves instead of stopping at
	// its first refusal. Give the target's sequences and the reference's
	// the same.
	Refused func() map[string]string
	// sent holds, by probe name, the requests the last run of each probe
	// sent, relative to its prefix and base revision (see relative).
	mu   sync.Mutex
	sent map[string][]history.Request
}

// GrammarProbes draws n sequences of length requests each from the
// default shape's grammar, seeded by seed: probes "grammar/<seed>-<i>".
// Calling it twice with the same arguments gives probes that draw alike.
// run sets the lease ids the sequences choose (a server keeps the leases
// an earlier conform run granted there): give the target's probes and the
// reference's the same.
func GrammarProbes(seed int64, n, length int, run int64) *GrammarSequences {
	gs := &GrammarSequences{sent: map[string][]history.Request{}}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("grammar/%d-%d", seed, i+1)
		gs.Probes = append(gs.Probes, EtcdProbe{
			Info{name, fmt.Sprintf("%d requests drawn from the etcd API's grammar (seed %d, sequence %d) answer as the reference's do", length, seed, i+1), nil},
			func(p *P) { gs.draw(p, name, rand.New(rand.NewPCG(uint64(seed), uint64(i+1))), length, run) }})
	}
	return gs
}

// Sent is what the probe of that name sent in its last run, relative to
// its prefix and base revision.
func (gs *GrammarSequences) Sent(name string) []history.Request {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return gs.sent[name]
}

// grammarKeys is how many keys a sequence draws from.
const grammarKeys = 6

func (gs *GrammarSequences) draw(p *P, name string, rng *rand.Rand, length int, run int64) {
	weights, err := grammar.For("")
	p.Expect(err).NotTo(gomega.HaveOccurred())
	if gs.Refused != nil {
		if refused := gs.Refused(); len(refused) > 0 {
			weights = weights.Without(func(pr string) bool { _, no := refused[pr]; return no })
		}
	}
	keys := make([]string, grammarKeys)
	for i := range keys {
		keys[i] = p.K(fmt.Sprintf("k%d", i))
	}
	leases := &grammar.Leases{}
	gen := grammar.New(grammar.Config{Weights: weights, Prefix: p.Prefix, Keys: keys, Leases: leases,
		Client: "g", LeaseTTL: 3600, ChosenBase: 1 + (run&0x7fffffff)%0x3ffe}, rng)
	c := etcdtarget.Wrap(p.C, "probe")
	head, compact := p.Base, int64(0)
	var sent []history.Request
	for i := 0; i < length; i++ {
		rev := grammar.Revisions{Head: head, Compact: compact, Floor: p.Base + 1}
		a := gen.Next(rev)
		if i%10 == 9 { // now and then a compaction, one that must fail as often
			a, _ = gen.Compaction(rev, i%20 == 19)
		}
		if a.Skip || a.Op == nil {
			continue // a lease call answers with what no probe compares (remaining TTLs)
		}
		resp, err := c.Do(p.Ctx, *a.Op)
		rel := relative(*a.Op, p.Prefix, p.Base)
		if err == nil && rel.Kind == history.OpLeaseGrant && rel.Lease == 0 {
			// A replay asks for the id the server chose here, so that the
			// requests after it that name it name the lease it grants.
			rel.Lease = resp.Lease
		}
		sent = append(sent, rel)
		code, words := history.ErrorCode(""), ""
		if err != nil {
			code, words = targets.CodeOf(err), err.Error()
		} else {
			head = max(head, resp.Revision)
			if a.Op.Kind == history.OpCompact {
				compact = max(compact, a.Op.Revision)
			}
		}
		gen.Learn(a, resp, code, words)
	}
	gs.mu.Lock()
	gs.sent[name] = sent
	gs.mu.Unlock()
}

// ReplayProbe sends fixed requests (relative to a prefix and a base
// revision, as GrammarSequences keeps them) one after another, under the
// probe's own prefix and base: a sequence to compare, and to reduce. The
// lease ids the requests choose are moved by salt (a replay's grant must
// not meet the lease an earlier run granted), the same salt on both
// servers compared.
func ReplayProbe(info Info, reqs []history.Request, salt int64) EtcdProbe {
	return EtcdProbe{info, func(p *P) {
		c := etcdtarget.Wrap(p.C, "probe")
		leases := map[int64]int64{}
		for _, r := range reqs {
			r.Walk(func(q *history.Request) bool {
				if q.Lease > 0 {
					leases[q.Lease] = q.Lease ^ (salt&0xff)<<54
				}
				return true
			})
			c.Do(p.Ctx, absolute(r, p.Prefix, p.Base, leases))
		}
	}}
}

// relative writes a request's keys without prefix (the prefix itself and
// its end as markers) and its revisions as their distance from base.
func relative(r history.Request, prefix string, base int64) history.Request {
	end := history.PrefixEnd(prefix)
	return mapRequest(r, func(k string) string {
		switch {
		case k == prefix:
			return prefixMark
		case k == end:
			return endMark
		}
		return strings.TrimPrefix(k, prefix)
	}, func(v int64) int64 { return v - base }, nil)
}

// absolute is relative's inverse, under another prefix and base.
func absolute(r history.Request, prefix string, base int64, leases map[int64]int64) history.Request {
	return mapRequest(r, func(k string) string {
		switch k {
		case "", "\x00":
			return k
		case prefixMark:
			return prefix
		case endMark:
			return history.PrefixEnd(prefix)
		}
		return prefix + k
	}, func(v int64) int64 { return max(1, v+base) }, leases)
}

// The prefix and its end, in a request made relative.
const (
	prefixMark = "\xff<prefix>"
	endMark    = "\xff<end>"
)

// mapRequest copies a request with its keys, its revisions (those above
// 0) and its leases (where leases maps them) mapped.
func mapRequest(r history.Request, key func(string) string, rev func(int64) int64, leases map[int64]int64) history.Request {
	move := func(v *int64) {
		if *v > 0 {
			*v = rev(*v)
		}
	}
	r.Key, r.End = key(r.Key), key(r.End)
	for _, v := range []*int64{&r.Revision, &r.MinModRevision, &r.MaxModRevision, &r.MinCreateRevision, &r.MaxCreateRevision} {
		move(v)
	}
	if l, ok := leases[r.Lease]; ok {
		r.Lease = l
	}
	cmps := make([]history.Compare, len(r.Compares))
	for i, c := range r.Compares {
		c.Key, c.End = key(c.Key), key(c.End)
		switch strings.ToLower(c.Target) {
		case history.CompareMod, history.CompareCreate:
			move(&c.Int)
		case history.CompareLease:
			if l, ok := leases[c.Int]; ok {
				c.Int = l
			}
		}
		cmps[i] = c
	}
	r.Compares = cmps
	r.Success = mapAll(r.Success, key, rev, leases)
	r.Failure = mapAll(r.Failure, key, rev, leases)
	return r
}

func mapAll(rs []history.Request, key func(string) string, rev func(int64) int64, leases map[int64]int64) []history.Request {
	if rs == nil {
		return nil
	}
	out := make([]history.Request, len(rs))
	for i := range rs {
		out[i] = mapRequest(rs[i], key, rev, leases)
	}
	return out
}
