package history

import (
	"slices"
	"strconv"
	"time"
)

// What crosses a segment boundary. A segment judges the records sent in
// it, but some of what it must judge began before it, and some of what
// its answers show was written before it:
//
//   - A watch belongs to the segment it ends in. One still open at its
//     segment's end (or ended after it: its last responses may show the
//     next segment's writes) moves, with every response it received, into
//     the next segment, where it is judged whole once it ends (handOver).
//     A Kubernetes call likewise belongs to the segment it was answered
//     in (Segmenter.Add), for the objects are the whole run's.
//   - So does a paginated list: the pages of a list whose last page
//     carried a continue token move into the next segment, where its
//     client may fetch the next page.
//   - The next segment takes a Context: the writes its watches and reads
//     may show (those of the segment before, of the open watches' span,
//     and each Kubernetes object's last known state with what came after
//     it), each client's last Kubernetes watch (what a resume continues)
//     and, in a Kubernetes run, the etcd oracle's watches of that span.
//     No check judges a context record; the checks read it as they read
//     the facts a history proves. The segment sealed takes into its own
//     context the Kubernetes writes sent before its end and answered
//     after (the next segment's): its answers may show them.
//
// Memory is then bounded by what is open at a boundary and by the
// system's state (its objects), not by the run.

// Context is what a segment holds of the segments before it only to judge
// its own records. Nil in a whole history and in a run's first segment.
type Context struct {
	// Since is the time from which every write sent (or answered) is in
	// the context or the segment itself.
	Since time.Duration
	// Operations are etcd writes and compactions sent from Since on.
	Operations []Operation
	// KubeOps are Kubernetes writes sent from Since on and, for each
	// object, its anchor: its acknowledged create or update with the
	// highest RV, and every write of it sent from a segment's length
	// before that one on. Below the RV of its oldest write here the
	// segment does not know an object's changes (Floor in the checks'
	// model); from there on it knows every one.
	KubeOps []KubeOperation
	// Watches are etcd watches that ended from Since on (in a Kubernetes
	// run: the oracle's, the reference of kube/cache-agrees-with-etcd).
	Watches []*WatchStream
	// KubeWatches are, for each client, the last Kubernetes watch that
	// ended in the segment before, and the watches that the ones moved
	// into this segment resume: a watch resuming one may be this
	// segment's.
	KubeWatches []*KubeWatchStream
	// Faults are the faults of the segments before, healed from Since on,
	// that the segment's own history does not hold: a watch that began
	// before the segment lived through them.
	Faults []Fault
}

// OperationsWithContext returns the context's etcd operations and h's
// own, in that order: what the facts of a history (which write committed
// what, at which revision) are read from. No check judges the first.
func (h *History) OperationsWithContext() [][]Operation {
	if h.Context == nil {
		return [][]Operation{h.Operations}
	}
	return [][]Operation{h.Context.Operations, h.Operations}
}

// contextSlack is how much earlier than a segment's length the context
// reaches: a request answered within it was sent at most its timeout (5
// s for etcd, 10 s for Kubernetes) before.
const contextSlack = 15 * time.Second

// handOver is what sealing from does to the next open segment to: it
// moves the watches and paginated lists still open into it and gives it
// its Context.
func (s *Segmenter) handOver(from, to *History) {
	seg := from.Meta.Segment
	since := seg.Start
	moved := s.moveOpenWatches(from, to)
	for _, t := range moved {
		since = min(since, t)
	}
	for _, t := range moveOpenPages(from, to) {
		since = min(since, t)
	}
	length := seg.End - seg.Start
	since -= length + contextSlack
	to.Context = contextOf(from, to, since, length+contextSlack)
	var sentBefore []KubeOperation
	for _, o := range to.KubeOps {
		if o.Call < seg.End && o.Request.Verb.IsWrite() && !o.Refused() {
			sentBefore = append(sentBefore, o)
		}
	}
	if len(sentBefore) > 0 {
		if from.Context == nil {
			from.Context = &Context{Since: seg.Start}
		}
		from.Context.KubeOps = append(from.Context.KubeOps, sentBefore...)
	}
	to.Context.Faults = slices.DeleteFunc(to.Context.Faults, func(f Fault) bool {
		return slices.ContainsFunc(to.Faults, func(g Fault) bool { return g.ID == f.ID })
	})
}

