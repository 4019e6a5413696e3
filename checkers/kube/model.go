package kube

import (
	"math"
	"sort"
	"sync"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// kubeModel is what a history proves about the objects of the resource:
// every committed change it can place at an RV, per object, and the
// changes it knows happened (or may have) without knowing where.
//
// A change is known from an acknowledged create or update (its response
// names the RV), from an observation of a written value (a get, a list
// item or a watch event: values are unique per write, so an observed
// value at RV r proves its write committed at r, which resolves writes of
// unknown outcome), or, for deletions, from a DELETED event on a watch
// without a selector, matched to a delete operation whose time allows it
// (a ConfigMap delete answers a Status without the deletion's RV).
//
// An acknowledged delete no watch placed is pending: it happened at an RV
// the history bounds but does not name. A write of unknown outcome no
// read or event shows may or may not have happened. Both only ever make a
// check more lenient: a state they could explain is accepted.
//
// Objects the workload never wrote (e.g. kube-root-ca.crt, which a
// controller manager puts in every namespace) are ignored.
type kubeModel struct {
	h       *history.History
	objs    map[string]*kobj
	names   []string // sorted
	writes  []*kwrite
	byValue map[string]*kwrite
	// changes holds every known change, sorted by RV; changeAt the first
	// known change at each RV.
	changes  []*kchange
	changeAt map[int64]*kchange
	// lo answers "the highest RV of a write acknowledged before t"; hi
	// "the lowest RV of a committed write called after t".
	lo, hi timeIndex
	// seen answers "the highest RV an acknowledged write or a consistent
	// read had shown before t": the store had passed it, so a write called
	// after t commits above it.
	seen    timeIndex
	watches []*kwatch
	byWatch map[int64]*kwatch
	// foreign counts observations of objects the workload never wrote.
	foreign int
	// valueReuse counts writes that reused another write's value (a
	// harness bug: values must be unique).
	valueReuse int
	// listStates memoizes listState: several checks judge one list.
	listStatesMu sync.Mutex
	listStates   map[[2]int64]stateCheck
}

type writeOutcome int8

const (
	wAcked   writeOutcome = iota // 2xx
	wRefused                     // a definite error answer: it did not happen
	wUnknown                     // no answer, or 5xx: it may have happened
)

// kwrite is one create, update or delete operation.
type kwrite struct {
	op      *history.KubeOperation
	verb    history.KubeVerb
	name    string
	value   string
	labels  map[string]string
	outcome writeOutcome
	// rv is where it committed: from its response, or resolved by an
	// observation (how says which); 0 when the history does not place it.
	rv  int64
	how kref
}

// kref points at a record: an operation (idx: which list item, -1 for
// the answer's object), or event idx of a watch.
type kref struct {
	op    int64
	watch int64
	idx   int32
}

// kchange is one committed change of one object.
type kchange struct {
	obj    *kobj
	rv     int64
	del    bool
	value  string
	labels map[string]string
	w      *kwrite
}

// kobj is one object name's timeline. A name may be deleted and created
// again.
type kobj struct {
	name    string
	changes []*kchange // sorted by RV
	// delSpans are deletions the history cannot place: an acknowledged
	// delete no watch delivered (certain), or an unknown-outcome delete
	// nothing resolved. putSpans are unknown-outcome creates and updates
	// no observation showed.
	delSpans []kspan
	putSpans []kspan
}

// kspan says a change's RV lies in (lo, hi); hi is MaxInt64 when unbounded.
type kspan struct {
	lo, hi  int64
	w       *kwrite
	certain bool // it happened (acknowledged); else it may have
}

// buildKubeModel reads the whole history once. The checks of one Kube()
// list share the model of the history they judge (see kubeShared); a check
// called on its own builds its own.
func buildKubeModel(h *history.History) *kubeModel {
	m := &kubeModel{h: h, objs: map[string]*kobj{}, byValue: map[string]*kwrite{}, changeAt: map[int64]*kchange{},
		byWatch: map[int64]*kwatch{}}
	m.collectWrites()
	m.indexTimes()
	m.observe()
	m.indexTimes() // writes resolved by observations bound times too
	m.placeDeletions()
	m.indexTimes()
	m.leftovers()
	for _, o := range m.objs {
		sort.Slice(o.changes, func(i, j int) bool { return o.changes[i].rv < o.changes[j].rv })
	}
	sort.Slice(m.changes, func(i, j int) bool { return m.changes[i].rv < m.changes[j].rv })
	for n := range m.objs {
		m.names = append(m.names, n)
	}
	sort.Strings(m.names)
	m.classifyWatches()
	return m
}

func (m *kubeModel) collectWrites() {
	for i := range m.h.KubeOps {
		o := &m.h.KubeOps[i]
		if !o.Request.Verb.IsWrite() {
			continue
		}
		w := &kwrite{op: o, verb: o.Request.Verb, name: kopName(o)}
		if w.name == "" {
			continue
		}
		if o.Request.Object != nil {
			w.value, w.labels = o.Request.Object.Value, o.Request.Object.Labels
		}
		switch {
		case o.Response != nil:
			w.outcome = wAcked
			// A delete answered with a Status (ConfigMaps) has no RV: 0.
			w.rv = objRV(o.Response.Object)
		case o.Status != nil && o.Status.Code < 500:
			w.outcome = wRefused
		default:
			w.outcome = wUnknown
		}
		m.writes = append(m.writes, w)
		if m.objs[w.name] == nil {
			m.objs[w.name] = &kobj{name: w.name}
		}
		if w.verb != history.KubeDelete && w.value != "" {
			if m.byValue[w.value] != nil {
				m.valueReuse++
			} else {
				m.byValue[w.value] = w
			}
		}
		if w.outcome == wAcked && w.rv > 0 {
			m.addChange(w, w.rv)
		}
	}
}

// addChange records that w committed at rv. A second change at one RV is
// not kept (kube/rv-order reports acknowledged writes sharing an RV).
func (m *kubeModel) addChange(w *kwrite, rv int64) *kchange {
	if c := m.changeAt[rv]; c != nil {
		return nil
	}
	o := m.objs[w.name]
	c := &kchange{obj: o, rv: rv, del: w.verb == history.KubeDelete, value: w.value, labels: w.labels, w: w}
	if c.del {
		c.value, c.labels = "", nil
	}
	o.changes = append(o.changes, c)
	m.changes = append(m.changes, c)
	m.changeAt[rv] = c
	return c
}

// indexTimes builds lo (acknowledged writes by return time) and hi
// (committed writes by call time).
func (m *kubeModel) indexTimes() {
	var lo, hi []tent
	for _, w := range m.writes {
		if w.rv == 0 || w.outcome == wRefused {
			continue
		}
		if w.outcome == wAcked {
			lo = append(lo, tent{w.op.Return, w.rv, w.op.ID})
		}
		hi = append(hi, tent{w.op.Call, w.rv, w.op.ID})
	}
	m.lo, m.hi = newTimeIndex(lo, true), newTimeIndex(hi, false)
	for i := range m.h.KubeOps {
		o := &m.h.KubeOps[i]
		if o.Response == nil || o.Request.Verb.IsWrite() {
			continue
		}
		if k, _ := readKindOf(o.Request); k != rkConsistent {
			continue
		}
		if o.Request.Verb == history.KubeList {
			if n, ok := facts.ParseRV(o.Response.ListRV); ok {
				lo = append(lo, tent{o.Return, n, o.ID})
			}
		} else if n := objRV(o.Response.Object); n > 0 {
			lo = append(lo, tent{o.Return, n, o.ID})
		}
	}
	m.seen = newTimeIndex(lo, true)
}

// kobservation is one object state a read or an event showed.
type kobservation struct {
	obj *history.Object
	ref kref
}

// eachObservation calls f for every object state the history shows, other
// than the responses of writes: get answers, list items, and ADDED and
// MODIFIED events.
func eachObservation(h *history.History, f func(kobservation)) {
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Response == nil || o.Request.Verb.IsWrite() {
			continue
		}
		if o.Response.Object != nil {
			f(kobservation{o.Response.Object, kref{op: o.ID, idx: -1}})
		}
		for j := range o.Response.Items {
			f(kobservation{&o.Response.Items[j], kref{op: o.ID, idx: int32(j)}})
		}
	}
	for _, w := range h.KubeWatches {
		for i := range w.Events {
			e := &w.Events[i]
			if (e.Type == history.KubeAdded || e.Type == history.KubeModified) && e.Object != nil {
				f(kobservation{e.Object, kref{watch: w.ID, idx: int32(i)}})
			}
		}
	}
}

