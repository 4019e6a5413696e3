package histbuild

import (
	"container/heap"
	"fmt"
	"math/rand"
	"sort"
	"time"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// The generator below simulates the workload against a tiny sequential
// model of etcd: each client runs one request at a time, every request
// takes effect at a random instant inside its call-return interval, and the
// intervals of different clients overlap. The histories it makes are valid
// by construction; benchmarks and tests check them.

type GenConfig struct {
	Ops, Clients, Keys int
	Watches            int // prefix watches open for the whole run
	FailPct            int // percent of writes with an unknown outcome
	ApplyPct           int // percent of those that were applied
	Seed               int64
}

type simStore struct {
	rev, compact int64
	kvs          map[string]history.KV
	// past holds every version of every key, oldest first; a deleted key's
	// version has CreateRevision 0 and ModRevision the deletion's.
	past map[string][]history.KV
}

type pending struct {
	client int
	lin    time.Duration
	op     history.Operation
	fail   bool // outcome unknown
	apply  bool // ... but applied
}

type byLin []*pending

func (q byLin) Len() int            { return len(q) }
func (q byLin) Less(i, j int) bool  { return q[i].lin < q[j].lin }
func (q byLin) Swap(i, j int)       { q[i], q[j] = q[j], q[i] }
func (q *byLin) Push(x interface{}) { *q = append(*q, x.(*pending)) }
func (q *byLin) Pop() interface{} {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

func Generate(cfg GenConfig) *history.History {
	rnd := rand.New(rand.NewSource(cfg.Seed))
	h := history.New(history.Meta{Prefix: TestPrefix, Seed: cfg.Seed})
	st := &simStore{rev: 1000, compact: 500, kvs: map[string]history.KV{}, past: map[string][]history.KV{}}
	seenMod := make([]map[string]int64, cfg.Clients)
	seenRev := make([]int64, cfg.Clients)
	var q byLin
	nextID := int64(0)
	schedule := func(c int, after time.Duration) {
		nextID++
		call := after + time.Duration(rnd.Intn(50_000))
		dur := time.Duration(100_000 + rnd.Intn(2_000_000))
		p := &pending{client: c, lin: call + time.Duration(rnd.Int63n(int64(dur)))}
		p.op = history.Operation{ID: nextID, Client: c, Call: call, Return: call + dur,
			Request: genRequest(rnd, cfg, seenMod[c], seenRev[c], nextID)}
		if p.op.Request.Kind.IsWrite() && rnd.Intn(100) < cfg.FailPct {
			p.fail, p.apply = true, rnd.Intn(100) < cfg.ApplyPct
		}
		heap.Push(&q, p)
	}
	for c := 0; c < cfg.Clients; c++ {
		seenMod[c] = map[string]int64{}
		schedule(c, 0)
	}
	type change struct {
		t   time.Duration
		evs []history.Event
	}
	var changes []change
	var lastID, lastRev int64
	for done := 0; done < cfg.Ops; done++ {
		p := heap.Pop(&q).(*pending)
		o := p.op
		if !p.fail || p.apply {
			resp, code, evs := st.exec(&o.Request)
			if len(evs) > 0 {
				changes = append(changes, change{p.lin, evs})
			}
			if !p.fail {
				o.Response, o.Code = resp, code
				if resp != nil {
					seenRev[p.client] = resp.Revision
					learn(seenMod[p.client], &o.Request, resp)
				}
			}
		}
		if o.Response == nil && o.Code == "" {
			o.Code = history.ErrUnknown
		}
		if o.Response == nil {
			o.Error = string(o.Code)
		}
		h.Operations = append(h.Operations, o)
		if o.Request.Kind == history.OpPut && o.Response != nil {
			lastID, lastRev = o.ID, o.Response.Revision
		}
		schedule(p.client, o.Return)
	}
	sort.SliceStable(h.Operations, func(i, j int) bool { return h.Operations[i].Call < h.Operations[j].Call })
	end := h.Operations[len(h.Operations)-1].Return + time.Millisecond
	if lastID != 0 {
		h.Marks = append(h.Marks, history.Mark{Name: history.MarkFinalWrite, Time: end, Op: lastID, Revision: lastRev})
	}
	for w := 1; w <= cfg.Watches; w++ {
		ws := &history.WatchStream{Watch: history.Watch{ID: int64(w), Client: cfg.Clients + w,
			Request: history.WatchRequest{Key: TestPrefix, End: "/p0"}}}
		ws.Responses = append(ws.Responses, history.WatchResponse{Watch: ws.ID, Revision: 1000, Created: true})
		for _, c := range changes {
			ws.Responses = append(ws.Responses, history.WatchResponse{Watch: ws.ID, Time: c.t + 1000,
				Revision: c.evs[0].Revision(), Events: c.evs})
		}
		ws.End = &history.WatchEnd{Watch: ws.ID, Time: end + time.Millisecond, Reason: history.EndClient}
		h.Watches = append(h.Watches, ws)
	}
	return h
}

func genRequest(rnd *rand.Rand, cfg GenConfig, seenMod map[string]int64, seenRev int64, id int64) history.Request {
	keyN := rnd.Intn(cfg.Keys)
	key := K(fmt.Sprintf("k%d", keyN))
	val := fmt.Sprintf("v%d", id)
	switch n := rnd.Intn(100); {
	case n < 28:
		return history.Request{Kind: history.OpPut, Key: key, Value: val, PrevKV: rnd.Intn(4) == 0}
	case n < 48:
		return history.Request{Kind: history.OpRange, Key: key}
	case n < 57:
		return history.Request{Kind: history.OpRange, Key: TestPrefix, End: "/p0", Limit: int64(rnd.Intn(5)),
			KeysOnly: rnd.Intn(5) == 0}
	case n < 61 && seenRev > 0:
		return history.Request{Kind: history.OpRange, Key: key, Revision: max(1, seenRev-int64(rnd.Intn(60)))}
	case n < 62 && seenRev > 0:
		return history.Request{Kind: history.OpRange, Key: key, Revision: seenRev + 1000}
	case n < 77:
		req := casReqFull(key, seenMod[key], val)
		switch rnd.Intn(10) {
		case 0:
			req.Compares[0] = history.Compare{Key: key, Target: "version", Result: ">", Int: 0}
		case 1:
			req.Compares[0] = history.Compare{Key: key, Target: "create", Result: "=", Int: 0}
		}
		if other := K(fmt.Sprintf("k%d", (keyN+1+rnd.Intn(cfg.Keys))%cfg.Keys)); other != key && rnd.Intn(3) == 0 {
			second := history.Request{Kind: history.OpPut, Key: other, Value: val + "b"}
			if rnd.Intn(2) == 0 {
				second = history.Request{Kind: history.OpDelete, Key: other}
			}
			req.Success = append(req.Success, second)
		}
		return req
	case n < 89:
		return history.Request{Kind: history.OpDelete, Key: key, PrevKV: rnd.Intn(4) == 0}
	case n < 90 && seenRev > 0:
		return history.Request{Kind: history.OpCompact, Revision: seenRev - int64(rnd.Intn(200))}
	}
	return history.Request{Kind: history.OpRange, Key: key}
}

func casReqFull(key string, mod int64, val string) history.Request {
	return history.Request{Kind: history.OpTxn,
		Compares: []history.Compare{{Key: key, Target: "mod", Result: "=", Int: mod}},
		Success:  []history.Request{{Kind: history.OpPut, Key: key, Value: val}},
		Failure:  []history.Request{{Kind: history.OpRange, Key: key}}}
}

// learn remembers the mod revisions a client saw, for its next CAS.
func learn(seen map[string]int64, req *history.Request, resp *history.Response) {
	for _, kv := range resp.KVs {
		seen[kv.Key] = kv.ModRevision
	}
	for _, in := range resp.Responses {
		for _, kv := range in.KVs {
			seen[kv.Key] = kv.ModRevision
		}
	}
	if req.Kind == history.OpPut || (req.Kind == history.OpTxn && resp.Succeeded) {
		key := req.Key
		if req.Kind == history.OpTxn {
			key = req.Success[0].Key
		}
		seen[key] = resp.Revision
	}
}

// exec applies a request to the store as etcd would and returns the
// response (or a definite error code) and the events it caused.
func (st *simStore) exec(r *history.Request) (*history.Response, history.ErrorCode, []history.Event) {
	switch r.Kind {
	case history.OpCompact:
		switch {
		case r.Revision <= st.compact:
			return nil, history.ErrCompacted, nil
		case r.Revision > st.rev:
			return nil, history.ErrFutureRevision, nil
		}
		st.compact = r.Revision
		return &history.Response{Revision: st.rev}, "", nil
	case history.OpRange:
		if r.Revision > 0 {
			switch {
			case r.Revision < st.compact:
				return nil, history.ErrCompacted, nil
			case r.Revision > st.rev:
				return nil, history.ErrFutureRevision, nil
			}
		}
	case history.OpTxn:
		succ := true
		for _, c := range r.Compares {
			succ = succ && st.compare(c)
		}
		br := r.Failure
		if succ {
			br = r.Success
		}
		resp := &history.Response{Succeeded: succ}
		var evs []history.Event
		for i := range br {
			in, ev := st.one(&br[i], st.rev+1)
			resp.Responses = append(resp.Responses, *in)
			evs = append(evs, ev...)
		}
		if len(evs) > 0 {
			st.rev++
		}
		resp.Revision = st.rev
		return resp, "", evs
	}
	resp, evs := st.one(r, st.rev+1)
	if len(evs) > 0 {
		st.rev++
	}
	resp.Revision = st.rev
	return resp, "", evs
}

func (st *simStore) compare(c history.Compare) bool {
	cur, ok := st.kvs[c.Key]
	var n int64
	switch c.Target {
	case "mod":
		n = cur.ModRevision
	case "create":
		n = cur.CreateRevision
	case "version":
		n = cur.Version
	case "value":
		if !ok {
			return false
		}
		switch c.Result {
		case "=":
			return cur.Value == c.Value
		case "!=":
			return cur.Value != c.Value
		}
		return false
	}
	switch c.Result {
	case "=":
		return n == c.Int
	case "!=":
		return n != c.Int
	case "<":
		return n < c.Int
	}
	return n > c.Int
}

func (st *simStore) set(key string, kv history.KV) {
	if kv.CreateRevision == 0 {
		delete(st.kvs, key)
	} else {
		st.kvs[key] = kv
	}
	st.past[key] = append(st.past[key], kv)
}

// at returns the key as it was at revision rev.
func (st *simStore) at(key string, rev int64) (history.KV, bool) {
	vs := st.past[key]
	j := sort.Search(len(vs), func(j int) bool { return vs[j].ModRevision > rev })
	if j == 0 || vs[j-1].CreateRevision == 0 {
		return history.KV{}, false
	}
	return vs[j-1], true
}

// one executes a put, delete or range at revision rev (a range at its
// own revision if it asks for one).
func (st *simStore) one(r *history.Request, rev int64) (*history.Response, []history.Event) {
	switch r.Kind {
	case history.OpPut:
		old, ok := st.kvs[r.Key]
		kv := history.KV{Key: r.Key, Value: r.Value, CreateRevision: rev, ModRevision: rev, Version: 1}
		if ok {
			kv.CreateRevision, kv.Version = old.CreateRevision, old.Version+1
		}
		st.set(r.Key, kv)
		resp := &history.Response{}
		if ok && r.PrevKV {
			resp.PrevKVs = []history.KV{old}
		}
		return resp, []history.Event{{Type: history.EventPut, KV: kv, IsCreate: !ok}}
	case history.OpDelete:
		old, ok := st.kvs[r.Key]
		if !ok {
			return &history.Response{}, nil
		}
		st.set(r.Key, history.KV{Key: r.Key, ModRevision: rev})
		resp := &history.Response{Deleted: 1}
		if r.PrevKV {
			resp.PrevKVs = []history.KV{old}
		}
		return resp, []history.Event{{Type: history.EventDelete, KV: history.KV{Key: r.Key, ModRevision: rev}}}
	}
	at := st.rev
	if r.Revision > 0 {
		at = r.Revision
	}
	var keys []string
	for key := range st.past {
		if (facts.KeyRange{Key: r.Key, End: r.End}).Contains(key) {
			if _, ok := st.at(key, at); ok {
				keys = append(keys, key)
			}
		}
	}
	sort.Strings(keys)
	resp := &history.Response{Count: int64(len(keys))}
	for i, key := range keys {
		if r.Limit > 0 && int64(i) >= r.Limit {
			resp.More = true
			break
		}
		kv, _ := st.at(key, at)
		if r.KeysOnly {
			kv.Value = ""
		}
		resp.KVs = append(resp.KVs, kv)
	}
	return resp, nil
}
