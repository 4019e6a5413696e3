package reports

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/workload/grammar"
)

// A Digest is what the reports need of a run's history, gathered one
// segment at a time, so that result.json, junit.xml and report.html of a
// run of hours are written without its whole history in memory. Add takes
// a segment (a self-contained history of some seconds of the run, on the
// run's clock, judged on its own) or a whole history, and keeps:
//
//   - the counts of Stats: operations, watches and their events, request
//     forms and grammar productions, the Kubernetes figures;
//   - the faults, each once (a fault spanning segments is in each);
//   - the findings of each segment, with their witnesses' times;
//   - the availability table's seconds, and its outages' figures;
//   - the plots' data in slots of run time: per slot and kind a count,
//     the exact slowest and a log histogram (summary), never the samples.
//
// Its size grows with the run's seconds only through the per-second
// availability table (about 100 bytes a second), the faults (with an
// outage each at most) and the findings; the plots' slots are at most
// maxSlots, their width doubling when the run outgrows them, so a day's
// plots cost what an hour's do. What it carries from one segment to the
// next is bounded by a segment: the writes it acknowledged (a watch event
// in the next segment finds its write's time there; one that comes later
// still, more than a segment after its write, is left out of the lag
// plot), the watches not yet ended, the calls answered after its latest
// call.
//
// A segment's operations and calls are those called in it (or returned
// in it); a watch open across a boundary is in both segments with the
// same id, its responses each in the segment they arrived in, its end in
// the last; each operation, call, response and event is in one segment
// only. Findings are each segment's, worst first: a cause that broke a
// check in two segments is two findings.
type Digest struct {
	meta    history.Meta
	metaSet bool
	cut     string
	end     time.Duration

	operations, failedOps int
	watches, watchEvents  int
	forms                 map[string]*FormCount
	patterns              patternTally // patterns.go
	prods                 map[string]*ProductionCount
	kubeSeen, kubeOps     bool
	kube                  KubeStats
	kubeForms             map[string]*ProductionCount // by history.KubeForms
	listed                map[int]bool                // Kubernetes clients that started a watch from a list

	faults  []history.Fault
	faultAt map[string]int
	ends    []time.Duration // the faults' ends, sorted; nil when they changed

	findings []Finding
	witness  map[string]time.Duration // by witnessKey

	// The plots' slots: slot i holds what started (calls) or arrived
	// (watch events) in [i*slotW, (i+1)*slotW).
	slotW      time.Duration
	slots      []slot
	kinds      []string // call kinds, by id
	kindID     map[string]int
	lagWatches int
	clipped    int // the slots before it have had their spare room given back

	open, kubeOpen map[int64]*openWatch
	prevCommitted  map[int64]time.Duration

	av availState
}

// maxSlots bounds the plots' slots: past it, adjacent slots merge in
// pairs. The page's buckets are newTimeline's about 600, their width
// rounded to whole slots: a run past 34 minutes, in 1,024 to 2,048
// slots, gets 500 to 750 buckets.
const maxSlots = 2048

// slot is the plots' data of one slice of run time.
type slot struct {
	kinds      []summary // by kind id: the latency of the calls answered with data
	failed     peak      // calls answered with a definite error
	unanswered peak      // calls of unknown outcome
	gone       int       // calls answered 410
	lists      int       // Kubernetes lists, whatever their outcome
	lag        summary   // watch delivery lag of the events received
	progress   int       // progress notifications and bookmarks received
}

func (s *slot) merge(o *slot) {
	for len(s.kinds) < len(o.kinds) {
		s.kinds = append(s.kinds, summary{})
	}
	for k := range o.kinds {
		s.kinds[k].merge(&o.kinds[k])
	}
	s.failed.merge(o.failed)
	s.unanswered.merge(o.unanswered)
	s.gone += o.gone
	s.lists += o.lists
	s.lag.merge(&o.lag)
	s.progress += o.progress
}

// openWatch is what is known of a watch seen in a segment and not yet ended.
type openWatch struct {
	created, refused bool // CountForms' answered and refused
	lagged           bool // counted among the watches with a lag
}

