package kube

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/checkers/kube/model"
	"github.com/vigil-suite/vigil/history"
)

// healthyKube is a small valid history exercising most checks.
func healthyKube(b *histbuild.KubeBuilder) {
	histbuild.BaseWrites(b)
	histbuild.FullWatch(b, 1)
	histbuild.SelWatch(b, 2)
	b.List(2, 55, 58, history.KubeRequest{}, 16, "", histbuild.A15, histbuild.B12)
	b.Get(2, 100, 110, "a", "", &histbuild.A20)
	b.Get(2, 100, 110, "b", "", nil)
}

func TestKubeHealthyHistoryPasses(t *testing.T) {
	b := histbuild.NewKube()
	healthyKube(b)
	for _, c := range Checks() {
		r := check.Run(c, b.H, check.DefaultConfig())
		t.Logf("%-32s %-8s %s %v", r.Name, r.Verdict, r.Reason, r.Figures)
		if r.Verdict == check.Fail || r.Verdict == check.Unknown {
			t.Errorf("%s: %s %s", r.Name, r.Verdict, histbuild.ViolationTexts(r.Violations))
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
		s, err := model.ParseSelector(c.sel)
		if err != nil {
			t.Fatalf("%q: %v", c.sel, err)
		}
		if got := s.Matches("", labels); got != c.want {
			t.Errorf("%q matches %v = %v, want %v", c.sel, labels, got, c.want)
		}
	}
	for _, bad := range []string{"g in a", "g,", "a b c"} {
		if _, err := model.ParseSelector(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestRVFormat(t *testing.T) {
	for rv, ok := range map[string]bool{"1": true, "123456789012345678901234": true, "0": false, "012": false, "": false,
		"-1": false, "1.5": false, " 1": false} {
		if facts.WellFormedRV(rv) != ok {
			t.Errorf("wellFormedRV(%q) = %v", rv, !ok)
		}
	}
	if _, ok := facts.ParseRV("123456789012345678901234"); ok {
		t.Error("an RV beyond int64 parsed")
	}
}
