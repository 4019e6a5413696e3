package sabotage

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// client is one wrapped client. Do is used by one goroutine at a time
// (targets.Client's contract); watches run beside it.
type client struct {
	inner targets.Client
	id    int
	s     *Saboteur

	// The last header this client saw, for a plausible fabricated answer.
	lastRev  atomic.Int64
	lastMID  atomic.Uint64
	lastTerm atomic.Uint64
}

func (c *client) Member() string { return c.inner.Member() }
func (c *client) Close() error   { return c.inner.Close() }

// RequestProgress sends the request on, unless the mode is ignore-progress:
// then, once armed, every request is dropped, as by a server that ignores
// them (the recorder above still records it as sent).
func (c *client) RequestProgress(ctx context.Context) error {
	if c.s.mode.Name == "ignore-progress" && c.s.ignoreProgress(c) {
		return nil
	}
	return c.inner.RequestProgress(ctx)
}

func (c *client) Lease(ctx context.Context, req targets.LeaseRequest) (targets.LeaseAnswer, error) {
	return c.inner.Lease(ctx, req)
}

// Do runs one request, sabotaged if the mode and the moment say so.
func (c *client) Do(ctx context.Context, req history.Request) (*history.Response, error) {
	switch c.s.mode.Name {
	case "lost-write":
		if req.Kind == history.OpPut && !req.PrevKV {
			if resp := c.loseWrite(req); resp != nil {
				return resp, nil
			}
		}
	case "contended-lost-write":
		if req.Kind == history.OpPut && !req.PrevKV {
			if c.s.contended(c.id, req.Key) {
				if resp := c.loseWrite(req); resp != nil {
					return resp, nil
				}
			}
			defer c.s.writing(c.id, req.Key)()
		}
	case "stale-member-read":
		if local, ok := localRead(req); ok && c.s.lasting(c, localReadWhat) {
			req = local
		}
	case "diverge-member":
		if req.Kind == history.OpPut {
			if resp, err, ok := c.divergePut(ctx, req); ok {
				return resp, err
			}
		}
		if divergeEligible(req) {
			return c.divergeRead(ctx, req)
		}
	case "stale-read":
		if linearizableGet(req) {
			if resp, err, ok := c.staleRead(ctx, req); ok {
				return resp, err
			}
		}
	}
	resp, err := c.inner.Do(ctx, req)
	if err != nil {
		return resp, err
	}
	c.learn(req, resp)
	if c.s.mode.Name == "ghost-value" && linearizableGet(req) {
		resp = c.ghost(req, resp)
	}
	return resp, nil
}

// linearizableGet: a single-key read at the current revision, not serializable.
func linearizableGet(req history.Request) bool {
	return req.Kind == history.OpRange && req.End == "" && req.Revision == 0 && !req.Serializable
}

// learn notes the header (for lost-write) and, for stale-read, the reads
// that found their key and the acknowledged writes of every key.
func (c *client) learn(req history.Request, resp *history.Response) {
	if resp == nil {
		return
	}
	if resp.Revision > c.lastRev.Load() {
		c.lastRev.Store(resp.Revision)
		c.lastMID.Store(resp.MemberID)
		c.lastTerm.Store(resp.RaftTerm)
	}
	if c.s.mode.Name != "stale-read" {
		return
	}
	s := c.s
	now := s.rec.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	wrote := func(key string) {
		if w, ok := s.writes[key]; !ok || resp.Revision >= w.rev {
			s.writes[key] = ackedWrite{rev: resp.Revision, at: now}
		}
	}
	switch req.Kind {
	case history.OpRange:
		if linearizableGet(req) && len(resp.KVs) == 1 {
			// Keep a read already overwritten: it is what stale-read serves.
			r, ok := s.reads[req.Key]
			overwritten := ok && s.writes[req.Key].rev > r.resp.Revision
			if !ok || (!overwritten && resp.Revision >= r.resp.Revision) {
				s.reads[req.Key] = rememberedRead{resp: cloneResponse(resp), at: now}
			}
		}
	case history.OpPut:
		wrote(req.Key)
	case history.OpDelete:
		for _, kv := range deletedKeys(req, resp) {
			wrote(kv)
		}
	case history.OpTxn:
		history.Executed(&req, resp, func(b *history.Request, in *history.Response) {
			switch b.Kind {
			case history.OpPut:
				wrote(b.Key)
			case history.OpDelete:
				for _, k := range deletedKeys(*b, in) {
					wrote(k)
				}
			}
		})
	}
}

