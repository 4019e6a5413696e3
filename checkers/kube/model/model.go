// Package model is what the Kubernetes checks derive from a history, once:
// each object's timeline of changes (acknowledged, refused and unknown
// writes, and what reads and watches showed), the windows of
// resourceVersions each watch vouches for, the states lists and watches
// showed, and the time indexes that bound when a change could have
// happened. The checks in package kube judge against it.
package model

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// Model is what a history proves about the objects of the resource:
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
type Model struct {
	History *history.History
	Objs    map[string]*Object
	Names   []string // sorted
	Writes  []*Write
	ByValue map[string]*Write
	// ByStatus indexes the writes of the status subresource by the
	// status value each sets (unique per write, as data values are).
	ByStatus map[string]*Write
	// DryRuns are the writes sent with dryRun=All: they change nothing,
	// so no change of the model comes from them; kube/write-paths judges
	// that nothing shows their values.
	DryRuns []*history.KubeOperation
	// genPending are creates with generateName whose name the history
	// does not know (no answer): an observation of their value names them.
	genPending map[string]*Write
	// withFinalizers memoizes finalized.
	withFinalizers map[string]bool
	// Changes holds every known change, sorted by RV; changeAt the first
	// known change at each RV.
	Changes  []*Change
	ChangeAt map[int64]*Change
	// Lo answers "the highest RV of a write acknowledged before t"; hi
	// "the lowest RV of a committed write called after t".
	Lo, Hi TimeIndex
	// Seen answers "the highest RV an acknowledged write or a consistent
	// read had shown before t": the store had passed it, so a write called
	// after t commits above it.
	Seen    TimeIndex
	Watches []*Watch
	ByWatch map[int64]*Watch
	// Foreign counts observations of objects the workload never wrote.
	Foreign int
	// ValueReuse counts writes that reused another write's value (a
	// harness bug: values must be unique).
	ValueReuse int
	// listStates memoizes listState: several checks judge one list.
	ListStatesMu sync.Mutex
	ListStates   map[[2]int64]StateCheck
}

type writeOutcome int8

const (
	WriteAcked   writeOutcome = iota // 2xx
	WriteRefused                     // a definite error answer, or never sent: it did not happen
	WriteUnknown                     // no answer, or 5xx: it may have happened
)

// Write is one change an operation makes to one object: a create,
// update, patch or delete, or one object of a delete-collection.
type Write struct {
	Op     *history.KubeOperation
	Verb   history.KubeVerb
	Name   string
	value  string
	status string // a status write's status value
	labels map[string]string
	// Item is which item of a delete-collection's answer this write is;
	// -1 for any other write.
	Item int
	// Del: the write removes the object (a delete, a delete-collection's
	// item, or an update or patch that took the last finalizer off an
	// object being deleted). Mark: a delete of an object with finalizers,
	// which only set its deletionTimestamp.
	Del, Mark bool
	// mayPurge: an unknown-outcome update or patch that removes every
	// finalizer; if the object was being deleted it deleted it.
	mayPurge bool
	// genPrefix is a create's generateName.
	genPrefix string
	// floor: the write committed above this RV (a delete-collection's
	// item: the state it listed).
	floor   int64
	Outcome writeOutcome
	// Rv is where it committed: from its response, or resolved by an
	// observation (how says which); 0 when the history does not place it.
	Rv  int64
	How Ref
	// Context: the write is one of a segment's context (history.Context),
	// a fact no check judges.
	Context bool
}

// Ref points at a record: an operation (idx: which list item, -1 for
// the answer's object), or event idx of a watch.
type Ref struct {
	Op    int64
	watch int64
	Index int32
}

// Change is one committed change of one object.
type Change struct {
	Obj    *Object
	Rv     int64
	Del    bool
	Value  string
	Labels map[string]string
	Write  *Write
	// Status, Finalizers, Terminating (deletionTimestamp set) and
	// Generation are the object's as the server returned them at this
	// change (its write's answer or the observation that placed it);
	// HasObj is false when no returned object is known.
	Status      string
	Finalizers  []string
	Terminating bool
	Generation  int64
	HasObj      bool
}

// Object is one object name's timeline. A name may be deleted and created
// again.
type Object struct {
	Name    string
	Changes []*Change // sorted by RV
	// DelSpans are deletions the history cannot place: an acknowledged
	// delete no watch delivered (certain), or an unknown-outcome delete
	// nothing resolved. putSpans are unknown-outcome creates and updates
	// no observation showed.
	DelSpans []Span
	PutSpans []Span
	// Floor, in a segment with a context, is the RV of the object's
	// oldest change the context holds (its anchor): the object's changes
	// below it were in the segments before, so the history does not know
	// them, and states and events below it are not judged. 0: every
	// change of the object is known.
	Floor int64
}

// Span says a change's RV lies in (lo, hi); hi is MaxInt64 when unbounded.
type Span struct {
	Lo, Hi  int64
	Write   *Write
	Certain bool // it happened (acknowledged); else it may have
}

// Build reads the whole history once. The checks of kube.ChecksOf(h)
// share the model of h; a check called on its own builds its own.
func Build(h *history.History) *Model {
	m := &Model{History: h, Objs: map[string]*Object{}, ByValue: map[string]*Write{}, ByStatus: map[string]*Write{},
		ChangeAt: map[int64]*Change{}, ByWatch: map[int64]*Watch{}, genPending: map[string]*Write{}}
	m.collectWrites()
	m.indexTimes()
	m.observe()
	m.indexTimes() // writes resolved by observations bound times too
	m.placeDeletions()
	m.indexTimes()
	m.leftovers()
	m.setFloors()
	for _, o := range m.Objs {
		sort.Slice(o.Changes, func(i, j int) bool { return o.Changes[i].Rv < o.Changes[j].Rv })
	}
	sort.Slice(m.Changes, func(i, j int) bool { return m.Changes[i].Rv < m.Changes[j].Rv })
	for n := range m.Objs {
		m.Names = append(m.Names, n)
	}
	sort.Strings(m.Names)
	m.classifyWatches()
	return m
}

