package checkers

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/vigil-suite/vigil/history"
)

// CheckLinearizable is kv/linearizable: every linearizable read and every
// write of the history, placed at one instant inside its call-return
// interval, replays on a single etcd store (porcupine).
//
// How operations enter the search:
//   - a response: checked in full (header revision, every returned key
//     with its value, create and mod revision and version, count, more,
//     deleted, prev_kv, txn outcome);
//   - a definite error (compacted, future revision) of a read at a revision
//     or of a compaction: checked as the answer;
//   - an unknown outcome of a write: it may have been applied any time
//     after its call, or never. If a response or a watch event later showed
//     a value it writes, it was applied before that arrived; otherwise it
//     may also be placed after the end of history, where it changes nothing.
//     Applied, it takes a revision no acknowledged write holds, at most the
//     highest header revision seen, where no read shows its keys untouched
//     and no watch vouches they did not change (kvquiet.go);
//   - failed reads, serializable reads, status and hashkv: left out.
//
// The store's revision and compact revision at the start are unknown (the
// prefix is fresh, the cluster is not): the first header revision fixes
// the former, errors and compactions narrow the latter.
//
// The search gets cfg.LinearizabilityTimeout (zero: no limit); past it the
// verdict is unknown. Watches make writes of unknown outcome cheap to
// place; without any, a history with hundreds of them may run out of time.
func CheckLinearizable(h *history.History, cfg Config) Result {
	p, err := prepareLinearizable(h)
	if err != nil {
		return Result{Name: NameLinearizable, Verdict: Unknown, Reason: err.Error(), Violations: []Violation{}, Figures: p.figures}
	}
	if p.figures["checked"] == 0 {
		return skipped(NameLinearizable, "no operation with a response or a definite error to judge", p.figures)
	}
	model := p.model()
	// The plain search is about twice as fast as the verbose one, which
	// keeps partial linearizations; run that only to explain a failure.
	switch porcupine.CheckOperationsTimeout(model, p.pops, cfg.LinearizabilityTimeout) {
	case porcupine.Ok:
		return Result{Name: NameLinearizable, Verdict: Pass, Violations: []Violation{}, Figures: p.figures}
	case porcupine.Unknown:
		return Result{Name: NameLinearizable, Verdict: Unknown, Violations: []Violation{}, Figures: p.figures,
			Reason: fmt.Sprintf("the linearizability search did not finish within its budget of %s", cfg.LinearizabilityTimeout)}
	}
	// Illegal is settled; the verbose search only finds the longest prefix,
	// and what it found when its budget ran out is still worth reporting.
	_, info := porcupine.CheckOperationsVerbose(model, p.pops, cfg.LinearizabilityTimeout)
	p.figures["violations"] = 1
	return Result{Name: NameLinearizable, Verdict: Fail, Violations: []Violation{p.explain(info)}, Figures: p.figures}
}

// LinearizabilityVisualize runs the kv/linearizable search on h and writes
// porcupine's HTML visualization of it (the linearization, or the longest
// partial ones and where they stop) to w.
func LinearizabilityVisualize(h *history.History, cfg Config, w io.Writer) error {
	p, err := prepareLinearizable(h)
	if err != nil {
		return err
	}
	_, info := porcupine.CheckOperationsVerbose(p.model(), p.pops, cfg.LinearizabilityTimeout)
	return porcupine.Visualize(p.model(), info, w)
}

// linPrep is a history made ready for the search.
type linPrep struct {
	ks      *keyspace
	ops     []*linOp // indexed like pops
	pops    []porcupine.Operation
	figures map[string]float64
}

// model is porcupine's model of the etcd KV API. Step must be a pure
// function: it returns a new kvState and never changes the one it is given.
// Equal and Hash satisfy porcupine's invariant: states Equal says are equal
// have equal Hashes.
func (p *linPrep) model() porcupine.Model {
	m := kvModel{ks: p.ks}
	return porcupine.Model{
		Init: func() interface{} { return initialState(p.ks) },
		Step: func(state, input, _ interface{}) (bool, interface{}) {
			s, mm := m.step(state.(kvState), input.(*linOp), false)
			return mm == nil, s
		},
		Equal:             func(a, b interface{}) bool { return stateEqual(a.(kvState), b.(kvState)) },
		Hash:              func(s interface{}) uint64 { return hashState(s.(kvState)) },
		DescribeOperation: func(in, _ interface{}) string { return p.describe(in.(*linOp)) },
		DescribeState:     func(s interface{}) string { return p.ks.describe(s.(kvState)) },
	}
}

// explain turns porcupine's longest partial linearization into a
// violation: the earliest-returning operation it could not place, and why
// it does not fit after that prefix.
func (p *linPrep) explain(info porcupine.LinearizationInfo) Violation {
	var best []int
	for _, part := range info.PartialLinearizations() {
		for _, seq := range part {
			if len(seq) > len(best) || (len(seq) == len(best) && slices.Compare(seq, best) < 0) {
				best = seq
			}
		}
	}
	m := kvModel{ks: p.ks}
	s := initialState(p.ks)
	placed := make([]bool, len(p.ops))
	for _, i := range best {
		s, _ = m.step(s, p.ops[i], false)
		placed[i] = true
	}
	block := -1
	for i, op := range p.ops {
		if placed[i] || op.mode == modeMaybe || op.mode == modeEnd {
			continue
		}
		if block < 0 || p.pops[i].Return < p.pops[block].Return ||
			(p.pops[i].Return == p.pops[block].Return && p.pops[i].Call < p.pops[block].Call) {
			block = i
		}
	}
	v := Violation{Guarantee: ErrLinearizable}
	if block < 0 { // cannot happen: every real operation placed means Ok
		v.Message = "no linearization found"
		return v
	}
	op := p.ops[block]
	v.Client, v.Key, v.Operations = op.client, op.req.Key, []int64{op.id}
	if op.resp != nil {
		v.Revision = op.resp.Revision
	}
	var concurrent []string
	for i, o := range p.ops {
		if i != block && !placed[i] && o.mode != modeEnd && p.pops[i].Call <= p.pops[block].Return {
			v.Operations = append(v.Operations, o.id)
			concurrent = append(concurrent, fmt.Sprint(o.id))
		}
	}
	prefix := fmt.Sprintf("after the longest linearizable prefix (%d operations, store at %s)",
		len(best), p.ks.describeRev(s))
	if len(best) > 0 {
		if last := p.ops[best[len(best)-1]]; last.id >= 0 {
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