// moveOpenWatches moves from's watches that had not ended by its end into
// to, with their responses, and routes their later records there. It
// returns their call times.
func (s *Segmenter) moveOpenWatches(from, to *History) []time.Duration {
	var calls []time.Duration
	var keep, move []*WatchStream
	if to.watchIndex == nil {
		to.watchIndex = map[int64]*WatchStream{}
	}
	end := from.Meta.Segment.End
	for _, w := range from.Watches {
		if w.End == nil || w.End.Time > end {
			move = append(move, w)
			s.watchOf[w.ID] = to
			to.watchIndex[w.ID] = w
			delete(from.watchIndex, w.ID)
			calls = append(calls, w.Call)
		} else {
			keep = append(keep, w)
		}
	}
	if len(move) > 0 {
		from.Watches, to.Watches = keep, append(move, to.Watches...)
	}
	var kkeep, kmove []*KubeWatchStream
	for _, w := range from.KubeWatches {
		if w.End == nil || w.End.Time > end {
			kmove = append(kmove, w)
			s.kwatchOf[w.ID] = to
			if to.kubeWatchIndex == nil {
				to.kubeWatchIndex = map[int64]*KubeWatchStream{}
			}
			to.kubeWatchIndex[w.ID] = w
			delete(from.kubeWatchIndex, w.ID)
			calls = append(calls, w.Call)
		} else {
			kkeep = append(kkeep, w)
		}
	}
	if len(kmove) > 0 {
		from.KubeWatches, to.KubeWatches = kkeep, append(kmove, to.KubeWatches...)
	}
	return calls
}

// moveOpenPages moves the pages of every paginated Kubernetes list whose
// last page carried a continue token (a next page may follow) from from
// into to. A client sends its calls one at a time, so its list's pages are
// its list calls that followed each other's tokens. It returns the first
// pages' call times.
func moveOpenPages(from, to *History) []time.Duration {
	open := map[int][]int{} // client: the indexes of its open chain's pages
	token := map[int]string{}
	for i := range from.KubeOps {
		o := &from.KubeOps[i]
		if o.Request.Verb != KubeList {
			continue
		}
		c := o.Client
		switch {
		case o.Request.Continue != "" && o.Request.Continue == token[c]:
		case o.Request.Continue == "" && o.Request.Limit > 0:
			open[c] = nil
		default:
			continue
		}
		open[c], token[c] = append(open[c], i), ""
		switch {
		case o.Response != nil:
			token[c] = o.Response.Continue
		case o.Status != nil && o.Status.Code == 410:
			token[c] = o.Status.Continue // an expired token's fresh one
		}
		if token[c] == "" {
			delete(open, c)
		}
	}
	if len(open) == 0 {
		return nil
	}
	var move []int
	var calls []time.Duration
	for _, idx := range open {
		move = append(move, idx...)
		calls = append(calls, from.KubeOps[idx[0]].Call)
	}
	slices.Sort(move)
	var keep, moved []KubeOperation
	for i := range from.KubeOps {
		if _, found := slices.BinarySearch(move, i); found {
			moved = append(moved, from.KubeOps[i])
		} else {
			keep = append(keep, from.KubeOps[i])
		}
	}
	from.KubeOps, to.KubeOps = keep, append(moved, to.KubeOps...)
	return calls
}

// contextOf is the Context of the segment after from, reaching back to
// since; window is a segment's length and slack (the anchors' reach).
func contextOf(from, to *History, since, window time.Duration) *Context {
	c := &Context{Since: since}
	prev := from.Context
	if prev == nil {
		prev = &Context{}
	}
	inWindow := func(call, ret time.Duration) bool { return call >= since || ret >= since }
	seen := map[int64]bool{}
	for _, ops := range [][]Operation{prev.Operations, from.Operations} {
		for _, o := range ops {
			// A write of unknown outcome is kept from its call on, one
			// segment at most: not applied within it, it is not applied.
			ret := o.Return
			if o.Response == nil {
				ret = o.Call
			}
			if seen[o.ID] || !(o.Request.Kind.IsWrite() || o.Request.Kind == OpCompact) || o.Definite() || !inWindow(o.Call, ret) {
				continue
			}
			seen[o.ID] = true
			c.Operations = append(c.Operations, o)
		}
	}
	c.KubeOps = kubeContext(append(slices.Clone(prev.KubeOps), from.KubeOps...), inWindow, window)
	for _, ws := range [][]*WatchStream{prev.Watches, from.Watches} {
		for _, w := range ws {
			if from.Meta.Target.Kind == "kube" && w.End != nil && w.End.Time >= since {
				c.Watches = append(c.Watches, w)
			}
		}
	}
	for _, fs := range [][]Fault{prev.Faults, from.Faults} {
		for _, f := range fs {
			if f.End >= since && !slices.ContainsFunc(c.Faults, func(g Fault) bool { return g.ID == f.ID }) {
				c.Faults = append(c.Faults, f)
			}
		}
	}
	c.KubeWatches = resumable(from, to)
	return c
}