func (m *Model) collectWrites() {
	var unknownDC []writeOp
	for _, wo := range m.writeOps() {
		o := wo.op
		if !o.Request.Verb.IsWrite() {
			continue
		}
		if o.Request.DryRun {
			// A dry run changes nothing: no change comes from it.
			if !wo.context {
				m.DryRuns = append(m.DryRuns, o)
			}
			continue
		}
		if o.Request.Verb == history.KubeDeleteCollection {
			if !m.collectDeleteCollection(o, wo.context) {
				unknownDC = append(unknownDC, wo)
			}
			continue
		}
		w := &Write{Op: o, Verb: o.Request.Verb, Name: OpName(o), Context: wo.context, Item: -1}
		if r := o.Request.Object; r != nil {
			if IsStatusWrite(o) {
				w.status = r.Status
			} else {
				w.value, w.labels = r.Value, r.Labels
			}
			w.genPrefix = r.GenerateName
		}
		switch {
		case o.Response != nil:
			w.Outcome = WriteAcked
			// A delete answered with a Status (ConfigMaps) has no RV: 0.
			w.Rv = ObjRV(o.Response.Object)
		case o.Status != nil && o.Status.Code < 500, o.NeverSent():
			w.Outcome = WriteRefused
		default:
			w.Outcome = WriteUnknown
		}
		var obj *history.Object
		if o.Response != nil {
			obj = o.Response.Object
		}
		switch w.Verb {
		case history.KubeDelete:
			// A delete of an object with finalizers answers the object,
			// marked for deletion, and leaves it (store.go's Delete,
			// k8s.io/apiserver/pkg/registry/generic/registry).
			w.Mark = obj != nil && obj.DeletionTimestamp != "" && len(obj.Finalizers) > 0
			w.Del = !w.Mark
		case history.KubeUpdate, history.KubePatch:
			// An update that takes the last finalizer off an object being
			// deleted deletes it (PurgedBy).
			if RemovesAllFinalizers(o) {
				w.Del = PurgedBy(o)
				w.mayPurge = w.Outcome == WriteUnknown && m.finalized()[OpName(o)]
				if w.Del {
					w.Rv = 0 // its answer's RV is the replaced state's: the DELETED event places it
				}
			}
		}
		if w.Name == "" {
			if w.genPrefix != "" && w.Outcome == WriteUnknown && w.value != "" {
				m.genPending[w.value] = w
			}
			continue
		}
		m.addWrite(w)
		if w.Outcome == WriteAcked && w.Rv > 0 {
			m.addChange(w, w.Rv, obj)
		}
	}
	// A delete of an object already marked for deletion changes nothing
	// and answers it as it is, at the RV of the change that marked it
	// (store.go's Delete; GuaranteedUpdate writes nothing unchanged): it
	// is no write.
	kept := m.Writes[:0]
	for _, w := range m.Writes {
		if c := m.ChangeAt[w.Rv]; w.Mark && w.Rv > 0 && c != nil && c.Write != w && c.Obj.Name == w.Name {
			continue
		}
		kept = append(kept, w)
	}
	m.Writes = kept
	// A delete-collection of unknown outcome may have deleted any object
	// its selectors may pick: each gets a delete that may have happened.
	for _, wo := range unknownDC {
		o := wo.op
		sel, err := ParseSelectors("", o.Request.FieldSelector)
		names := make([]string, 0, len(m.Objs))
		for n := range m.Objs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if err == nil && !sel.Matches(n, nil) {
				continue
			}
			m.addWrite(&Write{Op: o, Verb: o.Request.Verb, Name: n, Item: -1, Del: true, Outcome: WriteUnknown, Context: wo.context})
		}
	}
}

// collectDeleteCollection makes one write per object an acknowledged
// delete-collection answered. Its answer is the list it read before
// deleting (store.go's DeleteCollection lists, deletes each item by name,
// and returns that list), so each item is the object's state at the
// item's RV and its deletion, each on its own, lies above it at an RV the
// answer does not name: DELETED events place it, as they place a delete
// answered with a Status. An item with finalizers is only marked. It
// reports false for a delete-collection of unknown outcome.
func (m *Model) collectDeleteCollection(o *history.KubeOperation, context bool) bool {
	switch {
	case o.Response != nil:
		for j := range o.Response.Items {
			it := &o.Response.Items[j]
			w := &Write{Op: o, Verb: o.Request.Verb, Name: it.Name, Context: context, Outcome: WriteAcked, Item: j, floor: ObjRV(it)}
			w.Mark = len(it.Finalizers) > 0
			w.Del = !w.Mark
			m.addWrite(w)
		}
		return true
	case o.Status != nil && o.Status.Code < 500, o.NeverSent():
		return true
	}
	return false
}

// finalized names the objects the history ever shows with finalizers:
// only those can be marked for deletion, and purged by an update.
func (m *Model) finalized() map[string]bool {
	if m.withFinalizers != nil {
		return m.withFinalizers
	}
	m.withFinalizers = map[string]bool{}
	for _, wo := range m.writeOps() {
		o := wo.op
		for _, ob := range []*history.Object{o.Request.Object, respObj(o)} {
			if ob != nil && len(ob.Finalizers) > 0 {
				m.withFinalizers[OpName(o)] = true
			}
		}
	}
	return m.withFinalizers
}

