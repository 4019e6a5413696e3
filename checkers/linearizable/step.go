package linearizable

import (
	"fmt"
	"math"
	"strings"

	"github.com/vigil-suite/vigil/history"
)

// linMode says how an operation enters the model.
type linMode uint8

const (
	// modeAcked: the operation got a response; the model checks all of it.
	modeAcked linMode = iota
	// modeDefinite: a definite error (compacted, future revision); the
	// model checks that the error was the right answer.
	modeDefinite
	// modeMaybe: a write whose outcome is unknown and whose value no
	// response ever showed. It may be applied where it changes the store
	// at a revision no acknowledged write holds, or linearized after the
	// end of history, where it changes nothing anyone saw. Applying it as a
	// no-op in the middle is never needed, so the model refuses that: this
	// keeps the search from trying every subset of unknown writes.
	modeMaybe
	// modeMust: a write whose outcome is unknown but whose value some
	// response showed: it was applied, before that response returned.
	modeMust
	// modeEnd: the synthetic end of history, after every real operation.
	modeEnd
)

// compare is a Txn compare resolved against the keyspace.
type compare struct {
	key    int32 // -1: a key no put names, so it never exists
	target string
	result string
	n      int64
	value  string
}

// linOp is the input of one porcupine operation.
type linOp struct {
	id       int64 // history operation id; -1 for the end of history
	client   int
	mode     linMode
	req      *history.Request
	resp     *history.Response // modeAcked only
	code     history.ErrorCode // modeDefinite only
	compares []compare
	// success and failure are the branches; a put or delete is a txn
	// without compares whose success branch is the request itself.
	success, failure []history.Request
	// inner are the per-branch-op responses to check (modeAcked writes).
	inner []history.Response
	// mustSuccess: for modeMust, whether the observed value is written by
	// the success branch.
	mustSuccess bool
	// pin: for modeMust, the revision a read (or, lacking one, a watch)
	// showed its value at; 0 if none did. The write was applied there.
	pin int64
	// maxRev: for the modeEnd of a search window, the highest revision
	// the store may have reached there (what the operation after the
	// window needs); 0 for no bound.
	maxRev int64
}

// mismatch says why an operation cannot be the next step from a state.
type mismatch struct {
	msg       string
	key       string
	want, got string
	// cites is an operation the explanation relies on (the write of the
	// value the model holds, the read that rules a revision out), or 0.
	cites int64
}

// refused is returned when no explanation was asked for.
var refused = &mismatch{msg: "the operation cannot be applied here"}

// kvModel holds the immutable keyspace; its step is a pure function of
// (state, operation).
type kvModel struct{ ks *keyspace }

// no returns refused, or the explanation built by f when ex is set. f is
// only called (and its arguments only formatted) when ex is set, so the hot
// path allocates nothing for a refusal.
func no(ex bool, f func() *mismatch) *mismatch {
	if !ex {
		return refused
	}
	return f()
}

// step applies op to s. It must be pure: s is a value, every change goes to
// the copy (chunks copy on write), and the keyspace is read only. ex asks
// for a readable mismatch instead of the shared refusal.
func (m kvModel) step(s kvState, op *linOp, ex bool) (kvState, *mismatch) {
	if op.mode == modeEnd {
		if op.maxRev > 0 && !s.revAtMost(op.maxRev) {
			return s, no(ex, func() *mismatch {
				return &mismatch{msg: fmt.Sprintf("the store is past revision %d, which the operations after it need", op.maxRev)}
			})
		}
		s.ended = true
		return s, nil
	}
	if s.ended {
		if op.mode == modeMaybe {
			return s, nil // not applied, or applied after everything: nobody can tell
		}
		return s, no(ex, func() *mismatch { return &mismatch{msg: "operation linearized after the end of history"} })
	}
	switch op.req.Kind {
	case history.OpRange:
		return m.stepRange(s, op, ex)
	case history.OpCompact:
		return m.stepCompact(s, op, ex)
	default:
		return m.stepWrite(s, op, ex)
	}
}

func headerMismatch(want, got int64) *mismatch {
	return &mismatch{msg: fmt.Sprintf("header revision is %d, the store is at %d", got, want),
		want: fmt.Sprint(want), got: fmt.Sprint(got)}
}

