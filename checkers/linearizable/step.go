package linearizable

import (
	"fmt"
	"math"

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

// compare is a Txn compare resolved against the keyspace: over the known
// keys [lo, hi) (one key, or a range when ranged), none when lo == hi.
type compare struct {
	lo, hi int32
	ranged bool
	target string
	result string
	n      int64
	value  string
}

// cond is one txn's compares and the result its path needs: etcd
// evaluates every compare on the path, nested txns' too, on the store as
// it was before the request (apply.go compareToPath), then executes.
type cond struct {
	cmps []compare
	want bool
	// depth is how deep the txn nests in the request: 0 for the request.
	depth int
}

// execPath is one way a request can execute: the conditions its txns'
// compares must meet, and the ranges, puts, deletes and lease operations
// it then runs, in order, nested txns flattened. A put or delete has one
// path without conditions.
type execPath struct {
	conds []cond
	ops   []history.Request
	// inner are the responses of ops, for the path an answered request took.
	inner []history.Response
}

// linOp is the input of one porcupine operation.
type linOp struct {
	id     int64 // history operation id; -1 for the end of history
	client int
	mode   linMode
	req    *history.Request
	resp   *history.Response // modeAcked only
	code   history.ErrorCode // modeDefinite only
	// paths are the ways the request can execute (see execPath); for an
	// answered request, only the one its response took, with the
	// responses of its operations.
	paths []execPath
	// mustPaths: for modeMust, the paths (bit i: paths[i]) that write
	// what was seen written.
	mustPaths uint64
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
	// watch is a watch whose observations the explanation takes as proof
	// (it vouches a key did not change, or it saw what was written), or 0:
	// the violation then rests on that watch being right.
	watch int64
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
	case history.OpLeaseGrant:
		return m.stepGrant(s, op, ex)
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
