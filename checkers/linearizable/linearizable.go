package linearizable

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
	"github.com/vigil-suite/vigil/checkers/check"
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
	drawing := func(w io.Writer) (string, error) {
		v, err := p.draw(h, run, w, VisualizeOptions{})
		return v.String(), err
	}
	switch {
	case run.st.violation != nil:
		p.figures["violations"] = 1
		return check.Result{Name: Name, Verdict: check.Fail, Violations: []check.Violation{*run.st.violation}, Figures: p.figures, Drawing: drawing}
	case run.st.reason != "":
		return check.Result{Name: Name, Verdict: check.Unknown, Reason: run.st.reason, Violations: []check.Violation{}, Figures: p.figures}
	}
	return check.Result{Name: Name, Verdict: check.Pass, Violations: []check.Violation{}, Figures: p.figures, Drawing: drawing}
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
		if mm.watch > 0 {
			v.RestsOn = []int64{mm.watch}
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
			history.Executed(op.req, r, func(q *history.Request, in *history.Response) {
				if q.Kind == history.OpRange && len(in.KVs) > 0 {
					fmt.Fprintf(&b, " %s", p.kvsString(in.KVs))
				}
			})
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
		var opts []string
		if r.IgnoreValue {
			opts = append(opts, "ignore value")
		} else {
			opts = append(opts, fmt.Sprintf("%q", r.Value))
		}
		if r.Lease != 0 {
			opts = append(opts, fmt.Sprintf("lease %d", r.Lease))
		}
		if r.IgnoreLease {
			opts = append(opts, "ignore lease")
		}
		if r.PrevKV {
			opts = append(opts, "prev_kv")
		}
		return fmt.Sprintf("put(%s, %s)", k, strings.Join(opts, ", "))
	case history.OpDelete:
		if r.End != "" {
			return fmt.Sprintf("delete(%s..%s)", k, p.ks.short(r.End))
		}
		return fmt.Sprintf("delete(%s)", k)
	case history.OpLeaseGrant:
		return fmt.Sprintf("lease-grant(%d s)", r.TTL)
	case history.OpLeaseRevoke:
		return fmt.Sprintf("lease-revoke(%d)", r.Lease)
	case history.OpRange:
		s := "get(" + k
		if r.End != "" {
			s += ".." + p.ks.short(r.End)
		}
		if r.Limit > 0 {
			s += fmt.Sprintf(", limit %d", r.Limit)
		}
		if r.KeysOnly {
			s += ", keys only"
		}
		if r.CountOnly {
			s += ", count only"
		}
		if r.Revision > 0 {
			s += fmt.Sprintf(", rev %d", r.Revision)
		}
		if r.SortOrder != "" || r.SortTarget != "" {
			s += fmt.Sprintf(", sort %s by %s", orDefault(r.SortOrder, "none"), orDefault(r.SortTarget, "key"))
		}
		for _, f := range []struct {
			name string
			rev  int64
		}{{"mod >=", r.MinModRevision}, {"mod <=", r.MaxModRevision}, {"create >=", r.MinCreateRevision}, {"create <=", r.MaxCreateRevision}} {
			if f.rev != 0 {
				s += fmt.Sprintf(", %s %d", f.name, f.rev)
			}
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
			key := p.ks.short(c.Key)
			if c.End != "" {
				key += ".." + p.ks.short(c.End)
			}
			cs = append(cs, fmt.Sprintf("%s(%s)%s%s", c.Target, key, c.Result, operand))
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
