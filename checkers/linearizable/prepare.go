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
// for operations the model cannot judge (an unknown compare, a nested txn);
// figures are filled in either way.
func prepareLinearizable(h *history.History) (*linPrep, error) {
	p := &linPrep{figures: map[string]float64{"operations": float64(len(h.Operations))}}
	ks := &keyspace{index: map[string]int32{}, valueIdx: map[string]int32{}, writer: map[string]int64{},
		taken: map[int64]int64{}, prefix: h.Meta.Prefix}
	_, ks.noVersions = h.Meta.Limitations[history.LimitationNoVersions]
	p.ks = ks

	// Every value any put tried to write, and who tried.
	keySet := map[string]bool{}
	for i := range h.Operations {
		o := &h.Operations[i]
		forEachPut(&o.Request, func(r *history.Request, _ bool) {
			if _, ok := ks.writer[r.Value]; !ok {
				ks.writer[r.Value] = o.ID
			}
		})
	}

	// Classify; remember when each value was first shown by a response,
	// and at which revision it was written (see sighting).
	seen := map[string]sighting{}
	observe := func(kvs []history.KV, t time.Duration, byRead bool) {
		for _, kv := range kvs {
			seen[kv.Value] = seen[kv.Value].add(t, kv.ModRevision, byRead)
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
		if err := resolveShape(op); err != nil {
			return p, fmt.Errorf("operation %d: %v", o.ID, err)
		}
		if mode == modeAcked {
			ks.horizon = max(ks.horizon, o.Response.Revision)
			quiet.add(o)
			observe(o.Response.KVs, o.Return, true)
			observe(o.Response.PrevKVs, o.Return, true)
			for _, in := range o.Response.Responses {
				observe(in.KVs, o.Return, true)
				observe(in.PrevKVs, o.Return, true)
			}
			if rev, wrote := facts.AckedWriteRevision(o); wrote {
				ks.taken[rev] = o.ID
			}
		}
		if mode != modeDefinite {
			forEachPut(&o.Request, func(r *history.Request, _ bool) { keySet[r.Key] = true })
		}
		ops = append(ops, op)
		times = append(times, porcupine.Operation{ClientId: o.Client, Input: op, Call: int64(o.Call), Return: int64(o.Return)})
	}

	ks.keys = sortedKeys(keySet)
	for i, k := range ks.keys {
		ks.index[k] = int32(i)
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
		forEachPut(op.req, func(r *history.Request, _ bool) {
			if _, ok := ks.valueIdx[r.Value]; !ok {
				ks.valueIdx[r.Value] = int32(len(ks.values))
				ks.values = append(ks.values, r.Value)
			}
		})
		for j := range op.compares {
			c := &op.compares[j]
			c.key = -1
			if k, ok := ks.index[op.req.Compares[j].Key]; ok {
				c.key = k
			}
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
			var first sighting
			forEachPut(op.req, func(r *history.Request, success bool) {
				sg, ok := seen[r.Value]
				if !ok || (op.mode == modeMust && op.mustSuccess && !success) {
					return
				}
				if op.mode == modeMust && success != op.mustSuccess {
					first = sighting{} // the success branch wins; forget the other's sightings
				}
				op.mode, op.mustSuccess = modeMust, success
				first = first.merge(sg)
			})
			if op.mode == modeMust {
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
	case history.OpRange:
		if o.Request.Serializable {
			return 0, false
		}
	}
	if !o.Failed() {
		return modeAcked, true
	}
	definite := o.Code == history.ErrCompacted || o.Code == history.ErrFutureRevision
	switch {
	case o.Request.Kind == history.OpRange && definite:
		return modeDefinite, true
	case o.Request.Kind == history.OpCompact && definite:
		return modeDefinite, true
	case o.Request.Kind == history.OpRange, definite:
		return 0, false // a failed read says nothing; a write that definitely failed did nothing
	}
	return modeMaybe, true
}

// resolveShape fills in an operation's branches and compares and rejects
// what the model does not know.
func resolveShape(op *linOp) error {
	r := op.req
	switch r.Kind {
	case history.OpRange, history.OpCompact:
		return nil
	case history.OpPut, history.OpDelete:
		op.success = []history.Request{*r}
		if op.mode == modeAcked {
			op.inner = []history.Response{*op.resp}
		}
		return nil
	case history.OpTxn:
	default:
		return fmt.Errorf("the model does not know operations of kind %q", r.Kind)
	}
	op.success, op.failure = r.Success, r.Failure
	if op.mode == modeAcked {
		op.inner = op.resp.Responses
	}
	for _, br := range [][]history.Request{r.Success, r.Failure} {
		for _, b := range br {
			switch {
			case b.Kind != history.OpRange && b.Kind != history.OpPut && b.Kind != history.OpDelete:
				return fmt.Errorf("a txn branch holds a %q, the model knows range, put and delete", b.Kind)
			case b.Kind == history.OpRange && b.Revision > 0:
				return fmt.Errorf("a txn branch reads at revision %d, the model keeps no old revisions", b.Revision)
			}
		}
	}
	for _, c := range r.Compares {
		cc := compare{target: strings.ToLower(c.Target), result: c.Result, n: c.Int, value: c.Value}
		if cc.result == "==" {
			cc.result = "="
		}
		switch cc.target {
		case "mod", "create", "version", "value":
		default:
			return fmt.Errorf("the model does not know the compare target %q", c.Target)
		}
		switch cc.result {
		case "=", "!=", "<", ">":
		default:
			return fmt.Errorf("the model does not know the compare operator %q", c.Result)
		}
		op.compares = append(op.compares, cc)
	}
	return nil
}

// forEachPut calls f for every put a request holds (itself, or in either
// branch of a txn), saying whether it is in the success branch.
func forEachPut(r *history.Request, f func(put *history.Request, success bool)) {
	switch r.Kind {
	case history.OpPut:
		f(r, true)
	case history.OpTxn:
		for i := range r.Success {
			if r.Success[i].Kind == history.OpPut {
				f(&r.Success[i], true)
			}
		}
		for i := range r.Failure {
			if r.Failure[i].Kind == history.OpPut {
				f(&r.Failure[i], false)
			}
		}
	}
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
