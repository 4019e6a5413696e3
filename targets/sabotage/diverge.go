package sabotage

import (
	"context"
	"fmt"

	"github.com/vigil-suite/vigil/history"
)

// diverge-member makes one member look as if it had not applied one
// write: from the chosen put's revision r on, what vigil's clients read of
// the member that answered the put — HashKV at a revision at or above r
// (at its head, when not given), serializable ranges at such a revision —
// is what a member without that put would answer: another hash, and the
// put's key as it was before it. Every other answer, and every other
// member, is left alone, as the store itself is.

// divergence is what diverge-member chose: the put's revision, key and
// member, and the key's state just before it (nil: absent).
type divergence struct {
	rev    int64
	key    string
	member string
	prev   *history.KV
	// pending is closed once the chosen put is answered and rev set (or
	// given up): reads of a member wait for it, so none answered after the
	// put's revision was applied escapes the alteration.
	pending chan struct{}
}

// divergePut sends a put; the first eligible one after arming becomes the
// write the member diverges at. ok says whether it took the call.
func (c *client) divergePut(ctx context.Context, req history.Request) (*history.Response, error, bool) {
	s := c.s
	start := s.rec.Now()
	if !s.claim(0) {
		return nil, nil, false
	}
	pending := make(chan struct{})
	s.mu.Lock()
	s.div = &divergence{pending: pending}
	s.mu.Unlock()
	defer close(pending)
	resp, err := c.inner.Do(ctx, req)
	if err != nil {
		s.mu.Lock()
		s.div = nil
		s.mu.Unlock()
		s.release()
		return resp, err, true
	}
	// What the key held just before the put: what the diverged member
	// still shows.
	before, perr := c.inner.Do(ctx, history.Request{Kind: history.OpRange, Key: req.Key, Revision: resp.Revision - 1, Serializable: true})
	if perr != nil {
		s.mu.Lock()
		s.div = nil
		s.mu.Unlock()
		s.release()
		return resp, nil, true
	}
	d := &divergence{rev: resp.Revision, key: req.Key, member: c.inner.Member(), pending: pending}
	was := "absent"
	if len(before.KVs) == 1 {
		kv := before.KVs[0]
		d.prev = &kv
		was = fmt.Sprintf("%q (mod %d)", kv.Value, kv.ModRevision)
	}
	s.mu.Lock()
	s.div = d
	s.mu.Unlock()
	s.commit(c, start, map[string]string{
		"key": req.Key, "value": req.Value, "revision": fmt.Sprint(d.rev), "diverged_member": d.member,
		"what": fmt.Sprintf("member %s now looks as if it had not applied put(%s, %q) at revision %d: its HashKV at "+
			"revisions from %d on differs, and its serializable reads at them show %s as before the put (%s)",
			d.member, req.Key, req.Value, d.rev, d.rev, req.Key, was),
	})
	return resp, nil, true
}

// divergeRead sends a HashKV or a serializable range at a revision and,
// on the diverged member at or above the chosen revision, alters the answer.
func (c *client) divergeRead(ctx context.Context, req history.Request) (*history.Response, error) {
	s := c.s
	s.mu.Lock()
	d := s.div
	s.mu.Unlock()
	if d != nil {
		select {
		case <-d.pending:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		s.mu.Lock()
		d = s.div
		s.mu.Unlock()
	}
	resp, err := c.inner.Do(ctx, req)
	if err != nil || d == nil || d.rev == 0 || c.inner.Member() != d.member {
		return resp, err
	}
	at := req.Revision
	if at == 0 {
		at = resp.Revision
	}
	if at < d.rev {
		return resp, nil
	}
	out := cloneResponse(resp)
	if req.Kind == history.OpHashKV {
		out.Hash ^= uint32(d.rev)*0x9e3779b1 | 1
		return &out, nil
	}
	var kvs []history.KV
	for _, kv := range out.KVs {
		switch {
		case kv.Key != d.key || kv.ModRevision < d.rev:
		case kv.ModRevision == d.rev && d.prev == nil:
			out.Count--
			continue
		case kv.ModRevision == d.rev:
			kv = *d.prev
		case kv.CreateRevision < d.rev && kv.Version > 1:
			kv.Version-- // overwritten since: one version fewer
		}
		kvs = append(kvs, kv)
	}
	out.KVs = kvs
	return &out, nil
}

// divergeEligible: the requests diverge-member may alter.
func divergeEligible(req history.Request) bool {
	return req.Kind == history.OpHashKV || (req.Kind == history.OpRange && req.Serializable && req.Revision > 0)
}
