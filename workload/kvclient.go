package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// prefixEnd is the exclusive end of the range of keys starting with p.
func prefixEnd(p string) string { return history.PrefixEnd(p) }

// kvClient issues requests at its share of the rate until runCtx ends. The
// op mix covers every KV call the checkers judge; CAS txns use the mod
// revision this client last saw, so some succeed and some fail. Requests
// hang off reqCtx, not runCtx, so the end of the run does not fail the
// requests in flight (that would make their outcome needlessly unknown).
func (w *Workload) kvClient(runCtx, reqCtx context.Context, c *targets.Recording, rng *rand.Rand) {
	var interval time.Duration // 0: unthrottled
	if w.cfg.Rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(w.cfg.Clients) / w.cfg.Rate)
	}
	modRev := map[string]int64{} // key -> mod revision last seen (0: absent)
	vals := map[string]string{}  // key -> value last seen
	next := time.Now()
	var pace *time.Timer
	// The sequence goes on across segments: a value names one write in
	// the whole run, and a write of unknown outcome carried into the next
	// segment must not share a value with one of that segment's.
	seq := w.seqs[c.ID()]
	defer func() { w.seqs[c.ID()] = seq }()
	for ; runCtx.Err() == nil; seq++ {
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
		req := w.nextRequest(rng, c.ID(), seq, modRev, vals)
		rctx, cancel := context.WithTimeout(reqCtx, w.cfg.RequestTimeout)
		resp, err := c.Do(rctx, req)
		cancel()
		w.Stats.Ops.Add(1)
		if err != nil {
			w.Stats.FailedOps.Add(1)
			for _, k := range writtenKeys(req) {
				delete(modRev, k) // unknown now
				delete(vals, k)
			}
			continue
		}
		w.Stats.sawRevision(resp.Revision)
		learn(modRev, vals, req, resp)
		w.chase(reqCtx, c.ID(), req, resp) // patterns.go: read-after-ack
	}
}

func (w *Workload) nextRequest(rng *rand.Rand, client, seq int, modRev map[string]int64, vals map[string]string) history.Request {
	i := rng.IntN(w.cfg.Keys)
	key := w.key(i)
	value := fmt.Sprintf("%d.%d", client, seq) // unique in the run: names its write
	if req, ok := w.shapeRequest(rng, key, value, modRev); ok {
		if _, refused := w.cfg.Refused[history.CapSerializable]; refused {
			req.Serializable = false
		}
		return req
	}
	f := pick(w.mix, rng)
	g := &gen{rng: rng, prefix: w.cfg.Prefix, key: key, other: w.otherKey(i, rng), value: value,
		modRev: modRev, vals: vals, head: w.Stats.StoreRevision.Load(), floor: w.floor(0)}
	if f.name == "put-lease" {
		g.lease = w.leases.pick(rng)
	}
	return f.make(g)
}

// otherKey is a key other than key number i, for a txn that writes two
// (etcd refuses a txn that writes one key twice).
func (w *Workload) otherKey(i int, rng *rand.Rand) string {
	if w.cfg.Keys < 2 {
		return w.key(i + 1)
	}
	return w.key((i + 1 + rng.IntN(w.cfg.Keys-1)) % w.cfg.Keys)
}

// writtenKeys are the keys a request may change.
func writtenKeys(req history.Request) []string {
	switch req.Kind {
	case history.OpPut, history.OpDelete:
		return []string{req.Key}
	case history.OpTxn:
		var keys []string
		for _, r := range append(req.Success, req.Failure...) {
			keys = append(keys, writtenKeys(r)...)
		}
		return keys
	}
	return nil
}

// learn updates the client's idea of each key's mod revision and value.
func learn(modRev map[string]int64, vals map[string]string, req history.Request, resp *history.Response) {
	switch req.Kind {
	case history.OpPut:
		modRev[req.Key], vals[req.Key] = resp.Revision, req.Value
	case history.OpDelete:
		modRev[req.Key] = 0
		delete(vals, req.Key)
	case history.OpRange:
		if req.Revision > 0 || req.CountOnly {
			return // an old state, or a count, teaches nothing about the keys
		}
		if req.End == "" {
			modRev[req.Key] = 0
			delete(vals, req.Key)
		}
		for _, kv := range resp.KVs {
			modRev[kv.Key] = kv.ModRevision
			if !req.KeysOnly {
				vals[kv.Key] = kv.Value
			}
		}
	case history.OpTxn:
		if resp.Succeeded {
			for _, r := range req.Success {
				switch r.Kind {
				case history.OpDelete:
					modRev[r.Key] = 0
					delete(vals, r.Key)
				case history.OpPut:
					modRev[r.Key], vals[r.Key] = resp.Revision, r.Value
				}
			}
		} else if len(resp.Responses) > 0 && len(req.Failure) > 0 {
			learn(modRev, vals, req.Failure[0], &resp.Responses[0])
		}
	}
}

// compactor compacts to a revision some way behind the head, now and then.
func (w *Workload) compactor(runCtx, reqCtx context.Context, c *targets.Recording, rng *rand.Rand) {
	t := time.NewTicker(w.cfg.CompactEvery)
	defer t.Stop()
	var last int64
	for {
		select {
		case <-runCtx.Done():
			return
		case <-t.C:
		}
		if rev, done := w.compactRace(reqCtx, c, last); done { // patterns.go: compact-race
			if rev < 0 {
				return // the target refuses compactions
			}
			last = max(last, rev)
			continue
		}
		rev := w.beforeCompact(reqCtx, w.Stats.StoreRevision.Load()-int64(50+rng.IntN(100)))
		if rev < w.cfg.MinRevision {
			continue // history before the run is not the run's to compact
		}
		if rev <= last {
			continue
		}
		rctx, cancel := context.WithTimeout(reqCtx, w.cfg.RequestTimeout)
		_, err := c.Do(rctx, history.Request{Kind: history.OpCompact, Revision: rev})
		cancel()
		if targets.CodeOf(err) == history.ErrRefused {
			return // the first compaction asked, and the target refuses them
		}
		if err == nil {
			last = rev
			w.Stats.CompactRevision.Store(rev)
		}
	}
}
