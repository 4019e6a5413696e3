package linearizable

import (
	"fmt"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// prepareLinearizable turns the history's operations into porcupine
// operations and builds the keyspace the model reads. It returns an error
// for operations the model cannot judge (an unknown compare target, more
// execution paths or leases than it tracks); figures are filled in either
// way.
func prepareLinearizable(h *history.History) (*linPrep, error) {
	h = segmentWatches(h)
	p := &linPrep{figures: map[string]float64{"operations": float64(len(h.Operations))}}
	ks := &keyspace{index: map[string]int32{}, valueIdx: map[string]int32{}, writer: map[string]int64{},
		taken: map[int64]int64{}, prefix: h.Meta.Prefix}
	_, ks.noVersions = h.Meta.Limitations[history.LimitationNoVersions]
	p.ks = ks

	// Every value any put tried to write, and who tried. A put with
	// ignore_value writes the value the key holds, so a value seen on such
	// a key does not date the write that made it.
	keySet := map[string]bool{}
	ks.ignoreValue = map[string]bool{}
	for i := range h.Operations {
		o := &h.Operations[i]
		forEachPut(&o.Request, func(r *history.Request) {
			if r.IgnoreValue {
				ks.ignoreValue[r.Key] = true
				return
			}
			if _, ok := ks.writer[r.Value]; !ok {
				ks.writer[r.Value] = o.ID
			}
		})
	}
	if err := ks.indexLeases(h); err != nil {
		return p, err
	}

	// Classify; remember when each value was first shown by a response,
	// and at which revision it was written (see sighting).
	seen := map[string]sighting{}
	observe := func(kvs []history.KV, t time.Duration, byRead bool) {
		for _, kv := range kvs {
			rev := kv.ModRevision
			if ks.ignoreValue[kv.Key] {
				rev = 0
			}
			seen[kv.Value] = seen[kv.Value].add(t, rev, byRead)
		}
	}
	quiet := newQuietRecorder()
	var ops []*linOp
	var times []porcupine.Operation
	for i := range h.Operations {
		o := &h.Operations[i]
		mode, keep := classify(o)
		if !keep {
			p.figures["left_out"]++
			continue
		}
		op := &linOp{id: o.ID, client: o.Client, mode: mode, req: &o.Request, resp: o.Response, code: o.Code}
		if err := checkShape(&o.Request); err != nil {
			return p, fmt.Errorf("operation %d: %v", o.ID, err)
		}
		if mode == modeAcked {
			ks.horizon = max(ks.horizon, o.Response.Revision)
			quiet.add(o)
			history.Executed(&o.Request, o.Response, func(_ *history.Request, r *history.Response) {
				if r != nil {
					observe(r.KVs, o.Return, true)
					observe(r.PrevKVs, o.Return, true)
				}
			})
			if rev, wrote := facts.AckedWriteRevision(o); wrote {
				ks.taken[rev] = o.ID
			}
		}
		forEachPut(&o.Request, func(r *history.Request) { keySet[r.Key] = true })
		ops = append(ops, op)
		times = append(times, porcupine.Operation{ClientId: o.Client, Input: op, Call: int64(o.Call), Return: int64(o.Return)})
	}

	ks.keys = sortedKeys(keySet)
	for i, k := range ks.keys {
		ks.index[k] = int32(i)
	}
	ks.leaseKeys = map[int32][]int32{}
	for _, op := range ops {
		forEachPut(op.req, func(r *history.Request) {
			if l := ks.leaseIdx[r.Lease]; l != 0 {
				ks.leaseKeys[l] = append(ks.leaseKeys[l], ks.index[r.Key])
			}
		})
	}
	// Watches show values too, and vouch for the keys they did not see change.
	for _, w := range h.Watches {
		for _, r := range w.Responses {
			for _, ev := range r.Events {
				if ev.Type == history.EventPut {
					observe([]history.KV{ev.KV}, r.Time, false)
				}
				if ev.PrevKV != nil {
					observe([]history.KV{*ev.PrevKV}, r.Time, false)
				}
			}
		}
	}
	quiet.addWatches(h, ks)
	p.figures["watches_vouching"] = float64(quiet.watches)
	quiet.spans(ks)
	ks.values = append(ks.values, "")
	ks.valueIdx[""] = 0
	for _, op := range ops {
		forEachPut(op.req, func(r *history.Request) {
			if _, ok := ks.valueIdx[r.Value]; !ok && !r.IgnoreValue {
				ks.valueIdx[r.Value] = int32(len(ks.values))
				ks.values = append(ks.values, r.Value)
			}
		})
		if err := ks.buildPaths(op); err != nil {
			return p, fmt.Errorf("operation %d: %v", op.id, err)
		}
	}
	ks.pins, ks.pinWatch = quiet.pins(h, ks)
	// A watch event is an answer too: the revision it shows was made.
	// Without it, a history whose watches run ahead of every answered
	// request (a run judged while it goes on, its requests still in
	// flight) would leave no revision for the writes of unknown outcome
	// the events show applied.
	for _, w := range h.Watches {
		for _, r := range w.Responses {
			for _, e := range r.Events {
				ks.horizon = max(ks.horizon, e.KV.ModRevision)
			}
		}
	}

	// Unknown outcomes whose value a response showed were applied before it,
	// at the revision the response gives that value.
	var last int64
	maxClient := 0
	for i, op := range ops {
		if op.mode == modeMaybe {
			first, paths := mustPaths(op, seen)
			if paths != 0 {
				op.mode, op.mustPaths = modeMust, paths
				times[i].Return = max(times[i].Call, int64(first.time))
				op.pin = first.revision()
				if _, held := ks.taken[op.pin]; op.pin > 0 && !held {
					ks.taken[op.pin] = op.id
				}
			}
		}
	}
	ops, times, dropped := dropUnplaceable(ops, times, ks)
	p.figures["unknown_outcome_unplaceable"] = float64(dropped)
	for i, op := range ops {
		last = max(last, times[i].Call)
		if op.mode != modeMaybe {
			last = max(last, times[i].Return)
		}
		maxClient = max(maxClient, op.client)
	}
	end := &linOp{id: -1, client: maxClient + 1, mode: modeEnd}
	ops = append(ops, end)
	times = append(times, porcupine.Operation{ClientId: end.client, Input: end, Call: last + 1, Return: last + 2})
	for i, op := range ops {
		switch op.mode {
		case modeMaybe:
			times[i].Return = last + 3
			p.figures["unknown_outcome"]++
		case modeMust:
			p.figures["unknown_outcome_seen_applied"]++
		case modeAcked, modeDefinite:
			p.figures["checked"]++
		}
	}
	p.ops, p.pops = ops, times
	p.figures["keys"] = float64(len(ks.keys))
	return p, nil
}

// classify says how an operation enters the search, or that it stays out.
func classify(o *history.Operation) (linMode, bool) {
	switch o.Request.Kind {
	case history.OpStatus, history.OpHashKV, history.OpDefrag:
		return 0, false
	case history.OpRange, history.OpTxn:
		if o.Request.Local() {
			return 0, false // answered from one member's state: it may lag
		}
	case history.OpLeaseGrant:
		// A grant of unknown outcome made a lease no one was told of;
		// the workload never uses it.
		return modeAcked, !o.Failed()
	}
	switch {
	case !o.Failed():
		return modeAcked, true
	case o.Code == history.ErrInvalid:
		return 0, false // refused whatever the store holds: it did nothing and says nothing
	case o.Definite():
		return modeDefinite, true
	case o.Request.Kind == history.OpRange:
		return 0, false // a failed read says nothing
	}
	return modeMaybe, true
}

// checkShape rejects what the model does not know.
func checkShape(r *history.Request) error {
	var err error
	r.Walk(func(q *history.Request) bool {
		switch q.Kind {
		case history.OpRange, history.OpPut, history.OpDelete, history.OpTxn, history.OpCompact,
			history.OpLeaseGrant, history.OpLeaseRevoke:
		default:
			err = fmt.Errorf("the model does not know operations of kind %q", q.Kind)
		}
		for _, c := range q.Compares {
			switch strings.ToLower(c.Target) {
			case history.CompareMod, history.CompareCreate, history.CompareVersion, history.CompareValue, history.CompareLease:
			default:
				err = fmt.Errorf("the model does not know the compare target %q", c.Target)
			}
			switch c.Result {
			case "=", "==", "!=", "<", ">":
			default:
				err = fmt.Errorf("the model does not know the compare operator %q", c.Result)
			}
		}
		return err == nil
	})
	return err
}

// maxPaths bounds the execution paths of one request (mustPaths is a
// bit mask of them).
const maxPaths = 64

// buildPaths fills in an operation's execution paths: the one its
// response took for an answered request, every one otherwise.
func (ks *keyspace) buildPaths(op *linOp) error {
	r := op.req
	switch r.Kind {
	case history.OpRange, history.OpCompact, history.OpLeaseGrant:
		return nil
	case history.OpPut, history.OpDelete, history.OpLeaseRevoke:
		p := execPath{ops: []history.Request{*r}}
		if op.mode == modeAcked {
			p.inner = []history.Response{*op.resp}
		}
		op.paths = []execPath{p}
		return nil
	}
	if op.mode == modeAcked {
		p := execPath{}
		ks.takenPath(r, op.resp, 0, &p)
		op.paths = []execPath{p}
		return nil
	}
	op.paths = ks.allPaths(r, 0)
	if len(op.paths) > maxPaths {
		return fmt.Errorf("a txn of %d execution paths; the model follows at most %d", len(op.paths), maxPaths)
	}
	return nil
}

// takenPath appends to p the path an answered txn took: its compares'
// result by each txn's Succeeded, and what ran with its responses.
func (ks *keyspace) takenPath(r *history.Request, resp *history.Response, depth int, p *execPath) {
	p.conds = append(p.conds, cond{cmps: ks.compares(r.Compares), want: resp.Succeeded, depth: depth})
	br := r.Branch(resp.Succeeded)
	for i := range br {
		var in history.Response
		if i < len(resp.Responses) {
			in = resp.Responses[i]
		}
		if br[i].Kind == history.OpTxn {
			ks.takenPath(&br[i], &in, depth+1, p)
			continue
		}
		p.ops = append(p.ops, br[i])
		if i < len(resp.Responses) {
			p.inner = append(p.inner, in)
		}
	}
}

// allPaths lists every way a txn can execute: each branch, crossed with
// the paths of the txns nested in it.
func (ks *keyspace) allPaths(r *history.Request, depth int) []execPath {
	cmps := ks.compares(r.Compares)
	var out []execPath
	for _, want := range []bool{true, false} {
		partial := []execPath{{conds: []cond{{cmps: cmps, want: want, depth: depth}}}}
		for _, q := range r.Branch(want) {
			if q.Kind != history.OpTxn {
				for i := range partial {
					partial[i].ops = append(partial[i].ops[:len(partial[i].ops):len(partial[i].ops)], q)
				}
				continue
			}
			var crossed []execPath
			for _, sub := range ks.allPaths(&q, depth+1) {
				for _, p := range partial {
					crossed = append(crossed, execPath{
						conds: append(p.conds[:len(p.conds):len(p.conds)], sub.conds...),
						ops:   append(p.ops[:len(p.ops):len(p.ops)], sub.ops...)})
				}
			}
			partial = crossed
			if len(partial) > maxPaths {
				return partial // too many: buildPaths says so
			}
		}
		out = append(out, partial...)
	}
	return out
}

// compares resolves a txn's compares against the keyspace.
func (ks *keyspace) compares(cs []history.Compare) []compare {
	out := make([]compare, 0, len(cs))
	for _, c := range cs {
		cc := compare{target: strings.ToLower(c.Target), result: c.Result, n: c.Int, value: c.Value, ranged: c.End != ""}
		if cc.result == "==" {
			cc.result = "="
		}
		cc.lo, cc.hi = ks.span(c.Key, c.End)
		out = append(out, cc)
	}
	return out
}

// mustPaths returns, for a write of unknown outcome, the paths that write
// every value a response or event showed (or, when no one path does, any
// that writes one: the model then fails to explain the others), and the
// first sighting of those values.
func mustPaths(op *linOp, seen map[string]sighting) (sighting, uint64) {
	var all, any uint64 = ^uint64(0), 0
	var first sighting
	sawAny := false
	shown := map[string]bool{}
	for i, path := range op.paths {
		for _, r := range path.ops {
			if r.Kind == history.OpPut && !r.IgnoreValue {
				if _, ok := seen[r.Value]; ok {
					shown[r.Value] = true
					any |= 1 << i
				}
			}
		}
	}
	for v := range shown {
		var in uint64
		for i, path := range op.paths {
			for _, r := range path.ops {
				if r.Kind == history.OpPut && !r.IgnoreValue && r.Value == v {
					in |= 1 << i
				}
			}
		}
		all &= in
		first = first.merge(seen[v])
		sawAny = true
	}
	if !sawAny {
		return sighting{}, 0
	}
	if all != 0 {
		return first, all
	}
	return first, any
}

// forEachPut calls f for every put a request holds: itself, or one in any
// branch of a txn at any depth.
func forEachPut(r *history.Request, f func(put *history.Request)) {
	r.Writes(func(w *history.Request, _ bool) {
		if w.Kind == history.OpPut {
			f(w)
		}
	})
}

// indexLeases numbers the leases the history names (index 0: none) and
// picks those the model tracks: every one but
//   - the leases granted by a call (the workload's background leases),
//     which live through the history unless an operation revokes them;
//   - the leases nothing grants or revokes that every put naming them
//     found missing (lease-not-found) and those only compares name:
//     none of them exists in the history (a made-up id, or one revoked
//     before it).
//
// A tracked lease that nothing in the history grants does not exist at
// its start when the history is the run's start; in a later segment it
// is taken to exist or not by the first request that shows which (it may
// have been granted in an earlier one). A lease revoked by a call while a put names it is
// beyond the model, which does not place calls.
func (ks *keyspace) indexLeases(h *history.History) error {
	type use struct{ byCall, grantedByOp, revokedByOp, put, putLived bool }
	uses := map[int64]*use{}
	at := func(id int64) *use {
		u := uses[id]
		if u == nil {
			u = &use{}
			uses[id] = u
		}
		return u
	}
	for _, c := range h.CallsOf(history.CallLeaseGrant) {
		if !c.Failed() {
			at(c.Lease).byCall = true
		}
	}
	var order []int64 // ids in the order the history names them, for a stable numbering
	for i := range h.Operations {
		o := &h.Operations[i]
		switch o.Request.Kind {
		case history.OpLeaseGrant:
			if !o.Failed() {
				at(o.Response.Lease).grantedByOp = true
				order = append(order, o.Response.Lease)
			}
		case history.OpLeaseRevoke:
			at(o.Request.Lease).revokedByOp = true
			order = append(order, o.Request.Lease)
		}
		o.Request.Walk(func(q *history.Request) bool {
			if q.Lease != 0 && q.Kind == history.OpPut {
				u := at(q.Lease)
				u.put = true
				u.putLived = u.putLived || o.Code != history.ErrLeaseNotFound
				order = append(order, q.Lease)
			}
			for _, c := range q.Compares {
				if strings.EqualFold(c.Target, history.CompareLease) && c.Int != 0 {
					at(c.Int)
					order = append(order, c.Int)
				}
			}
			return true
		})
	}
	ks.leases, ks.leaseIdx, ks.dynamic = []int64{0}, map[int64]int32{0: 0}, []int32{0}
	first := h.Meta.Segment == nil || h.Meta.Segment.Index == 0
	tracked := 0
	var knownDead []int32
	for _, id := range order {
		if _, ok := ks.leaseIdx[id]; ok {
			continue
		}
		u := uses[id]
		i := int32(len(ks.leases))
		ks.leases = append(ks.leases, id)
		ks.leaseIdx[id] = i
		switch {
		case u.byCall && !u.revokedByOp:
			ks.dynamic = append(ks.dynamic, 0)
		case !u.byCall && !u.grantedByOp && !u.revokedByOp && !u.putLived:
			ks.dynamic = append(ks.dynamic, -1)
		default:
			tracked++
			ks.dynamic = append(ks.dynamic, int32(tracked))
			// Granted here, or granted nowhere while the history is the
			// run's start: it did not exist before.
			if u.grantedByOp || !u.byCall && first {
				knownDead = append(knownDead, int32(tracked-1))
			}
		}
	}
	ks.grantedHere = newLeaseBits(tracked)
	for _, n := range knownDead {
		ks.grantedHere = ks.grantedHere.set(n, true)
	}
	for _, c := range h.CallsOf(history.CallLeaseRevoke) {
		if u := uses[c.Lease]; u != nil && u.put && ks.dynamic[ks.leaseIdx[c.Lease]] == 0 {
			return fmt.Errorf("lease %d, which puts attach keys to, is revoked by a call (%d); the model places operations only", c.Lease, c.ID)
		}
	}
	return nil
}

// sighting is what the history shows of one written value: when it was
// first shown, and the revision that wrote it, as the earliest read that
// showed it gives it (or, lacking a read, the earliest watch event). A
// value names its write, so that revision is the write's.
type sighting struct {
	set       bool
	time      time.Duration
	readRev   int64 // mod revision in the earliest read showing the value; 0 if none
	readTime  time.Duration
	watchRev  int64
	watchTime time.Duration
}

func (s sighting) add(t time.Duration, rev int64, byRead bool) sighting {
	if !s.set || t < s.time {
		s.set, s.time = true, t
	}
	if rev <= 0 {
		return s
	}
	if byRead && (s.readRev == 0 || t < s.readTime) {
		s.readRev, s.readTime = rev, t
	}
	if !byRead && (s.watchRev == 0 || t < s.watchTime) {
		s.watchRev, s.watchTime = rev, t
	}
	return s
}

func (s sighting) merge(o sighting) sighting {
	if !o.set {
		return s
	}
	out := s
	if !out.set || o.time < out.time {
		out.set, out.time = true, o.time
	}
	if o.readRev != 0 && (out.readRev == 0 || o.readTime < out.readTime) {
		out.readRev, out.readTime = o.readRev, o.readTime
	}
	if o.watchRev != 0 && (out.watchRev == 0 || o.watchTime < out.watchTime) {
		out.watchRev, out.watchTime = o.watchRev, o.watchTime
	}
	return out
}

// revision is the revision the write was seen at: a read's word first,
// then a watch's; 0 if neither gave one.
func (s sighting) revision() int64 {
	if s.readRev != 0 {
		return s.readRev
	}
	return s.watchRev
}
