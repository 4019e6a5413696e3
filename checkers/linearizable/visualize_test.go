package linearizable

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func TestVisualize(t *testing.T) {
	t.Run("failing history draws the failed search with its faults", func(t *testing.T) {
		b := histbuild.New()
		b.Put(1, 0, 10, "a", "v1", 11)
		b.Put(1, 20, 30, "a", "v2", 12)
		b.Fault("pause-leader", 25, 65)
		b.Get(2, 40, 50, "a", 12, histbuild.Kv("a", "v1", 11, 11, 1)) // stale
		if r := Check(b.H, check.DefaultConfig()); r.Verdict != check.Fail {
			t.Fatalf("setup: verdict %s, want fail", r.Verdict)
		}
		var buf bytes.Buffer
		v, err := Visualize(b.H, check.DefaultConfig(), &buf, VisualizeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(v.Scope, "failed") || v.Faults != 1 || v.Operations < 3 {
			t.Errorf("drew %+v, want the failed search with 3 operations and 1 fault", v)
		}
		html := buf.String()
		for _, want := range []string{"<html", "pause-leader", "v1", "faults"} {
			if !strings.Contains(html, want) {
				t.Errorf("the page lacks %q", want)
			}
		}
	})
	t.Run("passing history is drawn whole, or its last operations", func(t *testing.T) {
		h := histbuild.Generate(histbuild.GenConfig{Ops: 600, Clients: 4, Keys: 4, FailPct: 2, ApplyPct: 50, Seed: 7})
		var buf bytes.Buffer
		v, err := Visualize(h, check.DefaultConfig(), &buf, VisualizeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if v.Scope != "the whole history" || v.Operations < 500 {
			t.Errorf("drew %+v, want the whole history", v)
		}
		buf.Reset()
		v, err = Visualize(h, check.DefaultConfig(), &buf, VisualizeOptions{MaxOperations: 100})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(v.Scope, "the last") || v.Operations > 200 || buf.Len() == 0 {
			t.Errorf("drew %+v, want a window of about 100 operations", v)
		}
	})
	t.Run("a result draws its own run, as Visualize does", func(t *testing.T) {
		b := histbuild.New()
		b.Put(1, 0, 10, "a", "v1", 11)
		b.Put(1, 20, 30, "a", "v2", 12)
		b.Get(2, 40, 50, "a", 12, histbuild.Kv("a", "v1", 11, 11, 1)) // stale
		r := Check(b.H, check.DefaultConfig())
		if r.Drawing == nil {
			t.Fatalf("a %s result has no drawing", r.Verdict)
		}
		var fromResult, again bytes.Buffer
		what, err := r.Drawing(&fromResult)
		if err != nil {
			t.Fatal(err)
		}
		v, err := Visualize(b.H, check.DefaultConfig(), &again, VisualizeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if what != v.String() || fromResult.String() != again.String() {
			t.Errorf("the result drew %q (%d bytes), Visualize %q (%d bytes)", what, fromResult.Len(), v, again.Len())
		}
	})
	t.Run("an unknown verdict has nothing proven to draw", func(t *testing.T) {
		h := histbuild.Generate(histbuild.GenConfig{Ops: 600, Clients: 4, Keys: 4, FailPct: 2, ApplyPct: 50, Seed: 7})
		r := checkLinearizable(h, check.DefaultConfig(), func(r *linRun) { r.maxOps = 1 }) // over the cap
		if r.Verdict != check.Unknown || r.Drawing != nil {
			t.Errorf("verdict %s, drawing set %v; want unknown without a drawing", r.Verdict, r.Drawing != nil)
		}
	})
	t.Run("nothing to draw is an error", func(t *testing.T) {
		if _, err := Visualize(history.New(history.Meta{}), check.DefaultConfig(), &bytes.Buffer{}, VisualizeOptions{}); err == nil {
			t.Error("an empty history drew something")
		}
	})
}
