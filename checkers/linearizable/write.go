package linearizable

import (
	"fmt"
	"slices"
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

// stepWrite handles put, delete, txn and lease revoke: requests that run
// one of their execution paths (execPath), which may change the store in
// one revision.
func (m kvModel) stepWrite(s kvState, op *linOp, ex bool) (kvState, *mismatch) {
	switch op.mode {
	case modeAcked:
		return m.stepAckedWrite(s, op, ex)
	case modeDefinite:
		return m.stepFailedWrite(s, op, ex)
	}
	pi, decided := m.choosePath(&s, op.paths)
	if !decided { // needs the start revision; try once it is known
		return s, no(ex, func() *mismatch {
			return &mismatch{msg: "its compares need the start revision, which no response has fixed yet"}
		})
	}
	if op.mode == modeMust && op.mustPaths&(1<<pi) == 0 {
		return s, no(ex, func() *mismatch {
			return &mismatch{msg: "the value this write was seen to write needs another branch of its txn"}
		})
	}
	path := &op.paths[pi]
	// Applied, it must not fail, and it must change something: a request
	// of unknown outcome that changes nothing here is placed after the end
	// of history instead, where nobody can tell.
	if !m.expectOutcome(&s, path.ops, "") {
		return s, no(ex, func() *mismatch {
			code, ok := m.pathOutcome(&s, path.ops)
			return &mismatch{msg: fmt.Sprintf("here it would fail (%s) and change nothing", orUndecided(code, ok))}
		})
	}
	if !m.pathWrites(&s, path.ops) && !m.revokesLive(&s, path.ops) {
		return s, no(ex, func() *mismatch { return &mismatch{msg: "it would change nothing here"} })
	}
	next := s.rev
	if m.pathWrites(&s, path.ops) {
		next++
	}
	if op.pin != 0 && !s.revIs(next, op.pin) {
		return s, no(ex, func() *mismatch {
			return &mismatch{msg: fmt.Sprintf("its value was seen written at revision %d, but here it would take revision %d",
				op.pin, s.abs(next)), want: fmt.Sprint(op.pin), got: fmt.Sprint(s.abs(next))}
		})
	}
	if s.base != 0 && next != s.rev {
		rev := s.abs(next)
		holder, held := m.ks.taken[rev]
		held = held && holder != op.id
		if held || (op.mode == modeMaybe && rev > m.ks.horizon) || m.branchExcluded(&s, path.ops, rev) {
			return s, no(ex, func() *mismatch { return m.whyExcluded(&s, op, path.ops, rev) })
		}
	}
	w := writer{s: &s}
	for i := range path.ops {
		m.apply(&w, &path.ops[i], nil, next, ex)
	}
	s.rev = next
	return s, nil
}

func orUndecided(code history.ErrorCode, decided bool) string {
	if !decided {
		return "or not: it needs the start revision"
	}
	return string(code)
}

// stepAckedWrite checks an answered write against the state: its path's
// compares, that it did not have to fail, every response of its
// operations, and its header revision.
func (m kvModel) stepAckedWrite(s kvState, op *linOp, ex bool) (kvState, *mismatch) {
	resp := op.resp
	path := &op.paths[0]
	next := s.rev
	if m.pathWrites(&s, path.ops) {
		next++
	}
	if s.base == 0 && !s.revIs(next, resp.Revision) {
		return s, no(ex, func() *mismatch { return baseMismatch(&s, next, resp.Revision) })
	}
	for _, c := range path.conds {
		if got, _ := m.evalCompares(&s, c.cmps); got != c.want {
			return s, no(ex, func() *mismatch { return m.compareMismatch(&s, c) })
		}
	}
	if !m.expectOutcome(&s, path.ops, "") {
		return s, no(ex, func() *mismatch {
			code, ok := m.pathOutcome(&s, path.ops)
			return &mismatch{msg: fmt.Sprintf("it was answered, but the store as it stands makes it fail: %s", orUndecided(code, ok)),
				want: "error " + orUndecided(code, ok), got: "a response"}
		})
	}
	if len(path.inner) != len(path.ops) {
		return s, no(ex, func() *mismatch {
			return &mismatch{msg: fmt.Sprintf("the path taken runs %d operations but the response has %d",
				len(path.ops), len(path.inner)), want: fmt.Sprint(len(path.ops)), got: fmt.Sprint(len(path.inner))}
		})
	}
	w := writer{s: &s}
	for i := range path.ops {
		if mm := m.apply(&w, &path.ops[i], &path.inner[i], next, ex); mm != nil {
			return s, mm
		}
	}
	if !s.revIs(next, resp.Revision) {
		return s, no(ex, func() *mismatch { return headerMismatch(s.abs(next), resp.Revision) })
	}
	s.rev = next
	return s, nil
}

// stepFailedWrite checks a write that failed with a definite error: at
// this point the path its compares choose must fail with that error, and
// nothing of it is applied.
func (m kvModel) stepFailedWrite(s kvState, op *linOp, ex bool) (kvState, *mismatch) {
	pi, decided := m.choosePath(&s, op.paths)
	if !decided {
		return s, no(ex, func() *mismatch {
			return &mismatch{msg: "its compares need the start revision, which no response has fixed yet"}
		})
	}
	if !m.expectOutcome(&s, op.paths[pi].ops, op.code) {
		return s, no(ex, func() *mismatch {
			code, ok := m.pathOutcome(&s, op.paths[pi].ops)
			want := "a response"
			if ok && code != "" {
				want = "error " + string(code)
			}
			return &mismatch{msg: fmt.Sprintf("it failed with %q, which the store as it stands does not explain (it should have got %s)",
				op.code, want), want: want, got: "error " + string(op.code)}
		})
	}
	return s, nil
}

// stepGrant checks a lease grant: the lease did not exist, and does now.
// A grant changes no key and takes no revision.
func (m kvModel) stepGrant(s kvState, op *linOp, ex bool) (kvState, *mismatch) {
	resp := op.resp // only answered grants are judged (classify)
	l := m.ks.leaseIdx[resp.Lease]
	if live, known := m.ks.leaseState(&s, l); known && live {
		return s, no(ex, func() *mismatch {
			return &mismatch{msg: fmt.Sprintf("lease %d was granted, but it exists already", resp.Lease)}
		})
	}
	if !s.revIs(s.rev, resp.Revision) {
		return s, no(ex, func() *mismatch { return headerMismatch(s.current(), resp.Revision) })
	}
	m.ks.setLease(&s, l, true)
	return s, nil
}

// choosePath returns the index of the path whose conditions hold in s.
// decided is false when a compare needs the start revision, still unknown.
func (m kvModel) choosePath(s *kvState, paths []execPath) (int, bool) {
	for i := range paths {
		holds := true
		for _, c := range paths[i].conds {
			got, known := m.evalCompares(s, c.cmps)
			if !known {
				return 0, false
			}
			if got != c.want {
				holds = false
				break
			}
		}
		if holds {
			return i, true
		}
	}
	return 0, true // cannot happen: the conditions of the paths cover every outcome
}

// The checks etcd makes before it applies a request, none of which may
// fail for any of it to apply (etcdserver/txn/txn.go checkTxn, checkPut,
// checkRange): a put with ignore_value or ignore_lease needs its key, a
// put's lease must exist, a range at a revision must lie between the
// compact revision and the store's revision before the request. A lease
// revoke needs its lease. etcd v3.6 reports the first failing check in
// the path's order, v3.5 the puts' before the ranges': either is taken.

// opCheck is the outcome of one operation's checks in s: the errors its
// failing checks give (a put may fail two: etcd v3.6 checks the key
// first, v3.7 the lease), none if it passes, and decided false when s
// does not know yet (the start revision, the compaction, a lease granted
// before the history).
func (m kvModel) opCheck(s *kvState, r *history.Request) (codes []history.ErrorCode, decided bool) {
	decided = true
	lease := func(id int64) {
		switch live, known := m.ks.leaseState(s, m.ks.leaseIdx[id]); {
		case !known:
			decided = false
		case !live:
			codes = append(codes, history.ErrLeaseNotFound)
		}
	}
	switch r.Kind {
	case history.OpPut:
		if (r.IgnoreValue || r.IgnoreLease) && m.get(s, r.Key).create == 0 {
			codes = append(codes, history.ErrKeyNotFound)
		}
		if r.Lease != 0 && !r.IgnoreLease {
			lease(r.Lease)
		}
	case history.OpLeaseRevoke:
		lease(r.Lease)
	case history.OpRange:
		switch {
		case r.Revision <= 0:
		case s.base == 0:
			decided = false
		case r.Revision > s.current():
			codes = append(codes, history.ErrFutureRevision)
		case r.Revision < s.compactLo:
			codes = append(codes, history.ErrCompacted)
		case r.Revision < s.compactHi:
			decided = false
		}
	}
	return codes, decided
}

// pathOutcome is the first error the path's checks give in s, "" for
// none; decided is false when one of them needs what s does not know yet.
func (m kvModel) pathOutcome(s *kvState, ops []history.Request) (code history.ErrorCode, decided bool) {
	decided = true
	for i := range ops {
		c, ok := m.opCheck(s, &ops[i])
		if len(c) > 0 {
			return c[0], true
		}
		decided = decided && ok
	}
	return "", decided
}

// expectOutcome reports whether the path can end with want in s: with no
// error, every check passes; with an error, some check gives it. What s
// does not know yet is narrowed to make it so.
func (m kvModel) expectOutcome(s *kvState, ops []history.Request, want history.ErrorCode) bool {
	for i := range ops {
		r := &ops[i]
		codes, decided := m.opCheck(s, r)
		switch {
		case want == "" && len(codes) > 0:
			return false
		case want != "" && slices.Contains(codes, want):
			return true
		case decided:
		case want == "":
			if !m.narrowCheck(s, r, "") {
				return false
			}
		default:
			if c := *s; m.narrowCheck(&c, r, want) {
				*s = c
				return true
			}
		}
	}
	return want == ""
}

// narrowCheck narrows s so that r's check gives want ("" for passing),
// reporting whether it can.
func (m kvModel) narrowCheck(s *kvState, r *history.Request, want history.ErrorCode) bool {
	switch r.Kind {
	case history.OpPut, history.OpLeaseRevoke:
		if want != "" && want != history.ErrLeaseNotFound {
			return false
		}
		m.ks.setLease(s, m.ks.leaseIdx[r.Lease], want == "") // the first request to show it decides
		return true
	case history.OpRange:
		rev := r.Revision
		switch want {
		case "":
			return s.revAtLeast(rev) && s.compactAtMost(rev)
		case history.ErrFutureRevision:
			return s.revAtMost(rev - 1)
		case history.ErrCompacted:
			return s.revAtLeast(rev) && s.compactAtLeast(rev+1)
		}
	}
	return false
}

// revokesLive reports whether the path revokes a lease that exists: a
// change (later puts to it fail) even where it deletes no key.
func (m kvModel) revokesLive(s *kvState, ops []history.Request) bool {
	for i := range ops {
		if ops[i].Kind == history.OpLeaseRevoke {
			if live, _ := m.ks.leaseState(s, m.ks.leaseIdx[ops[i].Lease]); live {
				return true
			}
		}
	}
	return false
}

// get is the entry of a key by name; a key no put names never exists.
func (m kvModel) get(s *kvState, key string) kvEntry {
	i, ok := m.ks.index[key]
	if !ok {
		return kvEntry{}
	}
	return s.get(i)
}

// pathWrites reports whether executing ops changes the store's keys: a
// put always does, a delete when it finds a key, a revoke when a key is
// attached to its lease. (etcd refuses a txn whose path both writes one
// key twice, so looking at the state before the path is enough.)
func (m kvModel) pathWrites(s *kvState, ops []history.Request) bool {
	for i := range ops {
		switch ops[i].Kind {
		case history.OpPut:
			return true
		case history.OpDelete:
			lo, hi := m.ks.span(ops[i].Key, ops[i].End)
			for k := lo; k < hi; k++ {
				if s.get(k).create != 0 {
					return true
				}
			}
		case history.OpLeaseRevoke:
			if len(m.attached(s, ops[i].Lease)) > 0 {
				return true
			}
		}
	}
	return false
}

// attached lists the keys attached to a lease.
func (m kvModel) attached(s *kvState, lease int64) []int32 {
	l, ok := m.ks.leaseIdx[lease]
	if !ok || l == 0 {
		return nil
	}
	var out []int32
	for k := range m.ks.keys {
		if e := s.get(int32(k)); e.create != 0 && e.lease == l {
			out = append(out, int32(k))
		}
	}
	return out
}

// apply executes one operation of a path at relative revision rel,
// checking resp against it when resp is not nil.
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
		e := kvEntry{value: m.ks.valueIdx[r.Value], create: rel, mod: rel, version: 1, lease: m.ks.leaseIdx[r.Lease]}
		if old.create != 0 {
			e.create, e.version = old.create, old.version+1
		}
		if r.IgnoreValue {
			e.value = old.value
		}
		if r.IgnoreLease {
			e.lease = old.lease
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
	case history.OpLeaseRevoke:
		for _, k := range m.attached(s, r.Lease) {
			w.set(k, kvEntry{})
		}
		m.ks.setLease(s, m.ks.leaseIdx[r.Lease], false)
	case history.OpRange:
		// A range of a txn at no revision reads the store with the txn's
		// writes so far (mvcc storeTxnWrite.Range); at the revision before
		// the txn, the store without them, known here only while the path
		// has written nothing yet; at an older one it is judged on its
		// errors alone, as the model keeps no old revisions.
		if resp != nil && (r.Revision <= 0 || !w.ownTop && s.base != 0 && r.Revision == s.current()) {
			return m.checkRange(s, r, resp, ex)
		}
	}
	return nil
}

