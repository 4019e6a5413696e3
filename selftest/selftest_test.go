package selftest

import (
	"slices"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/watch"
	"github.com/vigil-suite/vigil/history"
)

// corpus is a recorded run of a real 3-member etcd v3.6.16 with a leader
// kill and a paused follower, which every check passes.
const corpus = "../checkers/testdata/etcd-v3.6.16-faults.jsonl.gz"

// corpusV2 is the same run recorded in format 2, with its progress
// requests: the corruptions of what a server answered to them need it.
const corpusV2 = "../checkers/testdata/etcd-v3.6.16-faults-v2.jsonl.gz"

// kubeCorpus is a recorded 30 s run of kube-apiserver v1.36.3 with
// restart, pause and compaction faults, which every MUST check passes.
const kubeCorpus = "../checkers/kube/testdata/kube-v1.36.3-faults.jsonl.gz"

func loadCorpus(t *testing.T) *history.History {
	t.Helper()
	return load(t, corpus)
}

func load(t *testing.T, path string) *history.History {
	t.Helper()
	h, err := history.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// grammarOnly are the kinds whose requests runs recorded before the
// grammar workload never sent.
var writePathKinds = []string{"kube-dry-run-seen", "kube-patch-drops-labels", "kube-status-write-moves-data",
	"kube-forced-apply-conflict", "kube-patch-not-applied", "kube-status-write-bumps-generation",
	"kube-generated-name-without-prefix", "kube-delete-collection-beyond-selector", "kube-finalized-object-deleted"}

var grammarOnly = []string{"nested-txn-other-branch", "sorted-range-swap", "count-only-miscount", "kept-value-missing-key"}

// TestCorpusSelftest: every kind of corruption applies to the real runs,
// and every corrupted history is rejected by the check that owns the
// guarantee, or the miss is argued (cannot be told from a correct answer,
// or only a SHOULD check can notice).
func TestCorpusSelftest(t *testing.T) {
	for _, c := range []struct {
		path  string
		kinds []Kind
		// absent are kinds the run gives no place to: the Kubernetes run
		// had no continue token expire.
		absent []string
	}{
		// The format-1 run recorded no progress requests; neither run
		// sent what only the grammar sends.
		{corpus, Kinds(), append([]string{"ignore-progress"}, grammarOnly...)},
		{corpusV2, Kinds(), grammarOnly},
		// It predates history format 5: no write path to corrupt.
		{kubeCorpus, KubeKinds(), append([]string{"kube-410-without-fresh-token"}, writePathKinds...)},
	} {
		t.Run(c.path, func(t *testing.T) {
			rep, err := Run(load(t, c.path), Config{PerKind: 6, Seed: 1, Checks: check.DefaultConfig()})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Kinds) != len(c.kinds) {
				t.Fatalf("%d kinds tried of %d", len(rep.Kinds), len(c.kinds))
			}
			for _, k := range rep.Kinds {
				t.Logf("%-28s sites %-5d tried %d caught %d by %s %d argued %d", k.Kind, k.Sites, k.Tried, k.Caught, k.Owner, k.ByOwner, k.Argued)
				if (k.Tried == 0) != slices.Contains(c.absent, k.Kind) {
					t.Errorf("%s: tried %d times on the corpus", k.Kind, k.Tried)
				}
			}
			for _, m := range rep.Misses {
				if m.Argued == "" {
					t.Errorf("%s missed by %s: %s (failed: %v, warned: %v)", m.Kind, m.Owner, m.What, m.Failed, m.Warned)
				}
			}
		})
	}
}

// TestSelftestReportsAMiss: a corruption its named owner does not catch
// is an unargued miss, with what was corrupted.
func TestSelftestReportsAMiss(t *testing.T) {
	wrong := Kinds()[0] // drop-event, which watch/unique cannot see
	wrong.Owner = watch.NameUnique
	rep, err := run(loadCorpus(t), Config{PerKind: 2, Seed: 1, Checks: check.DefaultConfig()}, []Kind{wrong})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Unargued() != 2 || !strings.Contains(rep.Misses[0].What, "dropped") || len(rep.Misses[0].Failed) == 0 {
		t.Fatalf("want two unargued misses that other checks caught, got %+v", rep.Misses)
	}
}

// TestSelftestNeedsAPassingHistory: corrupting a history that already
// fails proves nothing.
func TestSelftestNeedsAPassingHistory(t *testing.T) {
	h := loadCorpus(t)
	c := clone(h)
	dropEvent(c, innerEvents("")(c)[100])
	if _, err := Run(c, Config{PerKind: 1}); err == nil || !strings.Contains(err.Error(), "needs a history every check passes") {
		t.Fatalf("err = %v", err)
	}
}

// TestSelftestNeedsSomethingToCorrupt: a history with nothing the
// corruptions apply to is an error, not a clean self-test.
func TestSelftestNeedsSomethingToCorrupt(t *testing.T) {
	if _, err := Run(history.New(history.Meta{}), Config{PerKind: 1}); err == nil || !strings.Contains(err.Error(), "nothing to corrupt") {
		t.Fatalf("err = %v", err)
	}
}

// TestSelftestRefusesAnUnknownKind: a mistyped kind in Only is an error
// that lists the kinds, not a self-test that quietly tries nothing.
func TestSelftestRefusesAnUnknownKind(t *testing.T) {
	_, err := Run(loadCorpus(t), Config{PerKind: 1, Only: []string{"drop-evnt"}})
	if err == nil || !strings.Contains(err.Error(), `"drop-evnt" is not a corruption kind`) || !strings.Contains(err.Error(), "drop-event") {
		t.Fatalf("err = %v", err)
	}
}

// Print shows each kind, what each check rejected, and every miss with
// its argument; an unargued miss is named a weakness.
func TestReportPrint(t *testing.T) {
	rep := Report{
		Kinds:   []KindResult{{Kind: "drop-event", Owner: "watch/reliable", Sites: 9, Tried: 2, Caught: 2, ByOwner: 1, Argued: 0}},
		Misses:  []Trial{{Kind: "drop-event", Owner: "watch/reliable", What: "event 3 of watch 1", Failed: []string{"watch/ordered"}}},
		ByCheck: map[string]int{"watch/reliable": 1, "watch/ordered": 1},
	}
	var b strings.Builder
	rep.Print(&b, false)
	want := `KIND        OWNER           PLACES  TRIED  CAUGHT  BY OWNER  ARGUED
drop-event  watch/reliable  9       2      2       1         0

corruptions each check rejected (the owner first; the others only where it missed: --all-checks for all): watch/ordered 1, watch/reliable 1

missed by watch/reliable: drop-event: event 3 of watch 1
  rejected by watch/ordered

1 corruption(s) missed with no argument: each is a weakness of its owner check
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	rep.Misses[0].Argued, rep.AllChecks = "cannot be told from a slow watch", true
	b.Reset()
	rep.Print(&b, false)
	for _, w := range []string{"(every check judged every corruption)", "  argued: cannot be told from a slow watch\n",
		"\nevery corruption was caught by its owner, or its miss is argued\n"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("lacks %q:\n%s", w, b.String())
		}
	}
}
