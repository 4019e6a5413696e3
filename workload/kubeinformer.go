package workload

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets/kube"
)

// informer does what client-go's reflector does: list, then watch from the
// list's RV with bookmarks; when the watch ends, resume from the last RV
// it saw (event or bookmark); on 410 Expired, list again. The mix, by
// index: a third list consistently (RV unset), a third list from the
// cache (RV "0") and select on the group label, a third list in pages and
// close their watch on purpose now and then; every other one asks for
// timeoutSeconds, so the server ends its watches.
type informer struct {
	w        *KubeWorkload
	c        *kube.Recording
	rng      *rand.Rand
	index    int
	listRV   string // "" or "0"
	selector string
	limit    int64
	timeout  time.Duration // timeoutSeconds range's low end; 0: none
	restart  time.Duration // 0: never close on purpose
	state    kubeWatchState
}

func newInformer(w *KubeWorkload, i int, c *kube.Recording, rng *rand.Rand) *informer {
	inf := &informer{w: w, c: c, rng: rng, index: i}
	switch i % 3 {
	case 1:
		inf.listRV, inf.selector = "0", kubeSelector
	case 2:
		inf.limit = 4
		inf.restart = time.Duration(3000+rng.IntN(3000)) * time.Millisecond
	}
	if i%2 == 1 {
		inf.timeout = time.Duration(4+rng.IntN(6)) * time.Second
	}
	if w.cfg.segmented() && inf.restart == 0 && inf.timeout == 0 {
		// A watch of a segmented run ends within a few segments (the one
		// it ends in holds it whole); long enough still for the periodic
		// bookmarks (about every minute) that kube/bookmarks waits 90 s for.
		inf.restart = 4 * w.cfg.Segment
	}
	return inf
}

// run keeps the informer going until watchCtx ends; calls hang off reqCtx
// (the run's), watches off watchCtx (closed after the final phase).
func (inf *informer) run(watchCtx, reqCtx context.Context) {
	w := inf.w
	if !sleepCtx(watchCtx, time.Duration(inf.index)*w.cfg.stagger()/time.Duration(4*max(1, w.cfg.Informers))) {
		return
	}
	w.track(&inf.state)
	defer w.untrack(&inf.state)
	var rv string
	var listOp, resumes int64
	relist, listed := true, false
	// Bounded: each iteration opens at most one watch; a run opens far fewer.
	for attempt := 0; attempt < watchAttempts(w.cfg.Duration) && watchCtx.Err() == nil; attempt++ {
		if relist {
			var ok bool
			if rv, listOp, ok = inf.list(watchCtx); !ok {
				sleepCtx(watchCtx, 200*time.Millisecond)
				continue
			}
			if listed {
				w.Stats.Relists.Add(1)
			}
			relist, listed, resumes = false, true, 0
		}
		next, expired, broke, closed, id := inf.watch(watchCtx, rv, kube.Origin{Resumes: resumes, AfterList: listOp})
		rv, listOp, resumes = next, 0, id
		switch {
		case expired:
			relist = true
		case broke:
			w.Stats.Resumes.Add(1)
			sleepCtx(watchCtx, 200*time.Millisecond)
		case closed:
			// Closed on purpose: stay away a while, as a restarted
			// controller would, so that a compaction may pass the RV it
			// resumes from (then 410 and a relist).
			w.Stats.Resumes.Add(1)
			sleepCtx(watchCtx, jitter(inf.rng, 2*time.Second))
		default:
			w.Stats.Resumes.Add(1)
		}
	}
}

// list reads the collection (in pages when the informer has a limit) and
// returns the list's RV and the first page's operation id.
func (inf *informer) list(ctx context.Context) (string, int64, bool) {
	req := history.KubeRequest{Verb: history.KubeList, ResourceVersion: inf.listRV, LabelSelector: inf.selector, Limit: inf.limit}
	var rv string
	var first int64
	for page := 0; page < 100; page++ {
		resp, err := inf.w.do(ctx, inf.c, req)
		if err != nil {
			return "", 0, false
		}
		if page == 0 {
			rv, first = resp.ListRV, inf.c.LastOp()
		}
		if resp.Continue == "" {
			return rv, first, true
		}
		req = history.KubeRequest{Verb: history.KubeList, LabelSelector: inf.selector, Limit: inf.limit, Continue: resp.Continue}
	}
	return rv, first, true
}

