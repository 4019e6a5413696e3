package reduce

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/history"
	etcdtarget "github.com/vigil-suite/vigil/targets/etcd"
)

// System is a fresh server a replay runs against: its members' client
// endpoints, in the order steps name them, and how to stop it.
type System struct {
	Endpoints []string
	Security  fixtures.Security
	Stop      func()
}

// Starter starts a fresh system, of the size the finding's run had.
type Starter func(ctx context.Context) (System, error)

// Divergence is the symptom of members that disagree: the steps are
// replayed on a fresh system, each to its member, and then, once every
// member has applied as much as the others, their keys are compared
// (serializable reads of every key on each member, with the revision each
// reports). It shows when two members hold different keys, values or
// revisions.
func Divergence(start Starter) Symptom {
	return func(ctx context.Context, steps []Step) (bool, string, error) {
		sys, err := start(ctx)
		if err != nil {
			return false, "", err
		}
		defer sys.Stop()
		clients, err := dialAll(sys)
		if err != nil {
			return false, "", err
		}
		defer func() {
			for _, c := range clients {
				c.Close()
			}
		}()
		if _, err := Replay(ctx, clients, steps); err != nil {
			return false, "", err
		}
		return compareMembers(ctx, clients)
	}
}

func dialAll(sys System) ([]*etcdtarget.Client, error) {
	var out []*etcdtarget.Client
	for _, ep := range sys.Endpoints {
		c, err := etcdtarget.Dial(ep, 5*time.Second, sys.Security)
		if err != nil {
			for _, o := range out {
				o.Close()
			}
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Answer is what one step of a replay got: a response or an error.
type Answer struct {
	Resp *history.Response
	Err  error
}

// Replay sends the steps in order, each to its member, moving the
// revisions each names by the distance between its Head and the store's
// revision now (read from that member first) and mapping the leases its
// grants handed out. It returns every answer; an error only when the
// store's revision could not be read.
func Replay(ctx context.Context, clients []*etcdtarget.Client, steps []Step) ([]Answer, error) {
	leases := map[int64]int64{}
	var out []Answer
	for _, st := range steps {
		c := clients[st.Member%len(clients)]
		head, err := headOf(ctx, c)
		if err != nil {
			return out, fmt.Errorf("reading member %d's revision: %w", st.Member, err)
		}
		req := Rebase(st.Req, head-st.Head, leases)
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := c.Do(rctx, req)
		cancel()
		if err == nil && st.Req.Kind == history.OpLeaseGrant && st.Granted != 0 {
			leases[st.Granted] = resp.Lease
		}
		out = append(out, Answer{resp, err})
	}
	return out, nil
}

// headOf reads a member's revision with a read that changes nothing.
func headOf(ctx context.Context, c *etcdtarget.Client) (int64, error) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := c.Do(rctx, history.Request{Kind: history.OpRange, Key: "\x00", CountOnly: true})
	if err != nil {
		return 0, err
	}
	return resp.Revision, nil
}

// Rebase moves every revision a request names by shift (one below 1 goes
// to 1) and maps the leases it names through leases (unmapped ids stay:
// a lease never granted is meant to be one).
func Rebase(r history.Request, shift int64, leases map[int64]int64) history.Request {
	r = clone(r)
	move := func(v *int64) {
		if *v > 0 {
			*v = max(1, *v+shift)
		}
	}
	var walk func(q *history.Request)
	walk = func(q *history.Request) {
		for _, v := range []*int64{&q.Revision, &q.MinModRevision, &q.MaxModRevision, &q.MinCreateRevision, &q.MaxCreateRevision} {
			move(v)
		}
		if l, ok := leases[q.Lease]; ok && q.Lease != 0 {
			q.Lease = l
		}
		for i := range q.Compares {
			c := &q.Compares[i]
			switch strings.ToLower(c.Target) {
			case history.CompareMod, history.CompareCreate:
				move(&c.Int)
			case history.CompareLease:
				if l, ok := leases[c.Int]; ok {
					c.Int = l
				}
			}
		}
		for i := range q.Success {
			walk(&q.Success[i])
		}
		for i := range q.Failure {
			walk(&q.Failure[i])
		}
	}
	walk(&r)
	return r
}

// compareMembers waits until every member reports the same revision, or
// 5 s pass, then compares what each holds.
func compareMembers(ctx context.Context, clients []*etcdtarget.Client) (bool, string, error) {
	var views []memberView
	deadline := time.Now().Add(5 * time.Second)
	for {
		views = views[:0]
		for i, c := range clients {
			v, err := viewOf(ctx, c)
			if err != nil {
				return false, "", fmt.Errorf("reading member %d: %w", i, err)
			}
			views = append(views, v)
		}
		same := true
		for _, v := range views[1:] {
			same = same && v.applied == views[0].applied
		}
		if same || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	groups := map[string][]int{}
	var texts []string
	for i, v := range views {
		t := v.String()
		if _, ok := groups[t]; !ok {
			texts = append(texts, t)
		}
		groups[t] = append(groups[t], i)
	}
	if len(groups) < 2 {
		return false, "every member holds " + texts[0], nil
	}
	sort.Strings(texts)
	var parts []string
	for _, t := range texts {
		parts = append(parts, fmt.Sprintf("member %s: %s", joinInts(groups[t]), t))
	}
	return true, strings.Join(parts, "; "), nil
}

type memberView struct {
	applied uint64
	rev     int64
	kvs     []history.KV
}

func (v memberView) String() string {
	parts := []string{fmt.Sprintf("revision %d", v.rev)}
	for _, kv := range v.kvs {
		parts = append(parts, fmt.Sprintf("%s=%q@%d", kv.Key, kv.Value, kv.ModRevision))
	}
	if len(v.kvs) == 0 {
		parts = append(parts, "no key")
	}
	return strings.Join(parts, ", ")
}

// viewOf reads, from one member alone, its applied index (where the
// server reports it) and every key.
func viewOf(ctx context.Context, c *etcdtarget.Client) (memberView, error) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var v memberView
	if st, err := c.Raw().Status(rctx, c.Member()); err == nil {
		v.applied = st.RaftAppliedIndex
	}
	resp, err := c.Do(rctx, history.Request{Kind: history.OpRange, Key: "\x00", End: "\x00", Serializable: true})
	if err != nil {
		return v, err
	}
	v.rev, v.kvs = resp.Revision, resp.KVs
	if v.applied == 0 { // a release without it (3.4): the revision stands in
		v.applied = uint64(resp.Revision)
	}
	return v, nil
}

func joinInts(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ", ")
}
