package histbuild

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// KgenConfig sizes a simulated run against a correct Kubernetes API
// server: one client call at a time on a shared clock, RVs with gaps
// (other resources take revisions too), watches that deliver every change.
type KgenConfig struct {
	Ops        int
	Objects    int
	Watches    int // without a selector
	SelWatches int // with selector g=a
	UnknownPct int // writes whose answer is lost; half of them commit
	// StateWatches start from RV "0" (a state, then changes), streams are
	// streaming lists; both open at evenly spaced moments. oracle adds
	// vigil's etcd watch of the API server's keys.
	StateWatches, Streams int
	Oracle                bool
	// WritePaths turns a third of the updates into merge patches (which
	// keep the labels), a sixth into dry runs, and a third of the deletes
	// into delete-collections by field selector (history format 5).
	WritePaths bool
	Seed       uint64
}

// kgenSnap is the collection at one moment, for a watch starting there.
type kgenSnap struct {
	at    time.Duration
	rv    int64
	items []history.Object
}

type kgenState struct {
	exists bool
	obj    history.Object
}

type kgenChange struct {
	at         time.Duration
	prev, next kgenState
	del        bool
	create     bool
}

// GenKubeHistory simulates the run.
func GenKubeHistory(cfg KgenConfig) *history.History {
	rng := rand.New(rand.NewPCG(cfg.Seed, 7))
	h := history.New(history.Meta{Prefix: "/registry/configmaps/gen/", Target: history.Target{Kind: "kube"}})
	add := func(r history.Record) {
		if err := h.Add(r); err != nil {
			panic(err)
		}
	}
	state := map[string]*kgenState{}
	names := make([]string, cfg.Objects)
	for i := range names {
		names[i] = fmt.Sprintf("o-%03d", i)
		state[names[i]] = &kgenState{}
	}
	var rv int64 = 100
	var t time.Duration
	var changes []kgenChange
	var opID int64
	seq := 0
	snapshot := func(sel string) []history.Object {
		var out []history.Object
		for _, n := range names {
			if s := state[n]; s.exists && (sel == "" || s.obj.Labels["g"] == "a") {
				out = append(out, s.obj)
			}
		}
		return out
	}
	commit := func(name string, next kgenState, del, create bool) int64 {
		rv += 1 + int64(rng.IntN(3))
		s := state[name]
		if next.exists {
			next.obj.ResourceVersion = fmt.Sprint(rv)
		}
		c := kgenChange{at: t, prev: *s, next: next, del: del, create: create}
		if del {
			c.next = kgenState{obj: s.obj}
			c.next.obj.ResourceVersion = fmt.Sprint(rv)
		}
		changes = append(changes, c)
		*s = next
		return rv
	}
	var snaps []kgenSnap
	starts := cfg.StateWatches + cfg.Streams
	for i := 0; i < cfg.Ops; i++ {
		if starts > 0 && i%(cfg.Ops/(starts+1)) == 0 && i > 0 && len(snaps) < starts {
			snaps = append(snaps, kgenSnap{at: t, rv: rv, items: snapshot("")})
		}
		t += time.Duration(500+rng.IntN(1000)) * time.Microsecond
		opID++
		// t is the operation's linearization point; its call and return
		// lie up to 2 ms around it, so operations overlap.
		o := history.KubeOperation{ID: opID, Client: 1 + rng.IntN(10), Server: "kube-0",
			Call: t - time.Duration(rng.IntN(2000))*time.Microsecond, Return: t + time.Duration(100+rng.IntN(2000))*time.Microsecond}
		name := names[rng.IntN(len(names))]
		s := state[name]
		lost := rng.IntN(100) < cfg.UnknownPct
		// settle commits a write the server answered; one whose answer was
		// lost it commits or not (its outcome is unknown), and says so.
		settle := func(name string, next kgenState, del, create bool) bool {
			if lost {
				o.Error = "timeout"
				if rng.IntN(2) == 0 {
					commit(name, next, del, create)
				}
				return false
			}
			commit(name, next, del, create)
			return true
		}
		seq++
		labels := map[string]string{"g": []string{"a", "b"}[rng.IntN(2)]}
		wp := -1
		if cfg.WritePaths {
			wp = rng.IntN(6)
		}
		switch p := rng.IntN(100); {
		case p < 30 && wp >= 0 && wp < 2: // a merge patch of the value: unconditional, the labels stay
			val := fmt.Sprintf("val:%d", seq)
			o.Request = history.KubeRequest{Verb: history.KubePatch, Name: name, PatchType: history.PatchMerge,
				Patch: fmt.Sprintf(`{"data":{"value":%q}}`, val), Object: &history.Object{Name: name, Value: val}}
			if !s.exists {
				o.Status = &history.KubeStatus{Code: 404, Reason: "NotFound"}
				break
			}
			next := kgenState{exists: true, obj: history.Object{Name: name, UID: s.obj.UID, Value: val, Labels: s.obj.Labels}}
			if !settle(name, next, false, false) {
				break
			}
			obj := state[name].obj
			o.Response = &history.KubeResponse{Code: 200, Object: &obj}
		case p < 30 && wp == 2: // a dry-run update: answered, never stored
			body := history.Object{Name: name, Value: fmt.Sprintf("val:%d", seq), Labels: labels}
			o.Request = history.KubeRequest{Verb: history.KubeUpdate, Name: name, DryRun: true, Object: &body}
			if !s.exists {
				o.Status = &history.KubeStatus{Code: 404, Reason: "NotFound"}
				break
			}
			obj := history.Object{Name: name, UID: s.obj.UID, Value: body.Value, Labels: labels, ResourceVersion: s.obj.ResourceVersion}
			o.Response = &history.KubeResponse{Code: 200, Object: &obj}
		case p >= 42 && p < 52 && wp >= 0 && wp < 2: // delete-collection of one name: answers what it listed
			o.Request = history.KubeRequest{Verb: history.KubeDeleteCollection, FieldSelector: "metadata.name=" + name}
			if !s.exists {
				o.Response = &history.KubeResponse{Code: 200}
				break
			}
			listed := s.obj
			if !settle(name, kgenState{}, true, false) {
				break
			}
			o.Response = &history.KubeResponse{Code: 200, Items: []history.Object{listed}}
		case p < 30: // update from the current RV (a tenth of them stale)
			body := history.Object{Name: name, Value: fmt.Sprintf("val:%d", seq), Labels: labels}
			o.Request = history.KubeRequest{Verb: history.KubeUpdate, Name: name, Object: &body}
			if !s.exists {
				body.ResourceVersion = "1"
				o.Status = &history.KubeStatus{Code: 404, Reason: "NotFound"}
				break
			}
			body.ResourceVersion = s.obj.ResourceVersion
			if rng.IntN(10) == 0 {
				body.ResourceVersion = "99"
				o.Status = &history.KubeStatus{Code: 409, Reason: "Conflict"}
				break
			}
			next := kgenState{exists: true, obj: history.Object{Name: name, UID: s.obj.UID, Value: body.Value, Labels: labels}}
			if !settle(name, next, false, false) {
				break
			}
			obj := state[name].obj
			o.Response = &history.KubeResponse{Code: 200, Object: &obj}
		case p < 42: // create
			body := history.Object{Name: name, Value: fmt.Sprintf("val:%d", seq), Labels: labels}
			o.Request = history.KubeRequest{Verb: history.KubeCreate, Object: &body}
			if s.exists {
				o.Status = &history.KubeStatus{Code: 409, Reason: "AlreadyExists"}
				break
			}
			next := kgenState{exists: true, obj: history.Object{Name: name, UID: fmt.Sprintf("uid-%d", seq), Value: body.Value, Labels: labels}}
			if !settle(name, next, false, true) {
				break
			}
			obj := state[name].obj
			o.Response = &history.KubeResponse{Code: 201, Object: &obj}
		case p < 52: // delete with the current RV
			o.Request = history.KubeRequest{Verb: history.KubeDelete, Name: name}
			if !s.exists {
				o.Status = &history.KubeStatus{Code: 404, Reason: "NotFound"}
				break
			}
			o.Request.PreconditionRV = s.obj.ResourceVersion
			if !settle(name, kgenState{}, true, false) {
				break
			}
			o.Response = &history.KubeResponse{Code: 200}
		case p < 80: // consistent get
			o.Request = history.KubeRequest{Verb: history.KubeGet, Name: name}
			if !s.exists {
				o.Status = &history.KubeStatus{Code: 404, Reason: "NotFound"}
				break
			}
			obj := s.obj
			o.Response = &history.KubeResponse{Code: 200, Object: &obj}
		case p < 88: // consistent list, every other one with the selector
			sel := ""
			if rng.IntN(2) == 0 {
				sel = "g=a"
			}
			o.Request = history.KubeRequest{Verb: history.KubeList, LabelSelector: sel}
			o.Response = &history.KubeResponse{Code: 200, ListRV: fmt.Sprint(rv), Items: snapshot(sel)}
		case p < 95: // lists at every other RV form, a get at an RV, a future read
			o.Request = history.KubeRequest{Verb: history.KubeList}
			o.Response = &history.KubeResponse{Code: 200, ListRV: fmt.Sprint(rv), Items: snapshot("")}
			switch rng.IntN(5) {
			case 0:
				o.Request.ResourceVersion = "0"
			case 1:
				o.Request.ResourceVersion, o.Request.ResourceVersionMatch = fmt.Sprint(rv), "Exact"
			case 2:
				o.Request.ResourceVersion, o.Request.ResourceVersionMatch = fmt.Sprint(max(1, rv-20)), "NotOlderThan"
			case 3:
				o.Request = history.KubeRequest{Verb: history.KubeGet, Name: name, ResourceVersion: fmt.Sprint(max(1, rv-20))}
				o.Response = nil
				if s.exists {
					obj := s.obj
					o.Response = &history.KubeResponse{Code: 200, Object: &obj}
				} else {
					o.Status = &history.KubeStatus{Code: 404, Reason: "NotFound"}
				}
			case 4:
				o.Request.ResourceVersion, o.Request.ResourceVersionMatch = fmt.Sprint(rv+1000000000), "NotOlderThan"
				o.Response, o.Status = nil, &history.KubeStatus{Code: 504, Reason: "Timeout"}
			}
		default: // a paginated list at the current RV, pages of 5
			items := snapshot("")
			listRV := fmt.Sprint(rv)
			for page := 0; ; page++ {
				n := min(5, len(items))
				cont := ""
				if n < len(items) {
					cont = fmt.Sprintf("tok-%d-%d", opID, page)
				}
				o.Request = history.KubeRequest{Verb: history.KubeList, Limit: 5, Continue: o.Request.Continue}
				o.Response = &history.KubeResponse{Code: 200, ListRV: listRV, Continue: cont, Items: items[:n]}
				items = items[n:]
				if cont == "" {
					break
				}
				add(history.Record{KubeOp: &o})
				opID++
				i++
				t += 300 * time.Microsecond
				o = history.KubeOperation{ID: opID, Client: o.Client, Server: "kube-0", Call: o.Return + time.Microsecond,
					Return: o.Return + 200*time.Microsecond, Request: history.KubeRequest{Continue: cont}}
			}
		}
		add(history.Record{KubeOp: &o})
	}
	end := t + time.Second
	var wid int64
	// deliver sends a watch every change above from that passes sel.
	deliver := func(wid int64, sel string, from int64) {
		n := 0
		for _, c := range changes {
			crv, _ := facts.ParseRV(c.next.obj.ResourceVersion)
			if crv <= from {
				continue
			}
			typ, obj := "", c.next.obj
			prevM := c.prev.exists && (sel == "" || c.prev.obj.Labels["g"] == "a")
			nextM := !c.del && (sel == "" || c.next.obj.Labels["g"] == "a")
			switch {
			case c.del && prevM:
				typ = history.KubeDeleted
			case prevM && nextM:
				typ = history.KubeModified
			case nextM:
				typ = history.KubeAdded
			case prevM:
				typ = history.KubeDeleted
				obj = c.prev.obj
				obj.ResourceVersion = c.next.obj.ResourceVersion
			}
			if typ == "" {
				continue
			}
			o := obj
			add(history.Record{KubeEvent: &history.KubeEvent{Watch: wid, Time: c.at + 50*time.Microsecond, Type: typ, Object: &o}})
			// A bookmark after the first change, as kube-apiserver's watch
			// cache sends one soon after a watch starts, and now and then.
			if n++; n == 1 || n%1000 == 0 {
				add(history.Record{KubeEvent: &history.KubeEvent{Watch: wid, Time: c.at + 60*time.Microsecond,
					Type: history.KubeBookmark, Object: &history.Object{ResourceVersion: o.ResourceVersion}}})
			}
		}
	}
	yes := true
	for k, sn := range snaps {
		wid++
		req := history.KubeWatchRequest{ResourceVersion: "0", AllowBookmarks: true}
		if k >= cfg.StateWatches {
			req = history.KubeWatchRequest{ResourceVersionMatch: "NotOlderThan", SendInitialEvents: &yes, AllowBookmarks: true}
		}
		add(history.Record{KubeWatch: &history.KubeWatch{ID: wid, Client: 200 + k, Server: "kube-0", Call: sn.at, Request: req}})
		for i := range sn.items {
			add(history.Record{KubeEvent: &history.KubeEvent{Watch: wid, Time: sn.at + time.Microsecond, Type: history.KubeAdded,
				Object: &sn.items[i]}})
		}
		if req.SendInitialEvents != nil {
			add(history.Record{KubeEvent: &history.KubeEvent{Watch: wid, Time: sn.at + time.Microsecond, Type: history.KubeBookmark,
				Object: &history.Object{ResourceVersion: fmt.Sprint(sn.rv),
					Annotations: map[string]string{history.AnnotationInitialEventsEnd: "true"}}}})
		}
		deliver(wid, "", sn.rv)
		add(history.Record{KubeWatchEnd: &history.KubeWatchEnd{Watch: wid, Time: end, Reason: history.EndClient}})
	}
	if cfg.Oracle {
		p := h.Meta.Prefix
		add(history.Record{Watch: &history.Watch{ID: 1, Client: 300, Request: history.WatchRequest{Key: p, End: p[:len(p)-1] + "0",
			StartRevision: 100}}})
		for _, c := range changes {
			crv, _ := facts.ParseRV(c.next.obj.ResourceVersion)
			ev := history.Event{Type: history.EventPut, KV: history.KV{Key: p + c.next.obj.Name, Value: c.next.obj.Value,
				ModRevision: crv}, IsCreate: c.create}
			if c.del {
				ev = history.Event{Type: history.EventDelete, KV: history.KV{Key: p + c.next.obj.Name, ModRevision: crv}}
			}
			add(history.Record{WatchResponse: &history.WatchResponse{Watch: 1, Time: c.at, Revision: crv, Events: []history.Event{ev}}})
		}
	}
	for w := 0; w < cfg.Watches+cfg.SelWatches; w++ {
		wid++
		sel := ""
		if w >= cfg.Watches {
			sel = "g=a"
		}
		from := 100 + int64(w)*3
		add(history.Record{KubeWatch: &history.KubeWatch{ID: wid, Client: 100 + w, Server: "kube-0", Request: history.KubeWatchRequest{
			ResourceVersion: fmt.Sprint(from), LabelSelector: sel, AllowBookmarks: true}}})
		deliver(wid, sel, from)
		add(history.Record{KubeWatchEnd: &history.KubeWatchEnd{Watch: wid, Time: end, Reason: history.EndClient}})
	}
	return h
}
