package workload

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// The member comparer reads every member directly while the run goes on,
// so that members that disagree are seen when they start to, not only at
// the run's end (kv/convergence), and the revision at which they started
// is found while it is still uncompacted. Each round:
//   - asks every member for the revision it has applied (Status; the
//     header of a serializable range where Status is refused) and takes
//     the lowest, R, unless it lies below what the run may read (the
//     segment's floor, the last compaction);
//   - asks every member for HashKV(R) and a serializable range of the
//     run's prefix at R: answers about one revision, which members that
//     applied the same writes give alike;
//   - when the members that answered with the same compact revision give
//     different hashes, bisects HashKV over the revisions between the last
//     one they agreed at (or the compact revision) and R to the first at
//     which they differ, and reads the prefix at that revision and the one
//     before from every member: what each holds where they part.
//
// Every request is recorded, tagged (history.DrawMemberCompare and its
// role), so that kv/member-agreement judges the answers from the history
// alone. The comparer decides nothing itself: it only chooses what to ask.

// memberReader is one member's client, as the comparer uses it.
type memberReader interface {
	DoDrawn(ctx context.Context, req history.Request, draw []string) (*history.Response, error)
	Member() string
}

// DefaultCompareEvery is the period of the comparer's rounds: a 30 s run
// compares its members about ten times, at a few requests per member each.
const DefaultCompareEvery = 3 * time.Second

// comparer compares the members of one segment (or run).
type comparer struct {
	members []memberReader
	prefix  string
	timeout time.Duration
	// floor is the lowest revision the comparer may read at: the
	// segment's first, the last compaction the workload made.
	floor func() int64
	// noStatus, noHash, noRange: the target refused that request (before
	// the run or during it); the comparer then does without.
	noStatus, noHash, noRange bool

	// mu makes one round at a time: the periodic ones and those the
	// compactor asks for before it compacts.
	mu sync.Mutex
	// agreed is the highest revision at which the members' hashes were
	// compared and agreed; done is set once a divergence was bisected (or
	// could not be): the members then differ at every later revision, and
	// one bisection names where they parted. open is set while members
	// differ and the bisection is not done: compacting above agreed would
	// lose the revisions it needs.
	agreed int64
	done   bool
	open   bool
}

// newComparer compares the members behind clients, reading keys under
// prefix; refused holds the forms the target refused before the run.
func newComparer(clients []memberReader, prefix string, timeout time.Duration, refused map[string]string, floor func() int64) *comparer {
	_, noHash := refused[history.CapHashKV]
	_, noSer := refused[history.CapSerializable]
	_, noRange := refused[history.FormOf(compareRange(prefix, 1))]
	return &comparer{members: clients, prefix: prefix, timeout: timeout, floor: floor,
		noHash: noHash, noRange: noSer || noRange}
}

// compareRange is the read of a round: every key under prefix at rev, from
// the member's own state.
func compareRange(prefix string, rev int64) history.Request {
	return history.Request{Kind: history.OpRange, Key: prefix, End: history.PrefixEnd(prefix), Revision: rev, Serializable: true}
}

// run makes a round every period until ctx ends; requests use reqCtx, so
// a round under way when the segment ends finishes.
func (c *comparer) run(ctx, reqCtx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.round(reqCtx)
		}
	}
}

// roundResult is what one round found, for tests and progress lines.
type roundResult struct {
	// Rev is the revision compared (0: none, too few members answered).
	Rev int64
	// Differ: the members' hashes or reads at Rev differ.
	Differ bool
	// First is the first revision at which the hashes differ, when a
	// bisection found it.
	First int64
}

// do sends one request to member m, bounded by the comparer's timeout.
func (c *comparer) do(ctx context.Context, m memberReader, req history.Request, role string) (*history.Response, error) {
	rctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := m.DoDrawn(rctx, req, []string{history.DrawMemberCompare, role})
	if err != nil && targets.CodeOf(err) == history.ErrRefused {
		switch req.Kind {
		case history.OpStatus:
			c.noStatus = true
		case history.OpHashKV:
			c.noHash = true
		case history.OpRange:
			c.noRange = true
		}
	}
	return resp, err
}

// applied is the revision member m has applied, or false.
func (c *comparer) applied(ctx context.Context, m memberReader) (int64, bool) {
	if !c.noStatus {
		if resp, err := c.do(ctx, m, history.Request{Kind: history.OpStatus}, history.CompareRound); err == nil {
			return resp.Revision, true
		}
		if !c.noStatus {
			return 0, false
		}
	}
	if c.noRange {
		return 0, false
	}
	resp, err := c.do(ctx, m, history.Request{Kind: history.OpRange, Key: c.prefix, End: history.PrefixEnd(c.prefix),
		Serializable: true, CountOnly: true}, history.CompareRound)
	if err != nil {
		return 0, false
	}
	return resp.Revision, true
}

