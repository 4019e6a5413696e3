package kube

import (
	"slices"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/checkers/kube/model"
	"github.com/vigil-suite/vigil/history"
)

// A recorded run of kube-apiserver v1.36.3 over one etcd member, with
// restart-apiserver, pause-apiserver and compact-storm faults (vigil run
// --target kube --members 1 --faults pause-apiserver,restart-apiserver,
// compact-storm --fault-interval 7s --duration 30s --seed 8).
const kubeCorpusRun = "testdata/kube-v1.36.3-faults.jsonl.gz"

// TestKubeCorpus re-checks the recorded run: every check passes but the
// three the run could not show, which are skipped because the run never
// asked (their evidence says why); every pass rests on requests the
// server answered, and no owed answer went missing. The run with one
// watch event taken out fails kube/watch-from-rv, naming the watch and
// the RV.
func TestKubeCorpus(t *testing.T) {
	h := histbuild.LoadGz(t, kubeCorpusRun)
	// What this 30 s run could not show: no watch reached its timeout
	// outside the restart of its API server, no continue token expired
	// (no continuation came after a compaction passed its RV), no watch
	// was open across a fault's heal.
	// The run predates the write paths of history format 5: kube/write-paths has nothing to judge.
	skipped := map[string]bool{NameWatchTimeout: true, NameContinueExpired: true, NameRecovery: true, NameWritePaths: true}
	for _, c := range Checks() {
		r := check.Run(c, h, check.DefaultConfig())
		e := r.Evidence
		t.Logf("%-32s %-8s %s", c.Name, r.Verdict, e)
		switch {
		case e == nil:
			t.Errorf("%s declares no evidence", c.Name)
		case skipped[c.Name]:
			if r.Verdict != check.Skipped || e.Asked != 0 || e.Why == "" {
				t.Errorf("%s: %s (%s), evidence %+v; want skipped, nothing asked, with why", c.Name, r.Verdict, r.Reason, e)
			}
		case r.Verdict != check.Pass || e.Answered == 0 || e.Ignored != 0:
			t.Errorf("%s: %s (%s) %s, evidence %+v; want pass on answered requests", c.Name, r.Verdict, r.Reason,
				histbuild.ViolationTexts(r.Violations), e)
		}
	}
	var w *history.KubeWatchStream
	for _, x := range h.KubeWatches {
		if x.Request.ResourceVersion != "" && x.Request.ResourceVersion != "0" && x.Request.LabelSelector == "" &&
			(w == nil || len(x.Events) > len(w.Events)) {
			w = x
		}
	}
	i := len(w.Events) / 2
	for w.Events[i].Type == history.KubeBookmark {
		i++
	}
	dropped := w.Events[i]
	w.Events = append(w.Events[:i:i], w.Events[i+1:]...)
	r := CheckWatchFromRV(h, check.DefaultConfig())
	if r.Verdict != check.Fail || r.Violations[0].Watch != w.ID || r.Violations[0].Key != dropped.Object.Name {
		t.Errorf("dropping watch %d's %s: %s %s", w.ID, model.EventText(dropped), r.Verdict, histbuild.ViolationTexts(r.Violations))
	}
}

// The checks prepared for one history judge it from one model, and,
// given another history, judge that one: a corrupted copy of the run
// fails the prepared kube/watch-from-rv although the model prepared for
// the original says nothing is missing.
func TestChecksOfPreparesOneHistory(t *testing.T) {
	h := histbuild.LoadGz(t, kubeCorpusRun)
	prepared := ChecksOf(h)
	var fromRV check.Check
	for _, c := range prepared {
		if c.Name == NameWatchFromRV {
			fromRV = c
		}
	}
	if r := check.Run(fromRV, h, check.DefaultConfig()); r.Verdict != check.Pass {
		t.Fatalf("the prepared check on its own history: %s", r.Verdict)
	}
	other := histbuild.LoadGz(t, kubeCorpusRun)
	for _, w := range other.KubeWatches {
		if w.Request.ResourceVersion != "" && w.Request.ResourceVersion != "0" && w.Request.LabelSelector == "" && len(w.Events) > 4 {
			i := len(w.Events) / 2
			for i < len(w.Events)-1 && w.Events[i].Type == history.KubeBookmark {
				i++
			}
			w.Events = append(w.Events[:i:i], w.Events[i+1:]...)
			break
		}
	}
	if r := check.Run(fromRV, other, check.DefaultConfig()); r.Verdict != check.Fail {
		t.Errorf("the prepared check on another, corrupted history: %s, want fail", r.Verdict)
	}
}

// TestKubeCorpusWithoutInitialEventsEnd: the recorded run with the
// initial-events-end bookmark taken out of one streaming list (what the
// sabotage mode missing-initial-events-end does) fails
// kube/watchlist-initial-events, naming that list; with it taken out of
// every watch, the check fails too, whether or not any list went on past
// its initial events.
func TestKubeCorpusWithoutInitialEventsEnd(t *testing.T) {
	c := checkNamed(t, NameWatchlistInitial)
	h := histbuild.LoadGz(t, kubeCorpusRun)
	var first *history.KubeWatchStream
	for _, w := range h.KubeWatches {
		if streamingList(w.Request) && len(w.Events) > 0 {
			first = w
			break
		}
	}
	dropMarkers(first)
	r := check.Run(c, h, check.DefaultConfig())
	if r.Verdict != check.Fail || r.Violations[0].Watch != first.ID {
		t.Errorf("one marker dropped (watch %d): %s %s", first.ID, r.Verdict, histbuild.ViolationTexts(r.Violations))
	}
	for _, w := range h.KubeWatches {
		dropMarkers(w)
	}
	if r := check.Run(c, h, check.DefaultConfig()); r.Verdict != check.Fail {
		t.Errorf("every marker dropped: %s (%s), evidence %s", r.Verdict, r.Reason, r.Evidence)
	}
}

func dropMarkers(w *history.KubeWatchStream) {
	w.Events = slices.DeleteFunc(w.Events, func(e history.KubeEvent) bool { return model.IsInitialEnd(&e) })
}