func respObj(o *history.KubeOperation) *history.Object {
	if o.Response == nil {
		return nil
	}
	return o.Response.Object
}

// addWrite records a write and indexes its value.
func (m *Model) addWrite(w *Write) {
	m.Writes = append(m.Writes, w)
	if m.Objs[w.Name] == nil {
		m.Objs[w.Name] = &Object{Name: w.Name}
	}
	if w.Del && w.Verb != history.KubeUpdate && w.Verb != history.KubePatch || w.Mark {
		return
	}
	for _, ix := range []struct {
		by map[string]*Write
		v  string
	}{{m.ByValue, w.value}, {m.ByStatus, w.status}} {
		if ix.v == "" {
			continue
		}
		if ix.by[ix.v] != nil {
			m.ValueReuse++
		} else {
			ix.by[ix.v] = w
		}
	}
}

// addChange records that w committed at rv; obj is the object the server
// returned for it (its answer, or the observation that placed it), nil if
// none. A second change at one RV is not kept (kube/rv-order reports
// acknowledged writes sharing an RV).
func (m *Model) addChange(w *Write, rv int64, obj *history.Object) *Change {
	if c := m.ChangeAt[rv]; c != nil {
		return nil
	}
	o := m.Objs[w.Name]
	c := &Change{Obj: o, Rv: rv, Del: w.Del, Value: w.value, Labels: w.labels, Write: w}
	if obj != nil && !c.Del {
		c.HasObj = true
		c.Status, c.Finalizers, c.Terminating, c.Generation = obj.Status, obj.Finalizers, obj.DeletionTimestamp != "", obj.Generation
		if w.Verb != history.KubeCreate && w.Verb != history.KubeUpdate || IsStatusWrite(w.Op) || w.Mark {
			// A patch, a status write or a mark sets only part of the
			// object: the rest is what the server returned.
			c.Value, c.Labels = obj.Value, obj.Labels
		}
	}
	if c.Del {
		c.Value, c.Labels = "", nil
	}
	o.Changes = append(o.Changes, c)
	m.Changes = append(m.Changes, c)
	m.ChangeAt[rv] = c
	return c
}

// indexTimes builds lo (acknowledged writes by return time) and hi
// (committed writes by call time).
func (m *Model) indexTimes() {
	var lo, hi []TimeEntry
	for _, w := range m.Writes {
		if w.Rv == 0 || w.Outcome == WriteRefused {
			continue
		}
		if w.Outcome == WriteAcked {
			lo = append(lo, TimeEntry{w.Op.Return, w.Rv, w.Op.ID})
		}
		hi = append(hi, TimeEntry{w.Op.Call, w.Rv, w.Op.ID})
	}
	m.Lo, m.Hi = NewTimeIndex(lo, true), NewTimeIndex(hi, false)
	for i := range m.History.KubeOps {
		o := &m.History.KubeOps[i]
		if o.Response == nil || o.Request.Verb.IsWrite() {
			continue
		}
		if k, _ := ReadKindOf(o.Request); k != ReadConsistent {
			continue
		}
		if o.Request.Verb == history.KubeList {
			if n, ok := facts.ParseRV(o.Response.ListRV); ok {
				lo = append(lo, TimeEntry{o.Return, n, o.ID})
			}
		} else if n := ObjRV(o.Response.Object); n > 0 {
			lo = append(lo, TimeEntry{o.Return, n, o.ID})
		}
	}
	m.Seen = NewTimeIndex(lo, true)
}

// kobservation is one object state a read or an event showed.
type kobservation struct {
	obj *history.Object
	ref Ref
}

// eachObservation calls f for every object state the history shows, other
// than the responses of writes: get answers, list items, and ADDED and
// MODIFIED events.
func (m *Model) eachObservation(f func(kobservation)) {
	h := m.History
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Response == nil || o.Request.Verb.IsWrite() {
			continue
		}
		if o.Response.Object != nil {
			f(kobservation{o.Response.Object, Ref{Op: o.ID, Index: -1}})
		}
		for j := range o.Response.Items {
			f(kobservation{&o.Response.Items[j], Ref{Op: o.ID, Index: int32(j)}})
		}
	}
	// A delete-collection's answer is the list it read before deleting.
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Response != nil && o.Request.Verb == history.KubeDeleteCollection && !o.Request.DryRun {
			for j := range o.Response.Items {
				f(kobservation{&o.Response.Items[j], Ref{Op: o.ID, Index: int32(j)}})
			}
		}
	}
	for _, w := range m.kubeWatches() {
		for i := range w.Events {
			e := &w.Events[i]
			if (e.Type == history.KubeAdded || e.Type == history.KubeModified) && e.Object != nil {
				f(kobservation{e.Object, Ref{watch: w.ID, Index: int32(i)}})
			}
		}
	}
}