// observe places the writes that observations resolve. An observation no
// write explains (a value nobody wrote, a refused write's value, a value at
// another RV than its write's) places nothing; the checks that judge it
// say why (explainValue).
func (m *kubeModel) observe() {
	eachObservation(m.h, func(ob kobservation) {
		if m.objs[ob.obj.Name] == nil {
			m.foreign++
			return
		}
		rv := objRV(ob.obj)
		w := m.byValue[ob.obj.Value]
		if rv == 0 || w == nil || w.name != ob.obj.Name || w.outcome == wRefused || w.rv != 0 || m.changeAt[rv] != nil {
			return
		}
		w.rv, w.how = rv, ob.ref
		m.addChange(w, rv)
	})
}

// placeDeletions matches the DELETED events of watches without a selector
// to the delete operations that can explain them: same object, the event's
// RV above every write acknowledged before the delete was called, and (for
// an acknowledged delete) below every write called after it returned.
func (m *kubeModel) placeDeletions() {
	type cand struct {
		name string
		rv   int64
		ref  kref
	}
	var cands []cand
	seen := map[int64]bool{}
	for _, w := range m.h.KubeWatches {
		if w.Request.LabelSelector != "" {
			continue
		}
		for i := range w.Events {
			e := &w.Events[i]
			if e.Type != history.KubeDeleted || e.Object == nil || m.objs[e.Object.Name] == nil {
				continue
			}
			rv := objRV(e.Object)
			if rv == 0 || seen[rv] {
				continue
			}
			seen[rv] = true
			cands = append(cands, cand{e.Object.Name, rv, kref{watch: w.ID, idx: int32(i)}})
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].rv < cands[j].rv })
	open := map[string][]*kwrite{} // deletes not yet placed, in history order
	for _, w := range m.writes {
		if w.verb == history.KubeDelete && w.outcome != wRefused && w.rv == 0 {
			open[w.name] = append(open[w.name], w)
		}
	}
	for _, o := range m.objs {
		sort.Slice(o.changes, func(i, j int) bool { return o.changes[i].rv < o.changes[j].rv })
	}
	// Each deletion goes to the delete that can have made it: its time
	// window holds the RV; its precondition (if any) names the state just
	// before. An acknowledged delete is preferred to one of unknown
	// outcome (that one may not have happened at all). A second, lenient
	// pass ignores preconditions, so that a delete accepted on a stale
	// precondition is still placed (and kube/optimistic-concurrency sees it).
	todo := cands
	for pass := 0; pass < 2; pass++ {
		var left []cand
		for _, c := range todo {
			if m.changeAt[c.rv] != nil {
				continue // this deletion, or another change (the watch checks say which)
			}
			if d := m.deleterOf(open[c.name], c.name, c.rv, pass == 0); d != nil {
				d.rv, d.how = c.rv, c.ref
				m.insertChange(m.addChange(d, c.rv))
				continue
			}
			left = append(left, c) // after the last pass: no delete can have made it
		}
		todo = left
	}
}

