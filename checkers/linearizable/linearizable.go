package linearizable

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// Check is kv/linearizable: every linearizable read and every
// write of the history, placed at one instant inside its call-return
// interval, replays on a single etcd store.
//
// How operations enter the check:
//   - a response: checked in full (header revision, every returned key
//     with its value, create and mod revision and version, count, more,
//     deleted, prev_kv, txn outcome);
//   - a definite error (compacted, future revision) of a read at a revision
//     or of a compaction: checked as the answer;
//   - an unknown outcome of a write: it may have been applied any time
//     after its call, or never. If a response or a watch event later showed
//     a value it writes, it was applied before that arrived, at the
//     revision shown; otherwise it may also be placed after the end of
//     history, where it changes nothing. Applied, it takes a revision no
//     acknowledged write holds, at most the highest header revision seen,
//     where no read shows its keys untouched and no watch vouches they did
//     not change (kvquiet.go);
//   - failed reads, serializable reads, status and hashkv: left out.
//
// The store's revision and compact revision at the start are unknown (the
// prefix is fresh, the cluster is not): the first header revision fixes
// the former, errors and compactions narrow the latter.
//
// How it is checked (lin_plan.go, lin_run.go): header revisions fix where
// almost every operation goes, so the check replays the history in
// revision order on the model, and runs porcupine's search, on the same
// model, only over the stretches where that order is not given — a
// revision no known write holds, a definite error, real time that
// contradicts the revisions, a step that fails. A violation is always
// confirmed by such a search. The cost is linear in the history plus the
// searches, each small unless writes of unknown outcome pile up.
//
// The whole check gets cfg.LinearizabilityTimeout (zero: no limit); each
// search at most linWindowMaxOps operations and linSearchMemory of states;
// past any of them the verdict is unknown and Reason says which ran out.
func Check(h *history.History, cfg check.Config) check.Result {
	return checkLinearizable(h, cfg, nil)
}

func checkLinearizable(h *history.History, cfg check.Config, tune func(*linRun)) check.Result {
	p, err := prepareLinearizable(h)
	if err != nil {
		return check.Result{Name: Name, Verdict: check.Unknown, Reason: err.Error(), Violations: []check.Violation{}, Figures: p.figures}
	}
	if p.figures["checked"] == 0 {
		return check.Skip(Name, "no operation with a response or a definite error to judge", p.figures)
	}
	run := p.check(cfg, tune)
	switch {
	case run.st.violation != nil:
		p.figures["violations"] = 1
		return check.Result{Name: Name, Verdict: check.Fail, Violations: []check.Violation{*run.st.violation}, Figures: p.figures}
	case run.st.reason != "":
		return check.Result{Name: Name, Verdict: check.Unknown, Reason: run.st.reason, Violations: []check.Violation{}, Figures: p.figures}
	}
	return check.Result{Name: Name, Verdict: check.Pass, Violations: []check.Violation{}, Figures: p.figures}
}

// check plans and replays a prepared history, and records its figures.
// tune, if not nil, adjusts the run's budgets (tests).
func (p *linPrep) check(cfg check.Config, tune func(*linRun)) *linRun {
	pl := p.plan()
	run := p.newRun(pl, cfg)
	if tune != nil {
		tune(run)
	}
	run.run()
	f := p.figures
	f["plan_troubles"] = float64(len(pl.troubles))
	f["free_revisions"] = float64(len(pl.gaps))
	f["searches"] = float64(run.st.windows)
	f["searched_operations"] = float64(run.st.ops)
	f["search_max_operations"] = float64(run.st.maxOps)
	f["search_steps"] = float64(run.st.steps)
	f["search_states"] = float64(run.st.states)
	f["search_rewinds"] = float64(run.st.rewinds)
	if run.st.disagreements > 0 {
		f["search_order_disagreements"] = float64(run.st.disagreements)
	}
	return run
}

// linPrep is a history made ready for the check.
type linPrep struct {
	ks      *keyspace
	ops     []*linOp // indexed like pops
	pops    []porcupine.Operation
	figures map[string]float64
}

