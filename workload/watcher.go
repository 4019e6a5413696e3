package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
	"github.com/vigil-suite/vigil/workload/grammar"
)

// watcher keeps one watch of the prefix open for the whole run. It resumes
// after a broken stream from the revision after the last it saw, restarts
// from the compact revision when its start was compacted, and (some
// watchers) closes and resumes its watch now and then on purpose.
type watcher struct {
	w   *Workload
	c   *targets.Recording
	rng *rand.Rand
	// start is the class of the first watch's start revision (grammar's
	// watch.start: "0", "head", "past", "compact", "below-compact",
	// "future").
	start   string
	req     history.WatchRequest
	delay   time.Duration // when to open the first watch
	restart time.Duration // 0: never restart on purpose
	pat     *rand.Rand    // the watch patterns' stream (patterns.go)
	// keyIndex is the key a one-key watcher watches (-1: the prefix); in
	// a segmented run, of the segment running when its watch began.
	keyIndex int

	lastRev atomic.Int64 // highest revision observed (event or progress)
	// startRev is the start revision of the current watch, when explicit.
	startRev atomic.Int64
}

// watchPlan is what watcher number i asks for: half with prev_kv; a
// third with progress notifications; every seventh in fragments; every
// fifth on one key only (with progress notifications, so that it can
// show it reached the final revision without an event); a third of the
// rest with an event-type filter, unless NoEventFilters. Its start's
// class comes from the shape's weights (grammar's WatchStarts: those
// that need a compaction to have happened open last). Options the target
// refuses are not asked for.
func (c Config) watchPlan(i int) (history.WatchRequest, string) {
	req := history.WatchRequest{Key: c.Prefix, End: prefixEnd(c.Prefix),
		PrevKV: i%2 == 0, ProgressNotify: i%3 == 0, Fragment: i%7 == 6}
	switch {
	case i%5 == 4:
		req.Key, req.End, req.ProgressNotify = fmt.Sprintf("%sk%03d", c.Prefix, i%max(c.Keys, 1)), "", true
	case c.NoEventFilters:
	case i%6 == 1:
		req.NoDelete = true
	case i%6 == 5:
		req.NoPut = true
	}
	start := "0"
	if starts := c.weights().WatchStarts(c.Watchers); i < len(starts) && starts[i] != "" {
		start = starts[i]
	}
	req.PrevKV = req.PrevKV && !c.refuses(history.FormWatchPrevKV) && !c.refuses("watch.prev_kv=true")
	req.ProgressNotify = req.ProgressNotify && !c.refuses(history.FormWatchProgressNotify) && !c.refuses("watch.progress_notify=true")
	req.NoPut = req.NoPut && !c.refuses(history.FormWatchNoPut) && !c.refuses("watch.filter=no_put")
	req.NoDelete = req.NoDelete && !c.refuses(history.FormWatchNoDelete) && !c.refuses("watch.filter=no_delete")
	req.Fragment = req.Fragment && !c.refuses("watch.fragment=true")
	if c.refuses(history.FormWatchStartRev) || c.refuses("watch.start="+start) {
		start = "0"
	}
	return req, start
}

// newWatcher makes watcher number i (watchPlan), opening over the first
// half of the run (of a segmented run's first segment); every fourth
// restarts its watch now and then. prefix is the keys the prefix
// watchers watch: the run's (all of a segmented run's segments); a
// one-key watcher watches its key of the segment running.
func newWatcher(w *Workload, i int, c *targets.Recording, rng *rand.Rand, prefix string) *watcher {
	plan := w.cfg
	plan.Prefix = prefix
	req, start := plan.watchPlan(i)
	keyIndex := -1
	if req.End == "" {
		keyIndex = i % max(w.cfg.Keys, 1)
		req.Key = w.key(keyIndex)
	}
	wt := &watcher{w: w, c: c, rng: rng, start: start, req: req, keyIndex: keyIndex,
		pat: w.seeded(fmt.Sprintf("patterns/watcher-%d", i)),
		// Stagger the opening over the first half of the run.
		delay: time.Duration(i) * w.cfg.Duration / time.Duration(2*max(1, w.cfg.Watchers)),
	}
	if i%4 == 3 {
		wt.restart = time.Duration(2000+rng.IntN(4000)) * time.Millisecond
	}
	if w.cfg.Segment > 0 && w.total > w.cfg.Segment && wt.restart == 0 {
		// In a segmented run a watch spans a boundary or two, not the run:
		// the segment it ends in holds it whole until then.
		wt.restart = w.cfg.Segment/2 + time.Duration(rng.Int64N(int64(w.cfg.Segment)))
	}
	return wt
}

