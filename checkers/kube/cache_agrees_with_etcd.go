package kube

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/checkers/kube/model"
	"github.com/vigil-suite/vigil/history"
)

// etcdChange is one change of the API server's keys that etcd committed,
// as vigil's own etcd watch saw it.
type etcdChange struct {
	name, typ, value string
	ev               history.EventAt
}

// etcdOracle is what vigil's etcd watches of the API server's keys of the
// namespace show: every change by revision, and the revisions they vouch for.
type etcdOracle struct {
	at      map[int64]*etcdChange
	revs    []int64
	byName  map[string][]int64
	covered model.Intervals
	// fromStart: an etcd watch began before any write of the namespace
	// the history holds, so its first covered revisions settle that the
	// namespace held nothing before them. In a segment after a run's
	// first it holds only while the oracle's first watch is still open.
	fromStart bool
}

func newEtcdOracle(h *history.History) *etcdOracle {
	prefix := h.Meta.Prefix
	if prefix == "" {
		return nil
	}
	o := &etcdOracle{at: map[int64]*etcdChange{}, byName: map[string][]int64{}}
	found := false
	watches := h.Watches
	if h.Context != nil {
		// A segment's context holds the oracle's watches that ended in the
		// span its watches may reach back to: they vouch there.
		watches = append(append([]*history.WatchStream{}, h.Context.Watches...), h.Watches...)
	}
	firstWatch := time.Duration(math.MaxInt64)
	for _, w := range watches {
		if w.Request.Key != prefix {
			continue
		}
		found = true
		firstWatch = min(firstWatch, w.Call)
		if win := facts.ObservedWindow(w); win.Ok && win.First <= win.Last {
			o.covered = append(o.covered, [2]int64{win.First, win.Last})
		}
		for ri := range w.Responses {
			for ei, ev := range w.Responses[ri].Events {
				if !strings.HasPrefix(ev.KV.Key, prefix) {
					continue
				}
				rev := ev.Revision()
				if o.at[rev] != nil {
					continue
				}
				c := &etcdChange{name: ev.KV.Key[len(prefix):], value: ev.KV.Value,
					ev: history.EventAt{Watch: w.ID, Response: ri, Index: ei, Event: ev}}
				switch {
				case ev.Type == history.EventDelete:
					c.typ = history.KubeDeleted
				case ev.IsCreate || ev.KV.CreateRevision == rev:
					c.typ = history.KubeAdded
				default:
					c.typ = history.KubeModified
				}
				o.at[rev] = c
				o.revs = append(o.revs, rev)
				o.byName[c.name] = append(o.byName[c.name], rev)
			}
		}
	}
	if !found {
		return nil
	}
	o.fromStart = true
	for _, ops := range [][]history.KubeOperation{h.KubeOps, contextKubeOps(h)} {
		for i := range ops {
			if ops[i].Request.Verb.IsWrite() && ops[i].Call < firstWatch {
				o.fromStart = false
			}
		}
	}
	sort.Slice(o.revs, func(i, j int) bool { return o.revs[i] < o.revs[j] })
	for _, rs := range o.byName {
		sort.Slice(rs, func(i, j int) bool { return rs[i] < rs[j] })
	}
	sort.Slice(o.covered, func(i, j int) bool { return o.covered[i][0] < o.covered[j][0] })
	var merged model.Intervals
	for _, iv := range o.covered {
		if n := len(merged); n > 0 && iv[0] <= merged[n-1][1]+1 {
			merged[n-1][1] = max(merged[n-1][1], iv[1])
			continue
		}
		merged = append(merged, iv)
	}
	o.covered = merged
	return o
}

// segment returns the covered interval holding rev, and whether there is one.
func (o *etcdOracle) segment(rev int64) ([2]int64, bool) {
	i := sort.Search(len(o.covered), func(i int) bool { return o.covered[i][1] >= rev })
	if i < len(o.covered) && o.covered[i][0] <= rev {
		return o.covered[i], true
	}
	return [2]int64{}, false
}

