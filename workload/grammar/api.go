package grammar

import (
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/vigil-suite/vigil/history"
)

// Learn takes in what came of an action: resp, an operation's answer (nil
// when it failed or for a call); code, the error's (history.ErrorCode, ""
// when none); words, the error's text. A refusal prunes (the productions
// no answer has shown served yet, else the combination) and Learn returns
// what it pruned; an answer teaches the client what its keys and leases
// now hold; a write of unknown outcome makes it forget what it may have
// changed.
func (g *Gen) Learn(a Action, resp *history.Response, code history.ErrorCode, words string) []string {
	failed := code != ""
	var pruned []string
	if p := g.cfg.Pruner; p != nil {
		switch {
		case code == history.ErrRefused:
			pruned = p.refuseDuring(a.tags, a.sig, words)
		case !failed || code.Definite():
			p.answer(a.tags)
		}
	}
	r := a.Op
	if r == nil {
		return pruned
	}
	switch {
	case !failed && resp != nil:
		switch r.Kind {
		case history.OpLeaseGrant:
			if resp.Lease != 0 {
				g.cfg.Leases.granted(resp.Lease)
			}
		case history.OpLeaseRevoke:
			g.revoked(a, true)
		default:
			g.k.learn(r, resp, resp.Revision)
		}
	case code == history.ErrKeyNotFound && r.Kind == history.OpPut:
		if i, ok := g.k.idx[r.Key]; ok {
			g.k.st[i] = keyState{known: true}
		}
	case code == history.ErrLeaseNotFound && r.Kind == history.OpLeaseRevoke:
		g.revoked(a, true) // gone already: revoked as far as anyone can tell
	case code.Definite():
	default:
		r.Writes(func(w *history.Request, _ bool) { g.k.forget(w.Key, w.End) })
		if r.Kind == history.OpLeaseRevoke {
			g.revoked(a, false)
		}
	}
	return pruned
}

// revoked: a revoke was answered (ok) or may have taken effect; the keys
// attached to the lease may be gone.
func (g *Gen) revoked(a Action, ok bool) {
	x := a.revoke
	if x == nil {
		return
	}
	for _, k := range g.cfg.Leases.attachedKeys(x) {
		g.k.forget(k, "")
	}
	if ok {
		g.cfg.Leases.revokedOK(x.id)
	}
}

// Compaction draws a compaction: a real one (real: at a past revision
// some way behind the head, or at the head), or one that must fail (at
// the compact revision, below it, or in the future). ok is false when the
// revisions known allow none yet. A real compaction keeps above the
// floor and the last compaction.
func (g *Gen) Compaction(rev Revisions, real bool) (Action, bool) {
	g.start(rev)
	from := max(rev.Floor, rev.Compact+1)
	past := rev.Head - 50
	c := g.draw(fCompactRevision, false, func(c int) bool {
		switch fields[fCompactRevision].classes[c] {
		case "past":
			return real && past >= from
		case "head":
			return real && rev.Head >= from
		case "compact":
			return !real && rev.Compact > 0
		case "below-compact":
			return !real && rev.Compact >= 2
		}
		return !real && rev.Head > 0
	})
	p := g.draw(fCompactPhysical, false, nil)
	if c < 0 || p < 0 {
		return Action{}, false
	}
	r := history.Request{Kind: history.OpCompact, Physical: p == 1}
	switch fields[fCompactRevision].classes[c] {
	case "past":
		r.Revision = max(from, past-g.rng.Int64N(100))
	case "head":
		r.Revision = rev.Head
	default:
		r.Revision = g.revValue(fields[fCompactRevision].classes[c])
	}
	a := Action{Op: &r, tags: normalize(append([]Tag(nil), g.tags...))}
	a.sig = signature(a.tags)
	g.commit(&a)
	return a, true
}

// WatchStarts assigns the start classes of n watchers by the weights
// (largest remainder), in the order they open: the classes that need a
// compaction to have happened (the compact revision, below it) last.
func (ws *Weights) WatchStarts(n int) []string {
	classes := fields[fWatchStart].classes
	var order []int
	for c, cl := range classes {
		if cl != "resume" && cl != "compact" && cl != "below-compact" {
			order = append(order, c)
		}
	}
	order = append(order, class(fWatchStart, "compact"), class(fWatchStart, "below-compact"))
	total := 0
	for _, c := range order {
		total += ws.w[fWatchStart][c]
	}
	if total == 0 || n == 0 {
		return make([]string, n)
	}
	counts := make([]int, len(classes))
	rem := make([]int, len(classes))
	given := 0
	for _, c := range order {
		counts[c] = n * ws.w[fWatchStart][c] / total
		rem[c] = n * ws.w[fWatchStart][c] % total
		given += counts[c]
	}
	for ; given < n; given++ {
		best := -1
		for _, c := range order {
			if ws.w[fWatchStart][c] > 0 && (best < 0 || rem[c] > rem[best] || rem[c] == rem[best] && counts[c] < counts[best]) {
				best = c
			}
		}
		counts[best]++
		rem[best] = -1
	}
	var out []string
	for _, c := range order {
		for range counts[c] {
			out = append(out, classes[c])
		}
	}
	return out
}

