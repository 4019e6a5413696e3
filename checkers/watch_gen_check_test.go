package checkers

import "testing"

// TestGeneratedHistoryPasses runs every check but kv/linearizable on a
// simulated valid run with every kind of watch, writes of unknown outcome
// and a compaction: none may fail, and the watch checks all have
// something to judge.
func TestGeneratedHistoryPasses(t *testing.T) {
	h := genWatchHistory(wgenConfig{revisions: 3000, keys: 12, prefixWatches: 10, unknownPct: 3, seed: 5})
	for _, c := range All() {
		if c.Name == NameLinearizable {
			continue
		}
		r := RunCheck(c, h, DefaultConfig())
		want := Pass
		if c.Name == NameKVSerializableSane || c.Name == NameKVConvergence {
			want = Skipped // no serializable read, no Status or HashKV
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
