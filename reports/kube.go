package reports

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/vigil-suite/vigil/history"
)

// KubeStats counts what a Kubernetes run did, from its history.
type KubeStats struct {
	// Ops counts calls by verb; Answers by verb and outcome ("200",
	// "409", "error").
	Ops     map[history.KubeVerb]int `json:"calls"`
	Answers map[string]int           `json:"answers"`
	Watches int                      `json:"watches"`
	// Events counts watch events by type.
	Events map[string]int `json:"events"`
	// Expired counts 410s: ERROR events, refused watches, list answers.
	Expired int `json:"expired_410"`
	// Relists are watches started from a list after an earlier watch of
	// the same client; Resumes watches that continue another.
	Relists int `json:"relists"`
	Resumes int `json:"resumes"`
	// InitialEventsEnd counts BOOKMARKs that end a streaming list's initial events.
	InitialEventsEnd int `json:"initial_events_end"`
	// EtcdOps and EtcdEvents are the etcd side (compactions, oracle).
	EtcdOps    int `json:"etcd_operations"`
	EtcdEvents int `json:"etcd_oracle_events"`
	// Verbs counts the calls and watches by verb and by each option they
	// carried (history.KubeForms: "patch", "patch.type=apply", ...): sent,
	// answered (a response or a definite error) and refused (415, 405),
	// with every one the workload could send (Meta.KubeForms); NeverSent
	// lists those it never sent.
	Verbs     []ProductionCount `json:"verbs,omitempty"`
	NeverSent []string          `json:"never_sent,omitempty"`
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// countKubeForms adds to the rows of forms.
func (d *Digest) countKubeForms(forms []string, sent, answered, refused int) {
	for _, f := range forms {
		c := d.kubeForms[f]
		if c == nil {
			c = &ProductionCount{Production: f}
			d.kubeForms[f] = c
		}
		c.Sent += sent
		c.Answered += answered
		c.Refused += refused
	}
}

// kubeVerbOrder places the verbs as a report lists them.
var kubeVerbOrder = []string{"create", "get", "list", "watch", "update", "patch", "delete", "deletecollection"}

// kubeFormOrder sorts by verb, the verb's own row first, then its options.
func kubeFormOrder(a, b string) int {
	va, _, _ := strings.Cut(a, ".")
	vb, _, _ := strings.Cut(b, ".")
	ia, ib := slices.Index(kubeVerbOrder, va), slices.Index(kubeVerbOrder, vb)
	if ia < 0 {
		ia = len(kubeVerbOrder)
	}
	if ib < 0 {
		ib = len(kubeVerbOrder)
	}
	if ia != ib {
		return ia - ib
	}
	if va != vb {
		return strings.Compare(va, vb)
	}
	return strings.Compare(a, b) // "patch" sorts before "patch.x"
}

// kubeCoverage is the Verbs and NeverSent of the segments added so far.
func (d *Digest) kubeCoverage() ([]ProductionCount, []string) {
	rows := map[string]ProductionCount{}
	for f, c := range d.kubeForms {
		rows[f] = *c
	}
	for _, f := range d.meta.KubeForms {
		if _, ok := rows[f]; !ok {
			rows[f] = ProductionCount{Production: f}
		}
	}
	if len(rows) == 0 {
		return nil, nil
	}
	out := slices.Collect(maps.Values(rows))
	slices.SortFunc(out, func(a, b ProductionCount) int { return kubeFormOrder(a.Production, b.Production) })
	var never []string
	for _, f := range d.meta.KubeForms {
		if rows[f].Sent == 0 {
			never = append(never, f)
		}
	}
	slices.SortFunc(never, kubeFormOrder)
	return out, never
}

// CountKube computes a run's KubeStats.
func CountKube(h *history.History) KubeStats {
	d := NewDigest()
	d.init()
	d.meta, d.metaSet = h.Meta, true
	d.addKube(h, nil)
	return d.countKube()
}

// countKube is CountKube of the segments added so far (a copy).
func (d *Digest) countKube() KubeStats {
	d.init()
	k := d.kube
	k.Ops, k.Answers, k.Events = maps.Clone(k.Ops), maps.Clone(k.Answers), maps.Clone(k.Events)
	k.Verbs, k.NeverSent = d.kubeCoverage()
	return k
}

// String is the figures on a few lines, for the end of a run.
func (f KubeStats) String() string {
	var b strings.Builder
	verbs := make([]string, 0, len(f.Ops))
	for v, n := range f.Ops {
		verbs = append(verbs, fmt.Sprintf("%s %d", v, n))
	}
	sort.Strings(verbs)
	fmt.Fprintf(&b, "kube calls: %s\n", strings.Join(verbs, ", "))
	answers := make([]string, 0, len(f.Answers))
	for k, n := range f.Answers {
		answers = append(answers, fmt.Sprintf("%s:%d", k, n))
	}
	sort.Strings(answers)
	fmt.Fprintf(&b, "answers: %s\n", strings.Join(answers, " "))
	types := make([]string, 0, len(f.Events))
	for t, n := range f.Events {
		types = append(types, fmt.Sprintf("%s %d", t, n))
	}
	sort.Strings(types)
	fmt.Fprintf(&b, "watches %d (resumed %d, relists %d); events: %s; initial-events-end bookmarks %d; 410s %d\n",
		f.Watches, f.Resumes, f.Relists, strings.Join(types, ", "), f.InitialEventsEnd, f.Expired)
	fmt.Fprintf(&b, "etcd: %d operations (compactions, oracle), %d oracle watch events\n", f.EtcdOps, f.EtcdEvents)
	return b.String()
}

// writeKubeVerbs writes the coverage of a Kubernetes run as the etcd
// side writes its productions: per verb, all of its calls, then each
// option, sent/answered (and how many were refused); then the verbs and
// options the workload could send and never did.
func writeKubeVerbs(w io.Writer, rows []ProductionCount, never []string) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "verbs × options (verb.option=class), sent/answered:")
	var verb string
	var parts []string
	flush := func() {
		if len(parts) > 0 {
			writeWrapped(w, "  "+verb+": ", parts)
		}
		parts = nil
	}
	for _, r := range rows {
		if r.Sent == 0 {
			continue
		}
		v, opt, _ := strings.Cut(r.Production, ".")
		if v != verb {
			flush()
			verb = v
		}
		if opt == "" {
			opt = "all"
		}
		s := fmt.Sprintf("%s %d/%d", opt, r.Sent, r.Answered)
		if r.Refused > 0 {
			s += fmt.Sprintf(" (%d refused)", r.Refused)
		}
		parts = append(parts, s)
	}
	flush()
	if len(never) > 0 {
		writeWrapped(w, "never sent: ", never)
	} else {
		fmt.Fprintln(w, "never sent: none")
	}
}
