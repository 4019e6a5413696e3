package checkers

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
)

// etcdCorpusRun is a run recorded against a real 3-member etcd v3.6.16
// cluster with faults (vigil run --members 3 --duration 12s --rate 300
// --seed 7 --faults kill-leader,pause-follower,watch-drop --fault-interval
// 3s; it killed the leader and paused a follower once each): a healthy
// cluster, so every check must pass.
const etcdCorpusRun = "testdata/etcd-v3.6.16-faults.jsonl.gz"

// TestEtcdCorpus: every check passes on the recorded healthy run, and
// each that the run gave something to judge does judge it (a check that
// says skipped here has lost its evidence).
func TestEtcdCorpus(t *testing.T) {
	h := histbuild.LoadGz(t, etcdCorpusRun)
	// The workload sends serializable reads, Status and HashKV, asks for
	// progress and prev_kv and starts watches at past and future
	// revisions: no check may skip.
	mayskip := map[string]bool{}
	for _, c := range Etcd() {
		r := check.Run(c, h, check.DefaultConfig())
		t.Logf("%-28s %-8s %s %v", r.Name, r.Verdict, r.Reason, r.Figures)
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
