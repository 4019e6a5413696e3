package workload

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets/kube"
)

// kubeReader reads the collection every way the API allows: gets and lists
// at every resourceVersion form, paginated lists (one reader also lets its
// continue token expire), reads from the future, watches from compacted
// RVs, and the invalid requests the server must refuse.
type kubeReader struct {
	w         *KubeWorkload
	c         *kube.Recording
	rng       *rand.Rand
	index     int
	canExpire bool // may ask the compactor to expire its continue token
	rvs       []string
	// lastFuture, lastOld and lastExpire space out the slow probes (a
	// future read waits up to 3 s, an old watch may stream for 2 s).
	lastFuture, lastOld, lastExpire time.Time
}

func (rd *kubeReader) run(runCtx, reqCtx context.Context) {
	cfg := rd.w.cfg
	interval := time.Duration(float64(time.Second) * float64(cfg.Writers+cfg.Readers) / cfg.Rate)
	// The invalid requests go early and again past the middle, so a fault
	// in between gets a second look.
	probeAt := []time.Time{time.Now().Add(cfg.Duration / 10), time.Now().Add(cfg.Duration * 6 / 10)}
	next := time.Now()
	for pace(runCtx, &next, interval) {
		if len(probeAt) > 0 && time.Now().After(probeAt[0]) {
			probeAt = probeAt[1:]
			rd.probes(reqCtx)
			continue
		}
		rd.step(reqCtx)
	}
}

// note remembers an RV the reader saw, for later reads at past RVs.
func (rd *kubeReader) note(rv string) {
	if rv == "" {
		return
	}
	if len(rd.rvs) >= 64 {
		// Keep the oldest (for reads far back) and the recent ones.
		copy(rd.rvs[1:], rd.rvs[2:])
		rd.rvs = rd.rvs[:len(rd.rvs)-1]
	}
	rd.rvs = append(rd.rvs, rv)
}

// head is the highest RV any client saw, as a string ("" before any).
func (rd *kubeReader) head() string {
	if h := rd.w.Stats.HeadRV.Load(); h > 0 {
		return strconv.FormatUint(h, 10)
	}
	return ""
}

// pastRV is an RV some way back: one this reader saw, or just below the
// last compaction (so the answer must be 410).
func (rd *kubeReader) pastRV() string {
	if c := rd.w.Stats.CompactRV.Load(); c > 1 && rd.rng.IntN(3) == 0 {
		return strconv.FormatInt(max(1, c-1-int64(rd.rng.IntN(20))), 10)
	}
	if len(rd.rvs) > 0 {
		return rd.rvs[rd.rng.IntN(len(rd.rvs))]
	}
	return rd.head()
}

func (rd *kubeReader) do(ctx context.Context, req history.KubeRequest) (*history.KubeResponse, error) {
	resp, err := rd.w.do(ctx, rd.c, req)
	if err == nil {
		rd.note(resp.ListRV)
		if resp.Object != nil {
			rd.note(resp.Object.ResourceVersion)
		}
	}
	return resp, err
}

func (rd *kubeReader) step(ctx context.Context) {
	name := rd.w.objectName(rd.rng.IntN(rd.w.cfg.Objects))
	switch p := rd.rng.IntN(100); {
	case p < 20:
		rv := []string{"", "0", rd.head(), rd.pastRV()}[rd.rng.IntN(4)]
		rd.do(ctx, history.KubeRequest{Verb: history.KubeGet, Name: name, ResourceVersion: rv})
	case p < 50:
		rd.list(ctx)
	case p < 58:
		rd.do(ctx, history.KubeRequest{Verb: history.KubeList, LabelSelector: kubeSelector})
	case p < 72:
		expire := rd.canExpire && time.Since(rd.lastExpire) > 4*time.Second && rd.rng.IntN(3) == 0
		rd.paginate(ctx, expire)
	case p < 76 && time.Since(rd.lastFuture) > 5*time.Second:
		rd.lastFuture = time.Now()
		rd.future(ctx, name)
	case p < 80 && time.Since(rd.lastOld) > 3*time.Second:
		rd.lastOld = time.Now()
		rd.oldWatch(ctx)
	default:
		rd.do(ctx, history.KubeRequest{Verb: history.KubeList})
	}
}

// list reads the whole collection at one of the four RV forms: unset
// (consistent), "0" (any), NotOlderThan N, Exact N.
func (rd *kubeReader) list(ctx context.Context) {
	req := history.KubeRequest{Verb: history.KubeList}
	switch rd.rng.IntN(5) {
	case 1:
		req.ResourceVersion = "0"
	case 2:
		req.ResourceVersion, req.ResourceVersionMatch = rd.head(), "NotOlderThan"
	case 3:
		req.ResourceVersion, req.ResourceVersionMatch = rd.pastRV(), "NotOlderThan"
	case 4:
		rv := rd.head()
		if rd.rng.IntN(2) == 0 {
			rv = rd.pastRV()
		}
		req.ResourceVersion, req.ResourceVersionMatch = rv, "Exact"
	}
	if req.ResourceVersion == "" {
		req.ResourceVersionMatch = ""
	}
	rd.do(ctx, req)
}

