package reports

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	checksavail "github.com/vigil-suite/vigil/checkers/availability"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/kube"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/history"
)

// Part is the violations of one check that share a signature.
type Part struct {
	Check    string         `json:"check"`
	Severity check.Severity `json:"severity"`
	// Should marks a part of a SHOULD check: a warning.
	Should bool `json:"should,omitempty"`
	// OutsideProfile marks a part of a check outside the run's profile:
	// reported, but it decides nothing.
	OutsideProfile bool `json:"outside_profile,omitempty"`
	// Signature is what the violations share: the message of each with
	// its numbers, quoted values and ids masked (N, "…", X), runs of the
	// same item in a list collapsed. What is left is the kind of breach
	// and the shape of the operations involved (their kinds and roles).
	Signature string `json:"signature"`
	// Violations counts the violations kept that have this signature.
	Violations int `json:"violations"`
	// Found is how many violations the check found in all, when it kept
	// only the first ones (0 when it kept them all): the kept ones are
	// then a sample, and a count a lower bound.
	Found int `json:"found,omitempty"`
	// Witness is the one with the fewest records (operations and events).
	Witness check.Violation `json:"witness"`
	// RestsOn, in a part resting on a finding, are the watches its
	// violations took as proof that the finding shows unreliable.
	RestsOn []int64 `json:"rests_on,omitempty"`
	// RestsOnExit, in a part resting on a run/server-exit finding, names
	// the exit ("server-0 exited with code 2 at t=5.4s"): its violations
	// are only about the time that process was down.
	RestsOnExit string `json:"rests_on_exit,omitempty"`
}

// Finding is one root cause as far as the history shows it. Its first
// part (the fields of Part) is the worst: MUST before SHOULD, then by
// severity, then the most violations. One bug in a randomized run often
// breaks the same guarantee hundreds of times in the same way, and the
// same records often break several guarantees at once; a reader needs
// the cause once, with its smallest proof.
type Finding struct {
	Part
	// Probes are the conformance probes that isolate the guarantees of
	// its checks, where some exist (filled in by the caller, which knows
	// the probes).
	Probes []string `json:"probes,omitempty"`
	// Also are the other parts of the same cause, worst first: violations
	// of other checks, or of another shape, whose records are records of
	// this finding too (the same operation, the same watch event, the
	// same write seen by a watch or a read).
	Also []Part `json:"also,omitempty"`
	// RestingOnIt are violations whose proof is a watch this finding
	// shows unreliable (a watch that vouched a key did not change, while
	// this finding shows it misses changes), or, under a run/server-exit
	// finding, violations only about the time the process was down (an
	// outage over it, requests it left unanswered). They are not findings
	// of their own: the watch, or the dead process, may be why.
	RestingOnIt []Part `json:"resting_on_it,omitempty"`
}

// Checks names every check involved in the finding, worst first, each once.
func (f Finding) Checks() []string {
	var out []string
	for _, p := range f.parts() {
		if !slices.Contains(out, p.Check) {
			out = append(out, p.Check)
		}
	}
	return out
}

// Total counts the violations of every part, those resting on it included.
func (f Finding) Total() int {
	n := 0
	for _, p := range f.parts() {
		n += p.Violations
	}
	return n
}

// parts lists the finding's own part, then Also, then RestingOnIt.
func (f Finding) parts() []Part {
	return append(append([]Part{f.Part}, f.Also...), f.RestingOnIt...)
}

// PartOf returns the first part of check name in the finding.
func (f Finding) PartOf(name string) (Part, bool) {
	for _, p := range f.parts() {
		if p.Check == name {
			return p, true
		}
	}
	return Part{}, false
}