// explain turns the longest partial linearization of a failed search into
// a violation: the earliest-returning operation it could not place, and
// why it does not fit after that prefix.
func (p *linPrep) explain(set *searchSet, info porcupine.LinearizationInfo) check.Violation {
	var best []int
	for _, part := range info.PartialLinearizations() {
		for _, seq := range part {
			if len(seq) > len(best) || (len(seq) == len(best) && slices.Compare(seq, best) < 0) {
				best = seq
			}
		}
	}
	m := kvModel{ks: p.ks}
	s := set.start
	placed := make([]bool, len(set.ops))
	for _, i := range best {
		s, _ = m.step(s, set.ops[i], false)
		placed[i] = true
	}
	block := -1
	for i, op := range set.ops {
		if placed[i] || op.mode == modeMaybe || op.mode == modeEnd {
			continue
		}
		if block < 0 || set.pops[i].Return < set.pops[block].Return ||
			(set.pops[i].Return == set.pops[block].Return && set.pops[i].Call < set.pops[block].Call) {
			block = i
		}
	}
	v := check.Violation{Guarantee: Err}
	if block < 0 { // cannot happen: every real operation placed means Ok
		v.Message = "no linearization found"
		return v
	}
	op := set.ops[block]
	v.Client, v.Key, v.Operations = op.client, op.req.Key, []int64{op.id}
	if op.resp != nil {
		v.Revision = op.resp.Revision
	}
	var concurrent []string
	for i, o := range set.ops {
		if i != block && !placed[i] && o.mode != modeEnd && set.pops[i].Call <= set.pops[block].Return {
			v.Operations = append(v.Operations, o.id)
			concurrent = append(concurrent, fmt.Sprint(o.id))
		}
	}
	prefix := fmt.Sprintf("after the longest linearizable prefix (%d operations, store at %s)",
		len(best), p.ks.describeRev(s))
	if len(best) > 0 {
		if last := set.ops[best[len(best)-1]]; last.id >= 0 && !slices.Contains(v.Operations, last.id) {
			v.Operations = append(v.Operations, last.id)
		}
	}
	_, mm := m.step(s, op, true)
	if mm != nil {
		v.Message = fmt.Sprintf("operation %d (client %d, %s) cannot be linearized %s: %s",
			op.id, op.client, p.describe(op), prefix, mm.msg)
		if mm.key != "" {
			v.Key = mm.key
		}
		v.Want, v.Got = mm.want, mm.got
		if mm.cites > 0 && !slices.Contains(v.Operations, mm.cites) {
			v.Operations = append(v.Operations, mm.cites)
		}
		return v
	}
	v.Message = fmt.Sprintf("operation %d (client %d, %s) cannot be linearized: it fits %s, "+
		"but no order of it and the operations concurrent with it (%s) does",
		op.id, op.client, p.describe(op), prefix, strings.Join(concurrent, ", "))
	return v
}

// describe renders an operation for people and for the visualization.
func (p *linPrep) describe(op *linOp) string {
	if op.mode == modeEnd {
		return "end of history"
	}
	var b strings.Builder
	b.WriteString(p.reqString(op.req))
	switch op.mode {
	case modeAcked:
		r := op.resp
		switch op.req.Kind {
		case history.OpRange:
			fmt.Fprintf(&b, " -> %s", p.kvsString(r.KVs))
			if op.req.End != "" {
				fmt.Fprintf(&b, " count %d", r.Count)
			}
		case history.OpDelete:
			fmt.Fprintf(&b, " -> deleted %d", r.Deleted)
		case history.OpTxn:
			fmt.Fprintf(&b, " -> succeeded=%v", r.Succeeded)
			for _, in := range r.Responses {
				if len(in.KVs) > 0 {
					fmt.Fprintf(&b, " %s", p.kvsString(in.KVs))
				}
			}
		}
		fmt.Fprintf(&b, " @%d", r.Revision)
	case modeDefinite:
		fmt.Fprintf(&b, " -> error %s", op.code)
	case modeMust:
		b.WriteString(" -> unknown outcome, seen applied")
	case modeMaybe:
		b.WriteString(" -> unknown outcome")
	}
	return b.String()
}