// deletedKeys lists the keys a delete removed, where the answer tells.
func deletedKeys(req history.Request, resp *history.Response) []string {
	if resp.Deleted == 0 {
		return nil
	}
	if req.End == "" {
		return []string{req.Key}
	}
	var out []string
	for _, kv := range resp.PrevKVs {
		out = append(out, kv.Key)
	}
	return out
}

// staleRead answers a linearizable get with the response of an earlier get
// of the same key, if a write to that key was acknowledged after that
// response and well before this call. ok says whether it took the call.
func (c *client) staleRead(ctx context.Context, req history.Request) (*history.Response, error, bool) {
	s := c.s
	start := s.rec.Now()
	s.mu.Lock()
	r, rok := s.reads[req.Key]
	w, wok := s.writes[req.Key]
	s.mu.Unlock()
	if !rok || !wok || w.rev <= r.resp.Revision || w.at+staleMargin > start || !s.claim(0) {
		return nil, nil, false
	}
	// Ask anyway, so the call takes as long as a real one.
	fresh, err := c.inner.Do(ctx, req)
	if err != nil {
		s.release()
		return nil, err, true
	}
	c.learn(req, fresh)
	stale := cloneResponse(&r.resp)
	kv := stale.KVs[0]
	s.commit(c, start, map[string]string{
		"key": req.Key, "revision": fmt.Sprint(stale.Revision), "value": kv.Value,
		"overwritten_at": fmt.Sprint(w.rev), "real_revision": fmt.Sprint(fresh.Revision),
		"what": fmt.Sprintf("answered a linearizable get of %s with an older response (header revision %d, value %q "+
			"of revision %d) though a write of the key at revision %d was acknowledged before the call; the real "+
			"answer was at revision %d", req.Key, stale.Revision, kv.Value, kv.ModRevision, w.rev, fresh.Revision),
	})
	return &stale, nil, true
}

// loseWrite acknowledges a put without sending it, or returns nil. The
// answer carries the header of the client's previous answer: a cached
// header, as a proxy that acknowledges from memory would send. (The last
// seen revision + 1 is as plausible, but then the fabricated write and the
// real write that took that revision are equally to blame, and the
// linearizability check may name either. With the previous header the
// fabricated write alone cannot be placed: its own client had already
// seen the store at that revision before calling it.)
func (c *client) loseWrite(req history.Request) *history.Response {
	s := c.s
	start := s.rec.Now()
	last := c.lastRev.Load()
	if last == 0 || !s.claim(0) {
		return nil
	}
	resp := &history.Response{Revision: last, MemberID: c.lastMID.Load(), RaftTerm: c.lastTerm.Load()}
	s.commit(c, start, map[string]string{
		"key": req.Key, "revision": fmt.Sprint(resp.Revision), "value": req.Value,
		"what": fmt.Sprintf("acknowledged put(%s, %q) at revision %d without sending it", req.Key, req.Value, resp.Revision),
	})
	return resp
}

// ghost replaces the value a linearizable get found with one never written.
func (c *client) ghost(req history.Request, resp *history.Response) *history.Response {
	s := c.s
	start := s.rec.Now()
	if len(resp.KVs) != 1 || !s.claim(0) {
		return resp
	}
	out := cloneResponse(resp)
	was := out.KVs[0].Value
	out.KVs[0].Value = fmt.Sprintf("ghost.%d", s.intn(1_000_000))
	s.commit(c, start, map[string]string{
		"key": req.Key, "revision": fmt.Sprint(out.Revision), "mod_revision": fmt.Sprint(out.KVs[0].ModRevision),
		"value": out.KVs[0].Value, "real_value": was,
		"what": fmt.Sprintf("a linearizable get of %s at header revision %d returned %q instead of %q",
			req.Key, out.Revision, out.KVs[0].Value, was),
	})
	return &out
}

func cloneResponse(r *history.Response) history.Response {
	out := *r
	out.KVs = append([]history.KV(nil), r.KVs...)
	out.PrevKVs = append([]history.KV(nil), r.PrevKVs...)
	if r.Responses != nil {
		out.Responses = make([]history.Response, len(r.Responses))
		for i := range r.Responses {
			out.Responses[i] = cloneResponse(&r.Responses[i])
		}
	}
	return out
}
