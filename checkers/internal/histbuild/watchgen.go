package histbuild

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// genWatchHistory simulates a run that is valid by construction, shaped
// like the workload: sequential writes (puts, deletes, two-key txns that
// put and put or put and delete), some of unknown outcome (half of them
// applied), one compaction, and many kinds of watch — prefix watches from
// now (with prev_kv, with progress notifications), from a past revision,
// resumed after a client restart, single-key watches, NoPut and NoDelete
// filters, and a watch started below the compaction that the server
// cancels. It feeds the must-pass test and the 1M-event benchmark.
type WgenConfig struct {
	Revisions     int // committed revisions (roughly)
	Keys          int
	PrefixWatches int
	UnknownPct    int
	Seed          int64
}

type wgenChange struct {
	rev    int64
	commit time.Duration
	evs    []history.Event // with PrevKV set where the key existed
}

func GenWatchHistory(cfg WgenConfig) *history.History {
	rnd := rand.New(rand.NewSource(cfg.Seed))
	h := history.New(history.Meta{Prefix: TestPrefix, Seed: cfg.Seed, Target: history.Target{Fixture: "process"}})
	state := map[string]history.KV{}
	rev, t := int64(100), time.Duration(1_000_000)
	var changes []wgenChange
	opID := int64(0)
	addOp := func(o history.Operation) int64 {
		opID++
		o.ID = opID
		h.Operations = append(h.Operations, o)
		return opID
	}
	put := func(key, val string, at int64) history.Event {
		old, ok := state[key]
		kv := history.KV{Key: key, Value: val, CreateRevision: at, ModRevision: at, Version: 1}
		ev := history.Event{Type: history.EventPut, KV: kv, IsCreate: !ok}
		if ok {
			ev.KV.CreateRevision, ev.KV.Version = old.CreateRevision, old.Version+1
			p := old
			ev.PrevKV = &p
		}
		state[key] = ev.KV
		return ev
	}
	del := func(key string, at int64) history.Event {
		old := state[key]
		delete(state, key)
		return history.Event{Type: history.EventDelete, KV: history.KV{Key: key, ModRevision: at}, PrevKV: &old}
	}
	name := func(i int) string { return K(fmt.Sprintf("k%02d", i)) }
	compactAt, compactRev := cfg.Revisions*2/5, int64(0)
	var compactRet time.Duration
	for seq := 0; int(rev-100) < cfg.Revisions; seq++ {
		client := seq % 8
		o := history.Operation{Client: client, Member: "m1", Call: t, Return: t + 600}
		commit := t + 300
		t += 1000
		if int(rev-100) == compactAt && compactRev == 0 {
			compactRev = rev - 50
			addOp(history.Operation{Client: 99, Member: "m1", Call: o.Call, Return: o.Return,
				Request:  history.Request{Kind: history.OpCompact, Revision: compactRev},
				Response: &history.Response{Revision: rev}})
			compactRet = o.Return
			continue
		}
		val := fmt.Sprintf("%d.%d", client, seq)
		i1 := rnd.Intn(cfg.Keys)
		k1, k2 := name(i1), name((i1+1+rnd.Intn(cfg.Keys-1))%cfg.Keys)
		var evs []history.Event
		switch p := rnd.Intn(100); {
		case p < 55:
			o.Request = history.Request{Kind: history.OpPut, Key: k1, Value: val}
			evs = []history.Event{put(k1, val, rev+1)}
			o.Response = &history.Response{Revision: rev + 1}
		case p < 75:
			o.Request = history.Request{Kind: history.OpDelete, Key: k1}
			o.Response = &history.Response{Revision: rev}
			if _, ok := state[k1]; ok {
				evs = []history.Event{del(k1, rev+1)}
				o.Response = &history.Response{Revision: rev + 1, Deleted: 1}
			}
		default:
			second := history.Request{Kind: history.OpPut, Key: k2, Value: val + "b"}
			inner := []history.Response{{Revision: rev + 1}, {Revision: rev + 1}}
			evs = []history.Event{put(k1, val, rev+1)}
			if _, ok := state[k2]; ok && rnd.Intn(2) == 0 {
				second = history.Request{Kind: history.OpDelete, Key: k2}
				inner[1].Deleted = 1
				evs = append(evs, del(k2, rev+1))
			} else {
				evs = append(evs, put(k2, val+"b", rev+1))
			}
			o.Request = history.Request{Kind: history.OpTxn, Success: []history.Request{
				{Kind: history.OpPut, Key: k1, Value: val}, second}}
			o.Response = &history.Response{Revision: rev + 1, Succeeded: true, Responses: inner}
		}
		if len(evs) > 0 {
			rev++
			changes = append(changes, wgenChange{rev: rev, commit: commit, evs: evs})
		}
		if o.Request.Kind.IsWrite() && rnd.Intn(100) < cfg.UnknownPct {
			o.Response, o.Code, o.Error = nil, history.ErrUnknown, "context deadline exceeded"
			if rnd.Intn(2) == 0 && len(evs) > 0 { // not applied after all: undo
				rev--
				changes = changes[:len(changes)-1]
				for _, ev := range evs {
					if ev.PrevKV != nil {
						state[ev.KV.Key] = *ev.PrevKV
					} else {
						delete(state, ev.KV.Key)
					}
				}
			}
		}
		addOp(o)
	}
	finalID := addOp(history.Operation{Client: 99, Member: "m1", Call: t, Return: t + 600,
		Request: history.Request{Kind: history.OpPut, Key: K("final"), Value: "final.0"}, Response: &history.Response{Revision: rev + 1}})
	rev++
	changes = append(changes, wgenChange{rev: rev, commit: t + 300, evs: []history.Event{put(K("final"), "final.0", rev)}})
	t += 1000
	h.Marks = append(h.Marks, history.Mark{Name: history.MarkFinalWrite, Time: t, Op: finalID, Revision: rev})
	end := t + 1000
	genWatches(h, cfg, changes, compactRev, compactRet, end)
	h.Marks = append(h.Marks, history.Mark{Name: history.MarkEnd, Time: end + 1000})
	return h
}

