package checkers

import (
	"errors"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/checkers/linearizable"
	"github.com/vigil-suite/vigil/checkers/watch"
	"github.com/vigil-suite/vigil/history"
)

// A recorded run of kine v0.17.5 over SQLite with compact-storm and
// kill-leader faults (vigil run --fixture kine --duration 12s --clients 6
// --watchers 4 --rate 300 --seed 21 --faults compact-storm,kill-leader
// --fault-interval 4s). It keeps the findings of docs/findings/kine.md
// checkable offline: each check below fails on this history for the
// finding named, and the others do not fail.
const kineCorpusRun = "testdata/kine-v0.17.5-sqlite-faults.jsonl.gz"

func TestKineCorpus(t *testing.T) {
	h := histbuild.LoadGz(t, kineCorpusRun)
	if h.Meta.Target.Fixture != "kine" || h.Meta.Refuses["txn"] == "" || h.Meta.Limitations[history.LimitationNoVersions] == "" {
		t.Fatalf("the corpus is not the recorded kine run: %+v", h.Meta)
	}
	// Each failing check and a phrase of its first violation that names
	// the finding behind it.
	fails := map[string]string{
		kv.NameRevisionMonotonic: "were both acknowledged as creating revision", // a create acknowledged at another revision
		linearizable.Name:        "then delete",                                 // a delete of a missing key takes a revision
		watch.NameReliable:       "missed the PUT",                              // the same creates, looked for at the acknowledged revision
		watch.NameFilter:         "asked for no",                                // filters ignored
		watch.NamePrevKV:         "",                                            // the phantom delete's prev_kv, and the misplaced creates
		watch.NameIsCreate:       "",                                            // misplaced creates; version 0 is documented
		watch.NameCancelReason:   "without a cancel reason",                     // a watch from a future revision ends silently
	}
	for _, c := range Etcd() {
		r := check.Run(c, h, check.DefaultConfig())
		want, mustFail := fails[c.Name]
		switch {
		case mustFail && r.Verdict != check.Fail:
			t.Errorf("%s: %s, want fail", c.Name, r.Verdict)
		case mustFail && !strings.Contains(r.Violations[0].Message, want):
			t.Errorf("%s: first violation %q does not say %q", c.Name, r.Violations[0].Message, want)
		case !mustFail && r.Verdict == check.Fail && !r.Should:
			t.Errorf("%s: fail, which no finding explains: %s", c.Name, histbuild.ViolationTexts(r.Violations))
		case !mustFail && r.Verdict == check.Unknown:
			t.Errorf("%s: unknown: %s", c.Name, r.Reason)
		}
		// A violation wraps the guarantee of the check that found it.
		for _, v := range r.Violations {
			if c.Guarantee == nil || !errors.Is(v, c.Guarantee) {
				t.Errorf("%s: violation %q does not wrap the check's guarantee", c.Name, v.Message)
			}
		}
	}
}
