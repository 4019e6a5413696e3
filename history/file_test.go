package history

import (
	"os"
	"path/filepath"
	"strings"
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

// A saved run is given by its output dir or its history file; a dir with
// no history says what to give.
func TestLoadRun(t *testing.T) {
	dir := t.TempDir()
	if err := Save(filepath.Join(dir, FileName), &History{Meta: Meta{Format: 1, Seed: 5}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, FileName)} {
		h, path, err := LoadRun(p)
		if err != nil || h.Meta.Seed != 5 || path != filepath.Join(dir, FileName) {
			t.Errorf("LoadRun(%s): seed %v, path %s, %v", p, h, path, err)
		}
	}
	empty := t.TempDir()
	_, _, err := LoadRun(empty)
	if err == nil || !strings.Contains(err.Error(), "does not exist: give the output dir of a vigil run") {
		t.Errorf("LoadRun of a dir without a history: %v", err)
	}
}