// WatchStart is where a watch drawn with start class cl begins, or false
// when the revisions known do not allow it yet: the head, a past revision
// (above the floor), the compact revision (above the floor), below it
// (the server must cancel it with the compact revision), or ahead of the
// head by 5 to 100 (near enough to be reached in the run, far enough for
// a member to restore a snapshot meanwhile).
func WatchStart(cl string, r Revisions, rng *rand.Rand) (int64, bool) {
	switch cl {
	case "", "0":
		return 0, true
	case "head":
		return r.Head, r.Head >= r.Floor && r.Head > 0
	case "past":
		return max(r.Floor, r.Head-1-rng.Int64N(300)), r.Head > r.Floor
	case "compact":
		return r.Compact, r.Compact >= r.Floor && r.Compact > 0
	case "below-compact":
		return max(1, r.Compact-1-rng.Int64N(20)), r.Compact >= 2
	case "future":
		return r.Head + 5 + rng.Int64N(96), true
	}
	return 0, false
}

// WatchDraw names a watch's productions: the class of its start and each
// option it asks for.
func WatchDraw(req history.WatchRequest, start string) []string {
	if start == "" {
		start = "0"
	}
	span := "prefix"
	if req.End == "" {
		span = "key"
	}
	filter := "none"
	switch {
	case req.NoPut:
		filter = "no_put"
	case req.NoDelete:
		filter = "no_delete"
	}
	b := func(on bool) string {
		if on {
			return "true"
		}
		return "false"
	}
	return []string{"watch.start=" + start, "watch.span=" + span, "watch.prev_kv=" + b(req.PrevKV),
		"watch.progress_notify=" + b(req.ProgressNotify), "watch.filter=" + filter, "watch.fragment=" + b(req.Fragment)}
}

// Plain is the weighting a probe draws with: every field its plainest
// class; a txn is the Kubernetes storage layer's update (one compare of
// the key's mod revision, a put of it, a read of it when the compare
// fails).
func Plain() *Weights {
	ws := &Weights{Shape: "plain"}
	for f := range fields {
		ws.plain(f)
	}
	ws.set(fTxnOp, map[string]int{"then/put": 1, "else/range": 1})
	for _, f := range []int{fRangeKey, fPutKey, fDeleteKey} {
		ws.setTxn(f, map[string]int{"focus": 1})
	}
	return ws
}

// Ask draws the plainest request of a production: every field its
// plainest class but the one asked for (with Plain weights). A field of
// range, put or delete is asked in a request of its own, or inside the
// plainest txn when the target refuses such requests alone (kine serves
// deletes only in txns). ok is false for a production no request shows
// (compaction, watches) or that the revisions and leases known do not
// allow yet.
func (g *Gen) Ask(production string, rev Revisions) (Action, bool) {
	t, known := tagByStr[production]
	if !known {
		return Action{}, false
	}
	f, c := tagField[t], int(t-tagBase[tagField[t]])
	prod := fields[f].prod
	g.force, g.forceDepth = map[int]int{}, 0
	defer func() { g.force, g.forceDepth = nil, 0 }()
	switch prod {
	case "request":
	case "compact", "watch":
		return Action{}, false
	case "txn", "compare":
		g.force[fRequest] = class(fRequest, KindTxn)
	case KindRange, KindPut, KindDelete:
		g.force[fRequest] = class(fRequest, prod)
		if g.cfg.Pruner.pruned(tagOf(fRequest, class(fRequest, prod))) || classOf(t) == "focus" {
			// Inside the plainest txn: its put, its read when the
			// compare fails, or a delete in place of its put.
			g.force[fRequest] = class(fRequest, KindTxn)
			if prod == KindDelete {
				g.force[fTxnOp] = class(fTxnOp, "then/delete")
			}
		}
	default:
		g.force[fRequest] = class(fRequest, prod)
	}
	switch {
	case f == fTxnDepth:
		g.forceDepth = c + 1
	case f == fTxnOp && strings.HasSuffix(classOf(t), "/txn"):
		g.forceDepth = 2
		if strings.HasPrefix(classOf(t), "else") {
			g.force[f] = c
		}
	default:
		g.force[f] = c
	}
	defer func() { g.Seq++ }()
	a, ok := g.attempt(rev)
	if !ok || !slices.Contains(a.tags, t) {
		return Action{}, false
	}
	g.commit(&a)
	return a, true
}

// LiveLeases are the leases a revoke may take (a probe revokes them when
// it is done).
func (l *Leases) LiveLeases() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []int64
	for _, x := range l.live {
		if x.op {
			out = append(out, x.id)
		}
	}
	return out
}
