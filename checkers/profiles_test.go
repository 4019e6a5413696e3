package checkers

import (
	"slices"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/checkers/watch"
	"github.com/vigil-suite/vigil/history"
)

// Every check is tagged: the etcd profile holds them all, and the
// kubernetes profile holds those whose guarantee Kubernetes relies on.
func TestEveryCheckHasItsProfiles(t *testing.T) {
	all := append(Etcd(), Kube()...)
	in := map[string]bool{}
	for _, c := range all {
		if !slices.Contains(c.Profiles, check.ProfileEtcd) {
			t.Errorf("%s is not in the etcd profile (Profiles %v): every check is", c.Name, c.Profiles)
		}
		for _, p := range c.Profiles {
			if !slices.Contains(check.ProfileNames(), p) {
				t.Errorf("%s names an unknown profile %q", c.Name, p)
			}
		}
		in[c.Name] = slices.Contains(c.Profiles, check.ProfileKubernetes)
	}
	// docs/profiles.md argues each of these.
	for _, name := range []string{"kv/linearizable", "kv/revision-monotonic", "kv/compaction", "watch/ordered", "watch/unique",
		"watch/reliable", "watch/filter", "watch/resumable", "watch/bookmarkable", "watch/prev-kv", "watch/is-create",
		"watch/agreement", "watch/cancel-reason", "run/availability", "kube/linearizable", "kube/watch-from-rv"} {
		if !in[name] {
			t.Errorf("%s must be in the kubernetes profile", name)
		}
	}
	// Kubernetes sends no serializable read, no multi-key txn, no HashKV.
	for _, name := range []string{"kv/serializable-sane", "kv/convergence", "kv/read-your-writes", "kv/monotonic-reads", "watch/atomic"} {
		if v, ok := in[name]; !ok || v {
			t.Errorf("%s must be a check outside the kubernetes profile (known %v)", name, ok)
		}
	}
}

// check.Run carries the check's profiles into its result.
func TestRunCarriesProfiles(t *testing.T) {
	for _, c := range Etcd() {
		if c.Name != "watch/atomic" {
			continue
		}
		r := check.Run(c, histbuild.New().H, check.DefaultConfig())
		if !slices.Equal(r.Profiles, check.EtcdOnly) {
			t.Fatalf("result's profiles %v, want %v", r.Profiles, check.EtcdOnly)
		}
	}
}

// A declared limitation excuses what it names and nothing else: no-versions
// turns watch/is-create's version 0 into a limitation, no-size-limit
// leaves it a failure.
func TestDeclaredLimitationExcusesOnlyItsOwn(t *testing.T) {
	isCreate := func(limits map[string]string) check.Result {
		b := histbuild.New()
		b.H.Meta.Limitations = limits
		b.Put(1, 0, 10, "a", "1", 11)
		w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
		b.Created(w, 1, 10)
		b.Events(w, 12, history.Event{Type: history.EventPut, IsCreate: true, KV: histbuild.Kv("a", "1", 11, 11, 0)})
		return watch.CheckIsCreate(b.H, check.DefaultConfig())
	}
	declared := func(name string) map[string]string {
		l, ok := check.LimitationNamed(name)
		if !ok {
			t.Fatalf("no limitation %s", name)
		}
		return map[string]string{name: check.DeclaredReason(l)}
	}
	if r := isCreate(declared(history.LimitationNoSizeLimit)); r.Verdict != check.Fail {
		t.Errorf("no-size-limit excused version 0: %s %s", r.Verdict, r.Reason)
	}
	r := isCreate(declared(history.LimitationNoVersions))
	if r.Verdict != check.Documented || !strings.Contains(r.Reason, "--limitation no-versions") {
		t.Errorf("no-versions: %s %q, want limitation citing the declaration", r.Verdict, r.Reason)
	}
}

// Every limitation in the list says what it excuses and what to point
// to, and names only checks that exist.
func TestLimitationsAreDocumented(t *testing.T) {
	names := map[string]bool{}
	for _, c := range append(Etcd(), Kube()...) {
		names[c.Name] = true
	}
	for _, l := range check.Limitations() {
		if l.Summary == "" || l.Excuses == "" || l.PointTo == "" {
			t.Errorf("%s: summary, excuses and point-to must all be said", l.Name)
		}
		for _, c := range LimitationChecks()[l.Name] {
			if !names[c] {
				t.Errorf("%s names no check %q", l.Name, c)
			}
		}
	}
}