// paginate lists the collection in small pages. With expire, it has the
// compactor compact past the first page's RV before asking for the second:
// the server must answer 410 with a fresh, inconsistent token (or serve
// the page from a snapshot it still has), and vigil follows that token to
// the end.
func (rd *kubeReader) paginate(ctx context.Context, expire bool) {
	limit := int64(2 + rd.rng.IntN(3))
	req := history.KubeRequest{Verb: history.KubeList, Limit: limit}
	if rd.rng.IntN(4) == 0 {
		req.ResourceVersion, req.ResourceVersionMatch = rd.head(), "NotOlderThan"
		if req.ResourceVersion == "" {
			req.ResourceVersionMatch = ""
		}
	}
	for page := 0; page < 100; page++ {
		resp, err := rd.do(ctx, req)
		if err != nil {
			st := kube.StatusOf(err)
			if st == nil || st.Code != 410 || st.Continue == "" {
				return
			}
			req = history.KubeRequest{Verb: history.KubeList, Limit: limit, Continue: st.Continue}
			continue
		}
		if resp.Continue == "" {
			return
		}
		if page == 0 && expire {
			rd.lastExpire = time.Now()
			rd.w.compactHead(ctx)
		}
		req = history.KubeRequest{Verb: history.KubeList, Limit: limit, Continue: resp.Continue}
	}
}

// future reads at an RV far above the head: the server must wait for it
// or answer 504 (ResourceVersionTooLarge), never return data.
func (rd *kubeReader) future(ctx context.Context, name string) {
	h, _ := strconv.ParseUint(rd.head(), 10, 64)
	rv := strconv.FormatUint(h+1000000, 10)
	if rd.rng.IntN(2) == 0 {
		rd.do(ctx, history.KubeRequest{Verb: history.KubeGet, Name: name, ResourceVersion: rv})
	} else {
		rd.do(ctx, history.KubeRequest{Verb: history.KubeList, ResourceVersion: rv, ResourceVersionMatch: "NotOlderThan"})
	}
}

// oldWatch watches from an RV below the last compaction (or the oldest
// this reader saw): the server must answer with an ERROR event, 410
// Expired, and end the stream, unless it still has that history.
func (rd *kubeReader) oldWatch(ctx context.Context) {
	// "1" is older than any watch cache (it starts at the API server's
	// start) and than any compaction; below the last forced compaction is
	// expired in etcd but may still be in a watch cache's window.
	rv := "1"
	switch c := rd.w.Stats.CompactRV.Load(); {
	case rd.rng.IntN(3) == 0:
	case c > 1:
		rv = strconv.FormatInt(max(1, c-1-int64(rd.rng.IntN(20))), 10)
	case len(rd.rvs) > 0:
		rv = rd.rvs[0]
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	rw := rd.c.Watch(wctx, history.KubeWatchRequest{ResourceVersion: rv}, kube.Origin{})
	// Read on after an ERROR: the server must end the stream, and
	// kube/watch-expired checks that nothing follows.
	for ev := range rw.C {
		rd.w.countEvent(ev)
	}
	if st := rw.End().Status; st != nil && st.Code == 410 {
		rd.w.Stats.Expired.Add(1)
	}
}

// probes sends the requests the server must refuse (kube/watchlist-validation):
// sendInitialEvents without resourceVersionMatch=NotOlderThan,
// resourceVersionMatch on a plain watch, continue on a streaming list, and
// a list with both RV and continue.
func (rd *kubeReader) probes(ctx context.Context) {
	yes := true
	token := ""
	if resp, err := rd.do(ctx, history.KubeRequest{Verb: history.KubeList, Limit: 1}); err == nil {
		token = resp.Continue
	}
	reqs := []history.KubeWatchRequest{
		{SendInitialEvents: &yes, AllowBookmarks: true},
		{ResourceVersion: rd.head(), ResourceVersionMatch: "NotOlderThan"},
	}
	if token != "" {
		reqs = append(reqs, history.KubeWatchRequest{SendInitialEvents: &yes, ResourceVersionMatch: "NotOlderThan",
			AllowBookmarks: true, Continue: token})
	}
	for _, req := range reqs {
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		rw := rd.c.Watch(wctx, req, kube.Origin{})
		for ev := range rw.C {
			rd.w.countEvent(ev)
		}
		cancel()
	}
	if token != "" {
		rd.do(ctx, history.KubeRequest{Verb: history.KubeList, ResourceVersion: rd.head(), Continue: token, Limit: 1})
	}
}

// countEvent adds a watch event to the live counters.
func (w *KubeWorkload) countEvent(ev history.KubeEvent) {
	w.Stats.Events.Add(1)
	switch ev.Type {
	case history.KubeBookmark:
		w.Stats.Bookmarks.Add(1)
	case history.KubeError:
		if ev.Status != nil && ev.Status.Code == 410 {
			w.Stats.Expired.Add(1)
		}
	}
	if ev.Object != nil {
		w.Stats.sawRV(ev.Object.ResourceVersion)
	}
}
