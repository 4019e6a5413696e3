package checkers

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/availability"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/checkers/linearizable"
)

// TestGeneratedHistoryPasses runs every check but kv/linearizable on a
// simulated valid run with every kind of watch, writes of unknown outcome
// and a compaction: none may fail, and the watch checks all have
// something to judge.
func TestGeneratedHistoryPasses(t *testing.T) {
	h := histbuild.GenWatchHistory(histbuild.WgenConfig{Revisions: 3000, Keys: 12, PrefixWatches: 10, UnknownPct: 3, Seed: 5})
	for _, c := range Etcd() {
		if c.Name == linearizable.Name {
			continue
		}
		r := check.Run(c, h, check.DefaultConfig())
		want := check.Pass
		switch c.Name {
		case kv.NameSerializableSane, kv.NameReadYourWrites, kv.NameMonotonicReads, kv.NameConvergence, kv.NameMemberAgreement:
			want = check.Skipped // no serializable read, no Status or HashKV, one member
		case availability.NameServerExit:
			want = check.Skipped // no process vigil ran
		}
		if r.Verdict != want {
			t.Errorf("%s: %s (want %s) %s %v", r.Name, r.Verdict, want, r.Reason, r.Figures)
			for i, v := range r.Violations {
				if i < 5 {
					t.Errorf("  %s", v.Message)
				}
			}
		}
	}
}
