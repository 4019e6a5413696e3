package reports

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/linearizable"
)

// VisualizationFile is porcupine's HTML view of the KV history, in a run's
// output dir.
const VisualizationFile = "linearizability.html"

// WriteVisualization writes VisualizationFile into dir from the
// kv/linearizable result, when that check reached a verdict (pass or fail):
// for a failure, the search that proved it and the operations around it;
// for a pass, the history or its last operations. Fault intervals are drawn
// on their own row. It draws from the check's own run (Result.Drawing)
// and returns the path and what was drawn, or "" when there is nothing to
// draw.
func WriteVisualization(dir string, results []check.Result) (string, string, error) {
	var draw func(io.Writer) (string, error)
	for _, r := range results {
		if r.Name == linearizable.Name && (r.Verdict == check.Pass || r.Verdict == check.Fail) {
			draw = r.Drawing
		}
	}
	if draw == nil {
		return "", "", nil
	}
	path := filepath.Join(dir, VisualizationFile)
	f, err := os.Create(path)
	if err != nil {
		return "", "", err
	}
	w := bufio.NewWriter(f)
	what, err := draw(w)
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
	return path, what, nil
}