// NewDigest is an empty digest; Add fills it.
func NewDigest() *Digest { return &Digest{} }

func (d *Digest) init() {
	if d.forms != nil {
		return
	}
	d.forms = map[string]*FormCount{}
	d.prods = map[string]*ProductionCount{}
	d.kube = KubeStats{Ops: map[history.KubeVerb]int{}, Answers: map[string]int{}, Events: map[string]int{}}
	d.kubeForms = map[string]*ProductionCount{}
	d.listed = map[int]bool{}
	d.faultAt = map[string]int{}
	d.witness = map[string]time.Duration{}
	d.slotW = time.Second
	d.kindID = map[string]int{}
	d.open, d.kubeOpen = map[int64]*openWatch{}, map[int64]*openWatch{}
	d.av.prev = -1
}

// Add adds one segment of the run (or its whole history) and the results
// of the checks that judged it: h may be dropped once Add returns.
func (d *Digest) Add(h *history.History, results []check.Result) {
	d.init()
	if seg := h.Meta.Segment; seg != nil && len(seg.Carried) > 0 {
		// The writes carried from the segment before were counted there.
		own := *h
		own.Operations = h.Operations[len(seg.Carried):]
		h = &own
	}
	if !d.metaSet {
		d.meta, d.metaSet = h.Meta, true
	}
	if d.cut == "" {
		d.cut = h.Cut
	}
	d.end = max(d.end, h.End())
	for i := range h.Operations {
		d.operations++
		if h.Operations[i].Failed() {
			d.failedOps++
		}
	}
	for _, w := range h.Watches {
		for _, r := range w.Responses {
			d.watchEvents += len(r.Events)
		}
	}
	d.kubeSeen = d.kubeSeen || len(h.KubeOps) > 0 || len(h.KubeWatches) > 0
	d.kubeOps = d.kubeOps || len(h.KubeOps) > 0
	d.addFaults(h.Faults)
	d.addCalls(h, facts.Calls(h))
	lagged := d.addLags(h)
	d.addForms(h, lagged)
	d.addPatterns(h)
	d.addKube(h, lagged[1])
	d.addFindings(h, results)
	d.clip()
}

// clip gives back the spare room of the slots' histograms, but for the
// last slot's, which the next segment may still fill.
func (d *Digest) clip() {
	d.clipped = min(d.clipped, len(d.slots))
	for ; d.clipped < len(d.slots)-1; d.clipped++ {
		s := &d.slots[d.clipped]
		s.kinds = slices.Clip(s.kinds)
		for k := range s.kinds {
			s.kinds[k].clip()
		}
		s.lag.clip()
	}
}

// faultKey names a fault across segments: its id (older histories have
// none: then its name, targets and start).
func faultKey(f history.Fault) string {
	if f.ID != 0 {
		return fmt.Sprint(f.ID)
	}
	return fmt.Sprintf("%s/%s/%d", f.Name, strings.Join(f.Targets, ","), f.Start)
}

func (d *Digest) addFaults(faults []history.Fault) {
	if len(faults) > 0 {
		d.ends = nil
	}
	for _, f := range faults {
		k := faultKey(f)
		i, ok := d.faultAt[k]
		if !ok {
			d.faultAt[k] = len(d.faults)
			d.faults = append(d.faults, f)
			continue
		}
		g := &d.faults[i]
		g.Start, g.End = min(g.Start, f.Start), max(g.End, f.End)
	}
}

// faultEnds are the faults' ends, sorted.
func (d *Digest) faultEnds() []time.Duration {
	if d.ends == nil {
		d.ends = make([]time.Duration, 0, len(d.faults))
		for _, f := range d.faults {
			d.ends = append(d.ends, f.End)
		}
		slices.Sort(d.ends)
	}
	return d.ends
}

func (d *Digest) kind(k string) int {
	id, ok := d.kindID[k]
	if !ok {
		id = len(d.kinds)
		d.kindID[k] = id
		d.kinds = append(d.kinds, k)
	}
	return id
}

