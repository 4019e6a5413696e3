package history

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// FileName is the name of the history file in a run's output dir.
const FileName = "history.jsonl"

// Writer streams records to a JSON-lines file while the run goes. It writes
// whole lines only, in one write call each batch, and flushes at least every
// FlushEvery, so that a crash of vigil leaves a history that loads (minus the
// last moments). Safe for concurrent use.
type Writer struct {
	mu     sync.Mutex
	f      *os.File
	buf    []byte
	err    error
	done   chan struct{}
	closed bool
	wg     sync.WaitGroup
}

// FlushEvery bounds how much of a run a crash can lose.
const FlushEvery = 100 * time.Millisecond

// Create opens path for writing (truncating it) and starts the flusher.
func Create(path string) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{f: f, done: make(chan struct{})}
	w.wg.Add(1)
	go w.flusher()
	return w, nil
}

func (w *Writer) flusher() {
	defer w.wg.Done()
	t := time.NewTicker(FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-t.C:
			w.mu.Lock()
			w.flushLocked()
			w.mu.Unlock()
		}
	}
}

func (w *Writer) flushLocked() {
	if len(w.buf) == 0 || w.err != nil {
		return
	}
	_, w.err = w.f.Write(w.buf)
	w.buf = w.buf[:0]
}

// Write appends one record. Errors are sticky and returned by Close too.
func (w *Writer) Write(r Record) error {
	line, err := jsonLine(r)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("history writer is closed")
	}
	w.buf = append(w.buf, line...)
	if len(w.buf) > 1<<20 {
		w.flushLocked()
	}
	return w.err
}

// Close flushes and closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return w.err
	}
	w.closed = true
	close(w.done)
	w.mu.Unlock()
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = err
	}
	return w.err
}

// Save writes a whole history to path.
func Save(path string, h *History) error {
	w, err := Create(path)
	if err != nil {
		return err
	}
	for _, r := range h.Records() {
		if err := w.Write(r); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// Load reads a history file, gzipped or not. A line that is not a valid
// record is an error naming the file and the line.
func Load(path string) (*History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer z.Close()
		r = z
	}
	h, err := Read(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// Read decodes a history from JSON lines.
func Read(r io.Reader) (*History, error) {
	h := &History{}
	br := bufio.NewReaderSize(r, 1<<20)
	sawMeta := false
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				return nil, fmt.Errorf("line %d: truncated record (no newline at the end of the file); the run was cut off while writing it — delete that line to check the rest", n)
			}
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			var rec Record
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.DisallowUnknownFields()
			if derr := dec.Decode(&rec); derr != nil {
				return nil, fmt.Errorf("line %d: not a history record: %v", n, derr)
			}
			if !sawMeta && rec.Meta == nil {
				return nil, fmt.Errorf("line %d: the first record must be meta; is this a vigil history?", n)
			}
			sawMeta = sawMeta || rec.Meta != nil
			if aerr := h.Add(rec); aerr != nil {
				return nil, fmt.Errorf("line %d: %v", n, aerr)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if !sawMeta {
		return nil, errors.New("empty history: no records")
	}
	return h, nil
}

func jsonLine(r Record) ([]byte, error) {
	b, err := json.Marshal(r)
	return append(b, '\n'), err
}

// InDir returns the history file of a run's output dir: history.jsonl, or
// history.jsonl.gz when the run was compressed.
func InDir(dir string) string {
	plain := filepath.Join(dir, FileName)
	if _, err := os.Stat(plain); err != nil {
		if _, errz := os.Stat(plain + ".gz"); errz == nil {
			return plain + ".gz"
		}
	}
	return plain
}

// LoadRun loads the history of a saved run from its output dir (InDir)
// or from its history file, as the commands that read saved runs (vigil
// check, report, selftest) take either, and returns the file's path. A
// missing file is an error that says what to give instead.
func LoadRun(path string) (*History, string, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = InDir(path)
	}
	h, err := Load(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, path, fmt.Errorf("%s does not exist: give the output dir of a vigil run", path)
	}
	return h, path, err
}

// Compress gzips the history file at path into path.gz and removes path
// once the copy is complete; it returns the new path. Load reads both.
func Compress(path string) (string, error) {
	in, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.Create(path + ".gz")
	if err != nil {
		return "", err
	}
	z := gzip.NewWriter(out)
	_, err = io.Copy(z, in)
	if cerr := z.Close(); err == nil {
		err = cerr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path + ".gz")
		return "", fmt.Errorf("compressing %s: %w", path, err)
	}
	return path + ".gz", os.Remove(path)
}
