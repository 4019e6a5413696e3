package checkers

import (
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/availability"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/checkers/kube"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/checkers/watch"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets/sabotage"
)

func TestRunAll(t *testing.T) {
	h := histbuild.Generate(histbuild.GenConfig{Ops: 2000, Clients: 10, Keys: 8, Watches: 3, Seed: 11})
	rs := Run(h, check.DefaultConfig())
	if len(rs) != len(Etcd()) {
		t.Fatalf("%d results for %d checks", len(rs), len(Etcd()))
	}
	// The generated history may have nothing for some checks to judge (no
	// serializable read, Status or HashKV, start revision, progress
	// notification or prev_kv): those may skip. watch_gen_test.go covers
	// them.
	mayskip := map[string]bool{kv.NameSerializableSane: true, kv.NameReadYourWrites: true, kv.NameMonotonicReads: true, kv.NameConvergence: true, kv.NameMemberAgreement: true, watch.NameAtomic: true,
		watch.NameResumable: true, watch.NameBookmarkable: true, watch.NamePrevKV: true,
		watch.NamePrevKVAtCreation: true, watch.NameProgressBeforeStart: true, availability.NameServerExit: true}
	for i, r := range rs {
		ok := r.Verdict == check.Pass || r.Verdict == check.Skipped && mayskip[r.Name]
		if r.Name != Etcd()[i].Name || !ok {
			t.Errorf("%s: %s %s %+v", r.Name, r.Verdict, r.Reason, r.Violations)
		}
	}
	if check.Overall(rs) != check.Pass {
		t.Errorf("overall %s", check.Overall(rs))
	}
}

func TestRunCheckPanicIsUnknown(t *testing.T) {
	r := check.Run(check.Check{Name: "x", Run: func(*history.History, check.Config) check.Result { panic("boom") }}, histbuild.New().H, check.DefaultConfig())
	if r.Verdict != check.Unknown || !strings.Contains(r.Reason, "boom") {
		t.Fatalf("%+v", r)
	}
}

func TestRunEmptyHistoryIsSkippedNotPassed(t *testing.T) {
	for _, r := range Run(histbuild.New().H, check.DefaultConfig()) {
		if r.Verdict != check.Skipped || r.Reason == "" {
			t.Errorf("%s: %s (%q), want skipped with a reason", r.Name, r.Verdict, r.Reason)
		}
	}
}

func TestForHistory(t *testing.T) {
	b := histbuild.NewKube()
	if got := ForHistory(b.H); len(got) != len(Kube()) || got[0].Name != kube.NameRVFormat {
		t.Errorf("a kube history got %d checks starting %s", len(got), got[0].Name)
	}
	if got := ForHistory(history.New(history.Meta{})); len(got) != len(Etcd()) {
		t.Errorf("an etcd history got %d checks, want %d", len(got), len(Etcd()))
	}
	for _, c := range kube.Checks() {
		if want := c.Name == kube.NameBookmarks || c.Name == kube.NameStaleReadBound ||
			c.Name == kube.NameCacheAgreesWithEtcd || c.Name == kube.NameRecovery; c.Should != want {
			t.Errorf("%s: Should = %v", c.Name, !want)
		}
	}
}

// TestSabotageModesNameChecks: the check each sabotage mode must trip is
// one the registry runs for the mode's target (the modes name checks by
// string, since targets must not import checkers).
func TestSabotageModesNameChecks(t *testing.T) {
	for _, m := range sabotage.Modes() {
		checks := Etcd()
		if m.Target == sabotage.TargetKube {
			checks = Kube()
		}
		found := false
		for _, c := range checks {
			found = found || c.Name == m.Check
		}
		if !found {
			t.Errorf("sabotage %s names %q, which no %s check is", m.Name, m.Check, m.Target)
		}
	}
}

// TestEveryCheckHasASeverity: findings are ranked by it, so a check
// without one would sort last whatever it found.
func TestEveryCheckHasASeverity(t *testing.T) {
	for _, c := range append(Etcd(), Kube()...) {
		if c.Severity.Rank() > check.Liveness.Rank() {
			t.Errorf("%s has no severity (%q)", c.Name, c.Severity)
		}
	}
	h := histbuild.Generate(histbuild.GenConfig{Ops: 50, Clients: 2, Keys: 2, Seed: 1})
	for _, r := range Run(h, check.DefaultConfig()) {
		if r.Severity == "" {
			t.Errorf("%s: the result does not carry its check's severity", r.Name)
		}
	}
}

// Every check of either family declares its evidence: a pass always says
// what was asked and what was answered.
func TestEveryCheckDeclaresEvidence(t *testing.T) {
	for _, c := range append(Etcd(), Kube()...) {
		if c.Evidence == nil {
			t.Errorf("%s declares no evidence", c.Name)
		}
	}
}
