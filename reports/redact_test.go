package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// A history whose flags hold credentials (one written before vigil
// redacted --command, re-judged with vigil check) gives result.json,
// junit.xml and report.html (its flags and repro) without them.
func TestReportsRedactTheFlags(t *testing.T) {
	h, err := history.Load(savedRun)
	if err != nil {
		t.Fatal(err)
	}
	h.Meta.Flags = map[string]string{"fixture": "command", "command": "/bin/sh -c 'exec srv --port {client_port}' x postgres://u:SECRET@h/db",
		"endpoints": "https://root:SECRET@127.0.0.1:2379", "password": "SECRET", "user": "root:SECRET"}
	r := Summarize(h, []check.Result{{Name: "kv/linearizable", Verdict: check.Pass}}, 1)
	dir := t.TempDir()
	if err := WriteJSON(dir, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnit(dir, r); err != nil {
		t.Fatal(err)
	}
	if err := WritePage(dir, h, r); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"result.json", "junit.xml", PageFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "SECRET") || !strings.Contains(string(b), "postgres://u:REDACTED@h/db") {
			t.Errorf("%s keeps the secret or lost the command line", f)
		}
	}
}