func (p *linPrep) reqString(r *history.Request) string {
	k := p.ks.short(r.Key)
	switch r.Kind {
	case history.OpPut:
		return fmt.Sprintf("put(%s, %q)", k, r.Value)
	case history.OpDelete:
		return fmt.Sprintf("delete(%s)", k)
	case history.OpRange:
		s := "get(" + k
		if r.End != "" {
			s += ".." + p.ks.short(r.End)
		}
		if r.Limit > 0 {
			s += fmt.Sprintf(", limit %d", r.Limit)
		}
		if r.Revision > 0 {
			s += fmt.Sprintf(", rev %d", r.Revision)
		}
		return s + ")"
	case history.OpCompact:
		return fmt.Sprintf("compact(%d)", r.Revision)
	case history.OpTxn:
		var cs, ss, fs []string
		for _, c := range r.Compares {
			operand := fmt.Sprint(c.Int)
			if strings.EqualFold(c.Target, "value") {
				operand = fmt.Sprintf("%q", c.Value)
			}
			cs = append(cs, fmt.Sprintf("%s(%s)%s%s", c.Target, p.ks.short(c.Key), c.Result, operand))
		}
		for i := range r.Success {
			ss = append(ss, p.reqString(&r.Success[i]))
		}
		for i := range r.Failure {
			fs = append(fs, p.reqString(&r.Failure[i]))
		}
		return fmt.Sprintf("txn(if %s then %s else %s)", strings.Join(cs, " && "),
			strings.Join(ss, "; "), strings.Join(fs, "; "))
	}
	return string(r.Kind)
}

func (p *linPrep) kvsString(kvs []history.KV) string {
	if len(kvs) == 0 {
		return "<none>"
	}
	parts := make([]string, len(kvs))
	for i, kv := range kvs {
		parts[i] = fmt.Sprintf("%s=%q@%d", p.ks.short(kv.Key), kv.Value, kv.ModRevision)
	}
	return strings.Join(parts, ", ")
}