// baseMismatch explains a header revision the unknown start revision
// cannot account for.
func baseMismatch(s *kvState, rel int32, got int64) *mismatch {
	hi := "no bound"
	if s.baseHi != math.MaxInt64 {
		hi = fmt.Sprint(s.baseHi)
	}
	return &mismatch{msg: fmt.Sprintf("header revision %d is impossible: %d revisions after the start, "+
		"the start revision must lie between %d and %s", got, rel, max(1, s.baseLo), hi), got: fmt.Sprint(got)}
}

func (m kvModel) stepRange(s kvState, op *linOp, ex bool) (kvState, *mismatch) {
	r := op.req
	if op.mode == modeDefinite {
		return m.rangeError(s, op, ex)
	}
	resp := op.resp
	if s.base == 0 && !s.revIs(s.rev, resp.Revision) {
		return s, no(ex, func() *mismatch { return baseMismatch(&s, s.rev, resp.Revision) })
	}
	checkData := true
	if r.Revision > 0 {
		if !s.revAtLeast(r.Revision) {
			return s, no(ex, func() *mismatch {
				return &mismatch{msg: fmt.Sprintf("read at revision %d answered while the store is at %d",
					r.Revision, s.current())}
			})
		}
		if !s.compactAtMost(r.Revision) {
			return s, no(ex, func() *mismatch {
				return &mismatch{msg: fmt.Sprintf("read at revision %d answered though the store is compacted at %d or later",
					r.Revision, s.compactLo)}
			})
		}
		// The model keeps no old revisions: a read in the past is only
		// judged on its errors and header.
		checkData = s.current() == r.Revision
	}
	if checkData {
		if mm := m.checkRange(&s, r, resp, ex); mm != nil {
			return s, mm
		}
	}
	if !s.revIs(s.rev, resp.Revision) {
		return s, no(ex, func() *mismatch { return headerMismatch(s.current(), resp.Revision) })
	}
	return s, nil
}

// rangeError checks a definite error of a read at a revision: etcd answers
// "future revision" when it is above the store's, else "compacted" when it
// is below the compact revision.
func (m kvModel) rangeError(s kvState, op *linOp, ex bool) (kvState, *mismatch) {
	rev := op.req.Revision
	if rev <= 0 {
		return s, no(ex, func() *mismatch {
			return &mismatch{msg: fmt.Sprintf("a read at the current revision failed with %q", op.code)}
		})
	}
	switch op.code {
	case history.ErrFutureRevision:
		if !s.revAtMost(rev - 1) {
			return s, no(ex, func() *mismatch {
				return &mismatch{msg: fmt.Sprintf("read at revision %d failed as a future revision, but the store is at %d",
					rev, s.current()), want: "data", got: string(op.code)}
			})
		}
	case history.ErrCompacted:
		if !s.revAtLeast(rev) || !s.compactAtLeast(rev+1) {
			return s, no(ex, func() *mismatch {
				return &mismatch{msg: fmt.Sprintf("read at revision %d failed as compacted, but the compact revision is at most %d",
					rev, s.compactHi), want: "data", got: string(op.code)}
			})
		}
	}
	return s, nil
}

func (m kvModel) stepCompact(s kvState, op *linOp, ex bool) (kvState, *mismatch) {
	n := op.req.Revision
	switch op.mode {
	case modeAcked:
		// etcd sets a compaction's header revision when it answers, not when
		// it applies it (v3_server.go Compact: Header.Revision = kv.Rev()):
		// writes applied in between may raise it. So it bounds the store's
		// revision at the compaction from above, and cannot fix the base.
		resp := op.resp
		if !s.compactAtMost(n-1) || !s.revAtLeast(n) {
			return s, no(ex, func() *mismatch {
				return &mismatch{msg: fmt.Sprintf("compaction at %d succeeded, but the store is at %d and compacted at %d or later",
					n, s.current(), s.compactLo)}
			})
		}
		s.compactLo, s.compactHi = n, n
		if s.base != 0 && !s.revAtMost(resp.Revision) {
			return s, no(ex, func() *mismatch { return headerMismatch(s.current(), resp.Revision) })
		}
	case modeDefinite:
		ok := true
		if op.code == history.ErrCompacted {
			ok = s.compactAtLeast(n)
		} else {
			ok = s.compactAtMost(n-1) && s.revAtMost(n-1)
		}
		if !ok {
			return s, no(ex, func() *mismatch {
				return &mismatch{msg: fmt.Sprintf("compaction at %d failed with %q, but the compact revision lies in [%d, %d]",
					n, op.code, s.compactLo, min(s.compactHi, s.current())), got: string(op.code)}
			})
		}
	default: // maybe: applied only where it changes something and the start is known
		if s.base == 0 || s.compactLo >= n || n > s.current() {
			return s, refused
		}
		s.compactLo, s.compactHi = n, n
	}
	return s, nil
}

