package checkers

import (
	"testing"

	"github.com/vigil-suite/vigil/history"
)

// healthyKube is a small valid history exercising most checks.
func healthyKube(b *kb) {
	baseWrites(b)
	fullWatch(b, 1)
	selWatch(b, 2)
	b.list(2, 55, 58, history.KubeRequest{}, 16, "", a15, b12)
	b.get(2, 100, 110, "a", "", &a20)
	b.get(2, 100, 110, "b", "", nil)
}

func TestKubeHealthyHistoryPasses(t *testing.T) {
	b := newKB()
	healthyKube(b)
	for _, c := range Kube() {
		r := RunCheck(c, b.h, DefaultConfig())
		t.Logf("%-32s %-8s %s %v", r.Name, r.Verdict, r.Reason, r.Figures)
		// No final-write mark here: run/availability is honestly unknown.
		if r.Verdict == Fail || r.Verdict == Unknown && c.Name != NameRunAvailability {
			t.Errorf("%s: %s %s", r.Name, r.Verdict, violationTexts(r.Violations))
		}
	}
}

func TestForHistory(t *testing.T) {
	b := newKB()
	if got := ForHistory(b.h); len(got) != len(Kube()) || got[0].Name != NameKubeRVFormat {
		t.Errorf("a kube history got %d checks starting %s", len(got), got[0].Name)
	}
	if got := ForHistory(history.New(history.Meta{})); len(got) != len(All()) {
		t.Errorf("an etcd history got %d checks, want %d", len(got), len(All()))
	}
	for _, c := range Kube() {
		if want := c.Name == NameKubeBookmarks || c.Name == NameKubeStaleReadBound ||
			c.Name == NameKubeCacheAgreesWithEtcd || c.Name == NameKubeRecovery; IsShould(c.Name) != want {
			t.Errorf("IsShould(%s) = %v", c.Name, !want)
		}
	}
}

func TestLabelSelector(t *testing.T) {
	labels := map[string]string{"g": "a", "tier": "web"}
	for _, c := range []struct {
		sel  string
		want bool
	}{
		{"", true}, {"g=a", true}, {"g==a", true}, {"g=b", false}, {"g!=b", true}, {"g!=a", false},
		{"g in (a,b)", true}, {"g in (b, c)", false}, {"g notin (b)", true}, {"tier", true}, {"!tier", false},
		{"!missing", true}, {"g=a,tier=web", true}, {"g=a, tier=db", false}, {"missing!=x", true},
	} {
		s, err := parseSelector(c.sel)
		if err != nil {
			t.Fatalf("%q: %v", c.sel, err)
		}
		if got := s.matches(labels); got != c.want {
			t.Errorf("%q matches %v = %v, want %v", c.sel, labels, got, c.want)
		}
	}
	for _, bad := range []string{"g in a", "g,", "a b c"} {
		if _, err := parseSelector(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestRVFormat(t *testing.T) {
	for rv, ok := range map[string]bool{"1": true, "123456789012345678901234": true, "0": false, "012": false, "": false,
		"-1": false, "1.5": false, " 1": false} {
		if wellFormedRV(rv) != ok {
			t.Errorf("wellFormedRV(%q) = %v", rv, !ok)
		}
	}
	if _, ok := parseRV("123456789012345678901234"); ok {
		t.Error("an RV beyond int64 parsed")
	}
}
