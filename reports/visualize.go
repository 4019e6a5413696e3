package reports

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/linearizable"
	"github.com/vigil-suite/vigil/history"
)

// VisualizationFile is porcupine's HTML view of the KV history, in a run's
// output dir.
const VisualizationFile = "linearizability.html"

// WriteVisualization writes VisualizationFile into dir when kv/linearizable
// reached a verdict (pass or fail): for a failure, the search that proved
// it and the operations around it; for a pass, the history or its last
// operations. Fault intervals are drawn on their own row. It returns the
// path and what was drawn, or "" when there is nothing to draw.
func WriteVisualization(dir string, h *history.History, results []check.Result, cfg check.Config) (string, string, error) {
	drawn := false
	for _, r := range results {
		if r.Name == linearizable.Name && (r.Verdict == check.Pass || r.Verdict == check.Fail) {
			drawn = true
		}
	}
	if !drawn {
		return "", "", nil
	}
	path := filepath.Join(dir, VisualizationFile)
	f, err := os.Create(path)
	if err != nil {
		return "", "", err
	}
	w := bufio.NewWriter(f)
	v, err := linearizable.Visualize(h, cfg, w, linearizable.VisualizeOptions{})
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", "", fmt.Errorf("drawing %s: %w", VisualizationFile, err)
	}
	return path, fmt.Sprintf("%s, %d operations, %d faults", v.Scope, v.Operations, v.Faults), nil
}
