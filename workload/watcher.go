package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// watchStart says where a watcher's first watch begins.
type watchStart int

const (
	startCurrent watchStart = iota // revision 0: from now on
	startPast                      // a revision behind the head (maybe compacted)
	startFuture                    // a revision ahead of the head
)

// watcher keeps one watch of the prefix open for the whole run. It resumes
// after a broken stream from the revision after the last it saw, restarts
// from the compact revision when its start was compacted, and (some
// watchers) closes and resumes its watch now and then on purpose.
type watcher struct {
	w       *Workload
	c       *targets.Recording
	rng     *rand.Rand
	start   watchStart
	req     history.WatchRequest
	delay   time.Duration // when to open the first watch
	restart time.Duration // 0: never restart on purpose
	// keyIndex is the key a one-key watcher watches (-1: the prefix); in
	// a segmented run, of the segment running when its watch began.
	keyIndex int

	lastRev atomic.Int64 // highest revision observed (event or progress)
	// startRev is the start revision of the current watch, when explicit.
	startRev atomic.Int64
}

// newWatcher makes watcher number i. The mix: a third each from the
// current, a past and a future revision; half with prev_kv; a third with
// progress notifications; every fifth on one key only (with progress
// notifications, so that it can show it reached the final revision without
// an event); a third of the rest with an event-type filter, unless
// NoEventFilters.
//
// prefix is the keys the prefix watchers watch: the run's (all of a
// segmented run's segments).
func newWatcher(w *Workload, i int, c *targets.Recording, rng *rand.Rand, prefix string) *watcher {
	req := history.WatchRequest{Key: prefix, End: prefixEnd(prefix),
		PrevKV: i%2 == 0, ProgressNotify: i%3 == 0}
	keyIndex := -1
	switch {
	case i%5 == 4:
		keyIndex = i % w.cfg.Keys
		req.Key, req.End, req.ProgressNotify = w.key(keyIndex), "", true
	case w.cfg.NoEventFilters:
	case i%6 == 1:
		req.NoDelete = true
	case i%6 == 5:
		req.NoPut = true
	}
	start := watchStart(i % 3)
	if w.cfg.Shape == ShapeFutureWatch {
		start = startFuture
	}
	// Options the target refuses are not asked for.
	cfg := w.cfg
	req.PrevKV = req.PrevKV && !cfg.refuses(history.FormWatchPrevKV)
	req.ProgressNotify = req.ProgressNotify && !cfg.refuses(history.FormWatchProgressNotify)
	req.NoPut = req.NoPut && !cfg.refuses(history.FormWatchNoPut)
	req.NoDelete = req.NoDelete && !cfg.refuses(history.FormWatchNoDelete)
	if cfg.refuses(history.FormWatchStartRev) {
		start = startCurrent
	}
	wt := &watcher{w: w, c: c, rng: rng, start: start, req: req, keyIndex: keyIndex,
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

// retarget points a one-key watcher of a segmented run at its key in the
// segment running, once that is not the one its watches watched: a fresh
// watch from the current revision, resuming nothing.
func (wt *watcher) retarget(req *history.WatchRequest, resumes *int64) {
	cur := wt.w.cur.Load()
	if wt.keyIndex < 0 || cur == nil {
		return
	}
	if key := fmt.Sprintf("%sk%03d", *cur, wt.keyIndex); key != req.Key {
		req.Key, req.StartRevision, *resumes = key, 0, 0
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
	head := stats.StoreRevision.Load()
	switch wt.start {
	case startPast:
		req.StartRevision = wt.floor(head - int64(1+wt.rng.IntN(300)))
		if c := stats.CompactRevision.Load(); c > 1 && wt.rng.IntN(2) == 0 {
			// Below the compact revision: the server must refuse with
			// ErrCompacted and say where history begins.
			req.StartRevision = max(1, c-1-int64(wt.rng.IntN(20)))
		}
	case startFuture:
		// 5 to 100 ahead: near enough to be reached within the run,
		// far enough for a member to restore a snapshot meanwhile.
		req.StartRevision = head + int64(5+wt.rng.IntN(96))
	}
	var resumes int64
	// Bounded: each iteration opens one watch; a run opens far fewer.
	for attempt := 0; attempt < watchAttempts(wt.w.total) && watchCtx.Err() == nil; attempt++ {
		wt.retarget(&req, &resumes)
		wt.startRev.Store(req.StartRevision)
		id, next, ok := wt.watchOnce(watchCtx, req, resumes)
		if !ok {
			// Broken stream or server cancel: give the cluster a moment.
			select {
			case <-watchCtx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		req.StartRevision, resumes = next.StartRevision, next.resumes(id)
		if wt.w.cfg.refuses(history.FormWatchStartRev) {
			req.StartRevision, resumes = 0, 0 // afresh: the target cannot resume
		}
	}
}

// nextStart is where the following watch begins and whether it continues
// the previous one (a resume) or starts afresh (after compaction).
type nextStart struct {
	StartRevision int64
	resume        bool
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
func (wt *watcher) watchOnce(watchCtx context.Context, req history.WatchRequest, resumes int64) (int64, nextStart, bool) {
	ctx, cancel := context.WithCancel(watchCtx)
	defer cancel()
	rw := wt.c.Watch(ctx, req, resumes)
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
					return rw.ID, nextStart{StartRevision: wt.floor(compacted)}, true
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