// resumable are the Kubernetes watches that a watch of to may resume:
// each client's last watch that ended in from, and the ones the watches
// moved into to resume (from's, or its context's).
func resumable(from, to *History) []*KubeWatchStream {
	last := map[int]*KubeWatchStream{}
	for _, w := range from.KubeWatches {
		if p := last[w.Client]; w.End != nil && (p == nil || w.Call >= p.Call) {
			last[w.Client] = w
		}
	}
	var out []*KubeWatchStream
	for _, w := range last {
		out = append(out, w)
	}
	pool := from.KubeWatches
	if from.Context != nil {
		pool = append(slices.Clone(pool), from.Context.KubeWatches...)
	}
	for _, w := range to.KubeWatches {
		if w.Resumes == 0 {
			continue
		}
		for _, p := range pool {
			if p.ID == w.Resumes && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.SortFunc(out, func(a, b *KubeWatchStream) int { return int(a.Call - b.Call) })
	return out
}

// kubeContext keeps, of the Kubernetes writes ops (each once, by id), the
// ones sent or answered in the window and each object's anchor with what
// came after it (see Context.KubeOps). Writes refused for sure are
// dropped: they changed nothing.
func kubeContext(ops []KubeOperation, inWindow func(call, ret time.Duration) bool, reach time.Duration) []KubeOperation {
	seen := map[int64]bool{}
	byName := map[string][]int{}
	var all []KubeOperation
	for _, o := range ops {
		if seen[o.ID] || !o.Request.Verb.IsWrite() || o.Refused() {
			continue
		}
		seen[o.ID] = true
		all = append(all, o)
		byName[o.ObjectName()] = append(byName[o.ObjectName()], len(all)-1)
	}
	keep := make([]bool, len(all))
	for _, idx := range byName {
		anchor := -1
		var best int64
		for _, i := range idx {
			o := &all[i]
			keep[i] = inWindow(o.Call, o.Return)
			if rv := o.AckedRV(); rv > best && o.Request.Verb != KubeDelete {
				anchor, best = i, rv
			}
		}
		for _, i := range idx {
			// No anchor: the object was never acknowledged as written, and
			// all its writes stay.
			if anchor < 0 || all[i].Call >= all[anchor].Call-reach {
				keep[i] = true
			}
		}
	}
	var out []KubeOperation
	for i, k := range keep {
		if k {
			out = append(out, all[i])
		}
	}
	slices.SortStableFunc(out, func(a, b KubeOperation) int { return int(a.Call - b.Call) })
	return out
}

// ObjectName is the name of the object a call is about ("" for a list).
func (o *KubeOperation) ObjectName() string {
	if o.Request.Name != "" {
		return o.Request.Name
	}
	if o.Request.Object != nil {
		return o.Request.Object.Name
	}
	return ""
}

// AckedRV is the RV an acknowledged create or update answered with; 0
// when it has none (a delete answered with a Status, a failed call).
func (o *KubeOperation) AckedRV() int64 {
	if o.Response == nil || o.Response.Object == nil {
		return 0
	}
	n, err := strconv.ParseInt(o.Response.Object.ResourceVersion, 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// Refused reports whether the call surely did not happen: the server
// answered with an error below 500, or the connection was refused.
func (o *KubeOperation) Refused() bool {
	return o.Response == nil && (o.Status != nil && o.Status.Code < 500 || o.NeverSent())
}
