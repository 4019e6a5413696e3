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
	"github.com/vigil-suite/vigil/workload/grammar"
)

// probed is what asking the target for every production found.
type probed struct {
	// refused: the productions the target refused, with its words, and
	// the names older histories and the checks use (history.CapTxn, the
	// watch forms, the lease call kinds...).
	refused map[string]string
	// asked counts the productions asked; served lists those answered.
	asked  int
	served []string
	// head is the store's revision once the probe cleaned up after itself:
	// the run reads, watches and compacts above it.
	head int64
	// dirty: a key the probe wrote could not be removed (the target serves
	// no delete); the run then keeps to a prefix that does not hold it.
	dirty bool
}

// probeForms asks the target once for every production of the grammar
// that the shape ws reaches, through c, before the history starts: each
// by its plainest request (grammar's Ask: every other field its plainest
// class), the final write, the lease calls the workload keeps in the
// background, each watch production (a watch opened until it is created)
// and a progress request. A production is refused only when the answer
// says so (gRPC Unimplemented, or "not supported"/"not implemented"); any
// other error is the workload's to meet and the checks' to judge. Writes
// go to two keys under the prefix, removed afterwards (the probe's leases
// revoked, then a delete the target serves). Compaction is not asked
// here, as every compaction changes the store: the run's compactions ask,
// and a refusal prunes what they drew.
func probeForms(ctx context.Context, c targets.Client, prefix string, ws *grammar.Weights, leaseTTL int64, timeout time.Duration) probed {
	p := probed{refused: map[string]string{}}
	key, key2 := prefix+"probe", prefix+"probe2"
	do := func(req history.Request) (*history.Response, error) {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return c.Do(rctx, req)
	}
	note := func(name string, err error) bool {
		if refusedErr(err) {
			p.refused[name] = err.Error()
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
	rev := grammar.Revisions{Floor: 1}
	if resp, err := do(history.Request{Kind: history.OpRange, Key: key}); err == nil {
		rev.Head = resp.Revision
	}

	// The leaser's calls: a grant, a keep-alive, a grant and its revoke.
	var leased int64
	if a, err := lease(history.CallLeaseGrant, 0); err == nil {
		leased = a.ID
		lease(history.CallLeaseKeepAlive, leased)
		if spare, err := lease(history.CallLeaseGrant, 0); err == nil {
			lease(history.CallLeaseRevoke, spare.ID)
		}
	}

	// Each production by its plainest request. Some need what an earlier
	// one made (a lease granted, then revoked; a key present): a second
	// pass asks them.
	pruner, leases := grammar.NewPruner(), &grammar.Leases{}
	gen := grammar.New(grammar.Config{Weights: grammar.Plain(), Prefix: prefix, Keys: []string{key, key2}, Leases: leases,
		Pruner: pruner, Client: "probe", LeaseTTL: leaseTTL, ChosenBase: chosenBase(prefix)}, seeded(0, "probe"))
	var prods []string
	for _, pr := range ws.Reachable() {
		if !strings.HasPrefix(pr, "compact.") && !strings.HasPrefix(pr, "watch.") {
			prods = append(prods, pr)
		}
	}
	asked := map[string]bool{}
	for pass := 0; pass < 4; pass++ {
		progress := false
		for _, pr := range prods {
			if asked[pr] {
				continue
			}
			a, ok := gen.Ask(pr, rev)
			if !ok {
				continue
			}
			asked[pr], progress = true, true
			var resp *history.Response
			var err error
			if a.Op != nil {
				resp, err = do(*a.Op)
			} else {
				rctx, cancel := context.WithTimeout(ctx, timeout)
				_, err = c.Lease(rctx, targets.LeaseRequest{Kind: a.Call.Kind, ID: a.Call.ID, TTL: a.Call.TTL, Attached: a.Call.Attached})
				cancel()
			}
			if note(pr, err) {
				pruner.Refuse(pr, err.Error())
				gen.Learn(a, nil, history.ErrUnknown, "") // as a write that may have been applied
				continue
			}
			code, words := outcome(err)
			gen.Learn(a, resp, code, words)
			if resp != nil {
				rev.Head = max(rev.Head, resp.Revision)
				rev.Compact = max(rev.Compact, resp.CompactRevision)
			}
		}
		if !progress {
			break
		}
	}
	p.asked, p.served = len(asked), pruner.Served()
	_, err := do(finalWrite(key, key2, "probe.final"))
	note(formFinal, err)
	p.probeWatches(ctx, c, key, ws, rev, timeout)

	// Clean up: revokes remove what the leased puts left attached; a
	// delete of a served form the rest.
	if _, no := p.refused[string(history.CallLeaseRevoke)]; !no {
		for _, id := range append(leases.LiveLeases(), leased) {
			if id != 0 {
				lease(history.CallLeaseRevoke, id)
			}
		}
	}
	for _, k := range []string{key, key2} {
		if !p.remove(do, k) {
			p.dirty = true
		}
	}
	if resp, err := do(history.Request{Kind: history.OpRange, Key: key}); err == nil {
		p.head = resp.Revision
	} else {
		p.head = rev.Head
	}
	p.addCapabilities()
	return p
}

// remove deletes key if it exists, by a delete the target serves, and
// reports whether it is gone.
func (p *probed) remove(do func(history.Request) (*history.Response, error), key string) bool {
	for attempt := 0; attempt < 3; attempt++ {
		resp, err := do(history.Request{Kind: history.OpRange, Key: key})
		if err != nil {
			continue
		}
		if len(resp.KVs) == 0 {
			return true
		}
		switch {
		case !p.refuses("request.kind=delete") && !p.refuses("delete.span=key"):
			do(history.Request{Kind: history.OpDelete, Key: key})
		case !p.refuses("txn.op=then/delete") && !p.refuses(formKubeDelete):
			do(kubeDelete(key, resp.KVs[0].ModRevision))
		default:
			return false
		}
	}
	return false
}

func (p *probed) refuses(name string) bool {
	_, no := p.refused[name]
	return no
}

// watchLegacy are the watch forms older histories and the watchers name,
// by the production that asks for each.
var watchLegacy = map[string]string{
	"watch.start=0":              history.FormWatch,
	"watch.prev_kv=true":         history.FormWatchPrevKV,
	"watch.progress_notify=true": history.FormWatchProgressNotify,
	"watch.filter=no_put":        history.FormWatchNoPut,
	"watch.filter=no_delete":     history.FormWatchNoDelete,
	"watch.start=head":           history.FormWatchStartRev,
}

// probeWatches opens one watch per watch production the shape reaches
// (the plainest watch but for that production: from now, on one key) and
// waits for it to be created or refused; on the first that is created it
// requests progress.
func (p *probed) probeWatches(ctx context.Context, c targets.Client, key string, ws *grammar.Weights, rev grammar.Revisions, timeout time.Duration) {
	progressAsked := false
	rng := seeded(0, "probe-watch")
	for _, pr := range ws.Reachable() {
		if !strings.HasPrefix(pr, "watch.") || pr == "watch.start=resume" {
			continue
		}
		req := history.WatchRequest{Key: key}
		class := pr[strings.IndexByte(pr, '=')+1:]
		switch grammar.Field(pr) {
		case "watch.start":
			start, ok := grammar.WatchStart(class, rev, rng)
			if !ok {
				continue // no compaction known: the run asks
			}
			req.StartRevision = start
		case "watch.span":
			if class == "prefix" {
				req.End = prefixEnd(key)
			}
		case "watch.prev_kv":
			req.PrevKV = class == "true"
		case "watch.progress_notify":
			req.ProgressNotify = class == "true"
		case "watch.filter":
			req.NoPut, req.NoDelete = class == "no_put", class == "no_delete"
		case "watch.fragment":
			req.Fragment = class == "true"
		}
		words, refused := p.watchOnce(ctx, c, req, timeout, &progressAsked)
		if refused {
			p.refused[pr] = words
			if f, ok := watchLegacy[pr]; ok {
				p.refused[f] = words
			}
		}
	}
}

// watchOnce opens one watch until it is created or refused.
func (p *probed) watchOnce(ctx context.Context, c targets.Client, req history.WatchRequest, timeout time.Duration, progressAsked *bool) (string, bool) {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ch := c.Watch(wctx, req)
	defer func() {
		go func() {
			for range ch { // until the adapter closes it
			}
		}()
	}()
	for {
		select {
		case m, open := <-ch:
			switch {
			case !open:
				return "", false
			case m.Err != nil:
				return m.Err.Error(), refusedErr(m.Err)
			case m.Response.Canceled:
				return m.Response.CancelReason, history.SaysRefused(m.Response.CancelReason)
			case m.Response.Created:
				if !*progressAsked {
					*progressAsked = true
					if err := c.RequestProgress(wctx); refusedErr(err) {
						p.refused[string(history.CallProgress)] = err.Error()
					}
				}
				return "", false
			}
		case <-wctx.Done():
			return "", false
		}
	}
}

// refusedErr: the server declined the request as one it does not implement.
func refusedErr(err error) bool {
	return err != nil && (targets.CodeOf(err) == history.ErrRefused || history.SaysRefused(err.Error()))
}

// addCapabilities adds the names older histories used, which checks
// read: delete for plain deletes, serializable for serializable reads,
// hashkv, txn for any txn beyond the Kubernetes storage layer's update
// (the plainest txn: a production of txn or compare refused).
func (p *probed) addCapabilities() {
	for name, words := range p.refused {
		switch {
		case name == "request.kind=delete" || name == "delete.span=key":
			p.refused[history.CapDelete] = words
		case name == "range.serializable=true":
			p.refused[history.CapSerializable] = words
		case name == "request.kind=hashkv" || name == "hashkv.revision=0":
			p.refused[history.CapHashKV] = words
		}
	}
	for _, f := range slices.Sorted(maps.Keys(p.refused)) {
		if strings.HasPrefix(f, "txn.") || strings.HasPrefix(f, "compare.") || f == "request.kind=txn" {
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

// Probe asks the target, through cl (not recorded: the history has not
// started), for every production the workload can draw (probeForms),
// and makes the workload draw only what it serves (adapt). c.Prefix must
// be set; c.Refused then holds the refused productions with the target's
// words, for the history's meta.
func (c *Config) Probe(ctx context.Context, cl targets.Client) error {
	timeout := c.RequestTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	return c.adapt(probeForms(ctx, cl, c.Prefix, c.weights(), c.leaseTTL(), timeout))
}

// Refusals asks the target, through cl, for every production of the
// default shape's grammar under prefix (as a run's Probe does, writing
// only there, and removing what it wrote where the target lets it) and
// returns those it refused, with its words. Differential probes use it
// to draw, on the target and on the reference alike, only what the
// target serves.
func Refusals(ctx context.Context, cl targets.Client, prefix string) map[string]string {
	c := DefaultConfig()
	return probeForms(ctx, cl, prefix, c.weights(), c.leaseTTL(), 5*time.Second).refused
}

// adapt makes the workload draw only what the target serves: the
// generators never draw a refused production, the watchers ask for no
// refused option. It fails for a shape that cannot do without what was
// refused. The run stays above the revisions the probe made.
func (c *Config) adapt(p probed) error {
	c.Refused, c.served = p.refused, p.served
	c.MinRevision = max(c.MinRevision, p.head+1)
	if p.dirty {
		c.Prefix += "run/"
	}
	switch c.Shape {
	case ShapeChurn, ShapeDeleteHeavy:
		if w, no := p.refused[history.CapDelete]; no {
			return fmt.Errorf("the %s workload needs plain deletes, which the target refuses (%s); use --workload kube-like or write-heavy", c.Shape, w)
		}
	}
	served := false
	for _, pr := range c.weights().Reachable() {
		if strings.HasPrefix(pr, "request.kind=") && !c.refuses(pr) {
			served = true
		}
	}
	if !served {
		return fmt.Errorf("the target refuses every request of the %s workload: %s", c.weights().Shape, RefusedText(p.refused))
	}
	if _, no := p.refused[history.FormWatch]; no {
		c.Watchers = 0
	}
	return nil
}