// floor raises a start revision to the lowest a watch may start from.
func (wt *watcher) floor(rev int64) int64 { return max(rev, wt.w.watchFloor.Load(), 1) }

// revisions is what the watcher knows of the store's revisions, with the
// floor a watch may start from (Workload.revisions, but for the floor: in
// a segmented run the watchers go on across segments).
func (wt *watcher) revisions() grammar.Revisions {
	st := wt.w.Stats
	return grammar.Revisions{Head: st.StoreRevision.Load(), Compact: st.CompactRevision.Load(), Floor: wt.floor(0)}
}

// retarget points a one-key watcher of a segmented run at its key in the
// segment running, once that is not the one its watches watched: a fresh
// watch from the current revision, resuming nothing.
func (wt *watcher) retarget(req *history.WatchRequest, resumes *int64, class *string) {
	cur := wt.w.cur.Load()
	if wt.keyIndex < 0 || cur == nil {
		return
	}
	if key := keyIn(*cur, wt.keyIndex); key != req.Key {
		req.Key, req.StartRevision, *resumes, *class = key, 0, 0, "0"
	}
}

// reached reports whether the watcher has observed revision rev (or its
// current watch starts beyond it, so it never will).
func (wt *watcher) reached(rev int64) bool {
	return wt.lastRev.Load() >= rev || wt.startRev.Load() > rev
}

// nudge asks for a progress notification, so a watcher that has everything
// can prove it without another write.
func (wt *watcher) nudge(ctx context.Context) {
	if wt.req.ProgressNotify && !wt.w.cfg.refuses(string(history.CallProgress)) {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		wt.c.RequestProgress(rctx)
		cancel()
	}
}