// observe places the writes that observations resolve. An observation no
// write explains (a value nobody wrote, a refused write's value, a value at
// another RV than its write's) places nothing; the checks that judge it
// say why (explainValue).
func (m *Model) observe() {
	m.eachObservation(func(ob kobservation) {
		if m.Objs[ob.obj.Name] == nil && !m.adoptGenerated(ob.obj) {
			m.Foreign++
			return
		}
		rv := ObjRV(ob.obj)
		if rv == 0 || m.ChangeAt[rv] != nil {
			return
		}
		for _, w := range []*Write{m.ByValue[ob.obj.Value], m.ByStatus[ob.obj.Status]} {
			if w == nil || w.Name != ob.obj.Name || w.Outcome == WriteRefused || w.Rv != 0 || w.Del {
				continue
			}
			w.Rv, w.How = rv, ob.ref
			m.addChange(w, rv, ob.obj)
			return
		}
		// A state marked for deletion that no write's value explains: a
		// delete of unknown outcome of an object with finalizers.
		if ob.obj.DeletionTimestamp != "" {
			if d := m.deleterOf(m.openDeletes(ob.obj.Name), ob.obj.Name, rv, false); d != nil && (d.Outcome == WriteUnknown || d.Mark) {
				d.Mark, d.Del = true, false
				d.Rv, d.How = rv, ob.ref
				m.addChange(d, rv, ob.obj)
			}
		}
	})
}

// adoptGenerated names a create with generateName of unknown outcome by an
// observation of its value under a name with its prefix.
func (m *Model) adoptGenerated(ob *history.Object) bool {
	w := m.genPending[ob.Value]
	if w == nil || !strings.HasPrefix(ob.Name, w.genPrefix) {
		return false
	}
	delete(m.genPending, ob.Value)
	w.Name = ob.Name
	m.addWrite(w)
	return true
}

// openDeletes are the writes that may delete name and the history has not
// placed: deletes, a delete-collection's, and updates or patches of
// unknown outcome that removed every finalizer.
func (m *Model) openDeletes(name string) []*Write {
	var out []*Write
	for _, w := range m.Writes {
		if w.Name == name && (w.Del || w.mayPurge || w.Mark) && w.Outcome != WriteRefused && w.Rv == 0 {
			out = append(out, w)
		}
	}
	return out
}

