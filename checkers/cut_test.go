package checkers

import (
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
)

// TestCutsOfHealthyRunsPass: a healthy run judged at any moment while it
// ran (its history cut there, as the live judge sees it) shows no
// violation of a safety check — the live judge raises no false alarm —
// and the cut judged in full gives nothing the whole run does not.
func TestCutsOfHealthyRunsPass(t *testing.T) {
	for _, path := range []string{etcdCorpusRunV2, etcdCorpusRun, "kube/testdata/kube-v1.36.3-faults.jsonl.gz"} {
		h := histbuild.LoadGz(t, path)
		end := h.End()
		const cuts = 16
		for i := 1; i < cuts; i++ {
			at := end * time.Duration(i) / cuts
			c := h.CutAt(at)
			for _, ch := range ForHistory(c) {
				if !ch.Safety() {
					continue
				}
				r := check.Run(ch, c, check.DefaultConfig())
				if r.Verdict == check.Fail {
					t.Errorf("%s cut at %v: %s fails: %s", path, at, r.Name, r.Violations[0].Message)
				}
			}
		}
	}
}
