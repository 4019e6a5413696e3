package kube

import (
	"os"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// TestKubeChecksOnFile re-checks a saved Kubernetes history named by
// VIGIL_KUBE_HISTORY (a history.jsonl), printing every verdict and the
// first violations; it fails on a violation. Skipped without the variable.
func TestKubeChecksOnFile(t *testing.T) {
	path := os.Getenv("VIGIL_KUBE_HISTORY")
	if path == "" {
		t.Skip("VIGIL_KUBE_HISTORY is not set")
	}
	h, err := history.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Checks() {
		r := check.Run(c, h, check.DefaultConfig())
		t.Logf("%-32s %-8s %s %v", r.Name, r.Verdict, r.Reason, r.Figures)
		for i, v := range r.Violations {
			if i == 5 {
				break
			}
			t.Logf("    - %s (ops %v, events %d)", v.Message, v.Operations, len(v.KubeEvents))
		}
		if r.Verdict == check.Fail && !r.Should {
			t.Errorf("%s failed", r.Name)
		}
	}
}