// placeDeletions matches the DELETED events of watches without a selector
// to the delete operations that can explain them: same object, the event's
// RV above every write acknowledged before the delete was called, and (for
// an acknowledged delete) below every write called after it returned.
func (m *Model) placeDeletions() {
	type cand struct {
		name string
		rv   int64
		ref  Ref
	}
	var cands []cand
	seen := map[int64]bool{}
	for _, w := range m.kubeWatches() {
		if w.Request.LabelSelector != "" || w.Request.FieldSelector != "" {
			continue
		}
		for i := range w.Events {
			e := &w.Events[i]
			if e.Type != history.KubeDeleted || e.Object == nil || m.Objs[e.Object.Name] == nil {
				continue
			}
			rv := ObjRV(e.Object)
			if rv == 0 || seen[rv] {
				continue
			}
			seen[rv] = true
			cands = append(cands, cand{e.Object.Name, rv, Ref{watch: w.ID, Index: int32(i)}})
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].rv < cands[j].rv })
	open := map[string][]*Write{} // deletes not yet placed, in history order
	for _, w := range m.Writes {
		if (w.Del || w.mayPurge || w.Mark) && w.Outcome != WriteRefused && w.Rv == 0 {
			open[w.Name] = append(open[w.Name], w)
		}
	}
	for _, o := range m.Objs {
		sort.Slice(o.Changes, func(i, j int) bool { return o.Changes[i].Rv < o.Changes[j].Rv })
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
			if m.ChangeAt[c.rv] != nil {
				continue // this deletion, or another change (the watch checks say which)
			}
			if d := m.deleterOf(open[c.name], c.name, c.rv, pass == 0); d != nil {
				d.Rv, d.How, d.Del, d.Mark = c.rv, c.ref, true, false
				m.insertChange(m.addChange(d, c.rv, nil))
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
func (m *Model) deleterOf(ds []*Write, name string, rv int64, strict bool) *Write {
	var best *Write
	for _, d := range ds {
		if d.Rv != 0 {
			continue
		}
		if lo, _ := m.Seen.MaxBefore(d.Op.Call); rv <= lo || rv <= d.floor {
			continue
		}
		if d.Outcome == WriteAcked {
			if hi, _ := m.Hi.MinAfter(d.Op.Return); rv >= hi {
				continue
			}
		}
		if p := PreconditionRV(d.Op); strict && p > 0 {
			if prev := m.Objs[name].At(rv - 1); prev == nil || prev.Rv != p {
				continue
			}
		}
		if best == nil || d.Outcome == WriteAcked && best.Outcome != WriteAcked {
			best = d
		}
	}
	return best
}

// insertChange keeps an object's changes sorted after addChange appended one.
func (m *Model) insertChange(c *Change) {
	if c == nil {
		return
	}
	o := c.Obj
	for i := len(o.Changes) - 1; i > 0 && o.Changes[i-1].Rv > o.Changes[i].Rv; i-- {
		o.Changes[i-1], o.Changes[i] = o.Changes[i], o.Changes[i-1]
	}
}

// leftovers turns the writes the history does not place into spans.
func (m *Model) leftovers() {
	for _, w := range m.Writes {
		if w.Rv != 0 || w.Outcome == WriteRefused {
			continue
		}
		lo, _ := m.Seen.MaxBefore(w.Op.Call)
		s := Span{Lo: lo, Hi: math.MaxInt64, Write: w, Certain: w.Outcome == WriteAcked}
		if s.Certain {
			s.Hi, _ = m.Hi.MinAfter(w.Op.Return)
		}
		if s.Hi-1 <= s.Lo {
			// No RV fits (a write's RV contradicts real time, which
			// kube/rv-order reports): bound it no more.
			s.Hi, s.Certain = math.MaxInt64, false
		}
		o := m.Objs[w.Name]
		if w.Del || w.mayPurge {
			o.DelSpans = append(o.DelSpans, s)
		} else {
			o.PutSpans = append(o.PutSpans, s)
		}
	}
}

// MayExistIn reports whether the object may exist at some RV in [lo, hi]
// with an RV other than not (0: any RV): a known state there, or a create
// or update the history cannot place that may lie before hi.
func (o *Object) MayExistIn(lo, hi, not int64) bool {
	if o.Unknown(lo) {
		return true // below its Floor the object's states are not known
	}
	if s := SpanIn(o.PutSpans, 0, hi); s != nil {
		return true
	}
	if c := o.At(lo); c.Exists() && c.Rv != not {
		return true
	}
	for c := o.Next(lo); c != nil && c.Rv <= hi; c = o.Next(c.Rv) {
		if c.Exists() && c.Rv != not {
			return true
		}
	}
	return false
}

// VerifyState judges items as the state at some RV in [a, b] under sel.
// With complete false only the items are judged (a page of a list).
func (m *Model) VerifyState(items []history.Object, sel *LabelSelector, a, b int64, complete bool) StateCheck {
	allowed := Intervals{{a, b}}
	var sc StateCheck
	seen := make(map[string]int, len(items))
	for i := range items {
		it := &items[i]
		o := m.Objs[it.Name]
		if o == nil {
			continue
		}
		if j, dup := seen[it.Name]; dup {
			sc.Issues = append(sc.Issues, stateIssue{Kind: issDuplicate, Name: it.Name, Item: i, prev: j, Rv: ObjRV(it)})
			continue
		}
		seen[it.Name] = i
		rv := ObjRV(it)
		if rv == 0 {
			continue // kube/rv-format's business
		}
		if sel != nil && !sel.Matches(it.Name, it.Labels) {
			sc.Issues = append(sc.Issues, stateIssue{Kind: IssueSelector, Name: it.Name, Item: i, Rv: rv})
		}
		c := o.Exactly(rv)
		switch {
		case c == nil && o.Unknown(rv):
			// A state from before the segment's context: not known, but
			// the object's changes from its Floor on are, so the state
			// shown lies below the Floor.
			if next := intersectIvs(allowed, Intervals{{rv, o.Floor - 1}}); len(next) > 0 {
				allowed = next
			} else {
				sc.Issues = append(sc.Issues, stateIssue{Kind: issStale, Name: it.Name, Item: i, Rv: rv, other: o.At(o.Floor)})
			}
			continue
		case c == nil:
			sc.Issues = append(sc.Issues, stateIssue{Kind: issUnexplained, Name: it.Name, Item: i, Rv: rv})
			continue
		case c.Del:
			sc.Issues = append(sc.Issues, stateIssue{Kind: issDeletedRV, Name: it.Name, Item: i, Rv: rv, other: c})
			continue
		case c.Value != it.Value:
			sc.Issues = append(sc.Issues, stateIssue{Kind: issWrongValue, Name: it.Name, Item: i, Rv: rv, other: c})
			continue
		}
		up, nx, sp := o.Upper(c)
		next := intersectIvs(allowed, Intervals{{rv, up}})
		if len(next) > 0 {
			allowed = next
			continue
		}
		iss := stateIssue{Kind: issSplit, Name: it.Name, Item: i, Rv: rv, other: nx, span: sp}
		switch {
		case rv > allowed[len(allowed)-1][1]:
			iss.Kind = issNewer
		case up < allowed[0][0]:
			iss.Kind = issStale
		}
		sc.Issues = append(sc.Issues, iss)
	}
	if complete {
		for _, name := range m.Names {
			if _, in := seen[name]; in {
				continue
			}
			o := m.Objs[name]
			lo, hi := allowed[0][0], allowed[len(allowed)-1][1]
			next := intersectIvs(allowed, o.AbsentSet(sel, lo, hi))
			if len(next) > 0 {
				allowed = next
				continue
			}
			st := o.At(hi)
			sc.Issues = append(sc.Issues, stateIssue{Kind: issMissing, Name: name, Item: -1, Rv: st.Rv, other: st})
		}
	}
	sc.ok = len(sc.Issues) == 0
	sc.lo, sc.S = allowed[0][0], allowed[len(allowed)-1][1]
	return sc
}

// AbsentSet returns the RVs in [lo, hi] at which the object is absent, or
// does not match sel, or may be either (a change the history cannot place
// may lie before).
func (o *Object) AbsentSet(sel *LabelSelector, lo, hi int64) Intervals {
	var out Intervals
	add := func(s, e int64) {
		if n := len(out); n > 0 && out[n-1][1] >= s-1 {
			out[n-1][1] = max(out[n-1][1], e)
			return
		}
		out = append(out, [2]int64{s, e})
	}
	c := o.At(lo)
	start := lo
	i := sort.Search(len(o.Changes), func(i int) bool { return o.Changes[i].Rv > lo })
	for {
		end := hi
		if i < len(o.Changes) && o.Changes[i].Rv <= hi {
			end = o.Changes[i].Rv - 1
		}
		from := int64(0)
		if c != nil {
			from = c.Rv
		}
		if !c.Exists() || !sel.Matches(c.Obj.Name, c.Labels) || !o.Settled(from, end, sel != nil) {
			add(start, end)
		}
		if end == hi {
			return out
		}
		c, start = o.Changes[i], o.Changes[i].Rv
		i++
	}
}

// IssueText says what an issue means, for a message that already named
// the set ("list operation 12 at RV 500: ..."), and the records proving it.
func (m *Model) IssueText(iss stateIssue, items []history.Object, stateRV string) (string, []Ref) {
	var it *history.Object
	if iss.Item >= 0 && iss.Item < len(items) {
		it = &items[iss.Item]
	}
	switch iss.Kind {
	case issUnexplained:
		why, refs := m.ExplainValue(it.Name, iss.Rv, it.Value)
		return fmt.Sprintf("%s at RV %d with value %q is no change the history knows: %s", it.Name, iss.Rv, it.Value, why), refs
	case issDeletedRV:
		return fmt.Sprintf("%s is shown at RV %d, the RV of its deletion by %s", it.Name, iss.Rv, m.WriteText(iss.other.Write)),
			[]Ref{iss.other.Ref()}
	case issWrongValue:
		return fmt.Sprintf("%s at RV %d has value %q, but %s wrote %q at that RV", it.Name, iss.Rv, it.Value,
			m.WriteText(iss.other.Write), iss.other.Value), []Ref{iss.other.Ref()}
	case IssueSelector:
		return fmt.Sprintf("%s (labels %v) does not match the selector", it.Name, it.Labels), nil
	case issDuplicate:
		return fmt.Sprintf("%s appears twice (items %d and %d)", it.Name, iss.prev, iss.Item), nil
	case issNewer:
		return fmt.Sprintf("%s at RV %d is newer than the state at RV %s", it.Name, iss.Rv, stateRV), nil
	case issStale:
		if iss.span != nil {
			return fmt.Sprintf("%s is shown at RV %d (value %q), but %s, acknowledged, deleted it at an RV between %d and %d, "+
					"at or below RV %s", it.Name, iss.Rv, it.Value, m.WriteText(iss.span.Write), iss.span.Lo+1, iss.span.Hi-1, stateRV),
				[]Ref{{Op: iss.span.Write.Op.ID, Index: -1}}
		}
		return fmt.Sprintf("%s is shown at RV %d (value %q), but %s changed it at RV %d, at or below RV %s", it.Name, iss.Rv,
			it.Value, m.ChangeText(iss.other), iss.other.Rv, stateRV), []Ref{iss.other.Ref()}
	case issSplit:
		return fmt.Sprintf("%s at RV %d cannot be in one state with the other items (its next change is %s)", it.Name, iss.Rv,
			m.changeOrNone(iss.other)), nil
	case issMissing:
		return fmt.Sprintf("%s is missing, though it exists at RV %s: %s made it at RV %d (value %q) and nothing the history "+
			"shows removed it", iss.Name, stateRV, m.WriteText(iss.other.Write), iss.other.Rv, iss.other.Value), []Ref{iss.other.Ref()}
	}
	return "unknown issue", nil
}

func (m *Model) changeOrNone(c *Change) string {
	if c == nil {
		return "not known"
	}
	return fmt.Sprintf("%s at RV %d", m.ChangeText(c), c.Rv)
}

// WriteText names a write: "update operation 12 (client 3)".
func (m *Model) WriteText(w *Write) string {
	if w == nil {
		return "no write"
	}
	return fmt.Sprintf("%s operation %d (client %d)", w.Verb, w.Op.ID, w.Op.Client)
}

// ChangeText names a change by its write.
func (m *Model) ChangeText(c *Change) string {
	if c == nil {
		return "no change"
	}
	return m.WriteText(c.Write)
}

// ExplainValue says why an object state (name, rv, value) is no change the
// history knows.
func (m *Model) ExplainValue(name string, rv int64, value string) (string, []Ref) {
	w := m.ByValue[value]
	switch {
	case w == nil:
		if c := m.ChangeAt[rv]; c != nil {
			return fmt.Sprintf("nobody wrote that value; RV %d is %s of %s", rv, m.ChangeText(c), c.Obj.Name), []Ref{c.Ref()}
		}
		return "nobody wrote that value", nil
	case w.Name != name:
		return fmt.Sprintf("that value was written to %s by %s", w.Name, m.WriteText(w)), []Ref{{Op: w.Op.ID, Index: -1}}
	case w.Outcome == WriteRefused && w.Op.NeverSent():
		return fmt.Sprintf("%s that wrote it was never sent (its connection was refused)", m.WriteText(w)), []Ref{{Op: w.Op.ID, Index: -1}}
	case w.Outcome == WriteRefused:
		return fmt.Sprintf("%s that wrote it was refused (%s)", m.WriteText(w), StatusText(w.Op.Status)), []Ref{{Op: w.Op.ID, Index: -1}}
	case w.Rv != 0 && w.Rv != rv:
		return fmt.Sprintf("%s committed that value at RV %d", m.WriteText(w), w.Rv), []Ref{{Op: w.Op.ID, Index: -1}}
	}
	if c := m.ChangeAt[rv]; c != nil {
		return fmt.Sprintf("RV %d is %s of %s", rv, m.ChangeText(c), c.Obj.Name), []Ref{c.Ref()}
	}
	return "the history cannot place it", nil
}

// At returns the object's latest known change at or below rv, or nil.
func (o *Object) At(rv int64) *Change {
	i := sort.Search(len(o.Changes), func(i int) bool { return o.Changes[i].Rv > rv })
	if i == 0 {
		return nil
	}
	return o.Changes[i-1]
}

// Next returns the object's first known change above rv, or nil.
func (o *Object) Next(rv int64) *Change {
	i := sort.Search(len(o.Changes), func(i int) bool { return o.Changes[i].Rv > rv })
	if i == len(o.Changes) {
		return nil
	}
	return o.Changes[i]
}

// Exactly returns the object's known change at rv, or nil.
func (o *Object) Exactly(rv int64) *Change {
	if c := o.At(rv); c != nil && c.Rv == rv {
		return c
	}
	return nil
}

// Settled reports whether no deletion the history cannot place may lie in
// (a, b]; withPuts also counts unplaced creates and updates (they may
// change the labels).
func (o *Object) Settled(a, b int64, withPuts bool) bool {
	if o.Unknown(a) || SpanIn(o.DelSpans, a, b) != nil {
		return false
	}
	return !withPuts || SpanIn(o.PutSpans, a, b) == nil
}

// Upper returns the highest RV at which the change c can still be the
// object's state: just below the next known change, or below a certain
// unplaced deletion that surely comes after it. MaxInt64 when none.
func (o *Object) Upper(c *Change) (int64, *Change, *Span) {
	up := int64(math.MaxInt64)
	nx := o.Next(c.Rv)
	if nx != nil {
		up = nx.Rv - 1
	}
	for i := range o.DelSpans {
		s := &o.DelSpans[i]
		if s.Certain && s.Lo >= c.Rv && s.Hi-2 < up {
			return s.Hi - 2, nil, s
		}
	}
	return up, nx, nil
}

// Exists reports whether the change leaves the object existing.
func (c *Change) Exists() bool { return c != nil && !c.Del }

// Ref returns how the change is known: its write's operation if it was
// acknowledged with the RV, else the record that placed it.
func (c *Change) Ref() Ref {
	if c.Write.How != (Ref{}) {
		return c.Write.How
	}
	return Ref{Op: c.Write.Op.ID, Index: -1}
}

// Evidence renders references as a violation's operations and events.
func (m *Model) Evidence(v *check.Violation, refs ...Ref) {
	for _, r := range refs {
		switch {
		case r.Op != 0:
			if !slices.Contains(v.Operations, r.Op) {
				v.Operations = append(v.Operations, r.Op)
			}
		case r.watch != 0:
			if w := m.kubeWatchByID(r.watch); w != nil && int(r.Index) < len(w.Events) {
				v.KubeEvents = append(v.KubeEvents, EventAt(w, int(r.Index)))
			}
		}
	}
}

func (m *Model) classifyWatches() {
	lastOfClient := map[int]*history.KubeWatchStream{}
	for _, w := range m.History.KubeWatches {
		if p := lastOfClient[w.Client]; p == nil || w.Call >= p.Call {
			lastOfClient[w.Client] = w
		}
	}
	mark, hasMark := m.History.Mark(history.MarkFinalWrite)
	for _, w := range m.History.KubeWatches {
		kw := m.classify(w)
		if hasMark && lastOfClient[w.Client] == w {
			m.extendToFinal(kw, mark)
		}
		m.Watches = append(m.Watches, kw)
		m.ByWatch[w.ID] = kw
	}
	// A context's watches are what a resume of this segment may continue:
	// found by id, judged by no check.
	if c := m.History.Context; c != nil {
		for _, w := range c.KubeWatches {
			if m.ByWatch[w.ID] == nil {
				m.ByWatch[w.ID] = m.classify(w)
			}
		}
	}
}

func (m *Model) classify(w *history.KubeWatchStream) *Watch {
	kw := &Watch{Stream: w, ErrIdx: -1, EndBM: -1, rvs: make([]int64, len(w.Events))}
	kw.Sel, kw.selErr = ParseSelectors(w.Request.LabelSelector, w.Request.FieldSelector)
	for i := range w.Events {
		kw.rvs[i] = ObjRV(w.Events[i].Object)
		if w.Events[i].Type == history.KubeError && kw.ErrIdx < 0 {
			kw.ErrIdx = i
		}
	}
	rv := w.Request.ResourceVersion
	sie := w.Request.SendInitialEvents
	switch {
	case len(w.Events) == 0 && w.End != nil && w.End.Status != nil:
		kw.Mode = WatchRefused
		return kw
	case kw.selErr != nil:
		kw.Mode = WatchUnjudged
		return kw
	case rv != "" && rv != "0":
		n, ok := facts.ParseRV(rv)
		if !ok {
			kw.Mode = WatchUnjudged
			return kw
		}
		kw.ReqRV = n
		kw.Mode = WatchExplicit
		if sie != nil && *sie {
			kw.Mode = WatchStreaming
		}
	case sie != nil && *sie:
		kw.Mode = WatchStreaming
	case sie != nil:
		kw.Mode = kwNoInitial
	default:
		kw.Mode = WatchState
	}
	end := kw.LiveEnd()
	if kw.Mode == WatchState || kw.Mode == WatchStreaming {
		m.splitInitial(kw, end)
	}
	kw.Live = make([]int, 0, end-kw.InitN)
	kw.ByRV = make([]rvIdx, 0, end-kw.InitN)
	for i := kw.InitN; i < end; i++ {
		e := &w.Events[i]
		rv := kw.Rv(i)
		if e.Type == history.KubeBookmark {
			kw.Last = max(kw.Last, rv)
			continue
		}
		if e.Object == nil || rv == 0 {
			continue
		}
		kw.Live = append(kw.Live, i)
		kw.ByRV = append(kw.ByRV, rvIdx{rv, i})
		kw.Last = max(kw.Last, rv)
	}
	sort.SliceStable(kw.ByRV, func(i, j int) bool { return kw.ByRV[i].Rv < kw.ByRV[j].Rv })
	switch kw.Mode {
	case WatchExplicit:
		kw.Start, kw.StartKnown = kw.ReqRV, true
	case WatchState, WatchStreaming:
		kw.Start, kw.StartKnown = kw.State.S, true
	case kwNoInitial:
		kw.Start = math.MaxInt64
		for i := kw.InitN; i < end; i++ {
			if rv := kw.Rv(i); rv > 0 {
				kw.Start = rv
				if w.Events[i].Type != history.KubeBookmark {
					kw.Start = rv - 1
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
func (m *Model) splitInitial(kw *Watch, end int) {
	evs := kw.Stream.Events
	for i := 0; i < end; i++ {
		if IsInitialEnd(&evs[i]) {
			kw.EndBM, kw.InitN = i, i+1
			break
		}
	}
	if kw.EndBM < 0 {
		names := map[string]bool{}
		for kw.InitN < end && evs[kw.InitN].Type == history.KubeAdded && evs[kw.InitN].Object != nil &&
			!names[evs[kw.InitN].Object.Name] {
			names[evs[kw.InitN].Object.Name] = true
			kw.InitN++
		}
	}
	for i := 0; i < kw.InitN; i++ {
		if evs[i].Type == history.KubeAdded && evs[i].Object != nil {
			kw.Items = append(kw.Items, *evs[i].Object)
		}
	}
	if kw.EndBM >= 0 {
		kw.StateLo = kw.Rv(kw.EndBM)
		kw.StateHi = kw.StateLo
	} else {
		kw.StateLo, kw.StateHi = kw.ReqRV, math.MaxInt64
		for _, it := range kw.Items {
			kw.StateLo = max(kw.StateLo, ObjRV(&it))
		}
		for i := kw.InitN; i < end; i++ {
			rv := kw.Rv(i)
			if rv == 0 {
				continue
			}
			if evs[i].Type == history.KubeBookmark {
				kw.StateHi = rv
			} else {
				kw.StateHi = rv - 1
			}
			break
		}
	}
	if kw.EndBM < 0 && kw.InitN > 0 {
		// The state was taken before its last event arrived: a write
		// called after that has a higher RV.
		if hi, _ := m.Hi.MinAfter(evs[kw.InitN-1].Time); hi-1 < kw.StateHi && hi-1 >= kw.StateLo {
			kw.StateHi = hi - 1
		}
	}
	if kw.StateLo > kw.StateHi {
		// A later event at or below the state's RV: the initial-state checks
		// report that event; the items are judged at their own RV.
		kw.StateHi = kw.StateLo
	}
	kw.State = m.VerifyState(kw.Items, kw.Sel, kw.StateLo, kw.StateHi, true)
}

// extendToFinal holds the last watch of a client, open until the run
// closed it after the final write was acknowledged, to the final write:
// the workload waits for every open watch to deliver it before closing
// them, so its window reaches the final write's RV.
func (m *Model) extendToFinal(kw *Watch, mark history.Mark) {
	w := kw.Stream
	if mark.Revision == 0 || kw.Mode == WatchRefused || kw.Mode == WatchUnjudged || kw.ErrIdx >= 0 || w.Call > mark.Time {
		return
	}
	if w.End != nil && (w.End.Reason != history.EndClient || w.End.Time < mark.Time) {
		return
	}
	c := m.ChangeAt[mark.Revision]
	if c == nil || !kw.StartKnown || kw.Start >= mark.Revision || kw.Last >= mark.Revision {
		return
	}
	if typ, sure := m.Expected(c, kw.Sel); typ == "" || !sure {
		return
	}
	kw.Last, kw.Extended = mark.Revision, true
}

// Expected says which event a watch with selector sel owes for change c:
// "" for none, "ADDED|MODIFIED" when either fits; sure is false when the
// history cannot tell whether one is owed (an unplaced write may have
// changed the object's labels just before).
func (m *Model) Expected(c *Change, sel *LabelSelector) (typ string, sure bool) {
	if sel == nil {
		switch {
		case c.Del:
			return history.KubeDeleted, true
		case c.Write.Verb == history.KubeCreate, IsApply(c.Write.Op) && c.Write.Op.Response != nil && c.Write.Op.Response.Code == 201:
			// An apply answered 201 Created says it found no object.
			return history.KubeAdded, true
		case IsApply(c.Write.Op) && !c.Obj.At(c.Rv-1).Exists():
			// An apply that found no object created it. (Where the
			// history does not settle that, either type fits.)
			from := int64(0)
			if p := c.Obj.At(c.Rv - 1); p != nil {
				from = p.Rv
			}
			if c.Obj.Settled(from, c.Rv-1, true) {
				return history.KubeAdded, true
			}
			return history.KubeAdded + "|" + history.KubeModified, true
		}
		return history.KubeModified, true
	}
	prev := c.Obj.At(c.Rv - 1)
	from := int64(0)
	if prev != nil {
		from = prev.Rv
	}
	newM := c.Exists() && sel.Matches(c.Obj.Name, c.Labels)
	if !c.Obj.Settled(from, c.Rv-1, true) {
		if newM {
			return history.KubeAdded + "|" + history.KubeModified, true
		}
		return "", false
	}
	prevM := prev.Exists() && sel.Matches(prev.Obj.Name, prev.Labels)
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

// ChangesIn returns the known changes with RV in (a, b].
func (m *Model) ChangesIn(a, b int64) []*Change {
	i := sort.Search(len(m.Changes), func(i int) bool { return m.Changes[i].Rv > a })
	j := sort.Search(len(m.Changes), func(i int) bool { return m.Changes[i].Rv > b })
	if i >= j {
		return nil
	}
	return m.Changes[i:j]
}
