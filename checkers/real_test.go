package checkers

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/availability"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
)

// etcdCorpusRun is a run recorded against a real 3-member etcd v3.6.16
// cluster with faults (vigil run --members 3 --duration 12s --rate 300
// --seed 7 --faults kill-leader,pause-follower,watch-drop --fault-interval
// 3s; it killed the leader and paused a follower once each): a healthy
// cluster, so every check must pass.
const etcdCorpusRun = "testdata/etcd-v3.6.16-faults.jsonl.gz"

// etcdCorpusRunV2 is the same command recorded in history format 2
// (--faults kill-leader,pause-follower): its progress requests are in it,
// so every check's evidence is complete.
const etcdCorpusRunV2 = "testdata/etcd-v3.6.16-faults-v2.jsonl.gz"

// TestEtcdCorpus: every check passes on the recorded healthy run, and
// each that the run gave something to judge does judge it (a check that
// says skipped here has lost its evidence).
func TestEtcdCorpus(t *testing.T) {
	for _, path := range []string{etcdCorpusRun, etcdCorpusRunV2} {
		t.Run(path, func(t *testing.T) { corpusPasses(t, path) })
	}
}

func corpusPasses(t *testing.T, path string) {
	h := histbuild.LoadGz(t, path)
	// The workload sends serializable reads, Status and HashKV, asks for
	// progress and prev_kv and starts watches at past and future
	// revisions: no check may skip, but run/server-exit, which these
	// histories predate (they list no process vigil watched).
	mayskip := map[string]bool{availability.NameServerExit: len(h.Meta.Processes) == 0}
	for _, c := range Etcd() {
		r := check.Run(c, h, check.DefaultConfig())
		t.Logf("%-28s %-8s %s %v", r.Name, r.Verdict, r.Reason, r.Figures)
		if r.Verdict == check.Skipped && mayskip[r.Name] {
			continue
		}
		if r.Evidence == nil || r.Evidence.Asked == 0 || r.Evidence.Answered == 0 {
			t.Errorf("%s: evidence %+v: the run asked and the target answered", r.Name, r.Evidence)
		}
		if r.Evidence != nil && r.Evidence.Legacy != (h.Meta.Format < 2 && r.Evidence.Request == "progress request") {
			t.Errorf("%s: legacy %v in a format-%d history", r.Name, r.Evidence.Legacy, h.Meta.Format)
		}
		switch {
		case r.Verdict == check.Pass:
		case r.Verdict == check.Skipped && mayskip[r.Name]:
		default:
			t.Errorf("%s: %s (%s)", r.Name, r.Verdict, r.Reason)
			for i, v := range r.Violations {
				if i < 3 {
					t.Errorf("  %s", v.Message)
				}
			}
		}
	}
}