// branchExcluded reports whether a branch about to be applied at revision
// rev writes a key that is quiet there, or writes it otherwise than a
// watch saw.
func (m kvModel) branchExcluded(s *kvState, br []history.Request, rev int64) bool {
	for i := range br {
		switch br[i].Kind {
		case history.OpPut:
			k := m.ks.index[br[i].Key]
			if m.ks.quietAt(k, rev) {
				return true
			}
			if v, ok := m.ks.pins[revKeyIdx{rev, k}]; ok && v != m.ks.valueIdx[br[i].Value] {
				return true
			}
		case history.OpDelete:
			lo, hi := m.ks.span(br[i].Key, br[i].End)
			for k := lo; k < hi; k++ {
				if s.get(k).create == 0 {
					continue
				}
				if m.ks.quietAt(k, rev) {
					return true
				}
				if v, ok := m.ks.pins[revKeyIdx{rev, k}]; ok && v != -1 {
					return true
				}
			}
		}
	}
	return false
}

// whyExcluded explains, naming its evidence, why a write of unknown
// outcome cannot take revision rev.
func (m kvModel) whyExcluded(s *kvState, op *linOp, br []history.Request, rev int64) *mismatch {
	if id, ok := m.ks.taken[rev]; ok && id != op.id {
		return &mismatch{msg: fmt.Sprintf("revision %d is the revision of operation %d", rev, id), cites: id}
	}
	if rev > m.ks.horizon {
		return &mismatch{msg: fmt.Sprintf("no response shows a revision above %d", m.ks.horizon)}
	}
	why := func(k int32, put bool, value string) *mismatch {
		name := m.ks.short(m.ks.keys[k])
		if m.ks.quietAt(k, rev) {
			for _, e := range m.ks.evidence[k] {
				if e.lo > rev || rev > e.hi {
					continue
				}
				if e.op != 0 {
					return &mismatch{key: m.ks.keys[k], cites: e.op, msg: fmt.Sprintf(
						"operation %d read %s at revision %d and shows no write touched it at revision %d", e.op, name, e.hi, rev)}
				}
				return &mismatch{key: m.ks.keys[k], msg: fmt.Sprintf(
					"watch %d vouches that %s did not change at revision %d", e.watch, name, rev)}
			}
		}
		if v, ok := m.ks.pins[revKeyIdx{rev, k}]; ok {
			switch {
			case v == -1 && put:
				return &mismatch{key: m.ks.keys[k], msg: fmt.Sprintf("a watch saw %s deleted at revision %d", name, rev)}
			case v >= 0 && (!put || m.ks.values[v] != value):
				return &mismatch{key: m.ks.keys[k], msg: fmt.Sprintf("a watch saw %s set to %q at revision %d", name, m.ks.values[v], rev)}
			case v == -2:
				return &mismatch{key: m.ks.keys[k], msg: fmt.Sprintf("a watch saw %s set to a value no put wrote at revision %d", name, rev)}
			}
		}
		return nil
	}
	for i := range br {
		switch br[i].Kind {
		case history.OpPut:
			if mm := why(m.ks.index[br[i].Key], true, br[i].Value); mm != nil {
				return mm
			}
		case history.OpDelete:
			lo, hi := m.ks.span(br[i].Key, br[i].End)
			for k := lo; k < hi; k++ {
				if s.get(k).create != 0 {
					if mm := why(k, false, ""); mm != nil {
						return mm
					}
				}
			}
		}
	}
	return &mismatch{msg: fmt.Sprintf("it cannot take revision %d", rev)}
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
		if r.Limit <= 0 || count <= r.Limit {
			want = append(want, k)
		}
	}
	what := "range " + m.ks.short(r.Key)
	if r.End != "" {
		what += ".." + m.ks.short(r.End)
	}
	if mm := m.compareKVs(s, what, want, resp.KVs, r.KeysOnly, ex); mm != nil {
		return mm
	}
	more := r.Limit > 0 && count > r.Limit
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