// slotAt is the slot of run time at (nil before the run), merging the
// slots in pairs while at lies past maxSlots of them.
func (d *Digest) slotAt(at time.Duration) *slot {
	if at < 0 {
		return nil
	}
	i := int(at / d.slotW)
	for i >= maxSlots {
		d.coarsen()
		i = int(at / d.slotW)
	}
	if i >= len(d.slots) {
		d.slots = append(d.slots, make([]slot, i+1-len(d.slots))...)
	}
	return &d.slots[i]
}

// coarsen doubles the slots' width, merging them in pairs.
func (d *Digest) coarsen() {
	n := (len(d.slots) + 1) / 2
	for j := range n {
		s := d.slots[2*j]
		if 2*j+1 < len(d.slots) {
			s.merge(&d.slots[2*j+1])
		}
		d.slots[j] = s
	}
	clear(d.slots[n:])
	d.slots = d.slots[:n]
	d.slotW *= 2
	d.clipped = 0 // merge clips what it makes
}

// addCalls adds the calls of a segment to the plots' slots (by their
// start) and to the availability table (by their return).
func (d *Digest) addCalls(h *history.History, calls []facts.Call) {
	horizon := time.Duration(-1 << 63)
	for _, c := range calls {
		k := d.kind(c.Kind)
		horizon = max(horizon, c.Start)
		if s := d.slotAt(c.Start); s != nil {
			ms := max(float64(c.Ret-c.Start)/1e6, 0.01)
			switch {
			case !c.Ok:
				s.unanswered.add(ms)
			case c.Failed:
				s.failed.add(ms)
			default:
				for len(s.kinds) <= k {
					s.kinds = append(s.kinds, summary{})
				}
				s.kinds[k].add(ms)
			}
			if c.Status == 410 {
				s.gone++
			}
			if c.Kind == string(history.KubeList) {
				s.lists++
			}
		}
		d.av.count(c, k)
	}
	d.av.add(calls, horizon, d.faultEnds())
}

// addLags adds the watch delivery lags and progress notifications of a
// segment to the plots' slots (see watchLagPlot); it returns the watches
// that had a lag, by family.
func (d *Digest) addLags(h *history.History) (lagged [2]map[int64]bool) {
	lagged = [2]map[int64]bool{{}, {}}
	kubeRun := h.Meta.Target.Kind == "kube"
	committed := map[int64]time.Duration{}
	for i := range h.Operations {
		if rev, ok := facts.AckedWriteRevision(&h.Operations[i]); ok && !kubeRun {
			if at, seen := committed[rev]; !seen || h.Operations[i].Return < at {
				committed[rev] = h.Operations[i].Return
			}
		}
	}
	for _, o := range h.KubeOps {
		if o.Response != nil && o.Response.Object != nil && o.Request.Verb != history.KubeGet && o.Request.Verb != history.KubeList {
			if rv, ok := facts.ParseRV(o.Response.Object.ResourceVersion); ok {
				committed[rv] = o.Return
			}
		}
	}
	// A write acknowledged in the previous segment: the earliest
	// acknowledgement of an etcd revision, the latest Kubernetes write of
	// a resourceVersion.
	write := func(rev int64) (time.Duration, bool) {
		at, ok := committed[rev]
		if p, pok := d.prevCommitted[rev]; pok && (!ok || (!kubeRun && p < at)) {
			return p, true
		}
		return at, ok
	}
	lag := func(at, write time.Duration) bool {
		if s := d.slotAt(at); s != nil {
			s.lag.add(max(float64(at-write)/1e6, lagFloor))
			return true
		}
		return false
	}
	note := func(at time.Duration) {
		if s := d.slotAt(at); s != nil {
			s.progress++
		}
	}
	for _, w := range h.Watches {
		if kubeRun {
			break
		}
		for _, r := range w.Responses {
			if r.Progress {
				note(r.Time)
			}
			for _, e := range r.Events {
				if at, ok := write(e.Revision()); ok && lag(r.Time, at) {
					lagged[0][w.ID] = true
				}
			}
		}
	}
	for _, w := range h.KubeWatches {
		for _, e := range w.Events {
			if e.Object == nil {
				continue
			}
			if e.Type == history.KubeBookmark {
				note(e.Time)
				continue
			}
			rv, parsed := facts.ParseRV(e.Object.ResourceVersion)
			if at, ok := write(rv); ok && parsed && lag(e.Time, at) {
				lagged[1][w.ID] = true
			}
		}
	}
	d.prevCommitted = committed
	return lagged
}

