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
	if err == nil && s.mode.Name == "stale-list" {
		c.learnKube(req, resp)
	}
	return resp, err
}

func objectRV(o *history.Object) string {
	if o == nil {
		return ""
	}
	return o.ResourceVersion
}

// learnKube remembers, for stale-list, the consistent full lists and when
// the last write was acknowledged.
func (c *kubeClient) learnKube(req history.KubeRequest, resp *history.KubeResponse) {
	s := c.s
	now := s.rec.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case req.Verb.IsWrite():
		s.kubeWriteAt = now
	case consistentFullList(req) && req.LabelSelector == "":
		// Keep a list already overtaken by a write: it is what is served.
		if s.kubeList == nil || s.kubeWriteAt <= s.kubeListAt {
			cp := *resp
			cp.Items = append([]history.Object(nil), resp.Items...)
			s.kubeList, s.kubeListAt = &cp, now
		}
	}
}

// staleList answers a consistent list with an earlier list's answer, if a
// write was acknowledged after that answer and well before this call.
func (c *kubeClient) staleList(req history.KubeRequest) (*history.KubeResponse, bool) {
	s := c.s
	start := s.rec.Now()
	if req.LabelSelector != "" {
		return nil, false
	}
	s.mu.Lock()
	old, at, wrote := s.kubeList, s.kubeListAt, s.kubeWriteAt
	s.mu.Unlock()
	if old == nil || wrote <= at || start-wrote < staleMargin || !s.claim(0) {
		return nil, false
	}
	s.commitFor(c.id, c.inner.Server(), start, map[string]string{
		"what": fmt.Sprintf("answered a consistent list with the list of %.2fs (resourceVersion %s, %d items), "+
			"though a write was acknowledged at %.2fs", at.Seconds(), old.ListRV, len(old.Items), wrote.Seconds()),
		"revision": old.ListRV})
	cp := *old
	cp.Items = append([]history.Object(nil), old.Items...)
	return &cp, true
}

// Watch opens the inner watch and puts a goroutine between its channel and
// the one returned, where the stream sabotages happen.
func (c *kubeClient) Watch(ctx context.Context, req history.KubeWatchRequest) <-chan kube.WatchMessage {
	out := make(chan kube.WatchMessage, 16)
	st := &kubeStream{c: c, ctx: ctx, req: req, out: out}
	go st.run(c.inner.Watch(ctx, req))
	return out
}

type kubeStream struct {
	c        *kubeClient
	ctx      context.Context
	req      history.KubeWatchRequest
	out      chan kube.WatchMessage
	dropping bool // the caller closed the watch: deliver nothing more

	changes int    // ADDED/MODIFIED/DELETED events seen
	lastRV  uint64 // RV of the last change delivered
	held    *kube.WatchMessage
	heldAt  time.Duration
}

func (st *kubeStream) run(in <-chan kube.WatchMessage) {
	defer close(st.out)
	for m := range in {
		st.handle(m)
	}
	if st.held != nil { // the stream ended: nothing came after it, deliver it
		st.c.s.release()
		st.send(*st.held)
	}
}

// send delivers m unless the caller has closed the watch; once it has,
// nothing more goes out (what the caller took is a prefix of the stream).
func (st *kubeStream) send(m kube.WatchMessage) {
	if st.dropping = st.dropping || st.ctx.Err() != nil; st.dropping {
		return
	}
	select {
	case st.out <- m:
	case <-st.ctx.Done():
		st.dropping = true
	}
}

func isChange(ev *history.KubeEvent) bool {
	return ev != nil && ev.Object != nil &&
		(ev.Type == history.KubeAdded || ev.Type == history.KubeModified || ev.Type == history.KubeDeleted)
}

func (st *kubeStream) handle(m kube.WatchMessage) {
	s := st.c.s
	ev := m.Event
	if st.held != nil && isChange(ev) {
		// drop-event: a later change arrived, so the held one is a gap
		// in the middle of the stream. Drop it for good.
		h := st.held.Event
		st.held = nil
		s.commitFor(st.c.id, st.c.inner.Server(), st.heldAt, map[string]string{
			"what": fmt.Sprintf("dropped the %s of %s at resourceVersion %s from watch of client %d",
				h.Type, h.Object.Name, h.Object.ResourceVersion, st.c.id),
			"key": h.Object.Name, "revision": h.Object.ResourceVersion})
	}
	initial := st.req.SendInitialEvents != nil && *st.req.SendInitialEvents
	switch s.mode.Name {
	case "kube-drop-event":
		if isChange(ev) && !initial && st.changes >= 2 && st.held == nil && s.claim(0) {
			st.changes++
			st.held, st.heldAt = &m, s.rec.Now()
			return
		}
	case "missing-initial-events-end":
		if ev != nil && ev.Type == history.KubeBookmark && ev.Object != nil && initial &&
			ev.Object.Annotations[history.AnnotationInitialEventsEnd] == "true" && s.claim(0) {
			s.commitFor(st.c.id, st.c.inner.Server(), s.rec.Now(), map[string]string{
				"what": fmt.Sprintf("dropped the initial-events-end BOOKMARK at resourceVersion %s of a streaming list of client %d",
					ev.Object.ResourceVersion, st.c.id),
				"revision": ev.Object.ResourceVersion})
			return
		}
	case "rv-regression":
		if isChange(ev) && st.lastRV > 1 && s.claim(0) {
			cp := *ev
			obj := *ev.Object
			orig := obj.ResourceVersion
			obj.ResourceVersion = strconv.FormatUint(st.lastRV-1, 10)
			cp.Object = &obj
			m.Event = &cp
			s.commitFor(st.c.id, st.c.inner.Server(), s.rec.Now(), map[string]string{
				"what": fmt.Sprintf("delivered the %s of %s with resourceVersion %s instead of %s, below the %d delivered before it",
					ev.Type, obj.Name, obj.ResourceVersion, orig, st.lastRV),
				"key": obj.Name, "revision": obj.ResourceVersion})
		}
	}
	if isChange(m.Event) {
		st.changes++
		if rv, err := strconv.ParseUint(m.Event.Object.ResourceVersion, 10, 64); err == nil {
			st.lastRV = rv
		}
	}
	st.send(m)
}
