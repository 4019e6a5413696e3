package kube

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
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

// etcdListComplete compares a complete list without a selector with the
// objects etcd held at the list's RV, where the etcd watch settles them
// (it saw their last change before the RV, or it started before the
// namespace held anything).
func (m *kubeModel) etcdListComplete(o *history.KubeOperation, or *etcdOracle, col *check.Collector) {
	if o.Request.Verb != history.KubeList || o.Request.LabelSelector != "" || !completeList(o) {
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
	fromStart := len(or.covered) > 0 && seg == or.covered[0]
	in := map[string]bool{}
	for _, it := range o.Response.Items {
		in[it.Name] = true
	}
	for name, revs := range or.byName {
		if m.objs[name] == nil {
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
			v.Message = fmt.Sprintf("%s answered at RV %d without %s, which etcd held then (%s at revision %d)", opText(o), P,
				name, c.typ, revs[i-1])
			v.Want, v.Got, v.Events = name, "absent", []history.EventAt{c.ev}
		} else {
			v.Message = fmt.Sprintf("%s answered at RV %d with %s, which etcd did not hold then", opText(o), P, name)
			v.Want, v.Got = "absent", name
			if c != nil {
				v.Message += fmt.Sprintf(" (deleted at revision %d)", revs[i-1])
				v.Events = []history.EventAt{c.ev}
			}
		}
		col.Add(v)
	}
}

// writeFits judges a committed change against the object's state just
// before it, where the history settles that state.
func (m *kubeModel) writeFits(c *kchange) (check.Violation, bool) {
	o := c.obj
	prev := o.at(c.rv - 1)
	from := int64(0)
	if prev != nil {
		from = prev.rv
	}
	w := c.w
	v := check.Violation{Guarantee: ErrLinearizable, Client: w.op.Client, Key: o.name, Revision: c.rv,
		Operations: []int64{w.op.ID}}
	if prev != nil {
		m.evidence(&v, prev.ref())
	}
	if w.how != (kref{}) {
		m.evidence(&v, w.how)
	}
	switch {
	case w.verb == history.KubeCreate && prev.exists() && o.settled(from, c.rv-1, false):
		v.Message = fmt.Sprintf("%s created %s at RV %d, but it existed then: %s made it at RV %d and nothing removed it",
			opText(w.op), o.name, c.rv, m.changeText(prev), prev.rv)
		v.Want, v.Got = "409 AlreadyExists", "created"
		return v, true
	case w.verb != history.KubeCreate && !prev.exists() && spanIn(o.putSpans, from, c.rv-1) == nil:
		what := "it was never created before"
		if prev != nil {
			what = fmt.Sprintf("%s deleted it at RV %d", m.changeText(prev), prev.rv)
		}
		v.Message = fmt.Sprintf("%s changed %s at RV %d, but it did not exist then: %s", opText(w.op), o.name, c.rv, what)
		v.Want, v.Got = "404 NotFound", "accepted"
		return v, true
	case w.verb != history.KubeCreate && prev.exists() && o.settled(from, c.rv-1, true):
		if p := preconditionRV(w.op); p > 0 && p != prev.rv {
			v.Message = fmt.Sprintf("%s with precondition RV %d took effect at RV %d, but %s was then at RV %d (%s)",
				opText(w.op), p, c.rv, o.name, prev.rv, m.changeText(prev))
			v.Want, v.Got = "409 Conflict", "accepted"
			return v, true
		}
	}
	return v, false
}

// readFits judges a consistent read, or a write refused with 404 or 409,
// against the RVs [lo, hi] its state may come from. The returned
// violation's message lacks its subject.
func (m *kubeModel) readFits(o *history.KubeOperation, lo, hi int64) (check.Violation, bool) {
	if o.Request.Verb == history.KubeList {
		P, ok := facts.ParseRV(o.Response.ListRV)
		if !ok {
			return check.Violation{}, false
		}
		v := check.Violation{Client: o.Client, Revision: P, Operations: []int64{o.ID}}
		if P < lo || P > hi {
			v.Message = fmt.Sprintf("answered at RV %d", P)
			v.Want, v.Got = fmt.Sprintf("%d..%s", lo, hiText(hi)), fmt.Sprint(P)
			return v, true
		}
		sel, err := parseSelector(o.Request.LabelSelector)
		if err != nil {
			return v, false
		}
		items := o.Response.Items
		sc := m.listState(o, sel, P)
		if len(sc.issues) == 0 {
			return v, false
		}
		text, refs := m.issueText(sc.issues[0], items, fmt.Sprint(P))
		v.Key = sc.issues[0].name
		v.Message = fmt.Sprintf("answered at RV %d, but its items are not the state there: %s", P, text)
		if n := len(sc.issues); n > 1 {
			v.Message += fmt.Sprintf(" (and %d more)", n-1)
		}
		m.evidence(&v, refs...)
		return v, true
	}
	if o.Request.Verb == history.KubeGet {
		return m.getSeesBefore(o, lo, hi)
	}
	// A refused write: a read of the state that made it fail.
	name := kopName(o)
	ob := m.objs[name]
	if ob == nil {
		return check.Violation{}, false
	}
	v := check.Violation{Client: o.Client, Key: name, Operations: []int64{o.ID}}
	code := o.Status.Code
	switch {
	case code == 404:
		if len(ob.absentSet(nil, lo, hi)) > 0 {
			return v, false
		}
		st := ob.at(lo)
		v.Revision = st.rv
		v.Message = fmt.Sprintf("was answered 404, but %s existed throughout: %s made it at RV %d", name, m.changeText(st), st.rv)
		v.Want, v.Got = "success or 409", "404"
		m.evidence(&v, st.ref())
		return v, true
	case o.Request.Verb == history.KubeCreate: // 409 AlreadyExists
		if ob.mayExistIn(lo, hi, 0) {
			return v, false
		}
		v.Message = fmt.Sprintf("was answered 409, but %s did not exist at any RV it may have seen", name)
		v.Want, v.Got = "created", "409"
		return v, true
	default: // 409 Conflict on a precondition
		p := preconditionRV(o)
		if p == 0 || preconditionUID(o) != "" || ob.mayExistIn(lo, hi, p) {
			return v, false
		}
		c := ob.exactly(p)
		if !c.exists() {
			return v, false
		}
		v.Revision = p
		v.Message = fmt.Sprintf("was answered 409 Conflict on precondition RV %d, but %s was at RV %d (%s) throughout, "+
			"or absent", p, name, p, m.changeText(c))
		v.Want, v.Got = "accepted", "409"
		m.evidence(&v, c.ref())
		return v, true
	}
}

// mayExistIn reports whether the object may exist at some RV in [lo, hi]
// with an RV other than not (0: any RV): a known state there, or a create
// or update the history cannot place that may lie before hi.
func (o *kobj) mayExistIn(lo, hi, not int64) bool {
	if s := spanIn(o.putSpans, 0, hi); s != nil {
		return true
	}
	if c := o.at(lo); c.exists() && c.rv != not {
		return true
	}
	for c := o.next(lo); c != nil && c.rv <= hi; c = o.next(c.rv) {
		if c.exists() && c.rv != not {
			return true
		}
	}
	return false
}

// reportListState judges a list's items as the state at P and reports
// every issue under g, prefixed with what the list was.
func (m *kubeModel) reportListState(o *history.KubeOperation, P int64, col *check.Collector, g error, what string) {
	sel, err := parseSelector(o.Request.LabelSelector)
	if err != nil {
		return
	}
	items := o.Response.Items
	sc := m.listState(o, sel, P)
	for _, iss := range sc.issues {
		text, refs := m.issueText(iss, items, fmt.Sprint(P))
		v := check.Violation{Guarantee: g, Message: fmt.Sprintf("%s %s at RV %d: %s", opText(o), what, P, text),
			Client: o.Client, Key: iss.name, Revision: iss.rv, Operations: []int64{o.ID}}
		m.evidence(&v, refs...)
		col.Add(v)
	}
}

// listState judges a list answer's items as the state at P (complete
// when the list came in one page), once per list and P.
func (m *kubeModel) listState(o *history.KubeOperation, sel *labelSelector, P int64) stateCheck {
	k := [2]int64{o.ID, P}
	m.listStatesMu.Lock()
	defer m.listStatesMu.Unlock()
	if sc, ok := m.listStates[k]; ok {
		return sc
	}
	if m.listStates == nil {
		m.listStates = map[[2]int64]stateCheck{}
	}
	sc := m.verifyState(o.Response.Items, sel, P, P, completeList(o))
	m.listStates[k] = sc
	return sc
}

// getSeesBefore judges a get's answer against the window [lo, hi] of RVs
// its state may come from: the returned object is its object's state at
// some RV there, or, for a 404, the object may be absent at some RV there.
// The violation it returns lacks Guarantee and the message's subject.
func (m *kubeModel) getSeesBefore(o *history.KubeOperation, lo, hi int64) (check.Violation, bool) {
	name := o.Request.Name
	ob := m.objs[name]
	if ob == nil {
		return check.Violation{}, false
	}
	v := check.Violation{Client: o.Client, Key: name, Operations: []int64{o.ID}}
	if o.Response == nil { // 404
		if len(ob.absentSet(nil, lo, hi)) > 0 {
			return v, false
		}
		st := ob.at(lo)
		v.Revision = st.rv
		v.Message = fmt.Sprintf("answered 404, but %s exists from RV %d (%s made it, value %q) through RV %s",
			name, st.rv, m.changeText(st), st.value, stateRVText(lo, hi))
		v.Want, v.Got = fmt.Sprintf("%s at RV %d or later", name, st.rv), "404"
		m.evidence(&v, st.ref())
		return v, true
	}
	it := o.Response.Object
	r := objRV(it)
	if r == 0 {
		return v, false
	}
	v.Revision = r
	c := ob.exactly(r)
	switch {
	case c == nil:
		why, refs := m.explainValue(name, r, it.Value)
		v.Message = fmt.Sprintf("returned %s at RV %d with value %q, which no write explains: %s", name, r, it.Value, why)
		v.Want, v.Got = "a committed state", fmt.Sprintf("%q at RV %d", it.Value, r)
		m.evidence(&v, refs...)
		return v, true
	case c.del:
		v.Message = fmt.Sprintf("returned %s at RV %d, the RV of its deletion by %s", name, r, m.changeText(c))
		v.Want, v.Got = "a state of the object", "its deletion's RV"
		m.evidence(&v, c.ref())
		return v, true
	case c.value != it.Value:
		v.Message = fmt.Sprintf("returned %s at RV %d with value %q, but %s wrote %q there", name, r, it.Value,
			m.changeText(c), c.value)
		v.Want, v.Got = fmt.Sprintf("%q", c.value), fmt.Sprintf("%q", it.Value)
		m.evidence(&v, c.ref())
		return v, true
	}
	up, nx, sp := ob.upper(c)
	switch {
	case up < lo && sp != nil:
		v.Message = fmt.Sprintf("returned %s at RV %d (value %q), but %s deleted it after that, at an RV between %d and %d, "+
			"at or below %d", name, r, it.Value, m.writeText(sp.w), sp.lo+1, sp.hi-1, lo)
		v.Want, v.Got = fmt.Sprintf("a state at RV %d or later", lo), fmt.Sprintf("RV %d", r)
		v.Operations = append(v.Operations, sp.w.op.ID)
		return v, true
	case up < lo:
		v.Message = fmt.Sprintf("returned %s at RV %d (value %q), but %s changed it at RV %d, at or below %d", name, r,
			it.Value, m.changeText(nx), nx.rv, lo)
		v.Want, v.Got = fmt.Sprintf("%s as of RV %d or later", name, lo), fmt.Sprintf("RV %d", r)
		m.evidence(&v, nx.ref())
		return v, true
	case r > hi:
		v.Message = fmt.Sprintf("returned %s at RV %d, above %d, the highest RV its answer can reflect", name, r, hi)
		v.Want, v.Got = fmt.Sprintf("<= %d", hi), fmt.Sprint(r)
		return v, true
	}
	return v, false
}

// belowAfter returns the lowest RV the store is proven to have had after
// t (an acknowledged or placed write called after t commits above it; a
// consistent list called after t answers at or above it... so the store
// was below that write's RV, and at most that list's RV, after t), with
// the operation that proves it; MaxInt64 if nothing does.
func (m *kubeModel) belowAfter(x *linIndex, t time.Duration) (int64, int64) {
	w, wOp := x.hiW.minAfter(t)
	if w != math.MaxInt64 {
		w-- // the store was below the write's RV when it was called
	}
	l, lOp := x.hiL.minAfter(t)
	if l < w {
		return l, lOp
	}
	return w, wOp
}

// verifyState judges items as the state at some RV in [a, b] under sel.
// With complete false only the items are judged (a page of a list).
func (m *kubeModel) verifyState(items []history.Object, sel *labelSelector, a, b int64, complete bool) stateCheck {
	allowed := ivs{{a, b}}
	var sc stateCheck
	seen := make(map[string]int, len(items))
	for i := range items {
		it := &items[i]
		o := m.objs[it.Name]
		if o == nil {
			continue
		}
		if j, dup := seen[it.Name]; dup {
			sc.issues = append(sc.issues, stateIssue{kind: issDuplicate, name: it.Name, item: i, prev: j, rv: objRV(it)})
			continue
		}
		seen[it.Name] = i
		rv := objRV(it)
		if rv == 0 {
			continue // kube/rv-format's business
		}
		if sel != nil && !sel.matches(it.Labels) {
			sc.issues = append(sc.issues, stateIssue{kind: issSelector, name: it.Name, item: i, rv: rv})
		}
		c := o.exactly(rv)
		switch {
		case c == nil:
			sc.issues = append(sc.issues, stateIssue{kind: issUnexplained, name: it.Name, item: i, rv: rv})
			continue
		case c.del:
			sc.issues = append(sc.issues, stateIssue{kind: issDeletedRV, name: it.Name, item: i, rv: rv, other: c})
			continue
		case c.value != it.Value:
			sc.issues = append(sc.issues, stateIssue{kind: issWrongValue, name: it.Name, item: i, rv: rv, other: c})
			continue
		}
		up, nx, sp := o.upper(c)
		next := intersectIvs(allowed, ivs{{rv, up}})
		if len(next) > 0 {
			allowed = next
			continue
		}
		iss := stateIssue{kind: issSplit, name: it.Name, item: i, rv: rv, other: nx, span: sp}
		switch {
		case rv > allowed[len(allowed)-1][1]:
			iss.kind = issNewer
		case up < allowed[0][0]:
			iss.kind = issStale
		}
		sc.issues = append(sc.issues, iss)
	}
	if complete {
		for _, name := range m.names {
			if _, in := seen[name]; in {
				continue
			}
			o := m.objs[name]
			lo, hi := allowed[0][0], allowed[len(allowed)-1][1]
			next := intersectIvs(allowed, o.absentSet(sel, lo, hi))
			if len(next) > 0 {
				allowed = next
				continue
			}
			st := o.at(hi)
			sc.issues = append(sc.issues, stateIssue{kind: issMissing, name: name, item: -1, rv: st.rv, other: st})
		}
	}
	sc.ok = len(sc.issues) == 0
	sc.lo, sc.S = allowed[0][0], allowed[len(allowed)-1][1]
	return sc
}

// absentSet returns the RVs in [lo, hi] at which the object is absent, or
// does not match sel, or may be either (a change the history cannot place
// may lie before).
func (o *kobj) absentSet(sel *labelSelector, lo, hi int64) ivs {
	var out ivs
	add := func(s, e int64) {
		if n := len(out); n > 0 && out[n-1][1] >= s-1 {
			out[n-1][1] = max(out[n-1][1], e)
			return
		}
		out = append(out, [2]int64{s, e})
	}
	c := o.at(lo)
	start := lo
	i := sort.Search(len(o.changes), func(i int) bool { return o.changes[i].rv > lo })
	for {
		end := hi
		if i < len(o.changes) && o.changes[i].rv <= hi {
			end = o.changes[i].rv - 1
		}
		from := int64(0)
		if c != nil {
			from = c.rv
		}
		if !c.exists() || !sel.matches(c.labels) || !o.settled(from, end, sel != nil) {
			add(start, end)
		}
		if end == hi {
			return out
		}
		c, start = o.changes[i], o.changes[i].rv
		i++
	}
}

// issueText says what an issue means, for a message that already named
// the set ("list operation 12 at RV 500: ..."), and the records proving it.
func (m *kubeModel) issueText(iss stateIssue, items []history.Object, stateRV string) (string, []kref) {
	var it *history.Object
	if iss.item >= 0 && iss.item < len(items) {
		it = &items[iss.item]
	}
	switch iss.kind {
	case issUnexplained:
		why, refs := m.explainValue(it.Name, iss.rv, it.Value)
		return fmt.Sprintf("%s at RV %d with value %q is no change the history knows: %s", it.Name, iss.rv, it.Value, why), refs
	case issDeletedRV:
		return fmt.Sprintf("%s is shown at RV %d, the RV of its deletion by %s", it.Name, iss.rv, m.writeText(iss.other.w)),
			[]kref{iss.other.ref()}
	case issWrongValue:
		return fmt.Sprintf("%s at RV %d has value %q, but %s wrote %q at that RV", it.Name, iss.rv, it.Value,
			m.writeText(iss.other.w), iss.other.value), []kref{iss.other.ref()}
	case issSelector:
		return fmt.Sprintf("%s (labels %v) does not match the selector", it.Name, it.Labels), nil
	case issDuplicate:
		return fmt.Sprintf("%s appears twice (items %d and %d)", it.Name, iss.prev, iss.item), nil
	case issNewer:
		return fmt.Sprintf("%s at RV %d is newer than the state at RV %s", it.Name, iss.rv, stateRV), nil
	case issStale:
		if iss.span != nil {
			return fmt.Sprintf("%s is shown at RV %d (value %q), but %s, acknowledged, deleted it at an RV between %d and %d, "+
					"at or below RV %s", it.Name, iss.rv, it.Value, m.writeText(iss.span.w), iss.span.lo+1, iss.span.hi-1, stateRV),
				[]kref{{op: iss.span.w.op.ID, idx: -1}}
		}
		return fmt.Sprintf("%s is shown at RV %d (value %q), but %s changed it at RV %d, at or below RV %s", it.Name, iss.rv,
			it.Value, m.changeText(iss.other), iss.other.rv, stateRV), []kref{iss.other.ref()}
	case issSplit:
		return fmt.Sprintf("%s at RV %d cannot be in one state with the other items (its next change is %s)", it.Name, iss.rv,
			m.changeOrNone(iss.other)), nil
	case issMissing:
		return fmt.Sprintf("%s is missing, though it exists at RV %s: %s made it at RV %d (value %q) and nothing the history "+
			"shows removed it", iss.name, stateRV, m.writeText(iss.other.w), iss.other.rv, iss.other.value), []kref{iss.other.ref()}
	}
	return "unknown issue", nil
}

func (m *kubeModel) changeOrNone(c *kchange) string {
	if c == nil {
		return "not known"
	}
	return fmt.Sprintf("%s at RV %d", m.changeText(c), c.rv)
}

// writeText names a write: "update operation 12 (client 3)".
func (m *kubeModel) writeText(w *kwrite) string {
	if w == nil {
		return "no write"
	}
	return fmt.Sprintf("%s operation %d (client %d)", w.verb, w.op.ID, w.op.Client)
}

// changeText names a change by its write.
func (m *kubeModel) changeText(c *kchange) string {
	if c == nil {
		return "no change"
	}
	return m.writeText(c.w)
}

// explainValue says why an object state (name, rv, value) is no change the
// history knows.
func (m *kubeModel) explainValue(name string, rv int64, value string) (string, []kref) {
	w := m.byValue[value]
	switch {
	case w == nil:
		if c := m.changeAt[rv]; c != nil {
			return fmt.Sprintf("nobody wrote that value; RV %d is %s of %s", rv, m.changeText(c), c.obj.name), []kref{c.ref()}
		}
		return "nobody wrote that value", nil
	case w.name != name:
		return fmt.Sprintf("that value was written to %s by %s", w.name, m.writeText(w)), []kref{{op: w.op.ID, idx: -1}}
	case w.outcome == wRefused:
		return fmt.Sprintf("%s that wrote it was refused (%s)", m.writeText(w), statusText(w.op.Status)), []kref{{op: w.op.ID, idx: -1}}
	case w.rv != 0 && w.rv != rv:
		return fmt.Sprintf("%s committed that value at RV %d", m.writeText(w), w.rv), []kref{{op: w.op.ID, idx: -1}}
	}
	if c := m.changeAt[rv]; c != nil {
		return fmt.Sprintf("RV %d is %s of %s", rv, m.changeText(c), c.obj.name), []kref{c.ref()}
	}
	return "the history cannot place it", nil
}

// at returns the object's latest known change at or below rv, or nil.
func (o *kobj) at(rv int64) *kchange {
	i := sort.Search(len(o.changes), func(i int) bool { return o.changes[i].rv > rv })
	if i == 0 {
		return nil
	}
	return o.changes[i-1]
}

// next returns the object's first known change above rv, or nil.
func (o *kobj) next(rv int64) *kchange {
	i := sort.Search(len(o.changes), func(i int) bool { return o.changes[i].rv > rv })
	if i == len(o.changes) {
		return nil
	}
	return o.changes[i]
}

// exactly returns the object's known change at rv, or nil.
func (o *kobj) exactly(rv int64) *kchange {
	if c := o.at(rv); c != nil && c.rv == rv {
		return c
	}
	return nil
}

// settled reports whether no deletion the history cannot place may lie in
// (a, b]; withPuts also counts unplaced creates and updates (they may
// change the labels).
func (o *kobj) settled(a, b int64, withPuts bool) bool {
	if spanIn(o.delSpans, a, b) != nil {
		return false
	}
	return !withPuts || spanIn(o.putSpans, a, b) == nil
}

// upper returns the highest RV at which the change c can still be the
// object's state: just below the next known change, or below a certain
// unplaced deletion that surely comes after it. MaxInt64 when none.
func (o *kobj) upper(c *kchange) (int64, *kchange, *kspan) {
	up := int64(math.MaxInt64)
	nx := o.next(c.rv)
	if nx != nil {
		up = nx.rv - 1
	}
	for i := range o.delSpans {
		s := &o.delSpans[i]
		if s.certain && s.lo >= c.rv && s.hi-2 < up {
			return s.hi - 2, nil, s
		}
	}
	return up, nx, nil
}

// exists reports whether the change leaves the object existing.
func (c *kchange) exists() bool { return c != nil && !c.del }

// ref returns how the change is known: its write's operation if it was
// acknowledged with the RV, else the record that placed it.
func (c *kchange) ref() kref {
	if c.w.how != (kref{}) {
		return c.w.how
	}
	return kref{op: c.w.op.ID, idx: -1}
}

// evidence renders references as a violation's operations and events.
func (m *kubeModel) evidence(v *check.Violation, refs ...kref) {
	for _, r := range refs {
		switch {
		case r.op != 0:
			if !facts.ContainsID(v.Operations, r.op) {
				v.Operations = append(v.Operations, r.op)
			}
		case r.watch != 0:
			if w := m.h.KubeWatchByID(r.watch); w != nil && int(r.idx) < len(w.Events) {
				v.KubeEvents = append(v.KubeEvents, kevAt(w, int(r.idx)))
			}
		}
	}
}

// fromRVBelow: nothing at or below the requested RV.
func (m *kubeModel) fromRVBelow(kw *kwatch, col *check.Collector) {
	if kw.mode != kwExplicit {
		return
	}
	w := kw.w
	for _, i := range kw.live {
		rv := kw.rv(i)
		if rv > kw.reqRV {
			continue
		}
		col.Add(check.Violation{Guarantee: ErrWatchFromRV,
			Message: fmt.Sprintf("watch %d (client %d) from RV %d delivered %s, at or below the RV it started from",
				w.ID, w.Client, kw.reqRV, kevText(w.Events[i])),
			Watch: w.ID, Client: w.Client, Key: w.Events[i].Object.Name, Revision: rv,
			Want: fmt.Sprintf("> %d", kw.reqRV), Got: fmt.Sprint(rv), KubeEvents: []history.KubeEventAt{kevAt(w, i)}})
	}
}

// fromRVUnexplained: every live event is a change the history knows.
func (m *kubeModel) fromRVUnexplained(kw *kwatch, col *check.Collector) {
	w := kw.w
	for _, i := range kw.live {
		e := &w.Events[i]
		rv := kw.rv(i)
		if m.objs[e.Object.Name] == nil || (kw.mode == kwExplicit && rv <= kw.reqRV) {
			continue
		}
		if c := m.changeAt[rv]; c != nil && c.obj.name == e.Object.Name {
			continue
		}
		var why string
		var refs []kref
		if e.Type == history.KubeDeleted {
			why = "no delete of it can have made that change"
			if c := m.changeAt[rv]; c != nil {
				why, refs = fmt.Sprintf("RV %d is %s of %s", rv, m.changeText(c), c.obj.name), []kref{c.ref()}
			}
		} else {
			why, refs = m.explainValue(e.Object.Name, rv, e.Object.Value)
		}
		v := check.Violation{Guarantee: ErrWatchFromRV,
			Message: fmt.Sprintf("watch %d (client %d) delivered %s, which no write explains: %s",
				w.ID, w.Client, kevText(*e), why),
			Watch: w.ID, Client: w.Client, Key: e.Object.Name, Revision: rv,
			Want: "a committed change", Got: kevText(*e), KubeEvents: []history.KubeEventAt{kevAt(w, i)}}
		m.evidence(&v, refs...)
		col.Add(v)
	}
}

// fromRVComplete: every change in (start, last] the watch owes, delivered
// with its type and value (types only judged without a selector; with one,
// kube/watch-selector judges them).
func (m *kubeModel) fromRVComplete(kw *kwatch, col *check.Collector) (expected, undetermined int) {
	w := kw.w
	for _, c := range m.changesIn(kw.start, kw.last) {
		typ, sure := m.expected(c, kw.sel)
		if !sure {
			undetermined++
			continue
		}
		if typ == "" {
			continue
		}
		expected++
		i := kw.eventAt(c.rv)
		if i < 0 || w.Events[i].Object.Name != c.obj.name {
			col.Add(m.missedChange(kw, c, typ, i))
			continue
		}
		e := &w.Events[i]
		switch {
		case kw.sel == nil && e.Type != typ:
			what := "wrong type"
			if e.Type == history.KubeAdded {
				what = "a synthetic ADDED"
			}
			v := check.Violation{Guarantee: ErrWatchFromRV,
				Message: fmt.Sprintf("watch %d (client %d) delivered %s: %s, %s made a %s at RV %d", w.ID, w.Client,
					kevText(*e), what, m.changeText(c), typ, c.rv),
				Watch: w.ID, Client: w.Client, Key: c.obj.name, Revision: c.rv, Want: typ, Got: e.Type,
				KubeEvents: []history.KubeEventAt{kevAt(w, i)}}
			m.evidence(&v, c.ref())
			col.Add(v)
		case !c.del && e.Type != history.KubeDeleted && e.Object.Value != c.value:
			v := check.Violation{Guarantee: ErrWatchFromRV,
				Message: fmt.Sprintf("watch %d (client %d) delivered %s, but %s wrote %q at RV %d", w.ID, w.Client,
					kevText(*e), m.changeText(c), c.value, c.rv),
				Watch: w.ID, Client: w.Client, Key: c.obj.name, Revision: c.rv,
				Want: fmt.Sprintf("%q", c.value), Got: fmt.Sprintf("%q", e.Object.Value),
				KubeEvents: []history.KubeEventAt{kevAt(w, i)}}
			m.evidence(&v, c.ref())
			col.Add(v)
		}
	}
	return expected, undetermined
}

// missedChange reports a change the watch owed and did not deliver,
// naming the events around the gap.
func (m *kubeModel) missedChange(kw *kwatch, c *kchange, typ string, at int) check.Violation {
	w := kw.w
	pos := sort.Search(len(kw.byRV), func(i int) bool { return kw.byRV[i].rv >= c.rv })
	var near []history.KubeEventAt
	around := "it delivered no change at all"
	if pos > 0 {
		near = append(near, kevAt(w, kw.byRV[pos-1].idx))
		around = "before it " + kevText(w.Events[kw.byRV[pos-1].idx])
	}
	if pos < len(kw.byRV) {
		near = append(near, kevAt(w, kw.byRV[pos].idx))
		if pos > 0 {
			around += ", after it "
		} else {
			around = "after it "
		}
		around += kevText(w.Events[kw.byRV[pos].idx])
	}
	msg := fmt.Sprintf("watch %d (client %d) missed the change of %s at RV %d (%s, owed as %s); it vouches for RVs %d..%d; %s",
		w.ID, w.Client, c.obj.name, c.rv, m.changeText(c), typ, kw.start+1, kw.last, around)
	if at >= 0 {
		msg += "; at that RV it delivered another object"
	}
	if kw.extended && c.rv > kw.lastObserved() {
		msg += fmt.Sprintf("; it was open until the run closed it after the final write at RV %d, so it must reach it", kw.last)
	}
	v := check.Violation{Guarantee: ErrWatchFromRV, Message: msg, Watch: w.ID, Client: w.Client, Key: c.obj.name,
		Revision: c.rv, Want: fmt.Sprintf("%s %s at RV %d", typ, c.obj.name, c.rv), Got: "nothing", KubeEvents: near}
	m.evidence(&v, c.ref())
	return v
}

// fromRVPendingDeletes: an acknowledged delete no watch placed lies at an
// RV in a known span; a watch without a selector whose window holds the
// whole span owes its DELETED event.
func (m *kubeModel) fromRVPendingDeletes(kw *kwatch, col *check.Collector) {
	if kw.sel != nil || !kw.startKnown {
		return
	}
	w := kw.w
	for _, name := range m.names {
		o := m.objs[name]
		for _, s := range o.delSpans {
			if !s.certain || s.lo < kw.start || s.hi-1 > kw.last {
				continue
			}
			found := false
			for _, i := range kw.live {
				e := &w.Events[i]
				if rv := kw.rv(i); e.Type == history.KubeDeleted && e.Object.Name == name && rv > s.lo && rv < s.hi {
					found = true
					break
				}
			}
			if found {
				continue
			}
			col.Add(check.Violation{Guarantee: ErrWatchFromRV,
				Message: fmt.Sprintf("watch %d (client %d) missed the deletion of %s by %s, acknowledged: it lies between "+
					"RV %d and %d, inside the RVs %d..%d the watch vouches for", w.ID, w.Client, name, m.writeText(s.w),
					s.lo+1, s.hi-1, kw.start+1, kw.last),
				Watch: w.ID, Client: w.Client, Key: name, Revision: s.lo + 1,
				Want: "DELETED " + name, Got: "nothing", Operations: []int64{s.w.op.ID}})
		}
	}
}

// initialStateIssues reports the initial part of a watch that is not one
// state, and later events at or below the state's RV. Selector mismatches
// are kube/watch-selector's.
func (m *kubeModel) initialStateIssues(kw *kwatch, col *check.Collector, g error, what string) {
	w := kw.w
	rvText := stateRVText(kw.sLo, kw.sHi)
	for _, iss := range kw.state.issues {
		if iss.kind == issSelector {
			continue
		}
		v := check.Violation{Guarantee: g, Watch: w.ID, Client: w.Client, Key: iss.name, Revision: iss.rv}
		text, refs := m.issueText(iss, kw.items, rvText)
		v.Message = fmt.Sprintf("watch %d (client %d) from RV %q: its %s is not one state of the collection at RV %s: %s",
			w.ID, w.Client, w.Request.ResourceVersion, what, rvText, text)
		if iss.item >= 0 {
			v.KubeEvents = append(v.KubeEvents, kevAt(w, initialIndex(kw, iss.item)))
		}
		m.evidence(&v, refs...)
		col.Add(v)
	}
	top := kw.sLo
	for _, i := range kw.live {
		rv := kw.rv(i)
		if rv > top {
			continue
		}
		col.Add(check.Violation{Guarantee: g,
			Message: fmt.Sprintf("watch %d (client %d) delivered %s after its %s, which shows RV %d: a later event must "+
				"have an RV above the state's", w.ID, w.Client, kevText(w.Events[i]), what, top),
			Watch: w.ID, Client: w.Client, Key: w.Events[i].Object.Name, Revision: rv,
			Want: fmt.Sprintf("> %d", top), Got: fmt.Sprint(rv), KubeEvents: []history.KubeEventAt{kevAt(w, i)}})
	}
}

// transition says what a change did to an object with respect to sel.
func (m *kubeModel) transition(c *kchange, sel *labelSelector) string {
	prev := c.obj.at(c.rv - 1)
	prevM, newM := prev.exists() && sel.matches(prev.labels), c.exists() && sel.matches(c.labels)
	switch {
	case c.del && prevM:
		return "deleted a matching object"
	case c.del:
		return "deleted an object that did not match"
	case prevM && newM:
		return "kept it matching"
	case newM && !prev.exists():
		return "created it matching"
	case newM:
		return fmt.Sprintf("made it match (labels %v, before %v)", c.labels, prev.labels)
	case prevM:
		return fmt.Sprintf("made it stop matching (labels %v, before %v)", c.labels, prev.labels)
	}
	return fmt.Sprintf("left it outside the selector (labels %v)", c.labels)
}

func (m *kubeModel) classifyWatches() {
	lastOfClient := map[int]*history.KubeWatchStream{}
	for _, w := range m.h.KubeWatches {
		if p := lastOfClient[w.Client]; p == nil || w.Call >= p.Call {
			lastOfClient[w.Client] = w
		}
	}
	mark, hasMark := m.h.Mark(history.MarkFinalWrite)
	for _, w := range m.h.KubeWatches {
		kw := m.classify(w)
		if hasMark && lastOfClient[w.Client] == w {
			m.extendToFinal(kw, mark)
		}
		m.watches = append(m.watches, kw)
		m.byWatch[w.ID] = kw
	}
}

func (m *kubeModel) classify(w *history.KubeWatchStream) *kwatch {
	kw := &kwatch{w: w, errIdx: -1, endBM: -1, rvs: make([]int64, len(w.Events))}
	kw.sel, kw.selErr = parseSelector(w.Request.LabelSelector)
	for i := range w.Events {
		kw.rvs[i] = objRV(w.Events[i].Object)
		if w.Events[i].Type == history.KubeError && kw.errIdx < 0 {
			kw.errIdx = i
		}
	}
	rv := w.Request.ResourceVersion
	sie := w.Request.SendInitialEvents
	switch {
	case len(w.Events) == 0 && w.End != nil && w.End.Status != nil:
		kw.mode = kwRefused
		return kw
	case kw.selErr != nil:
		kw.mode = kwUnjudged
		return kw
	case rv != "" && rv != "0":
		n, ok := facts.ParseRV(rv)
		if !ok {
			kw.mode = kwUnjudged
			return kw
		}
		kw.reqRV = n
		kw.mode = kwExplicit
		if sie != nil && *sie {
			kw.mode = kwStreaming
		}
	case sie != nil && *sie:
		kw.mode = kwStreaming
	case sie != nil:
		kw.mode = kwNoInitial
	default:
		kw.mode = kwState
	}
	end := kw.liveEnd()
	if kw.mode == kwState || kw.mode == kwStreaming {
		m.splitInitial(kw, end)
	}
	kw.live = make([]int, 0, end-kw.initN)
	kw.byRV = make([]rvIdx, 0, end-kw.initN)
	for i := kw.initN; i < end; i++ {
		e := &w.Events[i]
		rv := kw.rv(i)
		if e.Type == history.KubeBookmark {
			kw.last = max(kw.last, rv)
			continue
		}
		if e.Object == nil || rv == 0 {
			continue
		}
		kw.live = append(kw.live, i)
		kw.byRV = append(kw.byRV, rvIdx{rv, i})
		kw.last = max(kw.last, rv)
	}
	sort.SliceStable(kw.byRV, func(i, j int) bool { return kw.byRV[i].rv < kw.byRV[j].rv })
	switch kw.mode {
	case kwExplicit:
		kw.start, kw.startKnown = kw.reqRV, true
	case kwState, kwStreaming:
		kw.start, kw.startKnown = kw.state.S, true
	case kwNoInitial:
		kw.start = math.MaxInt64
		for i := kw.initN; i < end; i++ {
			if rv := kw.rv(i); rv > 0 {
				kw.start = rv
				if w.Events[i].Type != history.KubeBookmark {
					kw.start = rv - 1
				}
				break
			}
		}
	}
	return kw
}

// splitInitial finds the initial part of a watch that starts with a state:
// the events up to the initial-events-end bookmark when there is one (a
// streaming list, or a plain watch the server turned into one), else the
// longest run of ADDED events of distinct objects; and judges the state.
func (m *kubeModel) splitInitial(kw *kwatch, end int) {
	evs := kw.w.Events
	for i := 0; i < end; i++ {
		if isInitialEnd(&evs[i]) {
			kw.endBM, kw.initN = i, i+1
			break
		}
	}
	if kw.endBM < 0 {
		names := map[string]bool{}
		for kw.initN < end && evs[kw.initN].Type == history.KubeAdded && evs[kw.initN].Object != nil &&
			!names[evs[kw.initN].Object.Name] {
			names[evs[kw.initN].Object.Name] = true
			kw.initN++
		}
	}
	for i := 0; i < kw.initN; i++ {
		if evs[i].Type == history.KubeAdded && evs[i].Object != nil {
			kw.items = append(kw.items, *evs[i].Object)
		}
	}
	if kw.endBM >= 0 {
		kw.sLo = kw.rv(kw.endBM)
		kw.sHi = kw.sLo
	} else {
		kw.sLo, kw.sHi = kw.reqRV, math.MaxInt64
		for _, it := range kw.items {
			kw.sLo = max(kw.sLo, objRV(&it))
		}
		for i := kw.initN; i < end; i++ {
			rv := kw.rv(i)
			if rv == 0 {
				continue
			}
			if evs[i].Type == history.KubeBookmark {
				kw.sHi = rv
			} else {
				kw.sHi = rv - 1
			}
			break
		}
	}
	if kw.endBM < 0 && kw.initN > 0 {
		// The state was taken before its last event arrived: a write
		// called after that has a higher RV.
		if hi, _ := m.hi.minAfter(evs[kw.initN-1].Time); hi-1 < kw.sHi && hi-1 >= kw.sLo {
			kw.sHi = hi - 1
		}
	}
	if kw.sLo > kw.sHi {
		// A later event at or below the state's RV: the initial-state checks
		// report that event; the items are judged at their own RV.
		kw.sHi = kw.sLo
	}
	kw.state = m.verifyState(kw.items, kw.sel, kw.sLo, kw.sHi, true)
}

// extendToFinal holds the last watch of a client, open until the run
// closed it after the final write was acknowledged, to the final write:
// the workload waits for every open watch to deliver it before closing
// them, so its window reaches the final write's RV.
func (m *kubeModel) extendToFinal(kw *kwatch, mark history.Mark) {
	w := kw.w
	if mark.Revision == 0 || kw.mode == kwRefused || kw.mode == kwUnjudged || kw.errIdx >= 0 || w.Call > mark.Time {
		return
	}
	if w.End != nil && (w.End.Reason != history.EndClient || w.End.Time < mark.Time) {
		return
	}
	c := m.changeAt[mark.Revision]
	if c == nil || !kw.startKnown || kw.start >= mark.Revision || kw.last >= mark.Revision {
		return
	}
	if typ, sure := m.expected(c, kw.sel); typ == "" || !sure {
		return
	}
	kw.last, kw.extended = mark.Revision, true
}

// expected says which event a watch with selector sel owes for change c:
// "" for none, "ADDED|MODIFIED" when either fits; sure is false when the
// history cannot tell whether one is owed (an unplaced write may have
// changed the object's labels just before).
func (m *kubeModel) expected(c *kchange, sel *labelSelector) (typ string, sure bool) {
	if sel == nil {
		switch {
		case c.del:
			return history.KubeDeleted, true
		case c.w.verb == history.KubeCreate:
			return history.KubeAdded, true
		}
		return history.KubeModified, true
	}
	prev := c.obj.at(c.rv - 1)
	from := int64(0)
	if prev != nil {
		from = prev.rv
	}
	newM := c.exists() && sel.matches(c.labels)
	if !c.obj.settled(from, c.rv-1, true) {
		if newM {
			return history.KubeAdded + "|" + history.KubeModified, true
		}
		return "", false
	}
	prevM := prev.exists() && sel.matches(prev.labels)
	switch {
	case prevM && newM:
		return history.KubeModified, true
	case newM:
		return history.KubeAdded, true
	case prevM:
		return history.KubeDeleted, true
	}
	return "", true
}

// changesIn returns the known changes with RV in (a, b].
func (m *kubeModel) changesIn(a, b int64) []*kchange {
	i := sort.Search(len(m.changes), func(i int) bool { return m.changes[i].rv > a })
	j := sort.Search(len(m.changes), func(i int) bool { return m.changes[i].rv > b })
	if i >= j {
		return nil
	}
	return m.changes[i:j]
}

// acceptedUID is the uid of the object an accepted update or delete
// changed, and the write whose answer shows it: the update's own answer,
// or, for a placed delete, the last acknowledged create or update of the
// object before the deletion (the same incarnation).
func (m *kubeModel) acceptedUID(w *kwrite) (string, *kwrite) {
	if w.verb == history.KubeUpdate {
		if r := w.op.Response; r != nil && r.Object != nil {
			return r.Object.UID, w
		}
		return "", nil
	}
	if w.rv == 0 {
		return "", nil
	}
	ob := m.objs[w.name]
	for c := ob.at(w.rv - 1); c != nil && !c.del; c = ob.at(c.rv - 1) {
		if r := c.w.op.Response; c.w.outcome == wAcked && r != nil && r.Object != nil && r.Object.UID != "" {
			return r.Object.UID, c.w
		}
	}
	return "", nil
}

// raceWithoutWinner reports a race none of whose updates won although
// nothing else wrote the object in between: all were answered, all 409,
// the object was at RV p, and its next change the history knows (or may
// not know) comes from a write called after the race ended.
func (m *kubeModel) raceWithoutWinner(race []*kwrite, name string, p int64) (check.Violation, bool) {
	var end time.Duration
	for _, w := range race {
		if w.outcome == wAcked {
			return check.Violation{}, false
		}
		if w.outcome != wRefused || w.op.Status.Code != 409 {
			return check.Violation{}, false
		}
		end = max(end, w.op.Return)
	}
	ob := m.objs[name]
	c := ob.exactly(p)
	if !c.exists() {
		return check.Violation{}, false
	}
	if nx := ob.next(p); nx != nil && nx.w.op.Call < end {
		return check.Violation{}, false
	}
	for _, spans := range [][]kspan{ob.delSpans, ob.putSpans} {
		for _, s := range spans {
			if s.w.op.Call < end && s.hi-1 > p {
				return check.Violation{}, false
			}
		}
	}
	v := check.Violation{Guarantee: ErrOptimisticConcurrency, Client: race[0].op.Client, Key: name, Revision: p,
		Message: fmt.Sprintf("none of %d concurrent updates of %s from RV %d succeeded (all 409), though %s was at RV %d "+
			"(%s) and no other write of it came in between", len(race), name, p, name, p, m.changeText(c)),
		Want: "exactly one success", Got: "none"}
	for _, w := range race {
		v.Operations = append(v.Operations, w.op.ID)
	}
	m.evidence(&v, c.ref())
	return v, true
}

// linIndex builds the index. A consistent list that is itself wrong
// (stale: below a write acknowledged before it was called) bounds nothing:
// used as a bound it would put the blame on every operation that came
// before it, which did nothing wrong. Its own violation is reported where
// it is judged.
func (m *kubeModel) linIndex() linIndex {
	lists := m.consistentLists()
	writesOnly := linIndex{lo: m.seen, hiW: m.hi, hiL: newTimeIndex(nil, false)}
	var hiL []tent
	for _, o := range lists {
		n, ok := facts.ParseRV(o.Response.ListRV)
		if !ok {
			continue
		}
		lo, hi, _, _ := writesOnly.window(o)
		if _, bad := m.readFits(o, lo, hi); bad {
			continue
		}
		hiL = append(hiL, tent{o.Call, n, o.ID})
	}
	return linIndex{lo: m.seen, hiW: m.hi, hiL: newTimeIndex(hiL, false)}
}

// consistentLists are the answered lists with RV unset.
func (m *kubeModel) consistentLists() []*history.KubeOperation {
	var out []*history.KubeOperation
	for i := range m.h.KubeOps {
		o := &m.h.KubeOps[i]
		if o.Response == nil || o.Request.Verb != history.KubeList {
			continue
		}
		if k, _ := readKindOf(o.Request); k == rkConsistent {
			out = append(out, o)
		}
	}
	return out
}
