package workload

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
	"github.com/vigil-suite/vigil/workload/grammar"
)

// prefixEnd is the exclusive end of the range of keys starting with p.
func prefixEnd(p string) string { return history.PrefixEnd(p) }

// kvClient issues requests drawn from the grammar at its share of the rate
// until runCtx ends. Requests hang off reqCtx, not runCtx, so the end of
// the run does not fail the requests in flight (that would make their
// outcome needlessly unknown).
func (w *Workload) kvClient(runCtx, reqCtx context.Context, c *targets.Recording, rng *rand.Rand) {
	var interval time.Duration // 0: unthrottled
	if w.cfg.Rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(w.cfg.Clients) / w.cfg.Rate)
	}
	gen := w.generator(fmt.Sprint(c.ID()), rng, 32)
	// The sequence goes on across segments: a value names one write in
	// the whole run, and a write of unknown outcome carried into the next
	// segment must not share a value with one of that segment's.
	gen.Seq = w.seqs[c.ID()]
	defer func() { w.seqs[c.ID()] = gen.Seq }()
	next := time.Now()
	var pace *time.Timer
	for runCtx.Err() == nil {
		if interval > 0 {
			next = next.Add(interval)
			if d := time.Until(next); d > 0 {
				if pace == nil {
					pace = time.NewTimer(d)
					defer pace.Stop()
				} else {
					pace.Reset(d)
				}
				select {
				case <-runCtx.Done():
					return
				case <-pace.C:
				}
			} else if d < -time.Second {
				next = time.Now() // fell behind (a fault); do not burst to catch up
			}
			if runCtx.Err() != nil {
				return
			}
		}
		a := gen.Next(w.revisions())
		if a.Skip {
			// Nothing the target serves could be drawn (it refused all).
			select {
			case <-runCtx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		w.send(reqCtx, c, gen, a)
	}
}

// send makes one drawn request and lets the generator learn its outcome.
func (w *Workload) send(reqCtx context.Context, c *targets.Recording, gen *grammar.Gen, a grammar.Action) {
	rctx, cancel := context.WithTimeout(reqCtx, w.cfg.RequestTimeout)
	defer cancel()
	var resp *history.Response
	var err error
	if a.Op != nil {
		resp, err = c.DoDrawn(rctx, *a.Op, a.Draw)
	} else {
		_, err = c.Lease(rctx, targets.LeaseRequest{Kind: a.Call.Kind, ID: a.Call.ID, TTL: a.Call.TTL, Attached: a.Call.Attached}, a.Draw...)
	}
	w.Stats.Ops.Add(1)
	code, words := outcome(err)
	if err != nil {
		w.Stats.FailedOps.Add(1)
	} else if resp != nil {
		w.Stats.sawRevision(resp.Revision)
		if a.Op != nil {
			w.chase(reqCtx, c.ID(), *a.Op, resp) // patterns.go: read-after-ack
		}
	}
	gen.Learn(a, resp, code, words)
}

// outcome classifies an error for the generator: a refusal in words is
// one whatever code the adapter gave it.
func outcome(err error) (history.ErrorCode, string) {
	switch {
	case err == nil:
		return "", ""
	case refusedErr(err):
		return history.ErrRefused, err.Error()
	}
	return targets.CodeOf(err), err.Error()
}

// generator is a grammar generator for one client (or the compactor)
// of the segment running: the run's keys and leases, the shape's
// weights, the target's refusals.
func (w *Workload) generator(client string, rng *rand.Rand, explore int) *grammar.Gen {
	keys := make([]string, w.cfg.Keys)
	for i := range keys {
		keys[i] = w.key(i)
	}
	return grammar.New(grammar.Config{Weights: w.weights, Prefix: w.cfg.Prefix, Keys: keys, Leases: w.gleases,
		Pruner: w.pruner, Client: client, LeaseTTL: w.leaseTTL(), ChosenBase: chosenBase(w.cfg.Prefix), Explore: explore}, rng)
}

// chosenBase is the high bits of the lease ids this run chooses: from its
// prefix, unique to the run, so that a second run on the same cluster
// chooses none the first granted.
func chosenBase(prefix string) int64 {
	h := fnv.New32a()
	h.Write([]byte(prefix))
	return 1 + int64(h.Sum32()%0x3ffe)
}

// revisions is what the clients know of the store's revisions.
func (w *Workload) revisions() grammar.Revisions {
	return grammar.Revisions{Head: w.Stats.StoreRevision.Load(), Compact: w.Stats.CompactRevision.Load(), Floor: w.floor(0)}
}

// compactor compacts: every CompactEvery a real compaction (some way
// behind the head, or at it), and every second one that must fail (at
// the compact revision, below it, in the future), as the shape weighs
// them. A refused production is not drawn again.
func (w *Workload) compactor(runCtx, reqCtx context.Context, c *targets.Recording, rng *rand.Rand) {
	gen := w.generator("compactor", rng, 1)
	realTick := time.NewTicker(w.cfg.CompactEvery)
	defer realTick.Stop()
	failing := time.NewTicker(time.Second)
	defer failing.Stop()
	for {
		real := false
		select {
		case <-runCtx.Done():
			return
		case <-realTick.C:
			real = true
		case <-failing.C:
		}
		a, ok := gen.Compaction(w.revisions(), real)
		if !ok {
			continue
		}
		if real {
			// The member comparer's round before a compaction, and while it
			// bisects a divergence, no compaction past where the members
			// last agreed (members.go).
			if held := w.beforeCompact(reqCtx, a.Op.Revision); held < a.Op.Revision {
				if held <= w.Stats.CompactRevision.Load() || held < w.cfg.MinRevision {
					continue
				}
				a.Op.Revision = held
			}
		}
		rctx, cancel := context.WithTimeout(reqCtx, w.cfg.RequestTimeout)
		resp, err := c.DoDrawn(rctx, *a.Op, a.Draw)
		cancel()
		code, words := outcome(err)
		gen.Learn(a, resp, code, words)
		if err == nil && real {
			// Only a real compaction's answer says where history begins;
			// one that should have failed and did not is the checks' to judge.
			w.Stats.CompactRevision.Store(max(w.Stats.CompactRevision.Load(), a.Op.Revision))
		}
		if real { // after the grammar's own, so the pattern takes none of its turns
			if rev, done := w.compactRace(reqCtx, c, w.Stats.CompactRevision.Load()); done && rev > 0 { // patterns.go: compact-race
				w.Stats.CompactRevision.Store(max(w.Stats.CompactRevision.Load(), rev))
			}
		}
	}
}
