package checkers

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/checkers/linearizable"
	"github.com/vigil-suite/vigil/checkers/watch"
	"github.com/vigil-suite/vigil/reports"
)

// A watch that misses events fools kv/linearizable: it vouches that c did
// not change at revision 12, where a write of unknown outcome that a read
// shows applied must go. watch/reliable convicts the watch (it also missed
// the acknowledged put of d at 14), so the report shows the
// linearizability violation under watch/reliable's finding, resting on
// it; both checks still fail.
func TestFindingsRestOnConvictedWatch(t *testing.T) {
	b := histbuild.New()
	w := b.Watch(7, 9, 0, histbuild.PrefixWatch())
	b.Put(1, 0, 10, "a", "v1", 11)
	b.Events(w, 11, histbuild.PutEv("a", "v1", 11, 11, 1))
	b.PutFail(2, 20, 30, "c", "y1")
	b.Put(1, 40, 50, "b", "w1", 13)
	b.Events(w, 51, histbuild.PutEv("b", "w1", 13, 13, 1))
	b.Put(1, 60, 70, "d", "z1", 14)
	b.Put(1, 80, 90, "e", "x1", 15)
	b.Events(w, 91, histbuild.PutEv("e", "x1", 15, 15, 1))
	b.Get(3, 100, 110, "c", 15, histbuild.Kv("c", "y1", 12, 12, 1))

	results := Run(b.H, check.DefaultConfig())
	verdicts := map[string]check.Verdict{}
	for _, r := range results {
		verdicts[r.Name] = r.Verdict
	}
	if verdicts[linearizable.Name] != check.Fail || verdicts[watch.NameReliable] != check.Fail {
		t.Fatalf("kv/linearizable %s, watch/reliable %s: want both to fail", verdicts[linearizable.Name], verdicts[watch.NameReliable])
	}
	fs := reports.Findings(b.H, results)
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1: %+v", len(fs), fs)
	}
	f := fs[0]
	if f.Check != watch.NameReliable || len(f.RestingOnIt) != 1 || f.RestingOnIt[0].Check != linearizable.Name {
		t.Fatalf("finding %s with %+v resting on it, want kv/linearizable resting on watch/reliable", f.Check, f.RestingOnIt)
	}
	if on := f.RestingOnIt[0].RestsOn; len(on) != 1 || on[0] != 7 {
		t.Errorf("kv/linearizable rests on watches %v, want 7", on)
	}
}