// Findings groups the violations of the failed checks into findings,
// worst first: MUST before SHOULD, then by severity (data, order,
// liveness), then the most violations first. Three steps:
//   - the violations of one check with one signature are one part;
//   - parts whose violations cite a record in common (an operation, a
//     call, a watch event, or the same write as a watch event or a read
//     shows it) are one finding: one cause as far as the records show;
//   - a violation that takes as proof a watch (Violation.RestsOn) which a
//     watch check's violation in the same run convicts is put under the
//     finding holding that conviction, not counted as a finding of its own;
//     so is one about nothing but the time a process of the system was
//     dead (deadSpan) under that process's run/server-exit finding.
//
// h, when not nil, names the writes behind the operations cited, so that
// a write a check cites by its operation and one that cites it as a watch
// event or a read showed it are seen to be one. Verdicts are untouched:
// this only decides how violations are shown.
func Findings(h *history.History, results []check.Result) []Finding {
	convicted := convictions(results)
	ix := newRecordIndex(h)
	deaths := deathsOf(results)
	type dying struct {
		part  Part
		v     check.Violation
		death int // index into deaths
	}
	var onDeath []dying
	type group struct {
		part     Part
		recs     []string
		convicts []watchRef
	}
	type leaning struct {
		part Part
		v    check.Violation
		on   []int64
	}
	var groups []*group
	var resting []leaning
	at := map[[2]string]*group{}
	for i := range results {
		r := &results[i]
		if r.Verdict != check.Fail {
			continue
		}
		found := 0
		if n := int(r.Figures["violations"]); n > len(r.Violations) {
			found = n
		}
		fam := family(r.Name)
		for _, v := range r.Violations {
			p := Part{Check: r.Name, Severity: r.Severity, Should: r.Should, OutsideProfile: r.OutsideProfile, Signature: Signature(v.Message), Found: found, Witness: v}
			var on []int64
			for _, w := range v.RestsOn {
				if convicted[watchRef{fam, w}] && !slices.Contains(on, w) {
					on = append(on, w)
				}
			}
			if len(on) > 0 {
				resting = append(resting, leaning{p, v, on})
				continue
			}
			if d := ix.deadSpan(deaths, r.Name, v); d >= 0 {
				p.RestsOnExit = deaths[d].label
				onDeath = append(onDeath, dying{p, v, d})
				continue
			}
			k := [2]string{r.Name, p.Signature}
			g := at[k]
			if g == nil {
				g = &group{part: p}
				at[k] = g
				groups = append(groups, g)
			} else if records(v) < records(g.part.Witness) {
				g.part.Witness = v
			}
			g.part.Violations++
			for d := range deaths {
				if deaths[d].v.Message == v.Message {
					deaths[d].group = slices.Index(groups, g)
				}
			}
			if r.Name == checksavail.NameServerExit {
				// The exit itself is its proof: the requests it names
				// were in flight, they join nothing to it.
				continue
			}
			g.recs = append(g.recs, ix.records(fam, v)...)
			if c, ok := convicts(r, v); ok {
				g.convicts = append(g.convicts, c)
			}
		}
	}

	// Parts that share a record are one finding (union-find over parts).
	parent := make([]int, len(groups))
	for i := range parent {
		parent[i] = i
	}
	var root func(int) int
	root = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	owner := map[string]int{}
	for i, g := range groups {
		for _, rec := range g.recs {
			if j, ok := owner[rec]; ok {
				if a, b := root(i), root(j); a != b {
					parent[max(a, b)] = min(a, b)
				}
			} else {
				owner[rec] = i
			}
		}
	}
	var out []Finding
	var convictedBy []map[watchRef]bool // per finding: the watches it convicts
	slot := map[int]int{}               // root part -> index into out
	for i, g := range groups {
		j, ok := slot[root(i)]
		if !ok {
			j = len(out)
			slot[root(i)] = j
			out = append(out, Finding{})
			convictedBy = append(convictedBy, map[watchRef]bool{})
		}
		out[j].Also = append(out[j].Also, g.part)
		for _, c := range g.convicts {
			convictedBy[j][c] = true
		}
	}
	for j := range out {
		slices.SortStableFunc(out[j].Also, partOrder)
		out[j].Part, out[j].Also = out[j].Also[0], out[j].Also[1:]
		if len(out[j].Also) == 0 {
			out[j].Also = nil
		}
	}

	// A violation resting on a convicted watch goes under the worst
	// finding that convicts one of its watches.
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return findingOrder(out[a], out[b]) })
	under := map[[3]string]int{} // finding, check, signature -> index into its RestingOnIt
	for _, l := range resting {
		target := -1
		for _, j := range order {
			for _, w := range l.on {
				if convictedBy[j][watchRef{family(l.part.Check), w}] {
					target = j
				}
			}
			if target >= 0 {
				break
			}
		}
		if target < 0 { // cannot happen: every conviction is in some finding
			out = append(out, Finding{Part: l.part})
			out[len(out)-1].Violations = 1
			continue
		}
		f := &out[target]
		k := [3]string{fmt.Sprint(target), l.part.Check, l.part.Signature}
		i, ok := under[k]
		if !ok {
			i = len(f.RestingOnIt)
			under[k] = i
			f.RestingOnIt = append(f.RestingOnIt, l.part)
		} else if records(l.v) < records(f.RestingOnIt[i].Witness) {
			f.RestingOnIt[i].Witness = l.v
		}
		p := &f.RestingOnIt[i]
		p.Violations++
		for _, w := range l.on {
			if !slices.Contains(p.RestsOn, w) {
				p.RestsOn = append(p.RestsOn, w)
			}
		}
	}
	// A violation about a process's death goes under that death's finding.
	underDeath := map[[3]string]int{}
	for _, d := range onDeath {
		g := deaths[d.death].group
		if g < 0 { // cannot happen: every death's violation is in a group
			out = append(out, Finding{Part: d.part})
			out[len(out)-1].Violations = 1
			continue
		}
		j := slot[root(g)]
		f := &out[j]
		k := [3]string{fmt.Sprint(j), d.part.Check, d.part.Signature}
		i, ok := underDeath[k]
		if !ok {
			i = len(f.RestingOnIt)
			underDeath[k] = i
			f.RestingOnIt = append(f.RestingOnIt, d.part)
		} else if records(d.v) < records(f.RestingOnIt[i].Witness) {
			f.RestingOnIt[i].Witness = d.v
		}
		f.RestingOnIt[i].Violations++
	}
	for j := range out {
		slices.SortStableFunc(out[j].RestingOnIt, partOrder)
	}
	slices.SortStableFunc(out, findingOrder)
	if out == nil {
		out = []Finding{}
	}
	return out
}