// run keeps a watch open until watchCtx ends. runCtx ends when the whole run
// is interrupted.
func (wt *watcher) run(watchCtx, runCtx context.Context) {
	select {
	case <-watchCtx.Done():
		return
	case <-time.After(wt.delay):
	}
	stats := wt.w.Stats
	stats.mu.Lock()
	stats.watchers[wt] = struct{}{}
	stats.mu.Unlock()
	defer func() {
		stats.mu.Lock()
		delete(stats.watchers, wt)
		stats.mu.Unlock()
	}()

	req := wt.req
	// Where the first watch starts: a class the revisions known do not
	// allow (no compaction so far, for a while) gives way to a past
	// revision, or to now. Below the compact revision, the server must refuse with
	// ErrCompacted and say where history begins.
	class := wt.start
	rev, ok := grammar.WatchStart(class, wt.revisions(), wt.rng)
	// A class that needs a compaction waits for the first one: a quarter
	// of the run, or until just after the first real compaction is due
	// (a 30 s run compacts first at 8 s), but never past half the run.
	wait := wt.w.cfg.Duration / 4
	if ce := wt.w.cfg.CompactEvery; ce > 0 {
		wait = min(max(wait, ce+2*time.Second), wt.w.cfg.Duration/2)
	}
	for until := time.Now().Add(wait); !ok && time.Now().Before(until); {
		select {
		case <-watchCtx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
		rev, ok = grammar.WatchStart(class, wt.revisions(), wt.rng)
	}
	if !ok {
		class = "past"
		if rev, ok = grammar.WatchStart(class, wt.revisions(), wt.rng); !ok {
			class, rev = "0", 0
		}
	}
	req.StartRevision = rev
	var resumes int64
	// patterns.go: the first watch, and each restart on purpose, may open
	// at the compact revision or at the head; but not one the grammar
	// sent to the future or below the compact revision, classes it
	// assigns to few watchers so that each is drawn.
	var draw []string
	if class != "future" && class != "below-compact" {
		if draw = wt.w.watchPattern(wt.pat, &req.StartRevision); draw != nil {
			class = patternClass(draw)
		}
	}
	// Bounded: each iteration opens one watch; a run opens far fewer.
	for attempt := 0; attempt < watchAttempts(wt.w.total) && watchCtx.Err() == nil; attempt++ {
		wt.retarget(&req, &resumes, &class)
		wt.startRev.Store(req.StartRevision)
		id, next, ok := wt.watchOnce(watchCtx, req, resumes, append(grammar.WatchDraw(req, class), draw...))
		if !ok {
			// Broken stream or server cancel: give the cluster a moment.
			select {
			case <-watchCtx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		req.StartRevision, resumes, draw = next.StartRevision, next.resumes(id), nil
		switch {
		case wt.w.cfg.refuses(history.FormWatchStartRev):
			req.StartRevision, resumes, class = 0, 0, "0" // afresh: the target cannot resume
		case next.resume:
			class = "resume"
			if ok { // restarted on purpose: a pattern may open it afresh instead
				if draw = wt.w.watchPattern(wt.pat, &req.StartRevision); draw != nil {
					resumes, class = 0, patternClass(draw)
				}
			}
		case next.compacted:
			class = "compact"
		default:
			class = "past" // the floor, above a compact revision below it
		}
	}
}

// nextStart is where the following watch begins and whether it continues
// the previous one (a resume) or starts afresh (after compaction).
type nextStart struct {
	StartRevision int64
	resume        bool
	// compacted: afresh at the compact revision, the start was compacted.
	compacted bool
}

func (n nextStart) resumes(prev int64) int64 {
	if n.resume {
		return prev
	}
	return 0
}

// watchOnce runs one watch stream until it ends (the server's or the
// network's doing), is restarted on purpose, or watchCtx ends. It returns
// where the next watch should start, and ok=false when the stream broke.
func (wt *watcher) watchOnce(watchCtx context.Context, req history.WatchRequest, resumes int64, draw []string) (int64, nextStart, bool) {
	ctx, cancel := context.WithCancel(watchCtx)
	defer cancel()
	rw := wt.c.Watch(ctx, req, resumes, draw...)
	var restart <-chan time.Time
	if wt.restart > 0 {
		t := time.NewTimer(wt.restart)
		defer t.Stop()
		restart = t.C
	}
	var progress <-chan time.Time
	if req.ProgressNotify && !wt.w.cfg.refuses(string(history.CallProgress)) {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		progress = t.C
	}
	var created int64 // header revision of the created response
	compacted := int64(0)
	ok := false
	// Read until the stream closes, also after a cancel, so that the
	// recorder sees who ended it.
	for {
		select {
		case resp, open := <-rw.C:
			if !open {
				switch {
				case compacted > 0:
					// The start was compacted: begin again at the oldest revision
					// kept, but never below the run's floor: what was written
					// before the history (the probe of the forms, under the same
					// prefix) is not the run's to judge.
					wt.lastRev.Store(max(wt.lastRev.Load(), compacted-1))
					next := wt.floor(compacted)
					// A server that cancels a watch at the very revision it
					// names as compacted (kine does) would have it start
					// again at once, over and over: the pause for a broken
					// stream holds that loop back.
					return rw.ID, nextStart{StartRevision: next, compacted: next == compacted}, next != req.StartRevision
				case wt.lastRev.Load() > 0:
					return rw.ID, nextStart{StartRevision: wt.lastRev.Load() + 1, resume: true}, ok
				case created > 0 && req.StartRevision == 0:
					return rw.ID, nextStart{StartRevision: created, resume: true}, ok
				}
				return rw.ID, nextStart{StartRevision: req.StartRevision, resume: true}, ok
			}
			wt.observe(resp)
			if resp.Created {
				created = resp.Revision
			}
			if resp.Canceled && resp.CompactRevision > 0 {
				compacted = resp.CompactRevision
			}
		case <-restart:
			ok, restart = true, nil
			cancel()
		case <-progress:
			rctx, c := context.WithTimeout(ctx, time.Second)
			wt.c.RequestProgress(rctx)
			c()
		}
	}
}

func (wt *watcher) observe(resp history.WatchResponse) {
	for _, ev := range resp.Events {
		if r := ev.Revision(); r > wt.lastRev.Load() {
			wt.lastRev.Store(r)
		}
	}
	wt.w.Stats.WatchEvents.Add(int64(len(resp.Events)))
	if resp.Progress && resp.Revision > wt.lastRev.Load() {
		wt.lastRev.Store(resp.Revision)
	}
}
