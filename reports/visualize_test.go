package reports

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/linearizable"
)

// TestWriteVisualization: the page is the kv/linearizable result's own
// drawing, written only for a pass or a fail, and a drawing that fails
// leaves no file behind.
func TestWriteVisualization(t *testing.T) {
	page := func(w io.Writer) (string, error) {
		_, err := fmt.Fprint(w, "<html>view</html>")
		return "the whole history", err
	}
	broken := func(w io.Writer) (string, error) { fmt.Fprint(w, "<html>"); return "", errors.New("no window") }
	cases := []struct {
		name     string
		result   check.Result
		want     string // what is said to be drawn; "" for no file
		wantFail bool
	}{
		{"pass draws", check.Result{Name: linearizable.Name, Verdict: check.Pass, Drawing: page}, "the whole history", false},
		{"fail draws", check.Result{Name: linearizable.Name, Verdict: check.Fail, Drawing: page}, "the whole history", false},
		{"unknown draws nothing", check.Result{Name: linearizable.Name, Verdict: check.Unknown, Drawing: page}, "", false},
		{"another check's drawing is not this page", check.Result{Name: "watch/reliable", Verdict: check.Pass, Drawing: page}, "", false},
		{"a failed drawing is an error and no file", check.Result{Name: linearizable.Name, Verdict: check.Pass, Drawing: broken}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path, what, err := WriteVisualization(dir, []check.Result{c.result})
			if (err != nil) != c.wantFail || what != c.want {
				t.Fatalf("got (%q, %q, %v), want %q with error %v", path, what, err, c.want, c.wantFail)
			}
			_, statErr := os.Stat(filepath.Join(dir, VisualizationFile))
			if exists := statErr == nil; exists != (c.want != "") {
				t.Errorf("file exists: %v, want %v", exists, c.want != "")
			}
		})
	}
}