// partOrder puts the worse part first: by rank (rankOrder), then the
// most violations.
func partOrder(a, b Part) int {
	if c := rankOrder(a, b); c != 0 {
		return c
	}
	// Members that disagree name the request that made them disagree:
	// that part leads its finding, before what the disagreement broke.
	if ac, bc := a.Check == kv.NameMemberAgreement, b.Check == kv.NameMemberAgreement; ac != bc {
		if ac {
			return -1
		}
		return 1
	}
	return b.Violations - a.Violations
}

// findingOrder puts the worse finding first: by its worst part's rank,
// then the most violations in all.
func findingOrder(a, b Finding) int {
	if c := rankOrder(a.Part, b.Part); c != 0 {
		return c
	}
	return b.Total() - a.Total()
}

// rankOrder orders parts by how much they matter, whatever their counts:
// inside the profile before outside, MUST before SHOULD, then by severity.
func rankOrder(a, b Part) int {
	switch {
	case a.OutsideProfile != b.OutsideProfile:
		if a.OutsideProfile {
			return 1
		}
		return -1
	case a.Should != b.Should:
		if a.Should {
			return 1
		}
		return -1
	}
	return a.Severity.Rank() - b.Severity.Rank()
}

// records is how much a reader must look at to follow a violation.
func records(v check.Violation) int {
	return len(v.Operations) + len(v.Events) + len(v.KubeEvents)
}

// watchRef names a watch: etcd and Kubernetes watches count apart.
type watchRef struct {
	family string
	id     int64
}

// family is "kube" for a check of Kubernetes records, "etcd" otherwise.
func family(check string) string {
	if strings.HasPrefix(check, "kube/") {
		return "kube"
	}
	return "etcd"
}

// watchCheck reports whether a check judges watches themselves.
func watchCheck(name string) bool {
	return strings.HasPrefix(name, "watch/") || strings.HasPrefix(name, "kube/watch") || name == kube.NameBookmarks
}

// convicts returns the watch a violation shows unreliable: the watch a
// MUST watch check's violation is about, when that violation takes no
// other watch as proof (else which of the two is wrong is open). A SHOULD
// warning (a watch slow to reach the end, a prev_kv missing at creation)
// says nothing against what the watch vouched for.
func convicts(r *check.Result, v check.Violation) (watchRef, bool) {
	if r.Should || !watchCheck(r.Name) || v.Watch == 0 || len(v.RestsOn) > 0 {
		return watchRef{}, false
	}
	return watchRef{family(r.Name), v.Watch}, true
}

// convictions are the watches the failed checks of a run show unreliable.
func convictions(results []check.Result) map[watchRef]bool {
	out := map[watchRef]bool{}
	for i := range results {
		r := &results[i]
		if r.Verdict != check.Fail {
			continue
		}
		for _, v := range r.Violations {
			if c, ok := convicts(r, v); ok {
				out[c] = true
			}
		}
	}
	return out
}

