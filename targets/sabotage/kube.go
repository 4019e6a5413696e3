package sabotage

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets/kube"
)

// The Kubernetes modes wrap a kube.API the way the etcd modes wrap a
// targets.Client: one injection per run, at a seeded moment, recorded as a
// "sabotage:<mode>" fault.

// WrapKube wraps Kubernetes client number id of the run.
func (s *Saboteur) WrapKube(c kube.API, id int) kube.API {
	return &kubeClient{inner: c, id: id, s: s}
}

type kubeClient struct {
	inner kube.API
	id    int
	s     *Saboteur
}

func (c *kubeClient) Server() string { return c.inner.Server() }
func (c *kubeClient) Close() error   { return c.inner.Close() }

// consistentFullList is a list at the latest state, whole: what
// kube/consistent-read judges and stale-list serves old.
func consistentFullList(req history.KubeRequest) bool {
	return req.Verb == history.KubeList && req.ResourceVersion == "" && req.Continue == "" && req.Limit == 0
}

// Do runs one call, sabotaged if the mode and the moment say so.
func (c *kubeClient) Do(ctx context.Context, req history.KubeRequest) (*history.KubeResponse, error) {
	s := c.s
	if s.mode.Name == "stale-list" && consistentFullList(req) {
		if resp, ok := c.staleList(req); ok {
			return resp, nil
		}
	}
	start := s.rec.Now()
	resp, err := c.inner.Do(ctx, req)
	if s.mode.Name == "conflict-not-detected" && req.Verb == history.KubeUpdate && req.Object != nil &&
		req.Object.ResourceVersion != "" {
		if st := kube.StatusOf(err); st != nil && st.Code == 409 && s.claim(0) {
			// A server that skipped the precondition: the same update,
			// sent again without it, applies for real.
			blind := req
			obj := *req.Object
			obj.ResourceVersion = ""
			blind.Object = &obj
			r2, err2 := c.inner.Do(ctx, blind)
			if err2 != nil {
				s.release()
				return resp, err
			}
			s.commitFor(c.id, c.inner.Server(), start, map[string]string{
				"what": fmt.Sprintf("accepted the update of %s with stale resourceVersion %s (the server said 409); it applied at %s",
					req.Object.Name, req.Object.ResourceVersion, objectRV(r2.Object)),
				"key": req.Object.Name, "revision": objectRV(r2.Object)})
			return r2, nil
		}
	}
	if s.mode.Name == "dry-run-applied" && err == nil && req.DryRun && req.Object != nil &&
		(req.Verb == history.KubeCreate || req.Verb == history.KubeUpdate || req.Verb == history.KubePatch) && s.claim(0) {
		// A server that ignored dryRun: the write is made for real, and
		// the client is answered as the dry run was.
		real := req
		real.DryRun = false
		r2, err2 := c.inner.Do(ctx, real)
		if err2 != nil {
			s.release()
			return resp, err
		}
		s.commitFor(c.id, c.inner.Server(), start, map[string]string{
			"what": fmt.Sprintf("applied the dry-run %s of %s for real, at resourceVersion %s", req.Verb, objectName(r2.Object),
				objectRV(r2.Object)),
			"key": objectName(r2.Object), "revision": objectRV(r2.Object)})
		return resp, nil
	}
	if err == nil && s.mode.Name == "stale-list" {
		c.learnKube(req, resp)
	}
	return resp, err
}

func objectName(o *history.Object) string {
	if o == nil {
		return ""
	}
	return o.Name
}

func objectRV(o *history.Object) string {
	if o == nil {
		return ""
	}
	return o.ResourceVersion
}

// staleListMemory is what stale-list knows: the last consistent full
// list answered, when, and the first acknowledged write that overtook it.
type staleListMemory struct {
	list   *history.KubeResponse
	listAt time.Duration
	listRV uint64
	// overtakenAt is when a create or update answered with an RV above
	// the list's was acknowledged (0: not yet); overtaker says which.
	overtakenAt time.Duration
	overtaker   string
}

// learnKube remembers, for stale-list, the latest consistent full list and
// the first write acknowledged after it at a higher RV. The list served is
// then only a little stale (missing the writes of the last fraction of a
// second), and the history proves it stale: that write's RV is above the
// list's, and it returned before the list was called.
func (c *kubeClient) learnKube(req history.KubeRequest, resp *history.KubeResponse) {
	s := c.s
	now := s.rec.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	mem := &s.kube
	switch {
	case req.Verb == history.KubeCreate || req.Verb == history.KubeUpdate:
		rv, err := strconv.ParseUint(objectRV(resp.Object), 10, 64)
		if mem.list != nil && mem.overtakenAt == 0 && err == nil && rv > mem.listRV {
			mem.overtakenAt = now
			mem.overtaker = fmt.Sprintf("the %s of %s at resourceVersion %d", req.Verb, resp.Object.Name, rv)
		}
	case consistentFullList(req) && req.LabelSelector == "":
		rv, err := strconv.ParseUint(resp.ListRV, 10, 64)
		if err != nil {
			return
		}
		cp := *resp
		cp.Items = append([]history.Object(nil), resp.Items...)
		*mem = staleListMemory{list: &cp, listAt: now, listRV: rv}
	}
}