// addForms counts the segment's watches (each once, though a watch open
// across segments is in each) and their request forms, and counts the
// operations and calls by form (CountForms).
func (d *Digest) addForms(h *history.History, lagged [2]map[int64]bool) {
	row := func(f string) *FormCount {
		if d.forms[f] == nil {
			d.forms[f] = &FormCount{Form: f}
		}
		return d.forms[f]
	}
	for i := range h.Operations {
		o := &h.Operations[i]
		c := row(history.FormOf(o.Request))
		c.Sent++
		switch {
		case answeredOp(o):
			c.Answered++
		case o.Code == history.ErrRefused:
			c.Refused++
		}
		d.countDrawn(o.Draw, answeredOp(o), o.Code == history.ErrRefused)
	}
	for i := range h.Calls {
		k := &h.Calls[i]
		c := row(string(k.Kind))
		c.Sent++
		switch {
		case answeredCall(k):
			c.Answered++
		case k.Code == history.ErrRefused:
			c.Refused++
		}
		d.countDrawn(k.Draw, answeredCall(k), k.Code == history.ErrRefused)
	}
	for _, w := range h.Watches {
		st := d.open[w.ID]
		forms := history.WatchForms(w.Request)
		if st == nil {
			st = &openWatch{}
			d.open[w.ID] = st
			d.watches++
			for _, f := range forms {
				row(f).Sent++
			}
			d.countDrawn(w.Draw, false, false)
		}
		created, refused := st.created, st.refused
		for _, r := range w.Responses {
			created = created || r.Created || len(r.Events) > 0 || r.Progress
			refused = refused || (r.Canceled && history.SaysRefused(r.CancelReason)) || history.SaysRefused(r.Error)
		}
		// A watch counts as answered once created, else as refused once
		// refused: the counts move as later segments tell more.
		wasRefused, isRefused := !st.created && st.refused, !created && refused
		for _, f := range forms {
			c := row(f)
			if created && !st.created {
				c.Answered++
			}
			if wasRefused && !isRefused {
				c.Refused--
			}
			if isRefused && !wasRefused {
				c.Refused++
			}
		}
		for _, p := range w.Draw {
			if !grammar.Known(p) {
				continue // a pattern's tag: not the grammar's
			}
			c := d.prodRow(p)
			if created && !st.created {
				c.Answered++
			}
			if wasRefused && !isRefused {
				c.Refused--
			}
			if isRefused && !wasRefused {
				c.Refused++
			}
		}
		st.created, st.refused = created, refused
		if lagged[0][w.ID] && !st.lagged {
			st.lagged = true
			d.lagWatches++
		}
		if w.End != nil {
			delete(d.open, w.ID)
		}
	}
}