// CheckCacheAgreesWithEtcd is kube/cache-agrees-with-etcd (SHOULD).
// When vigil ran the etcd under the API server it watched the API
// server's keys of the namespace there too; at every revision that watch
// vouches for, what the API server served must be what etcd committed:
// every object state it served (answers, list items, watch events) is a
// put of that object at that revision with that value; a DELETED event of
// a watch without a selector is a delete there; a watch without a
// selector delivers every change etcd committed in its window, with the
// right type; a complete list without a selector holds exactly the
// objects etcd held at the list's RV.
func CheckCacheAgreesWithEtcd(h *history.History, cfg check.Config) check.Result {
	return checkCacheAgreesWithEtcd(h, func() *model.Model { return model.Build(h) }, cfg)
}

func checkCacheAgreesWithEtcd(h *history.History, buildModel func() *model.Model, cfg check.Config) check.Result {
	or := newEtcdOracle(h)
	if or == nil {
		return check.Skip(NameCacheAgreesWithEtcd, "the history has no etcd watch of the API server's keys (vigil did not "+
			"run the etcd under the API server)", map[string]float64{})
	}
	m := buildModel()
	col := check.NewCollector(cfg)
	judged := 0
	reported := map[[2]string]bool{}
	served := func(name string, rv int64, value, typ string, selector bool, mk func() check.Violation) {
		if m.Objs[name] == nil || rv == 0 {
			return
		}
		if _, ok := or.segment(rv); !ok {
			return
		}
		judged++
		e := or.at[rv]
		var why string
		switch {
		case e == nil:
			why = fmt.Sprintf("etcd committed no change of the namespace at revision %d", rv)
		case e.name != name:
			why = fmt.Sprintf("etcd's change at revision %d is a %s of %s", rv, e.typ, e.name)
		case typ == history.KubeDeleted && !selector && e.typ != history.KubeDeleted:
			why = fmt.Sprintf("etcd's change of %s at revision %d is a put, not a delete", name, rv)
		case typ != history.KubeDeleted && e.typ == history.KubeDeleted:
			why = fmt.Sprintf("etcd deleted %s at revision %d", name, rv)
		case typ != history.KubeDeleted && e.value != "" && value != e.value:
			why = fmt.Sprintf("etcd holds value %q for %s at revision %d", e.value, name, rv)
		default:
			return
		}
		k := [2]string{name, fmt.Sprint(rv)}
		if reported[k] {
			return
		}
		reported[k] = true
		v := mk()
		v.Guarantee, v.Key, v.Revision = ErrCacheAgreesWithEtcd, name, rv
		v.Message = fmt.Sprintf("%s served %s at RV %d (value %q), but %s", v.Message, name, rv, value, why)
		v.Want, v.Got = "what etcd committed", fmt.Sprintf("%s %s at RV %d", typ, name, rv)
		if e != nil {
			v.Events = []history.EventAt{e.ev}
		}
		col.Add(v)
	}
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Response == nil {
			continue
		}
		v := func() check.Violation {
			return check.Violation{Client: o.Client, Message: model.OpText(o), Operations: []int64{o.ID}}
		}
		if o.Request.DryRun || o.Request.Verb == history.KubeDeleteCollection {
			continue // a dry run's answer was never stored; a delete-collection's items are deletions
		}
		if ob := o.Response.Object; ob != nil && o.Request.Verb != history.KubeDelete &&
			!model.PurgedBy(o) { // a purge's answer was never stored
			served(ob.Name, model.ObjRV(ob), ob.Value, history.KubeAdded+"|"+history.KubeModified, false, v)
		}
		for j := range o.Response.Items {
			it := &o.Response.Items[j]
			served(it.Name, model.ObjRV(it), it.Value, history.KubeAdded+"|"+history.KubeModified, false, v)
		}
		etcdListComplete(m, o, or, col)
	}
	for _, kw := range m.Watches {
		w := kw.Stream
		for i := 0; i < kw.LiveEnd(); i++ {
			e := &w.Events[i]
			if e.Object == nil || e.Type == history.KubeBookmark {
				continue
			}
			served(e.Object.Name, kw.Rv(i), e.Object.Value, e.Type, kw.Sel != nil, func() check.Violation {
				return check.Violation{Watch: w.ID, Client: w.Client, Message: fmt.Sprintf("watch %d (client %d)", w.ID, w.Client),
					KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}}
			})
		}
		if kw.Sel != nil || !kw.StartKnown || kw.Mode == model.WatchRefused || kw.Mode == model.WatchUnjudged {
			continue
		}
		i := sort.Search(len(or.revs), func(i int) bool { return or.revs[i] > kw.Start })
		for ; i < len(or.revs) && or.revs[i] <= kw.Last; i++ {
			rev := or.revs[i]
			c := or.at[rev]
			if m.Objs[c.name] == nil {
				continue
			}
			judged++
			j := kw.EventAt(rev)
			if j >= 0 && w.Events[j].Object.Name == c.name && w.Events[j].Type == c.typ {
				continue
			}
			got := "nothing"
			v := check.Violation{Guarantee: ErrCacheAgreesWithEtcd, Watch: w.ID, Client: w.Client, Key: c.name, Revision: rev,
				Want: fmt.Sprintf("%s %s at RV %d", c.typ, c.name, rev), Events: []history.EventAt{c.ev}}
			if j >= 0 {
				got = model.EventText(w.Events[j])
				v.KubeEvents = []history.KubeEventAt{model.EventAt(w, j)}
			}
			v.Got = got
			v.Message = fmt.Sprintf("watch %d (client %d) delivered %s where etcd committed a %s of %s at revision %d; the watch "+
				"vouches for RVs %d..%d", w.ID, w.Client, got, c.typ, c.name, rev, kw.Start+1, kw.Last)
			col.Add(v)
		}
	}
	figures := map[string]float64{"etcd_changes": float64(len(or.revs)), "comparisons": float64(judged)}
	if judged == 0 {
		return check.Skip(NameCacheAgreesWithEtcd, "no answer or event of the API server lies in the revisions the etcd "+
			"watch vouches for", figures)
	}
	return col.Result(NameCacheAgreesWithEtcd, figures)
}

