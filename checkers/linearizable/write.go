package linearizable

import (
	"fmt"
	"strings"

	"github.com/vigil-suite/vigil/history"
)

func kvText(kv *history.KV) string {
	if kv == nil {
		return "<absent>"
	}
	return fmt.Sprintf("%q@%d (created %d, version %d)", kv.Value, kv.ModRevision, kv.CreateRevision, kv.Version)
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// stepWrite handles put, delete and txn; a put or delete is a txn without
// compares whose success branch is the request itself.
func (m kvModel) stepWrite(s kvState, op *linOp, ex bool) (kvState, *mismatch) {
	isTxn := op.req.Kind == history.OpTxn
	if op.mode != modeAcked {
		succ, decided := m.evalCompares(&s, op.compares)
		if !decided { // needs the start revision; try once it is known
			return s, no(ex, func() *mismatch {
				return &mismatch{msg: "its compares need the start revision, which no response has fixed yet"}
			})
		}
		if op.mode == modeMust && succ != op.mustSuccess {
			return s, no(ex, func() *mismatch {
				return &mismatch{msg: "the value this write was seen to write needs the other branch of its txn"}
			})
		}
		br := op.branch(succ)
		if !m.branchWrites(&s, br) { // a no-op: nothing to place here
			return s, no(ex, func() *mismatch { return &mismatch{msg: "it would change nothing here"} })
		}
		if op.pin != 0 && !s.revIs(s.rev+1, op.pin) {
			return s, no(ex, func() *mismatch {
				return &mismatch{msg: fmt.Sprintf("its value was seen written at revision %d, but here it would take revision %d",
					op.pin, s.current()+1), want: fmt.Sprint(op.pin), got: fmt.Sprint(s.current() + 1)}
			})
		}
		if s.base != 0 {
			next := s.current() + 1
			holder, held := m.ks.taken[next]
			held = held && holder != op.id
			if held || (op.mode == modeMaybe && next > m.ks.horizon) || m.branchExcluded(&s, br, next) {
				return s, no(ex, func() *mismatch { return m.whyExcluded(&s, op, br, next) })
			}
		}
		w := writer{s: &s}
		for i := range br {
			m.apply(&w, &br[i], nil, s.rev+1, ex)
		}
		s.rev++
		return s, nil
	}

	resp := op.resp
	succ := true
	if isTxn {
		succ = resp.Succeeded
	}
	br := op.branch(succ)
	next := s.rev
	if m.branchWrites(&s, br) {
		next++
	}
	if s.base == 0 && !s.revIs(next, resp.Revision) {
		return s, no(ex, func() *mismatch { return baseMismatch(&s, next, resp.Revision) })
	}
	if isTxn {
		if got, _ := m.evalCompares(&s, op.compares); got != succ {
			return s, no(ex, func() *mismatch { return m.compareMismatch(&s, op, succ) })
		}
	}
	if len(op.inner) != len(br) {
		return s, no(ex, func() *mismatch {
			return &mismatch{msg: fmt.Sprintf("the taken branch has %d operations but the response has %d",
				len(br), len(op.inner)), want: fmt.Sprint(len(br)), got: fmt.Sprint(len(op.inner))}
		})
	}
	w := writer{s: &s}
	for i := range br {
		if mm := m.apply(&w, &br[i], &op.inner[i], s.rev+1, ex); mm != nil {
			return s, mm
		}
	}
	if !s.revIs(next, resp.Revision) {
		return s, no(ex, func() *mismatch { return headerMismatch(s.abs(next), resp.Revision) })
	}
	s.rev = next
	return s, nil
}

func (op *linOp) branch(success bool) []history.Request {
	if success {
		return op.success
	}
	return op.failure
}

// branchWrites reports whether executing br changes the store: a put
// always does, a delete when it finds a key. (etcd rejects a txn whose
// branch both puts and deletes one key, so looking at the state before the
// branch is enough.)
func (m kvModel) branchWrites(s *kvState, br []history.Request) bool {
	for i := range br {
		switch br[i].Kind {
		case history.OpPut:
			return true
		case history.OpDelete:
			lo, hi := m.ks.span(br[i].Key, br[i].End)
			for k := lo; k < hi; k++ {
				if s.get(k).create != 0 {
					return true
				}
			}
		}
	}
	return false
}

// apply executes one branch operation at relative revision rel, checking
// resp against it when resp is not nil.
func (m kvModel) apply(w *writer, r *history.Request, resp *history.Response, rel int32, ex bool) *mismatch {
	s := w.s
	switch r.Kind {
	case history.OpPut:
		i := m.ks.index[r.Key]
		old := s.get(i)
		if resp != nil && r.PrevKV {
			var want []int32
			if old.create != 0 {
				want = []int32{i}
			}
			if mm := m.compareKVs(s, "prev_kv of put "+m.ks.short(r.Key), want, resp.PrevKVs, false, ex); mm != nil {
				return mm
			}
		}
		e := kvEntry{value: m.ks.valueIdx[r.Value], create: rel, mod: rel, version: 1}
		if old.create != 0 {
			e.create, e.version = old.create, old.version+1
		}
		w.set(i, e)
	case history.OpDelete:
		lo, hi := m.ks.span(r.Key, r.End)
		var gone []int32
		for k := lo; k < hi; k++ {
			if s.get(k).create != 0 {
				gone = append(gone, k)
			}
		}
		if resp != nil {
			if resp.Deleted != int64(len(gone)) {
				return no(ex, func() *mismatch {
					return &mismatch{msg: fmt.Sprintf("delete %s removed %d keys, the store holds %d there",
						m.ks.short(r.Key), resp.Deleted, len(gone)), key: r.Key,
						want: fmt.Sprint(len(gone)), got: fmt.Sprint(resp.Deleted)}
				})
			}
			if r.PrevKV {
				if mm := m.compareKVs(s, "prev_kvs of delete "+m.ks.short(r.Key), gone, resp.PrevKVs, false, ex); mm != nil {
					return mm
				}
			}
		}
		for _, k := range gone {
			w.set(k, kvEntry{})
		}
	case history.OpRange:
		if resp != nil {
			return m.checkRange(s, r, resp, ex)
		}
	}
	return nil
}

// checkRange compares a range response with the state: keys in order, each
// field of each key, the count of all matches and the more flag.
func (m kvModel) checkRange(s *kvState, r *history.Request, resp *history.Response, ex bool) *mismatch {
	lo, hi := m.ks.span(r.Key, r.End)
	var want []int32
	count := int64(0)
	for k := lo; k < hi; k++ {
		if s.get(k).create == 0 {
			continue
		}
		count++
		// A count-only range answers the count alone: no key, and more
		// is false (etcd truncates no keys it did not return).
		if !r.CountOnly && (r.Limit <= 0 || count <= r.Limit) {
			want = append(want, k)
		}
	}
	what := "range " + m.ks.short(r.Key)
	if r.End != "" {
		what += ".." + m.ks.short(r.End)
	}
	if r.CountOnly {
		what += " (count only)"
	}
	if mm := m.compareKVs(s, what, want, resp.KVs, r.KeysOnly, ex); mm != nil {
		return mm
	}
	more := !r.CountOnly && r.Limit > 0 && count > r.Limit
	if resp.Count != count || resp.More != more {
		return no(ex, func() *mismatch {
			return &mismatch{msg: fmt.Sprintf("%s: count %d, more %v; the store has %d matching keys (more %v)",
				what, resp.Count, resp.More, count, more),
				want: fmt.Sprintf("count=%d more=%v", count, more), got: fmt.Sprintf("count=%d more=%v", resp.Count, resp.More)}
		})
	}
	return nil
}

// compareKVs compares returned key-values with the model's entries want,
// position by position.
func (m kvModel) compareKVs(s *kvState, what string, want []int32, got []history.KV, keysOnly, ex bool) *mismatch {
	for j := 0; j < max(len(want), len(got)); j++ {
		var w *history.KV
		var we kvEntry
		if j < len(want) {
			we = s.get(want[j])
			kv := history.KV{Key: m.ks.keys[want[j]], Value: m.ks.values[we.value],
				CreateRevision: s.abs(we.create), ModRevision: s.abs(we.mod), Version: int64(we.version)}
			if keysOnly {
				kv.Value = ""
			}
			if m.ks.noVersions && j < len(got) && got[j].Version == 0 {
				kv.Version = 0 // documented: the target keeps no versions
			}
			w = &kv
		}
		var g *history.KV
		if j < len(got) {
			g = &got[j]
		}
		if w != nil && g != nil && *w == *g {
			continue
		}
		return no(ex, func() *mismatch { return m.kvMismatch(s, what, w, g, we) })
	}
	return nil
}

func (m kvModel) kvMismatch(s *kvState, what string, want, got *history.KV, we kvEntry) *mismatch {
	mm := &mismatch{want: kvText(want), got: kvText(got)}
	switch {
	case want != nil && got != nil && want.Key != got.Key:
		mm.key = got.Key
		mm.msg = fmt.Sprintf("%s: the store's next key is %s = %s, the response has %s = %s",
			what, m.ks.short(want.Key), mm.want, m.ks.short(got.Key), mm.got)
	case want != nil:
		mm.key = want.Key
		mm.msg = fmt.Sprintf("%s: key %s is %s in the store, the response has %s", what, m.ks.short(want.Key), mm.want, mm.got)
	default:
		mm.key = got.Key
		mm.msg = fmt.Sprintf("%s: key %s does not exist in the store, the response has %s", what, m.ks.short(got.Key), mm.got)
	}
	if want != nil {
		if id, ok := m.ks.writer[m.ks.values[we.value]]; ok {
			mm.cites = id
			mm.msg += fmt.Sprintf(" (the store's value was written by operation %d)", id)
		}
	}
	if got != nil && got.Value != "" {
		if _, ok := m.ks.writer[got.Value]; !ok {
			mm.msg += fmt.Sprintf("; no operation ever wrote %q", got.Value)
		}
	}
	return mm
}

// evalCompares evaluates a txn's compares as etcd does: a missing key
// compares as zero revisions and version, and fails every value compare.
// decided is false when the answer needs the start revision, still unknown.
func (m kvModel) evalCompares(s *kvState, cmps []compare) (result, decided bool) {
	decided = true
	for _, c := range cmps {
		ok, known := m.evalCompare(s, c)
		if !known {
			decided = false
			continue
		}
		if !ok {
			return false, true
		}
	}
	return decided, decided
}

func (m kvModel) evalCompare(s *kvState, c compare) (ok, known bool) {
	var e kvEntry
	if c.key >= 0 {
		e = s.get(c.key)
	}
	var diff int
	switch c.target {
	case "value":
		if e.create == 0 {
			return false, true
		}
		diff = strings.Compare(m.ks.values[e.value], c.value)
	case "version":
		diff = cmp64(int64(e.version), c.n)
	default: // mod, create
		rel := e.mod
		if c.target == "create" {
			rel = e.create
		}
		if rel == 0 {
			diff = cmp64(0, c.n)
		} else {
			if s.base == 0 {
				return false, false
			}
			diff = cmp64(s.abs(rel), c.n)
		}
	}
	switch c.result {
	case "=":
		return diff == 0, true
	case "!=":
		return diff != 0, true
	case "<":
		return diff < 0, true
	default: // ">"
		return diff > 0, true
	}
}

func (m kvModel) compareMismatch(s *kvState, op *linOp, succeeded bool) *mismatch {
	var parts []string
	key := ""
	for _, c := range op.compares {
		ok, _ := m.evalCompare(s, c)
		var e kvEntry
		name := "<unknown key>"
		if c.key >= 0 {
			e = s.get(c.key)
			name = m.ks.short(m.ks.keys[c.key])
			key = m.ks.keys[c.key]
		}
		operand := fmt.Sprint(c.n)
		if c.target == "value" {
			operand = fmt.Sprintf("%q", c.value)
		}
		parts = append(parts, fmt.Sprintf("%s(%s) %s %s is %v (the store has %s)",
			c.target, name, c.result, operand, ok, m.ks.kvString(*s, e)))
	}
	return &mismatch{msg: fmt.Sprintf("txn answered succeeded=%v, but its compares evaluate to %v: %s",
		succeeded, !succeeded, strings.Join(parts, "; ")), key: key,
		want: fmt.Sprintf("succeeded=%v", !succeeded), got: fmt.Sprintf("succeeded=%v", succeeded)}
}
