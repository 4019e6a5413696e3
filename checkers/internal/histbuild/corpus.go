package histbuild

import (
	"testing"

	"github.com/vigil-suite/vigil/history"
)

// LoadGz loads a saved history (gzipped, as the corpus keeps them).
func LoadGz(t *testing.T, path string) *history.History {
	t.Helper()
	h, err := history.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