// round compares the members once.
func (c *comparer) round(ctx context.Context) roundResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	var res roundResult
	var up []memberReader
	var rev int64
	for _, m := range c.members {
		if ctx.Err() != nil {
			return res
		}
		if r, ok := c.applied(ctx, m); ok {
			up = append(up, m)
			if rev == 0 || r < rev {
				rev = r
			}
		}
	}
	if len(up) < 2 || rev < c.floor() {
		return res
	}
	res.Rev = rev
	hashes := map[string]*history.Response{}
	reads := map[string]*history.Response{}
	for _, m := range up {
		if !c.noHash {
			if resp, err := c.do(ctx, m, history.Request{Kind: history.OpHashKV, Revision: rev}, history.CompareRound); err == nil {
				hashes[m.Member()] = resp
			}
		}
		if !c.noRange {
			if resp, err := c.do(ctx, m, compareRange(c.prefix, rev), history.CompareRound); err == nil {
				reads[m.Member()] = resp
			}
		}
	}
	h := hashVerdict(hashes)
	res.Differ = h == differ || readsDiffer(reads)
	switch {
	case h == agree && !res.Differ:
		c.sawAgree(hashes, rev)
	case h == differ && !c.done:
		res.First = c.bisect(ctx, up, rev, hashes)
		c.open = !c.done
	}
	return res
}

// beforeCompact is called by the compactor before it compacts to rev: a
// round first, so that members that differ are bisected while the
// revisions where they parted are still there (HashKV cannot go below the
// compact revision), and the revision to compact to: rev, or, while a
// bisection is left open, no higher than the last revision the members
// agreed at.
func (w *Workload) beforeCompact(ctx context.Context, rev int64) int64 {
	c := w.cmp
	if c == nil {
		return rev
	}
	c.round(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open {
		return min(rev, c.agreed)
	}
	return rev
}

// bisect finds the first revision in (lo, hi] at which the members'
// hashes differ, knowing they differ at hi, and reads the prefix there
// and just before on every member. It returns that revision, or 0 when
// the answers do not tell: the members differ already at the lowest
// revision it may ask (then it gives up for good), or a member stopped
// answering or a compaction moved the compact revision (the next round
// tries again).
func (c *comparer) bisect(ctx context.Context, up []memberReader, hi int64, atHi map[string]*history.Response) int64 {
	lo := max(c.agreed, c.floor())
	for _, r := range atHi {
		lo = max(lo, r.CompactRevision)
	}
	if lo >= hi {
		c.done = true
		return 0
	}
	if lo != c.agreed {
		// Not yet seen agreeing there: ask, so the record shows it.
		switch c.hashesAt(ctx, up, lo) {
		case agree:
		case differ:
			c.done = true
			return 0
		default:
			return 0
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		switch c.hashesAt(ctx, up, mid) {
		case agree:
			lo = mid
		case differ:
			hi = mid
		default:
			return 0
		}
	}
	c.done = true
	if !c.noRange {
		for _, rev := range []int64{hi - 1, hi} {
			for _, m := range up {
				c.do(ctx, m, compareRange(c.prefix, rev), history.CompareDivergence)
			}
		}
	}
	return hi
}

// hashesAt asks every member for HashKV(rev) and compares the answers.
func (c *comparer) hashesAt(ctx context.Context, up []memberReader, rev int64) verdict {
	got := map[string]*history.Response{}
	for _, m := range up {
		if resp, err := c.do(ctx, m, history.Request{Kind: history.OpHashKV, Revision: rev}, history.CompareBisect); err == nil {
			got[m.Member()] = resp
		}
	}
	v := hashVerdict(got)
	if v == agree {
		c.sawAgree(got, rev)
	}
	return v
}

// sawAgree notes that the hashes at rev agree, as the revision to bisect
// from, when every member answered with the same compact revision: a
// member that did not answer there may be the one that differs.
func (c *comparer) sawAgree(answers map[string]*history.Response, rev int64) {
	if len(answers) < len(c.members) {
		return
	}
	for _, r := range answers {
		for _, o := range answers {
			if r.CompactRevision != o.CompactRevision {
				return
			}
		}
	}
	c.agreed = max(c.agreed, rev)
}

// verdict is how the members' answers at one revision compare.
type verdict int

const (
	incomparable verdict = iota // fewer than two members answered with the same compact revision
	agree
	differ
)

// hashVerdict compares HashKV answers by member: members that answered
// with the same compact revision hashed the same revisions, so they must
// give the same hash; members with different compact revisions are not
// compared.
func hashVerdict(answers map[string]*history.Response) verdict {
	byCompact := map[int64][]uint32{}
	for _, r := range answers {
		byCompact[r.CompactRevision] = append(byCompact[r.CompactRevision], r.Hash)
	}
	v := incomparable
	for _, hs := range byCompact {
		if len(hs) < 2 {
			continue
		}
		v = agree
		for _, h := range hs[1:] {
			if h != hs[0] {
				return differ
			}
		}
	}
	return v
}

// readsDiffer reports whether reads of the same range at the same revision
// returned different data on different members.
func readsDiffer(reads map[string]*history.Response) bool {
	var first *history.Response
	for _, r := range reads {
		if first == nil {
			first = r
			continue
		}
		if r.Count != first.Count || r.More != first.More || !slices.Equal(r.KVs, first.KVs) {
			return true
		}
	}
	return false
}
