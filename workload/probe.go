package workload

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// probed is what asking the target for every form found.
type probed struct {
	// refused: the forms the target refused, with its words, and the
	// capabilities older histories named (history.CapTxn, ...).
	refused map[string]string
	// head is the store's revision once the probe cleaned up after itself:
	// the run reads, watches and compacts above it.
	head int64
	// dirty: a key the probe wrote could not be removed (the target serves
	// no delete); the run then keeps to a prefix that does not hold it.
	dirty bool
}

// watchOptions are the watch forms the watchers use, each with how a
// probe asks for it alone.
var watchOptions = []struct {
	form string
	set  func(r *history.WatchRequest, head int64)
}{
	{history.FormWatch, func(*history.WatchRequest, int64) {}},
	{history.FormWatchPrevKV, func(r *history.WatchRequest, _ int64) { r.PrevKV = true }},
	{history.FormWatchProgressNotify, func(r *history.WatchRequest, _ int64) { r.ProgressNotify = true }},
	{history.FormWatchNoPut, func(r *history.WatchRequest, _ int64) { r.NoPut = true }},
	{history.FormWatchNoDelete, func(r *history.WatchRequest, _ int64) { r.NoDelete = true }},
	{history.FormWatchStartRev, func(r *history.WatchRequest, head int64) { r.StartRevision = head }},
}

// probeForms asks the target once for every form the workload can send,
// through c, before the history starts: each KV form of the default mix
// and the final write, HashKV, the lease calls, each watch option and a
// progress request. A form is refused only when the answer says so (gRPC
// Unimplemented, or "not supported"/"not implemented"); any other error
// is the workload's to meet and the checks' to judge. Writes go to two
// keys under the prefix, removed afterwards (a lease revoke, then a
// delete of a form the target serves). Compaction is not asked here, as
// every compaction changes the store: the run's first one asks, and a
// refusal stops the compactor (the accounting shows it refused).
func probeForms(ctx context.Context, c targets.Client, prefix string, leaseTTL int64, timeout time.Duration) probed {
	p := probed{refused: map[string]string{}}
	key, key2 := prefix+"probe", prefix+"probe2"
	do := func(req history.Request) (*history.Response, error) {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return c.Do(rctx, req)
	}
	note := func(form string, err error) bool {
		if refusedErr(err) {
			p.refused[form] = err.Error()
			return true
		}
		return false
	}
	lease := func(kind history.CallKind, id int64) (targets.LeaseAnswer, error) {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		a, err := c.Lease(rctx, targets.LeaseRequest{Kind: kind, ID: id, TTL: leaseTTL})
		note(string(kind), err)
		return a, err
	}
	g := &gen{rng: seeded(0, "probe"), prefix: prefix, key: key, other: key2, modRev: map[string]int64{},
		vals: map[string]string{}, floor: 1, probe: true}
	if resp, err := do(history.Request{Kind: history.OpRange, Key: key}); err == nil {
		g.head = resp.Revision
	}

	// The lease the leased put attaches to; a keyless one to revoke.
	var leased int64
	if a, err := lease(history.CallLeaseGrant, 0); err == nil {
		leased = a.ID
		lease(history.CallLeaseKeepAlive, leased)
		if spare, err := lease(history.CallLeaseGrant, 0); err == nil {
			lease(history.CallLeaseRevoke, spare.ID)
		}
	}
	g.lease = leased

	for i, f := range defaultMix {
		if f.name == "put-lease" && leased == 0 {
			continue // nothing to attach: not asked
		}
		g.value = fmt.Sprintf("probe.%d", i)
		req := f.make(g)
		resp, err := do(req)
		if !note(f.name, err) && err == nil {
			learn(g.modRev, g.vals, req, resp)
			g.head = max(g.head, resp.Revision)
		}
	}
	_, err := do(finalWrite(key, key2, "probe.final"))
	note(formFinal, err)
	_, err = do(history.Request{Kind: history.OpHashKV})
	note(history.CapHashKV, err)
	p.probeWatches(ctx, c, key, g.head, timeout)

	// Clean up: the revoke removes what the leased put left attached; a
	// delete of a served form the rest.
	if _, no := p.refused[string(history.CallLeaseRevoke)]; !no && leased != 0 {
		lease(history.CallLeaseRevoke, leased)
	}
	for _, k := range []string{key, key2} {
		if !p.remove(do, k) {
			p.dirty = true
		}
	}
	if resp, err := do(history.Request{Kind: history.OpRange, Key: key}); err == nil {
		p.head = resp.Revision
	} else {
		p.head = g.head
	}
	p.addCapabilities()
	return p
}

