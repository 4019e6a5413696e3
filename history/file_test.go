package history

import (
	"os"
	"path/filepath"
	"testing"
)

// A compressed history replaces the plain one, loads the same, and is
// what InDir finds.
func TestCompress(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	w.Write(Record{Meta: &Meta{Format: 1, Seed: 5}})
	w.Write(Record{Op: &Operation{ID: 1, Request: Request{Kind: OpPut, Key: "k", Value: "v"}, Response: &Response{Revision: 2}}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := InDir(dir); got != filepath.Join(dir, FileName) {
		t.Fatalf("InDir = %s", got)
	}
	gz, err := Compress(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); !os.IsNotExist(err) {
		t.Fatalf("the plain history is still there: %v", err)
	}
	if got := InDir(dir); got != gz {
		t.Fatalf("InDir = %s, want %s", got, gz)
	}
	h, err := Load(gz)
	if err != nil || h.Meta.Seed != 5 || len(h.Operations) != 1 {
		t.Fatalf("Load = %+v, %v", h, err)
	}
}