// evalCompares evaluates a txn's compares as etcd does (all must hold).
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

// evalCompare evaluates one compare as etcd's applyCompare does: over a
// range, every key that exists must pass; where none exists, a value
// compare fails and every other compares a zero key (revisions, version
// and lease 0).
func (m kvModel) evalCompare(s *kvState, c compare) (ok, known bool) {
	found := false
	for k := c.lo; k < c.hi; k++ {
		e := s.get(k)
		if e.create == 0 {
			continue
		}
		found = true
		ok, known := m.compareEntry(s, c, e)
		if !known || !ok {
			return ok, known
		}
	}
	if found {
		return true, true
	}
	if c.target == history.CompareValue {
		return false, true
	}
	return m.compareEntry(s, c, kvEntry{})
}

func (m kvModel) compareEntry(s *kvState, c compare, e kvEntry) (ok, known bool) {
	var diff int
	switch c.target {
	case history.CompareValue:
		diff = strings.Compare(m.ks.values[e.value], c.value)
	case history.CompareVersion:
		diff = cmp64(int64(e.version), c.n)
	case history.CompareLease:
		diff = cmp64(m.ks.leases[e.lease], c.n)
	default: // mod, create
		rel := e.mod
		if c.target == history.CompareCreate {
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

func (m kvModel) compareMismatch(s *kvState, c cond) *mismatch {
	var parts []string
	key := ""
	for _, cm := range c.cmps {
		ok, _ := m.evalCompare(s, cm)
		name := "<a key never written>"
		var held []string
		for k := cm.lo; k < cm.hi; k++ {
			if key == "" {
				key = m.ks.keys[k]
			}
			if e := s.get(k); e.create != 0 || !cm.ranged {
				held = append(held, m.ks.short(m.ks.keys[k])+"="+m.ks.kvString(*s, e))
			}
		}
		if cm.lo < cm.hi {
			name = m.ks.short(m.ks.keys[cm.lo])
			if cm.ranged {
				name = fmt.Sprintf("range %s..", name)
			}
		}
		operand := fmt.Sprint(cm.n)
		if cm.target == history.CompareValue {
			operand = fmt.Sprintf("%q", cm.value)
		}
		parts = append(parts, fmt.Sprintf("%s(%s) %s %s is %v (the store has %s)",
			cm.target, name, cm.result, operand, ok, strings.Join(held, ", ")))
	}
	what := "txn"
	if c.depth > 0 {
		what = fmt.Sprintf("the txn nested %d deep", c.depth)
	}
	return &mismatch{msg: fmt.Sprintf("%s answered succeeded=%v, but its compares evaluate to %v: %s",
		what, c.want, !c.want, strings.Join(parts, "; ")), key: key,
		want: fmt.Sprintf("succeeded=%v", !c.want), got: fmt.Sprintf("succeeded=%v", c.want)}
}