// staleList answers a consistent list with the last one's answer, if a
// write with a higher RV was acknowledged after that answer and well
// before this call.
func (c *kubeClient) staleList(req history.KubeRequest) (*history.KubeResponse, bool) {
	s := c.s
	start := s.rec.Now()
	if req.LabelSelector != "" {
		return nil, false
	}
	s.mu.Lock()
	mem := s.kube
	s.mu.Unlock()
	if mem.list == nil || mem.overtakenAt == 0 || start-mem.overtakenAt < staleMargin || !s.claim(0) {
		return nil, false
	}
	old := mem.list
	s.commitFor(c.id, c.inner.Server(), start, map[string]string{
		"what": fmt.Sprintf("answered a consistent list with the list of %.2fs (resourceVersion %s, %d items), "+
			"though %s was acknowledged since, at %.2fs", mem.listAt.Seconds(), old.ListRV, len(old.Items),
			mem.overtaker, mem.overtakenAt.Seconds()),
		"revision": old.ListRV})
	cp := *old
	cp.Items = append([]history.Object(nil), old.Items...)
	return &cp, true
}

// Watch opens the inner watch and puts a goroutine between its channel and
// the one returned, where the stream sabotages happen.
func (c *kubeClient) Watch(ctx context.Context, req history.KubeWatchRequest) <-chan kube.WatchMessage {
	out := make(chan kube.WatchMessage, 16)
	st := &kubeStream{c: c, ctx: ctx, req: req, out: out, opened: c.s.rec.Now()}
	switch {
	case req.SendInitialEvents != nil && *req.SendInitialEvents:
		st.initial = initialEnd // a streaming list: a state, then its end bookmark
	case req.SendInitialEvents == nil && (req.ResourceVersion == "" || req.ResourceVersion == "0"):
		st.initial = initialState // a state of ADDED events, no marker at its end
	}
	go st.run(c.inner.Watch(ctx, req))
	return out
}

// How a watch's stream begins: with changes at once, or with an initial
// state whose events come in key order, not in RV order. The stream
// sabotages act on changes after the initial state only: that is where
// the guarantees they break (every change, in RV order) hold.
type initialKind int8

const (
	initialNone  initialKind = iota // from an explicit RV: changes only
	initialEnd                      // streaming list: until the initial-events-end BOOKMARK
	initialState                    // RV unset or "0": until the first event other than ADDED
)

type kubeStream struct {
	c        *kubeClient
	ctx      context.Context
	req      history.KubeWatchRequest
	out      chan kube.WatchMessage
	dropping bool // the caller closed the watch: deliver nothing more

	initial initialKind
	live    bool   // the initial state (if any) is over: events are changes
	changes int    // changes delivered after the initial state
	lastRV  uint64 // RV of the last of them
	held    *kube.WatchMessage
	heldAt  time.Duration
	// kube-quiet-end: when the watch was opened, and whether the caller's
	// stream was closed cleanly before its timeout.
	opened time.Duration
	quiet  bool
}

// quietEndMargin is how long before a watch's timeoutSeconds at least
// kube-quiet-end closes it: far outside facts.TimeoutTolerance.
const quietEndMargin = time.Second

func (st *kubeStream) run(in <-chan kube.WatchMessage) {
	defer func() {
		if !st.quiet {
			close(st.out)
		}
	}()
	st.live = st.initial == initialNone
	for m := range in {
		st.handle(m)
		if st.quiet {
			// kube-quiet-end closed the caller's stream: drain the inner one
			// until the caller's cancel ends it.
			for range in {
			}
			return
		}
	}
	if h := st.held; h != nil { // the stream ended: nothing came after it, deliver it
		st.held = nil
		st.c.s.release()
		st.send(*h)
	}
}

// send delivers m unless the caller has closed the watch, and says whether
// it did; once the caller has closed it, nothing more goes out (what the
// caller took is a prefix of the stream).
func (st *kubeStream) send(m kube.WatchMessage) bool {
	if st.dropping = st.dropping || st.ctx.Err() != nil; st.dropping {
		return false
	}
	select {
	case st.out <- m:
		return true
	case <-st.ctx.Done():
		st.dropping = true
		return false
	}
}