// deleterOf picks, among the deletes not yet placed, the one that made the
// deletion of name at rv; strict also asks that its precondition RV be the
// object's state just before.
func (m *kubeModel) deleterOf(ds []*kwrite, name string, rv int64, strict bool) *kwrite {
	var best *kwrite
	for _, d := range ds {
		if d.rv != 0 {
			continue
		}
		if lo, _ := m.seen.maxBefore(d.op.Call); rv <= lo {
			continue
		}
		if d.outcome == wAcked {
			if hi, _ := m.hi.minAfter(d.op.Return); rv >= hi {
				continue
			}
		}
		if p := preconditionRV(d.op); strict && p > 0 {
			if prev := m.objs[name].at(rv - 1); prev == nil || prev.rv != p {
				continue
			}
		}
		if best == nil || d.outcome == wAcked && best.outcome != wAcked {
			best = d
		}
	}
	return best
}

// insertChange keeps an object's changes sorted after addChange appended one.
func (m *kubeModel) insertChange(c *kchange) {
	if c == nil {
		return
	}
	o := c.obj
	for i := len(o.changes) - 1; i > 0 && o.changes[i-1].rv > o.changes[i].rv; i-- {
		o.changes[i-1], o.changes[i] = o.changes[i], o.changes[i-1]
	}
}

// leftovers turns the writes the history does not place into spans.
func (m *kubeModel) leftovers() {
	for _, w := range m.writes {
		if w.rv != 0 || w.outcome == wRefused {
			continue
		}
		lo, _ := m.seen.maxBefore(w.op.Call)
		s := kspan{lo: lo, hi: math.MaxInt64, w: w, certain: w.outcome == wAcked}
		if s.certain {
			s.hi, _ = m.hi.minAfter(w.op.Return)
		}
		if s.hi-1 <= s.lo {
			// No RV fits (a write's RV contradicts real time, which
			// kube/rv-order reports): bound it no more.
			s.hi, s.certain = math.MaxInt64, false
		}
		o := m.objs[w.name]
		if w.verb == history.KubeDelete {
			o.delSpans = append(o.delSpans, s)
		} else {
			o.putSpans = append(o.putSpans, s)
		}
	}
}