// sortedKeys returns the keys of a set, sorted.
func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// plan builds the witness order of the prepared operations.
func (p *linPrep) plan() *linPlan {
	n := len(p.ops)
	pl := &linPlan{pos: make([]int32, n), rev: make([]int64, n), lo: make([]int32, n), hi: make([]int32, n),
		floorPos: make([]int32, n), floorRev: make([]int64, n), flexLo: make([]int32, n), flexPos: make([]int32, n)}
	slot := make([]int8, n)
	pl.slot = slot
	tie := make([]int64, n)
	var fixed, flex []int32
	for i, op := range p.ops {
		pl.pos[i], pl.lo[i], pl.hi[i] = -1, -1, -1
		switch {
		case op.mode == modeAcked && op.req.Kind == history.OpCompact:
			// etcd reads a compaction's header revision when it answers,
			// not when it applies it (v3_server.go): writes in between
			// raise it. So it only bounds the place from above; the
			// compaction is flexible and always searched.
			flex = append(flex, int32(i))
		case op.mode == modeAcked:
			pl.rev[i], slot[i] = op.resp.Revision, slotRead
			if _, wrote := facts.WriteRevision(op.req, op.resp); wrote {
				slot[i] = slotWrite
			}
			tie[i] = p.pops[i].Call
			if slot[i] == slotWrite {
				tie[i] = p.pops[i].Return
			}
			fixed = append(fixed, int32(i))
		case op.mode == modeMust:
			if op.pin > 0 {
				pl.rev[i], slot[i], tie[i] = op.pin, slotWrite, p.pops[i].Return
				fixed = append(fixed, int32(i))
			} else {
				flex = append(flex, int32(i))
			}
		case op.mode == modeDefinite:
			flex = append(flex, int32(i))
		case op.mode == modeMaybe:
			pl.floaters = append(pl.floaters, int32(i))
		}
	}
	sort.Slice(fixed, func(a, b int) bool {
		x, y := fixed[a], fixed[b]
		switch {
		case pl.rev[x] != pl.rev[y]:
			return pl.rev[x] < pl.rev[y]
		case slot[x] != slot[y]:
			return slot[x] < slot[y]
		case tie[x] != tie[y]:
			return tie[x] < tie[y]
		}
		return x < y
	})

	// Where each flexible operation may go, in indexes of fixed: after the
	// last fixed operation that returned before its call, before the first
	// that was called after its return.
	preds := newPrefixMax(len(fixed), func(f int) int64 { return p.pops[fixed[f]].Return })
	succs := newSuffixMin(len(fixed), func(f int) int64 { return p.pops[fixed[f]].Call })
	type flexAt struct{ op, lo, hi, at int32 }
	places := make([]flexAt, 0, len(flex))
	for _, i := range flex {
		lo := int32(preds.before(p.pops[i].Call) + 1) // first fixed index it may precede... or sit after lo-1
		hi := int32(succs.after(p.pops[i].Return))
		at := hi // late: a compacted error, an unseen-revision write
		if p.ops[i].mode == modeDefinite && p.ops[i].code == history.ErrFutureRevision {
			at = lo
		}
		places = append(places, flexAt{i, lo, max(lo, hi), max(lo, min(at, hi))})
	}
	sort.Slice(places, func(a, b int) bool {
		x, y := places[a], places[b]
		if x.at != y.at {
			return x.at < y.at
		}
		if cx, cy := p.pops[x.op].Call, p.pops[y.op].Call; cx != cy {
			return cx < cy
		}
		return x.op < y.op
	})
	pl.seq = make([]int32, 0, len(fixed)+len(flex))
	fixedPos := make([]int32, len(fixed)+1)
	k := 0
	for f := 0; f <= len(fixed); f++ {
		for ; k < len(places) && int(places[k].at) == f; k++ {
			pl.seq = append(pl.seq, places[k].op)
		}
		fixedPos[f] = int32(len(pl.seq))
		if f < len(fixed) {
			pl.seq = append(pl.seq, fixed[f])
		}
	}
	for q, i := range pl.seq {
		pl.pos[i] = int32(q)
	}
	pl.obsPos = map[int32][]int32{}
	for q, i := range pl.seq {
		observedKeys(p.ks, p.ops[i], func(k int32) { pl.obsPos[k] = append(pl.obsPos[k], int32(q)) })
	}
	for f, i := range fixed {
		pl.fixedRev = append(pl.fixedRev, pl.rev[i])
		pl.fixedAt = append(pl.fixedAt, fixedPos[f])
	}
	pl.groupLo, pl.groupHi = make([]int32, len(pl.seq)), make([]int32, len(pl.seq))
	for f := 0; f < len(fixed); {
		g := f
		for g+1 < len(fixed) && slot[fixed[f]] == slotRead && slot[fixed[g+1]] == slotRead &&
			pl.rev[fixed[g+1]] == pl.rev[fixed[f]] {
			g++
		}
		for h := f; h <= g; h++ {
			pl.groupLo[fixedPos[h]], pl.groupHi[fixedPos[h]] = fixedPos[f], fixedPos[g]
		}
		f = g + 1
	}
	for _, x := range places {
		q := pl.pos[x.op]
		pl.groupLo[q], pl.groupHi[q] = -1, -1
	}
	for _, x := range places {
		// After the fixed operation lo-1 and before the fixed operation hi.
		lo := int32(0)
		if x.lo > 0 {
			lo = fixedPos[x.lo-1] + 1
		}
		pl.lo[x.op], pl.hi[x.op] = lo, fixedPos[x.hi]
		if p.ops[x.op].mode == modeMust || p.ops[x.op].mode == modeAcked { // no revision to place it at: search it
			pl.troubles = append(pl.troubles, trouble{lo: lo, hi: max(lo, fixedPos[x.hi]-1), early: x.op, late: x.op})
		}
	}

	// Real time: an operation may not follow, in the plan, one that was
	// called after it returned.
	byRet := newPrefixMax(len(pl.seq), func(q int) int64 { return p.pops[pl.seq[q]].Return })
	for q, i := range pl.seq {
		if last := byRet.before(p.pops[i].Call); last > q {
			pl.troubles = append(pl.troubles, trouble{lo: int32(q), hi: int32(last), early: i, late: pl.seq[last]})
		}
	}
	sort.Slice(pl.troubles, func(a, b int) bool { return pl.troubles[a].lo < pl.troubles[b].lo })

	// Where floaters may go.
	revByRet := newPrefixMaxValue(len(fixed), func(f int) int64 { return p.pops[fixed[f]].Return },
		func(f int) int64 { return pl.rev[fixed[f]] })
	posByRet := newPrefixMaxValue(len(fixed), func(f int) int64 { return p.pops[fixed[f]].Return },
		func(f int) int64 { return int64(pl.pos[fixed[f]]) })
	flexLoByRet := newPrefixMaxValue(len(places), func(f int) int64 { return p.pops[places[f].op].Return },
		func(f int) int64 { return int64(pl.lo[places[f].op]) })
	flexPosByRet := newPrefixMaxValue(len(places), func(f int) int64 { return p.pops[places[f].op].Return },
		func(f int) int64 { return int64(pl.pos[places[f].op]) })
	for _, i := range pl.floaters {
		call := p.pops[i].Call
		pl.floorPos[i] = int32(posByRet.before(call))
		pl.floorRev[i] = revByRet.before(call)
		pl.flexLo[i], pl.flexPos[i] = int32(flexLoByRet.before(call)), int32(flexPosByRet.before(call))
	}

	pl.class = make([]int32, n)
	classes := map[string]int32{}
	valueCompared := map[string]bool{}
	for _, op := range p.ops {
		if op.req != nil {
			for _, c := range op.req.Compares {
				if strings.EqualFold(c.Target, "value") {
					valueCompared[c.Key] = true
				}
			}
		}
	}
	for _, i := range pl.floaters {
		key := floaterClass(p.ops[i].req, valueCompared)
		c, ok := classes[key]
		if !ok {
			c = int32(len(classes))
			classes[key] = c
		}
		pl.class[i] = c
	}

	// Free revisions: between the revision before the lowest the plan
	// shows and the highest any response shows.
	low := int64(-1)
	for _, i := range fixed {
		r := pl.rev[i]
		if slot[i] == slotWrite {
			r--
		}
		if low < 0 || r < low {
			low = r
		}
	}
	if low >= 0 {
		for r := low + 1; r <= p.ks.horizon; r++ {
			if _, held := p.ks.taken[r]; !held {
				pl.gaps = append(pl.gaps, r)
			}
		}
	}
	return pl
}