// recordIndex finds the operations and calls a violation cites, to name
// their writes and tell whether they were answered.
type recordIndex struct {
	ops   map[int64]*history.Operation
	kube  map[int64]*history.KubeOperation
	calls map[int64]*history.Call
}

func newRecordIndex(h *history.History) recordIndex {
	ix := recordIndex{ops: map[int64]*history.Operation{}, kube: map[int64]*history.KubeOperation{}, calls: map[int64]*history.Call{}}
	if h == nil {
		return ix
	}
	for i := range h.Operations {
		ix.ops[h.Operations[i].ID] = &h.Operations[i]
	}
	for i := range h.KubeOps {
		ix.kube[h.KubeOps[i].ID] = &h.KubeOps[i]
	}
	for i := range h.Calls {
		ix.calls[h.Calls[i].ID] = &h.Calls[i]
	}
	return ix
}

// death is a process's death a run/server-exit violation reports: the
// span it was down, and the finding's group.
type death struct {
	v     check.Violation
	span  check.Span
	label string
	group int
}

// deathsOf lists the deaths the results report.
func deathsOf(results []check.Result) []death {
	var out []death
	for i := range results {
		r := &results[i]
		if r.Name != checksavail.NameServerExit || r.Verdict != check.Fail {
			continue
		}
		for _, v := range r.Violations {
			if v.Span != nil {
				out = append(out, death{v: v, span: *v.Span, label: checksavail.ExitLabel(v), group: -1})
			}
		}
	}
	return out
}

// deadSpan returns the death a violation of check name rests on alone
// (an index into deaths), or -1: a violation with a span (an outage)
// that overlaps the time the process was down; or one whose records are
// all requests that overlap that time and got no answer. A violation
// citing anything answered (an event, a response) has evidence of its
// own.
func (ix recordIndex) deadSpan(deaths []death, name string, v check.Violation) int {
	if name == checksavail.NameServerExit {
		return -1
	}
	for d := range deaths {
		s := deaths[d].span
		if v.Span != nil {
			if v.Span.Overlaps(s) {
				return d
			}
			continue
		}
		if len(v.Events) > 0 || len(v.KubeEvents) > 0 || len(v.Watches) > 0 || len(v.RestsOn) > 0 || len(v.Operations)+len(v.Calls) == 0 {
			continue
		}
		unanswered := func(call, ret time.Duration, answered bool) bool {
			return !answered && (check.Span{From: call, To: ret}).Overlaps(s)
		}
		all := true
		for _, id := range v.Operations {
			if o := ix.ops[id]; o != nil {
				all = all && unanswered(o.Call, o.Return, o.Response != nil)
			} else if k := ix.kube[id]; k != nil {
				all = all && unanswered(k.Call, k.Return, k.Response != nil || k.Status != nil)
			} else {
				all = false
			}
		}
		for _, id := range v.Calls {
			c := ix.calls[id]
			all = all && c != nil && unanswered(c.Call, c.Return, !c.Failed())
		}
		if all {
			return d
		}
	}
	return -1
}

// records lists what a violation rests on, as keys two violations share
// when they rest on the same record: the operations and calls it cites,
// the watch events it is about and the writes all of these show. The
// workload writes every value once, so a key's value names the write
// that made it, whichever revision a response or an event gave it. Only
// the events at the violation's own key and revision count when it names
// both: the others are context (the events a watch delivered around the
// one it missed) and would tie unrelated findings together.
func (ix recordIndex) records(fam string, v check.Violation) []string {
	var out []string
	for _, id := range v.Operations {
		out = append(out, "op:"+strconv.FormatInt(id, 10))
		if fam == "kube" {
			if o := ix.kube[id]; o != nil {
				out = append(out, kubeOpWrites(o)...)
			}
		} else if o := ix.ops[id]; o != nil {
			out = append(out, opWrites(o)...)
		}
	}
	for _, id := range v.Calls {
		out = append(out, "call:"+strconv.FormatInt(id, 10))
	}
	subject := v.Key != "" && v.Revision != 0
	for _, e := range v.Events {
		if subject && (e.Event.KV.Key != v.Key || e.Event.Revision() != v.Revision) {
			continue
		}
		out = append(out, fmt.Sprintf("event:%d/%d/%d", e.Watch, e.Response, e.Index))
		if w := eventWrite(e.Event); w != "" {
			out = append(out, w)
		}
	}
	for _, e := range v.KubeEvents {
		o := e.Event.Object
		if o == nil {
			continue
		}
		if subject && (o.Name != v.Key || o.ResourceVersion != strconv.FormatInt(v.Revision, 10)) {
			continue
		}
		out = append(out, fmt.Sprintf("kube-event:%d/%d", e.Event.Watch, e.Index))
		switch e.Event.Type {
		case history.KubeAdded, history.KubeModified:
			if o.Value != "" {
				out = append(out, kubeWrite(o.Name, o.Value))
			}
		case history.KubeDeleted:
			out = append(out, "kube-delete:"+o.Name+"@"+o.ResourceVersion)
		}
	}
	return out
}

