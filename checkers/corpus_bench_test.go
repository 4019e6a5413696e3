package checkers

import (
	"path/filepath"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// BenchmarkCheckCorpus judges each saved real run with every check, as
// `vigil check` does, and reports the time per operation of the history:
// the cost a change of the checks (the grammar's model, say) puts on real
// runs. It reads the corpora with the history package alone, so the same
// file can be dropped into an older tree to compare side by side.
func BenchmarkCheckCorpus(b *testing.B) {
	for _, path := range []string{"testdata/etcd-v3.6.16-faults-v2.jsonl.gz", "testdata/kine-v0.17.5-sqlite-faults.jsonl.gz",
		"kube/testdata/kube-v1.36.3-faults.jsonl.gz"} {
		b.Run(filepath.Base(path), func(b *testing.B) {
			h := loadCorpus(b, path)
			n := len(h.Operations) + len(h.KubeOps)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, r := range Run(h, check.DefaultConfig()) {
					if r.Verdict == check.Unknown {
						b.Fatalf("%s: unknown: %s", r.Name, r.Reason)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/history-op")
			b.ReportMetric(float64(n), "history-ops")
		})
	}
}

func loadCorpus(b *testing.B, path string) *history.History {
	b.Helper()
	h, err := history.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	return h
}