func (p *linPrep) newRun(pl *linPlan, cfg check.Config) *linRun {
	r := &linRun{p: p, pl: pl, m: kvModel{ks: p.ks}, cfg: cfg, maxOps: linWindowMaxOps, memory: linSearchMemory,
		states: make([]kvState, len(pl.seq)+1),
		used:   map[int32]int{}, obs: map[int32][]int32{}, early: map[int32]bool{}}
	if cfg.LinearizabilityTimeout > 0 {
		r.deadline = time.Now().Add(cfg.LinearizabilityTimeout)
	}
	r.states[0] = initialState(p.ks)
	for _, i := range pl.floaters {
		if pl.floorPos[i] < 0 {
			for k := range r.writtenKeys(p.ops[i]) {
				r.early[k] = true
			}
		}
	}
	return r
}

// windowModel is porcupine's model of the etcd KV API starting from start,
// on winState. Step must be a pure function: it returns a new state and
// never changes the one it is given. Equal and Hash satisfy porcupine's
// invariant: states Equal says are equal have equal Hashes.
func (p *linPrep) windowModel(start winState) porcupine.Model {
	m := kvModel{ks: p.ks}
	return porcupine.Model{
		Init: func() interface{} { return start },
		Step: func(state, input, _ interface{}) (bool, interface{}) {
			ws := state.(winState)
			s, mm := m.step(ws.kv, input.(*linOp), false)
			ws.kv = s
			return mm == nil, ws
		},
		Equal: func(a, b interface{}) bool {
			x, y := a.(winState), b.(winState)
			return x.cls == y.cls && x.count == y.count && stateEqual(x.kv, y.kv)
		},
		Hash: func(s interface{}) uint64 {
			ws := s.(winState)
			return mix(hashState(ws.kv) ^ uint64(ws.cls)<<32 ^ uint64(ws.count))
		},
		DescribeOperation: func(in, _ interface{}) string { return p.describe(in.(*linOp)) },
		DescribeState:     func(s interface{}) string { return p.ks.describe(s.(winState).kv) },
	}
}