// remove deletes key if it exists, by a delete form the target serves,
// and reports whether it is gone.
func (p *probed) remove(do func(history.Request) (*history.Response, error), key string) bool {
	for attempt := 0; attempt < 3; attempt++ {
		resp, err := do(history.Request{Kind: history.OpRange, Key: key})
		if err != nil {
			continue
		}
		if len(resp.KVs) == 0 {
			return true
		}
		if _, no := p.refused[history.CapDelete]; !no {
			do(history.Request{Kind: history.OpDelete, Key: key})
		} else if _, no := p.refused[formKubeDelete]; !no {
			do(kubeDelete(&gen{key: key, modRev: map[string]int64{key: resp.KVs[0].ModRevision}}))
		} else {
			return false
		}
	}
	return false
}

// probeWatches opens one watch per option and waits for it to be created
// or refused; on the first that is created it requests progress.
func (p *probed) probeWatches(ctx context.Context, c targets.Client, key string, head int64, timeout time.Duration) {
	progressAsked := false
	for _, o := range watchOptions {
		req := history.WatchRequest{Key: key}
		o.set(&req, max(head, 1))
		wctx, cancel := context.WithTimeout(ctx, timeout)
		ch := c.Watch(wctx, req)
	wait:
		for {
			select {
			case m, open := <-ch:
				switch {
				case !open:
					break wait
				case m.Err != nil:
					if refusedErr(m.Err) {
						p.refused[o.form] = m.Err.Error()
					}
					break wait
				case m.Response.Canceled:
					if history.SaysRefused(m.Response.CancelReason) {
						p.refused[o.form] = m.Response.CancelReason
					}
					break wait
				case m.Response.Created:
					if !progressAsked {
						progressAsked = true
						if err := c.RequestProgress(wctx); refusedErr(err) {
							p.refused[string(history.CallProgress)] = err.Error()
						}
					}
					break wait
				}
			case <-wctx.Done():
				break wait
			}
		}
		cancel()
		go func() {
			for range ch { // until the adapter closes it
			}
		}()
	}
}

// refusedErr: the server declined the request as one it does not implement.
func refusedErr(err error) bool {
	return err != nil && (targets.CodeOf(err) == history.ErrRefused || history.SaysRefused(err.Error()))
}

// addCapabilities adds the capability names older histories used, which
// checks read: serializable for range-serializable, txn for any txn form
// beyond the Kubernetes storage layer's. (delete and hashkv are forms.)
func (p *probed) addCapabilities() {
	if w, ok := p.refused["range-serializable"]; ok {
		p.refused[history.CapSerializable] = w
	}
	for _, f := range slices.Sorted(maps.Keys(p.refused)) {
		if strings.HasPrefix(f, "txn-") && f != formKubeCreate && f != formKubeUpdate && f != formKubeDelete {
			p.refused[history.CapTxn] = p.refused[f]
			break
		}
	}
}

// refusedText lists refused forms for a log line, in a stable order.
func RefusedText(refused map[string]string) string {
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(refused)) {
		parts = append(parts, fmt.Sprintf("%s (%s)", n, refused[n]))
	}
	return strings.Join(parts, "; ")
}

// Probe asks the target, through c (not recorded: the history has not
// started), for every form the workload can send (probeForms), and makes
// the workload ask only for what it serves (adapt). c.Prefix must be set;
// c.Refused then holds the refused forms with the target's words, for
// the history's meta.
func (c *Config) Probe(ctx context.Context, cl targets.Client) error {
	timeout := c.RequestTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	return c.adapt(probeForms(ctx, cl, c.Prefix, c.leaseTTL(), timeout))
}

// adapt makes the workload ask only for what the target serves: the
// default mix without the refused forms (a refused write's share going
// to the storage layer's txn form that replaces it), watches without the
// refused options. It fails for a shape that cannot do without a refused
// form. The run stays above the revisions the probe made.
func (c *Config) adapt(p probed) error {
	c.Refused = p.refused
	c.MinRevision = max(c.MinRevision, p.head+1)
	if p.dirty {
		c.Prefix += "run/"
	}
	switch c.Shape {
	case "", ShapeDefault, ShapeFutureWatch:
		c.mix = mixFor(p.refused)
		if len(c.mix) == 0 {
			return fmt.Errorf("the target refuses every form of the default workload: %s", RefusedText(p.refused))
		}
	case ShapeChurn, ShapeDeleteHeavy:
		if w, no := p.refused[history.CapDelete]; no {
			return fmt.Errorf("the %s workload needs plain deletes, which the target refuses (%s); use --workload kube-like or write-heavy", c.Shape, w)
		}
	}
	if _, no := p.refused[history.FormWatch]; no {
		c.Watchers = 0
	}
	return nil
}
