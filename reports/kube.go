package reports

import (
	"fmt"
	"maps"
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
}

// CountKube computes a run's KubeStats.
func CountKube(h *history.History) KubeStats {
	d := NewDigest()
	d.init()
	d.addKube(h, nil)
	return d.countKube()
}

// countKube is CountKube of the segments added so far (a copy).
func (d *Digest) countKube() KubeStats {
	d.init()
	k := d.kube
	k.Ops, k.Answers, k.Events = maps.Clone(k.Ops), maps.Clone(k.Answers), maps.Clone(k.Events)
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