// watch runs one watch from rv until it ends, and says where to go on:
// the last RV seen, whether it ended in 410 (relist), whether it broke,
// whether the informer closed it on purpose.
func (inf *informer) watch(watchCtx context.Context, rv string, from kube.Origin) (next string, expired, broke, closed bool, id int64) {
	ctx, cancel := context.WithCancel(watchCtx)
	defer cancel()
	req := history.KubeWatchRequest{ResourceVersion: rv, AllowBookmarks: true, LabelSelector: inf.selector}
	if inf.timeout > 0 {
		req.TimeoutSeconds = int64((inf.timeout + time.Duration(inf.rng.IntN(3))*time.Second) / time.Second)
	}
	if n, err := strconv.ParseUint(rv, 10, 64); err == nil {
		inf.state.startRV.Store(n)
	}
	rw := inf.c.Watch(ctx, req, from)
	var restart <-chan time.Time
	if inf.restart > 0 {
		t := time.NewTimer(jitter(inf.rng, inf.restart))
		defer t.Stop()
		restart = t.C
	}
	next = rv
	for {
		select {
		case ev, open := <-rw.C:
			if !open {
				end := rw.End()
				if end.Status != nil && end.Status.Code == 410 {
					expired = true
				}
				return next, expired, end.Reason == history.EndError, closed, rw.ID
			}
			inf.w.countEvent(ev)
			inf.state.observe(ev)
			switch {
			case ev.Type == history.KubeError:
				if ev.Status != nil && ev.Status.Code == 410 {
					expired = true
				}
			case ev.Object != nil && ev.Object.ResourceVersion != "":
				next = ev.Object.ResourceVersion
			}
		case <-restart:
			restart, closed = nil, true
			cancel()
		}
	}
}

// streamer opens, one after another, streaming lists (sendInitialEvents
// with resourceVersionMatch=NotOlderThan, from RV unset or the last RV it
// saw), plain watches from RV unset and from "0"; each runs a few seconds
// (long enough to carry changes after its initial state), then vigil
// closes it. Odd streamers select on the group label.
type streamer struct {
	w        *KubeWorkload
	c        *kube.Recording
	rng      *rand.Rand
	index    int
	selector string
	state    kubeWatchState
}

func newStreamer(w *KubeWorkload, i int, c *kube.Recording, rng *rand.Rand) *streamer {
	st := &streamer{w: w, c: c, rng: rng, index: i}
	if i%2 == 1 {
		st.selector = kubeSelector
	}
	return st
}

func (st *streamer) run(watchCtx context.Context) {
	w := st.w
	if !sleepCtx(watchCtx, time.Duration(st.index)*w.cfg.stagger()/time.Duration(5*max(1, w.cfg.Streamers))+500*time.Millisecond) {
		return
	}
	w.track(&st.state)
	defer w.untrack(&st.state)
	yes := true
	lastRV := ""
	for attempt := 0; attempt < watchAttempts(w.cfg.Duration) && watchCtx.Err() == nil; attempt++ {
		req := history.KubeWatchRequest{AllowBookmarks: true, LabelSelector: st.selector}
		switch (attempt + st.index) % 4 {
		case 0, 1:
			req.SendInitialEvents, req.ResourceVersionMatch = &yes, "NotOlderThan"
			if attempt%2 == 1 && lastRV != "" {
				req.ResourceVersion = lastRV
			}
		case 2:
			// RV unset: a plain watch that starts with the current state.
		case 3:
			req.ResourceVersion = "0"
		}
		st.state.startRV.Store(0)
		ctx, cancel := context.WithTimeout(watchCtx, time.Duration(3000+st.rng.IntN(5000))*time.Millisecond)
		rw := st.c.Watch(ctx, req, kube.Origin{})
		for ev := range rw.C {
			w.countEvent(ev)
			st.state.observe(ev)
			if ev.Object != nil && ev.Object.ResourceVersion != "" {
				lastRV = ev.Object.ResourceVersion
			}
			if ev.Type == history.KubeError {
				lastRV = "" // expired: start again from the current state
			}
		}
		cancel()
		if end := rw.End(); end.Reason == history.EndError {
			if end.Status != nil && end.Status.Code == 410 {
				lastRV = ""
			}
			sleepCtx(watchCtx, 500*time.Millisecond)
		}
	}
}