func putWrite(key, value string) string   { return "put:" + key + "\x00" + value }
func kubeWrite(name, value string) string { return "kube-put:" + name + "\x00" + value }

func deleteWrite(key string, rev int64) string {
	return "delete:" + key + "@" + strconv.FormatInt(rev, 10)
}

// eventWrite is the write a watch event shows.
func eventWrite(e history.Event) string {
	switch {
	case e.Type == history.EventPut && e.KV.Value != "":
		return putWrite(e.KV.Key, e.KV.Value)
	case e.Type == history.EventDelete:
		return deleteWrite(e.KV.Key, e.Revision())
	}
	return ""
}

// opWrites are the writes an etcd operation made, or (a read of one key)
// the write whose value it returned. A delete is named by its key and the
// revision it was acknowledged at; a write of unknown outcome by its puts.
func opWrites(o *history.Operation) []string {
	var out []string
	rev := int64(0)
	if o.Response != nil {
		rev = o.Response.Revision
	}
	add := func(r *history.Request) {
		switch {
		case r.Kind == history.OpPut && r.Value != "":
			out = append(out, putWrite(r.Key, r.Value))
		case r.Kind == history.OpDelete && r.End == "" && rev > 0:
			out = append(out, deleteWrite(r.Key, rev))
		}
	}
	switch o.Request.Kind {
	case history.OpPut, history.OpDelete:
		add(&o.Request)
	case history.OpTxn:
		branches := [][]history.Request{o.Request.Success, o.Request.Failure}
		if o.Response != nil {
			branches = [][]history.Request{o.Request.Failure}
			if o.Response.Succeeded {
				branches = [][]history.Request{o.Request.Success}
			}
		}
		for _, br := range branches {
			for i := range br {
				add(&br[i])
			}
		}
	case history.OpRange:
		if o.Response != nil && o.Request.End == "" {
			for _, kv := range o.Response.KVs {
				if kv.Value != "" {
					out = append(out, putWrite(kv.Key, kv.Value))
				}
			}
		}
	}
	return out
}

// kubeOpWrites is the object write a Kubernetes call made (create,
// update) or returned (get); a list is too wide to name one.
func kubeOpWrites(o *history.KubeOperation) []string {
	var obj *history.Object
	switch o.Request.Verb {
	case history.KubeCreate, history.KubeUpdate:
		obj = o.Request.Object
	case history.KubeGet:
		if o.Response != nil {
			obj = o.Response.Object
		}
	}
	if obj == nil || obj.Value == "" {
		return nil
	}
	return []string{kubeWrite(obj.Name, obj.Value)}
}

var (
	quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	hexID  = regexp.MustCompile(`\b[0-9a-f]{8,}\b`)
	number = regexp.MustCompile(`-?[0-9]+(?:\.[0-9]+)?`)
	list   = regexp.MustCompile(`[^\s,]+(?:, [^\s,]+)+`)
)

// Signature masks what differs between two violations of one cause: the
// numbers (ids, revisions, times), quoted values and hexadecimal ids; a
// list that repeats one masked item says it once, followed by "…". Only
// the main clause counts: what a message adds after "; " is context (the
// events around a missed one, the span a watch vouches for), which differs
// between two violations of one cause.
func Signature(message string) string {
	if i := strings.Index(message, "; "); i > 0 {
		message = message[:i]
	}
	s := quoted.ReplaceAllString(message, `"…"`)
	s = hexID.ReplaceAllStringFunc(s, func(t string) string {
		if strings.Trim(t, "0123456789") == "" || strings.Trim(t, "abcdef") == "" {
			return t // a plain number (masked next) or a word such as "deadbeef"
		}
		return "X"
	})
	s = number.ReplaceAllString(s, "N")
	s = list.ReplaceAllStringFunc(s, func(l string) string {
		items := strings.Split(l, ", ")
		for _, it := range items[1:] {
			if it != items[0] {
				return l
			}
		}
		return items[0] + "…"
	})
	return strings.Join(strings.Fields(s), " ")
}