// etcdListComplete compares a complete list without a selector with the
// objects etcd held at the list's RV, where the etcd watch settles them
// (it saw their last change before the RV, or it started before the
// namespace held anything).
func etcdListComplete(m *model.Model, o *history.KubeOperation, or *etcdOracle, col *check.Collector) {
	if o.Request.Verb != history.KubeList || o.Request.LabelSelector != "" || o.Request.FieldSelector != "" || !completeList(o) {
		return
	}
	P, ok := facts.ParseRV(o.Response.ListRV)
	if !ok {
		return
	}
	seg, ok := or.segment(P)
	if !ok {
		return
	}
	fromStart := or.fromStart && len(or.covered) > 0 && seg == or.covered[0]
	in := map[string]bool{}
	for _, it := range o.Response.Items {
		in[it.Name] = true
	}
	for name, revs := range or.byName {
		if m.Objs[name] == nil {
			continue
		}
		i := sort.Search(len(revs), func(i int) bool { return revs[i] > P })
		var c *etcdChange
		if i > 0 && revs[i-1] >= seg[0] {
			c = or.at[revs[i-1]]
		} else if !fromStart {
			continue
		}
		exists := c != nil && c.typ != history.KubeDeleted
		if exists == in[name] {
			continue
		}
		v := check.Violation{Guarantee: ErrCacheAgreesWithEtcd, Client: o.Client, Key: name, Revision: P,
			Operations: []int64{o.ID}}
		if exists {
			v.Message = fmt.Sprintf("%s answered at RV %d without %s, which etcd held then (%s at revision %d)", model.OpText(o), P,
				name, c.typ, revs[i-1])
			v.Want, v.Got, v.Events = name, "absent", []history.EventAt{c.ev}
		} else {
			v.Message = fmt.Sprintf("%s answered at RV %d with %s, which etcd did not hold then", model.OpText(o), P, name)
			v.Want, v.Got = "absent", name
			if c != nil {
				v.Message += fmt.Sprintf(" (deleted at revision %d)", revs[i-1])
				v.Events = []history.EventAt{c.ev}
			}
		}
		col.Add(v)
	}
}

// contextKubeOps are the Kubernetes writes of h's context, if any.
func contextKubeOps(h *history.History) []history.KubeOperation {
	if h.Context == nil {
		return nil
	}
	return h.Context.KubeOps
}