// wgenWatch is one watch to simulate: which changes it delivers.
type wgenWatch struct {
	req      history.WatchRequest
	call     time.Duration
	from     int64 // first revision delivered
	until    int64 // last revision delivered (inclusive)
	resumes  int64
	endAt    time.Duration
	progress bool
}

func genWatches(h *history.History, cfg WgenConfig, changes []wgenChange, compactRev int64,
	compactRet time.Duration, end time.Duration) {
	first, last := changes[0].rev, changes[len(changes)-1].rev
	at := func(frac float64) wgenChange { return changes[int(float64(len(changes)-1)*frac)] }
	prefix := history.WatchRequest{Key: TestPrefix, End: "/p0"}
	var ws []wgenWatch
	for i := 0; i < cfg.PrefixWatches; i++ {
		req := prefix
		req.PrevKV, req.ProgressNotify = i%2 == 0, i%3 == 0
		w := wgenWatch{req: req, from: first, until: last, endAt: end}
		switch i % 5 {
		case 1: // from a past revision, opened a third into the run
			c := at(0.33)
			w.call, w.req.StartRevision, w.from = c.commit+1, c.rev-100, c.rev-100
		case 2: // closed by the client half way, then resumed
			mid := at(0.5)
			w.until, w.endAt = mid.rev, mid.commit+500
			ws = append(ws, w)
			w = wgenWatch{req: req, call: mid.commit + 600, from: mid.rev + 1, until: last, endAt: end,
				resumes: int64(len(ws))}
			w.req.StartRevision = mid.rev + 1
		}
		ws = append(ws, w)
	}
	for _, req := range []history.WatchRequest{{Key: K("k00")}, {Key: K("k01"), PrevKV: true},
		{Key: TestPrefix, End: "/p0", NoPut: true}, {Key: TestPrefix, End: "/p0", NoDelete: true, PrevKV: true}} {
		ws = append(ws, wgenWatch{req: req, from: first, until: last, endAt: end})
	}
	for i, w := range ws {
		id := int64(i + 1)
		ws := &history.WatchStream{Watch: history.Watch{ID: id, Client: 100 + i, Member: "m1", Call: w.call,
			Resumes: w.resumes, Request: w.req}}
		ws.Responses = append(ws.Responses, history.WatchResponse{Watch: id, Time: w.call + 10, Revision: w.from - 1, Created: true})
		for ci, c := range changes {
			if c.rev < w.from || c.rev > w.until {
				continue
			}
			var evs []history.Event
			for _, ev := range c.evs {
				if !facts.Covers(ws, ev.KV.Key, ev.Type) {
					continue
				}
				if !w.req.PrevKV {
					ev.PrevKV = nil
				}
				evs = append(evs, ev)
			}
			rt := max(c.commit, w.call) + 50
			if len(evs) > 0 {
				ws.Responses = append(ws.Responses, history.WatchResponse{Watch: id, Time: rt, Revision: c.rev, Events: evs})
			}
			if w.req.ProgressNotify && ci%200 == 199 {
				// The request that asked for it, as the workload records it.
				h.Calls = append(h.Calls, history.Call{ID: int64(len(h.Calls) + 1), Client: ws.Client, Member: "m1",
					Kind: history.CallProgress, Watches: []int64{id}, Call: rt, Return: rt})
				ws.Responses = append(ws.Responses, history.WatchResponse{Watch: id, Time: rt + 1, Revision: c.rev, Progress: true})
			}
		}
		ws.End = &history.WatchEnd{Watch: id, Time: w.endAt, Reason: history.EndClient}
		h.Watches = append(h.Watches, ws)
	}
	// Opened below the compaction after it returned, on the member that
	// compacted: canceled at once with the compact revision.
	id := int64(len(h.Watches) + 1)
	req := prefix
	req.StartRevision = compactRev - 10
	cw := &history.WatchStream{Watch: history.Watch{ID: id, Client: 200, Member: "m1", Call: compactRet + 100, Request: req}}
	cw.Responses = []history.WatchResponse{
		{Watch: id, Time: compactRet + 110, Revision: compactRev + 5, Created: true},
		{Watch: id, Time: compactRet + 120, Canceled: true, CompactRevision: compactRev,
			CancelReason: "etcdserver: mvcc: required revision has been compacted"}}
	cw.End = &history.WatchEnd{Watch: id, Time: compactRet + 130, Reason: history.EndServer,
		Error: "etcdserver: mvcc: required revision has been compacted"}
	h.Watches = append(h.Watches, cw)
}
