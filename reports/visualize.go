package reports

import (
	"bytes"
	"fmt"
	"html"
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
	var page bytes.Buffer
	what, err := draw(&page)
	if err != nil {
		return "", "", fmt.Errorf("drawing %s: %w", VisualizationFile, err)
	}
	// porcupine titles its page for itself; the page says what it shows.
	title := "vigil: kv/linearizable, " + what
	b := bytes.Replace(page.Bytes(), []byte("<title>Porcupine</title>"), []byte("<title>"+html.EscapeString(title)+"</title>"), 1)
	b = bytes.Replace(b, []byte("<body>"), []byte(`<body><p style="font: 14px sans-serif; margin: 8px">`+html.EscapeString(title)+
		`: one row per client, each bar an operation from call to return, fault intervals on their own row.</p>`), 1)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", "", err
	}
	return path, what, nil
}
