package history

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
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

// InDir finds a run's zstd history first: a run writes it by default.
func TestInDir(t *testing.T) {
	dir := t.TempDir()
	if got := InDir(dir); got != filepath.Join(dir, FileName) {
		t.Errorf("InDir of an empty dir = %s, want the plain name", got)
	}
	for _, f := range []Format{FormatGzip, FormatJSONL, FormatZstd} {
		if err := Save(filepath.Join(dir, FileFor(f)), sample()); err != nil {
			t.Fatal(err)
		}
		if got := InDir(dir); got != filepath.Join(dir, FileFor(f)) {
			t.Errorf("with %s: InDir = %s", f, got)
		}
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

// The saved corpora (gzipped, written before zstd) load, and load the
// same once written again as zstd.
func TestOldCorporaLoad(t *testing.T) {
	paths, _ := filepath.Glob("../checkers/testdata/*.jsonl.gz")
	paths = append(paths, "../checkers/kube/testdata/kube-v1.36.3-faults.jsonl.gz")
	if len(paths) < 2 {
		t.Fatalf("corpora not found: %v", paths)
	}
	for _, p := range paths {
		h, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if h.Cut != "" || len(h.Records()) < 1000 {
			t.Fatalf("%s: %d records, cut %q", p, len(h.Records()), h.Cut)
		}
		zst := filepath.Join(t.TempDir(), FileFor(FormatZstd))
		if err := Save(zst, h); err != nil {
			t.Fatal(err)
		}
		got, err := Load(zst)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(h.Records(), got.Records()) {
			t.Errorf("%s: written as zstd, it loads another history", p)
		}
	}
}

// killedRun writes n operations through a Writer in batches, as a run
// does, and returns the file's bytes without closing it (as SIGKILL
// leaves it), then the bytes once closed.
func killedRun(t *testing.T, f Format, n int) (killed, whole []byte) {
	path := filepath.Join(t.TempDir(), FileFor(f))
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(Record{Meta: &Meta{Format: FormatVersion, Seed: 3}})
	for i := 1; i <= n; i++ {
		w.Write(Record{Op: &Operation{ID: int64(i), Client: i % 7, Call: time.Duration(i), Return: time.Duration(i + 5),
			Request: Request{Kind: OpPut, Key: fmt.Sprintf("/p/k%03d", i%100), Value: fmt.Sprint(i)}, Response: &Response{Revision: int64(i + 1)}}})
		if i%(n/8) == 0 {
			w.flush() // what the flusher does every FlushEvery
		}
	}
	w.flush()
	killed, _ = os.ReadFile(path)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	whole, _ = os.ReadFile(path)
	return killed, whole
}

// A history cut anywhere (vigil killed mid-run, or mid-write) loads up to
// its last complete record, says it was cut, and loses nothing that was
// complete before the cut; only a cut before the first record is an error.
func TestCutHistoryLoadsItsPrefix(t *testing.T) {
	const n = 4000
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			killed, whole := killedRun(t, f, n)
			path := filepath.Join(t.TempDir(), FileFor(f))
			os.WriteFile(path, killed, 0o644)
			h, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(h.Operations) != n {
				t.Fatalf("the killed run's file has %d of its %d flushed operations", len(h.Operations), n)
			}
			// A plain file cut between lines cannot tell; a compressed
			// stream without its end can.
			if (f != FormatJSONL) != (h.Cut != "") {
				t.Errorf("cut of the killed run: %q", h.Cut)
			}
			if len(whole) <= len(killed) && f != FormatJSONL {
				t.Fatalf("closing wrote nothing after the last flush")
			}
			last := -1
			for i := 0; i < 60; i++ {
				size := 1 + i*(len(killed)-1)/59
				path := filepath.Join(t.TempDir(), FileFor(f))
				os.WriteFile(path, killed[:size], 0o644)
				h, err := Load(path)
				if err != nil {
					if !strings.Contains(err.Error(), "empty history") || last > 0 {
						t.Fatalf("cut at %d of %d bytes: %v", size, len(killed), err)
					}
					continue
				}
				atLineEnd := f == FormatJSONL && killed[size-1] == '\n' // a plain file cannot tell
				if size < len(killed) && !atLineEnd && !strings.Contains(h.Cut, path+": ") {
					t.Errorf("cut at %d of %d bytes: not said to be cut", size, len(killed))
				}
				for j, o := range h.Operations {
					if o.ID != int64(j+1) {
						t.Fatalf("cut at %d: operation %d is %d", size, j+1, o.ID)
					}
				}
				if len(h.Operations) < last {
					t.Fatalf("cut at %d: %d operations, fewer than a shorter cut's %d", size, len(h.Operations), last)
				}
				last = len(h.Operations)
			}
			if last < n*7/8 {
				t.Errorf("the longest cut loaded %d operations of %d", last, n)
			}
		})
	}
}

// A compressed history being written is readable while the run goes: the
// flusher ends a block every FlushEvery without being asked.
func TestZstdFlushesWhileRunning(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileFor(FormatZstd))
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rec := NewRecorder(Meta{Vigil: "t"}, NewClock(), w)
	for i := 0; i < 100; i++ {
		rec.Add(Record{Op: &Operation{ID: int64(i + 1), Request: Request{Kind: OpRange, Key: "k"}, Response: &Response{Revision: 1}}})
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		h, err := Load(path)
		if err == nil && len(h.Operations) == 100 {
			if h.Cut == "" {
				t.Fatal("a stream still being written loaded as whole")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("records not flushed within 5s of being written: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
