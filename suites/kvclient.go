package suites

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// prefixEnd is the exclusive end of the range of keys starting with p.
func prefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\x00"
}

// kvClient issues requests at its share of the rate until runCtx ends. The
// op mix covers every KV call the checkers judge; CAS txns use the mod
// revision this client last saw, so some succeed and some fail. Requests
// hang off reqCtx, not runCtx, so the end of the run does not fail the
// requests in flight (that would make their outcome needlessly unknown).
func (w *Workload) kvClient(runCtx, reqCtx context.Context, c *targets.Recording, rng *rand.Rand) {
	interval := time.Duration(float64(time.Second) * float64(w.cfg.Clients) / w.cfg.Rate)
	modRev := map[string]int64{} // key -> mod revision last seen (0: absent)
	next := time.Now()
	for seq := 0; runCtx.Err() == nil; seq++ {
		next = next.Add(interval)
		if d := time.Until(next); d > 0 {
			select {
			case <-runCtx.Done():
				return
			case <-time.After(d):
			}
		} else if d < -time.Second {
			next = time.Now() // fell behind (a fault); do not burst to catch up
		}
		if runCtx.Err() != nil {
			return
		}
		req := w.nextRequest(rng, c.ID(), seq, modRev)
		rctx, cancel := context.WithTimeout(reqCtx, w.cfg.RequestTimeout)
		resp, err := c.Do(rctx, req)
		cancel()
		w.Stats.Ops.Add(1)
		if err != nil {
			w.Stats.FailedOps.Add(1)
			if req.Kind.IsWrite() {
				delete(modRev, req.Key) // unknown now
			}
			continue
		}
		w.Stats.sawRevision(resp.Revision)
		learn(modRev, req, resp)
	}
}

func (w *Workload) nextRequest(rng *rand.Rand, client, seq int, modRev map[string]int64) history.Request {
	key := w.key(rng.IntN(w.cfg.Keys))
	value := fmt.Sprintf("%d.%d", client, seq) // unique in the run: names its write
	switch p := rng.IntN(100); {
	case p < 25:
		return history.Request{Kind: history.OpPut, Key: key, Value: value}
	case p < 31:
		return history.Request{Kind: history.OpDelete, Key: key}
	case p < 51:
		return history.Request{Kind: history.OpRange, Key: key}
	case p < 61:
		return history.Request{Kind: history.OpRange, Key: key, Serializable: true}
	case p < 71:
		return history.Request{Kind: history.OpRange, Key: w.cfg.Prefix, End: prefixEnd(w.cfg.Prefix),
			Limit: int64(rng.IntN(6))}
	default:
		// Compare-and-swap on the mod revision; sometimes a second key in the
		// same txn, so one revision carries several events.
		succ := []history.Request{{Kind: history.OpPut, Key: key, Value: value}}
		if rng.IntN(3) == 0 {
			other := w.key(rng.IntN(w.cfg.Keys))
			if other != key {
				succ = append(succ, history.Request{Kind: history.OpPut, Key: other, Value: value + "b"})
			}
		}
		return history.Request{Kind: history.OpTxn,
			Compares: []history.Compare{{Key: key, Target: "mod", Result: "=", Int: modRev[key]}},
			Success:  succ,
			Failure:  []history.Request{{Kind: history.OpRange, Key: key}},
		}
	}
}

// learn updates the client's idea of each key's mod revision.
func learn(modRev map[string]int64, req history.Request, resp *history.Response) {
	switch req.Kind {
	case history.OpPut:
		modRev[req.Key] = resp.Revision
	case history.OpDelete:
		modRev[req.Key] = 0
	case history.OpRange:
		if req.End == "" {
			modRev[req.Key] = 0
		}
		for _, kv := range resp.KVs {
			modRev[kv.Key] = kv.ModRevision
		}
	case history.OpTxn:
		if resp.Succeeded {
			for _, r := range req.Success {
				modRev[r.Key] = resp.Revision
			}
		} else if len(resp.Responses) > 0 {
			learn(modRev, req.Failure[0], &resp.Responses[0])
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
		rev := w.Stats.StoreRevision.Load() - int64(50+rng.IntN(100))
		if rev <= last {
			continue
		}
		rctx, cancel := context.WithTimeout(reqCtx, w.cfg.RequestTimeout)
		_, err := c.Do(rctx, history.Request{Kind: history.OpCompact, Revision: rev})
		cancel()
		if err == nil {
			last = rev
			w.Stats.CompactRevision.Store(rev)
		}
	}
}
