package histbuild

import (
	"compress/gzip"
	"os"
	"testing"

	"github.com/vigil-suite/vigil/history"
)

func LoadGz(t *testing.T, path string) *history.History {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	h, err := history.Read(z)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