func isChange(ev *history.KubeEvent) bool {
	return ev != nil && ev.Object != nil &&
		(ev.Type == history.KubeAdded || ev.Type == history.KubeModified || ev.Type == history.KubeDeleted)
}

func (st *kubeStream) handle(m kube.WatchMessage) {
	s := st.c.s
	ev := m.Event
	if !st.live {
		switch {
		case st.initial == initialEnd && ev != nil && ev.Type == history.KubeBookmark && ev.Object != nil &&
			ev.Object.Annotations[history.AnnotationInitialEventsEnd] == "true":
			st.live = true
		case st.initial == initialState && isChange(ev) && ev.Type != history.KubeAdded:
			st.live = true
		}
	}
	if h := st.held; h != nil && !isChange(ev) {
		// A bookmark, an ERROR or the end of the stream before the next
		// change: delivering it first would break another guarantee
		// (bookmark or ERROR order) besides the one intended. Let the held
		// change through and wait for another chance.
		st.held = nil
		s.release()
		st.send(*h)
	}
	// fault is recorded once m, as sabotaged, has been delivered; if it
	// was not (the caller closed the watch), the injection is given back.
	var fault map[string]string
	var faultAt time.Duration
	switch s.mode.Name {
	case "kube-drop-event":
		if st.held != nil && isChange(ev) {
			// A later change arrived, so the held one is a gap in the
			// middle of the stream once this one is delivered.
			h := st.held.Event
			st.held = nil
			fault, faultAt = map[string]string{
				"what": fmt.Sprintf("dropped the %s of %s at resourceVersion %s from watch of client %d",
					h.Type, h.Object.Name, h.Object.ResourceVersion, st.c.id),
				"key": h.Object.Name, "revision": h.Object.ResourceVersion}, st.heldAt
		} else if st.live && isChange(ev) && st.changes >= 2 && st.held == nil && s.claim(0) {
			// Never the first two changes, nor the last: it is held until
			// the next change comes, and delivered if none does.
			st.changes++
			st.held, st.heldAt = &m, s.rec.Now()
			return
		}
	case "missing-initial-events-end":
		if ev != nil && ev.Type == history.KubeBookmark && ev.Object != nil && st.initial == initialEnd &&
			ev.Object.Annotations[history.AnnotationInitialEventsEnd] == "true" && s.claim(0) {
			s.commitFor(st.c.id, st.c.inner.Server(), s.rec.Now(), map[string]string{
				"what": fmt.Sprintf("dropped the initial-events-end BOOKMARK at resourceVersion %s of a streaming list of client %d",
					ev.Object.ResourceVersion, st.c.id),
				"revision": ev.Object.ResourceVersion})
			return
		}
	case "rv-regression":
		// After one change past the initial state, so the event it follows
		// is a change too.
		if st.live && isChange(ev) && st.changes >= 1 && st.lastRV > 1 && s.claim(0) {
			cp := *ev
			obj := *ev.Object
			orig := obj.ResourceVersion
			obj.ResourceVersion = strconv.FormatUint(st.lastRV-1, 10)
			cp.Object = &obj
			m.Event = &cp
			fault, faultAt = map[string]string{
				"what": fmt.Sprintf("delivered the %s of %s with resourceVersion %s instead of %s, below the %d delivered before it",
					ev.Type, obj.Name, obj.ResourceVersion, orig, st.lastRV),
				"key": obj.Name, "revision": obj.ResourceVersion}, s.rec.Now()
		}
	}
	quiet := false
	if s.mode.Name == "kube-quiet-end" {
		T := time.Duration(st.req.TimeoutSeconds) * time.Second
		// After a change past the initial state, so the watch has
		// vouched for something, and well before its timeout.
		if T > 0 && st.live && isChange(ev) && st.changes >= 1 && s.rec.Now()-st.opened < T-quietEndMargin && s.claim(0) {
			quiet = true
			fault, faultAt = map[string]string{
				"what": fmt.Sprintf("closed the watch of client %d cleanly after the %s of %s at resourceVersion %s, "+
					"%.1fs after it was opened with timeoutSeconds=%d, with no ERROR event", st.c.id, ev.Type,
					ev.Object.Name, ev.Object.ResourceVersion, (s.rec.Now() - st.opened).Seconds(), st.req.TimeoutSeconds),
				"revision": ev.Object.ResourceVersion}, s.rec.Now()
		}
	}
	if st.live && isChange(m.Event) {
		st.changes++
		if rv, err := strconv.ParseUint(m.Event.Object.ResourceVersion, 10, 64); err == nil {
			st.lastRV = rv
		}
	}
	switch delivered := st.send(m); {
	case fault != nil && delivered:
		s.commitFor(st.c.id, st.c.inner.Server(), faultAt, fault)
		if quiet {
			st.quiet = true
			close(st.out)
		}
	case fault != nil:
		s.release()
	}
}
