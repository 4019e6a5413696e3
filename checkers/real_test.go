package checkers

import (
	"os"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/linearizable"
	"github.com/vigil-suite/vigil/checkers/watch"
	"github.com/vigil-suite/vigil/history"
)

// realHistory is a run recorded against a real etcd cluster, kept out of
// the repository (the test skips the ones this machine does not have),
// with the violations it is known to hold: check name -> a substring of
// each expected violation's message.
type realHistory struct {
	path  string
	known map[string][]string
}

var realHistories = []realHistory{
	{path: "/tmp/acc-v3.6.16-3/history.jsonl"}, // v3.6.16, 3 members, compactions
	{path: "/tmp/cmp1/history.jsonl"},          // v3.6.16, a watch canceled for compaction
	// v3.4.25. etcd registers a watch before it records that the watch
	// wants prev_kv (v3rpc recvLoop sets sws.prevKV[id] after
	// watchStream.Watch returns, and sendLoop reads it per response), so an
	// event racing the creation goes out without its prev_kv. Here the
	// first event, 5 µs after the created response, is an update of k012.
	{path: "/tmp/ver-v3.4.25/history.jsonl", known: map[string][]string{
		watch.NamePrevKVAtCreation: {"watch 7 (client 15) delivered PUT k012 at revision 850 in its first response with events (response 1) without prev_kv"}}},
}

// TestRealHistories runs every check but kv/linearizable (it keeps its own
// corpus) on histories of healthy clusters: each passes or has nothing to
// judge, unless the history is known to hold a violation of it.
func TestRealHistories(t *testing.T) {
	for _, rh := range realHistories {
		t.Run(rh.path, func(t *testing.T) {
			if _, err := os.Stat(rh.path); err != nil {
				t.Skipf("%s is not on this machine", rh.path)
			}
			h, err := history.Load(rh.path)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range Etcd() {
				if c.Name == linearizable.Name {
					continue
				}
				r := check.Run(c, h, check.DefaultConfig())
				t.Logf("%-22s %-7s %s %v", r.Name, r.Verdict, r.Reason, r.Figures)
				want := rh.known[r.Name]
				if len(want) == 0 {
					if r.Verdict != check.Pass && r.Verdict != check.Skipped {
						t.Errorf("%s: %s (%s)", r.Name, r.Verdict, r.Reason)
					}
					for _, v := range r.Violations {
						t.Errorf("%s: %s", r.Name, v.Message)
					}
					continue
				}
				if r.Verdict != check.Fail || len(r.Violations) != len(want) {
					t.Errorf("%s: %s with %d violations, want fail with the %d known", r.Name, r.Verdict, len(r.Violations), len(want))
					continue
				}
				for i, v := range r.Violations {
					if !strings.Contains(v.Message, want[i]) {
						t.Errorf("%s: %q, want the known %q", r.Name, v.Message, want[i])
					}
				}
			}
		})
	}
}
