package workload

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// Background leases. Two leases, granted by calls for longer than the
// run can last (leaseTTL) and kept alive besides, are never revoked: puts
// attach to them as to the leases the grammar grants and revokes as
// operations (which the model judges, keys and all). Every second the
// leaser grants and at once revokes a lease no key is ever attached to.

// leasedCount is how many leases puts attach to.
const leasedCount = 2

// leaseEvery is the period of the leaser: a keyless grant and its revoke
// every period, a keep-alive of each leased lease every other one.
const leaseEvery = time.Second

// leasePool holds the leases puts may attach to.
type leasePool struct {
	mu  sync.Mutex
	ids []int64
}

func (p *leasePool) add(id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ids = append(p.ids, id)
}

func (p *leasePool) all() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int64(nil), p.ids...)
}

// pick is one of the leases, or 0 when none was granted.
func (p *leasePool) pick(rng *rand.Rand) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ids) == 0 {
		return 0
	}
	return p.ids[rng.IntN(len(p.ids))]
}

// leaseTTL is the TTL in seconds of every lease the workload grants:
// longer than the run, its final phase and its convergence can last, with
// a minute to spare, so that no lease can expire while the run watches.
func (c Config) leaseTTL() int64 {
	d := c.Duration + 2*c.FinalTimeout + time.Minute
	return int64((d + time.Second - 1) / time.Second)
}

// leaseTTL is the workload's: the whole run's, also in a segment. A
// segment's leases are kept alive only while it runs; one that expired
// during a later segment would delete its keys at a revision that no
// history of that segment explains (the soak found it so).
func (w *Workload) leaseTTL() int64 {
	c := w.cfg
	c.Duration = w.total
	return c.leaseTTL()
}

// refuses reports whether the target refused form before the run.
func (c Config) refuses(form string) bool {
	_, no := c.Refused[form]
	return no
}

// grantLeases grants the leases puts attach to (none if the target
// refuses grants).
func (w *Workload) grantLeases(ctx context.Context, c *targets.Recording) {
	if w.cfg.refuses(string(history.CallLeaseGrant)) {
		return
	}
	for i := 0; i < leasedCount; i++ {
		rctx, cancel := context.WithTimeout(ctx, w.cfg.RequestTimeout)
		a, err := c.Lease(rctx, targets.LeaseRequest{Kind: history.CallLeaseGrant, TTL: w.leaseTTL()})
		cancel()
		if err == nil {
			w.leases.add(a.ID)
			w.gleases.AddBackground(a.ID)
		}
	}
}

// leaser runs the lease calls until runCtx ends: every leaseEvery a
// lease granted and at once revoked (no key is ever attached to it), and
// every other period one keep-alive of each leased lease. A kind of call
// the target refuses, before the run or during it, is not sent again.
func (w *Workload) leaser(runCtx, reqCtx context.Context, c *targets.Recording, rng *rand.Rand) {
	t := time.NewTicker(leaseEvery + time.Duration(rng.IntN(100))*time.Millisecond)
	defer t.Stop()
	refused := map[history.CallKind]bool{}
	for _, k := range []history.CallKind{history.CallLeaseGrant, history.CallLeaseKeepAlive, history.CallLeaseRevoke} {
		refused[k] = w.cfg.refuses(string(k))
	}
	call := func(kind history.CallKind, id int64) (targets.LeaseAnswer, bool) {
		rctx, cancel := context.WithTimeout(reqCtx, w.cfg.RequestTimeout)
		defer cancel()
		a, err := c.Lease(rctx, targets.LeaseRequest{Kind: kind, ID: id, TTL: w.leaseTTL()})
		if targets.CodeOf(err) == history.ErrRefused {
			refused[kind] = true
		}
		return a, err == nil
	}
	for tick := 0; ; tick++ {
		select {
		case <-runCtx.Done():
			return
		case <-t.C:
		}
		if !refused[history.CallLeaseGrant] && !refused[history.CallLeaseRevoke] {
			if a, ok := call(history.CallLeaseGrant, 0); ok {
				call(history.CallLeaseRevoke, a.ID)
			}
		}
		if tick%2 == 1 && !refused[history.CallLeaseKeepAlive] {
			for _, id := range w.leases.all() {
				call(history.CallLeaseKeepAlive, id)
			}
		}
	}
}