// addKube adds the segment's Kubernetes figures (CountKube), each watch
// counted once.
func (d *Digest) addKube(h *history.History, lagged map[int64]bool) {
	f := &d.kube
	for _, op := range h.KubeOps {
		refused := history.KubeRefused(op.Status)
		d.countKubeForms(history.KubeForms(op.Request), 1, b2i(op.Response != nil || op.Status != nil && !refused), b2i(refused))
		f.Ops[op.Request.Verb]++
		key := string(op.Request.Verb) + " "
		switch {
		case op.Response != nil:
			key += fmt.Sprint(op.Response.Code)
		case op.Status != nil:
			key += fmt.Sprint(op.Status.Code)
			if op.Status.Code == 410 {
				f.Expired++
			}
		default:
			key += "error"
		}
		f.Answers[key]++
	}
	for _, w := range h.KubeWatches {
		st := d.kubeOpen[w.ID]
		forms := history.KubeWatchForms(w.Request)
		if st == nil {
			st = &openWatch{}
			d.kubeOpen[w.ID] = st
			d.countKubeForms(forms, 1, 0, 0)
			f.Watches++
			if w.Resumes != 0 {
				f.Resumes++
			}
			if w.AfterList != 0 {
				if d.listed[w.Client] {
					f.Relists++
				}
				d.listed[w.Client] = true
			}
		}
		if lagged[w.ID] && !st.lagged {
			st.lagged = true
			d.lagWatches++
		}
		for _, ev := range w.Events {
			f.Events[ev.Type]++
			if ev.Type == history.KubeError && ev.Status != nil && ev.Status.Code == 410 {
				f.Expired++
			}
			if ev.Type == history.KubeBookmark && ev.Object != nil && ev.Object.Annotations[history.AnnotationInitialEventsEnd] == "true" {
				f.InitialEventsEnd++
			}
		}
		// A watch is answered once it delivers an event, the server ends
		// it cleanly or answers it with an error Status (a 422 for an
		// invalid one); refused when the server declines its form.
		if !st.created && !st.refused {
			switch {
			case len(w.Events) > 0 || w.End != nil && (w.End.Reason != history.EndError || w.End.Status != nil && !history.KubeRefused(w.End.Status)):
				st.created = true
				d.countKubeForms(forms, 0, 1, 0)
			case w.End != nil && history.KubeRefused(w.End.Status):
				st.refused = true
				d.countKubeForms(forms, 0, 0, 1)
			}
		}
		if w.End != nil {
			if w.End.Status != nil && w.End.Status.Code == 410 {
				f.Expired++
			}
			delete(d.kubeOpen, w.ID)
		}
	}
	f.EtcdOps += len(h.Operations)
	for _, w := range h.Watches {
		for _, r := range w.Responses {
			f.EtcdEvents += len(r.Events)
		}
	}
}

// addFindings groups the segment's violations (Findings, over the
// segment's records), noting when each witness happened.
func (d *Digest) addFindings(h *history.History, results []check.Result) {
	if !slices.ContainsFunc(results, func(r check.Result) bool { return r.Verdict == check.Fail }) {
		return
	}
	fs := Findings(h, check.MarkProfile(results, profileOf(h.Meta)))
	d.noteWitnesses(h, fs)
	d.findings = append(d.findings, fs...)
}

// noteWitnesses notes when the witness of each finding shown on the page
// happened, from h.
func (d *Digest) noteWitnesses(h *history.History, fs []Finding) {
	d.init()
	for _, f := range fs {
		if at, ok := witnessTime(h, f.Witness); ok {
			d.witness[witnessKey(f.Witness)] = at
		}
	}
}

// witnessKey names a violation for its time.
func witnessKey(v check.Violation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%v|%d", v.Message, v.Operations, len(v.KubeEvents))
	for _, e := range v.Events {
		fmt.Fprintf(&b, "|%d/%d/%d", e.Watch, e.Response, e.Index)
	}
	return b.String()
}

func profileOf(m history.Meta) string {
	if m.Profile == "" {
		return check.ProfileEtcd
	}
	return m.Profile
}

// Faults are the run's faults, each once, in the order first seen.
func (d *Digest) Faults() []history.Fault { return d.faults }

// End is the latest time a record of the run carries (history.End).
func (d *Digest) End() time.Duration { return d.end }

// timeline is the page's buckets: newTimeline's, their width rounded to
// the nearest whole number of slots.
func (d *Digest) timeline() timeline {
	t := newTimeline(d.end)
	if w := max(d.slotW, time.Second); t.width%w != 0 {
		t.width = max((t.width+w/2)/w, 1) * w
		t.n = int(t.span/t.width) + 1
	}
	return t
}

// buckets merges the slots into t's buckets; slots past the run's end
// are left out.
func (d *Digest) buckets(t timeline) []slot {
	out := make([]slot, t.n)
	per := int(t.width / max(d.slotW, time.Second))
	for i := range d.slots {
		if j := i / per; j < t.n {
			out[j].merge(&d.slots[i])
		}
	}
	return out
}
