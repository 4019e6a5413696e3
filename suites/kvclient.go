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
	var interval time.Duration // 0: unthrottled
	if w.cfg.Rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(w.cfg.Clients) / w.cfg.Rate)
	}
	modRev := map[string]int64{} // key -> mod revision last seen (0: absent)
	next := time.Now()
	var pace *time.Timer
	for seq := 0; runCtx.Err() == nil; seq++ {
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
		req := w.nextRequest(rng, c.ID(), seq, modRev)
		rctx, cancel := context.WithTimeout(reqCtx, w.cfg.RequestTimeout)
		resp, err := c.Do(rctx, req)
		cancel()
		w.Stats.Ops.Add(1)
		if err != nil {
			w.Stats.FailedOps.Add(1)
			for _, k := range writtenKeys(req) {
				delete(modRev, k) // unknown now
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
	if w.cfg.kubeLikeMix {
		return w.kubeLikeRequest(rng, key, value, modRev)
	}
	if req, ok := w.shapeRequest(rng, key, value, modRev); ok {
		if _, refused := w.cfg.Refused[CapSerializable]; refused {
			req.Serializable = false
		}
		return req
	}
	switch p := rng.IntN(100); {
	case p < 25:
		return history.Request{Kind: history.OpPut, Key: key, Value: value}
	case p < 31:
		return history.Request{Kind: history.OpDelete, Key: key}
	case p < 49:
		return history.Request{Kind: history.OpRange, Key: key}
	case p < 58:
		_, refused := w.cfg.Refused[CapSerializable]
		return history.Request{Kind: history.OpRange, Key: key, Serializable: !refused}
	case p < 67:
		return history.Request{Kind: history.OpRange, Key: w.cfg.Prefix, End: prefixEnd(w.cfg.Prefix),
			Limit: int64(rng.IntN(6))}
	case p < 70:
		// A read at a past revision, sometimes below the compact revision:
		// the answer must be the old state or ErrCompacted.
		head := w.Stats.StoreRevision.Load()
		return history.Request{Kind: history.OpRange, Key: key, Revision: w.floor(head - int64(1+rng.IntN(400)))}
	case p < 71:
		// A read from the future must fail, never return data.
		return history.Request{Kind: history.OpRange, Key: key, Revision: w.Stats.StoreRevision.Load() + 1000}
	default:
		return w.txn(rng, key, value, modRev)
	}
}

// txn is a compare-and-swap: mostly on the mod revision this client last
// saw (so some succeed and some fail), sometimes on existence. A third of
// them also put or delete a second key, so one revision carries several
// events.
func (w *Workload) txn(rng *rand.Rand, key, value string, modRev map[string]int64) history.Request {
	cmp := history.Compare{Key: key, Target: "mod", Result: "=", Int: modRev[key]}
	switch rng.IntN(10) {
	case 0:
		cmp = history.Compare{Key: key, Target: "version", Result: ">", Int: 0} // exists
	case 1:
		cmp = history.Compare{Key: key, Target: "create", Result: "=", Int: 0} // absent
	}
	succ := []history.Request{{Kind: history.OpPut, Key: key, Value: value}}
	if rng.IntN(3) == 0 {
		if other := w.key(rng.IntN(w.cfg.Keys)); other != key {
			second := history.Request{Kind: history.OpPut, Key: other, Value: value + "b"}
			if rng.IntN(2) == 0 {
				second = history.Request{Kind: history.OpDelete, Key: other}
			}
			succ = append(succ, second)
		}
	}
	return history.Request{Kind: history.OpTxn, Compares: []history.Compare{cmp}, Success: succ,
		Failure: []history.Request{{Kind: history.OpRange, Key: key}}}
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

// learn updates the client's idea of each key's mod revision.
func learn(modRev map[string]int64, req history.Request, resp *history.Response) {
	switch req.Kind {
	case history.OpPut:
		modRev[req.Key] = resp.Revision
	case history.OpDelete:
		modRev[req.Key] = 0
	case history.OpRange:
		if req.Revision > 0 {
			return // an old state teaches nothing about the current one
		}
		if req.End == "" {
			modRev[req.Key] = 0
		}
		for _, kv := range resp.KVs {
			modRev[kv.Key] = kv.ModRevision
		}
	case history.OpTxn:
		if resp.Succeeded {
			for _, r := range req.Success {
				if r.Kind == history.OpDelete {
					modRev[r.Key] = 0
				} else {
					modRev[r.Key] = resp.Revision
				}
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
		if rev < w.cfg.MinRevision {
			continue // history before the run is not the run's to compact
		}
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
