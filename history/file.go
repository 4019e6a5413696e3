package history

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// FileName is the name of the plain history file in a run's output dir;
// FileFor names the file of each format.
const FileName = "history.jsonl"

// Format is how a history file is written: JSON lines, plain or
// compressed as they are recorded.
type Format string

const (
	// FormatZstd (the default) compresses with zstd as the run goes:
	// about 13 times smaller than plain at a fraction of gzip's CPU.
	FormatZstd Format = "zst"
	// FormatJSONL is plain JSON lines, for grep and jq.
	FormatJSONL Format = "jsonl"
	// FormatGzip compresses with gzip as the run goes (what --compress
	// wrote after the run before zstd), for tools that know only gzip.
	FormatGzip Format = "gz"
	// DefaultFormat is what a run writes unless told otherwise.
	DefaultFormat = FormatZstd
)

// Formats lists the formats a run can write, the default first.
func Formats() []Format { return []Format{FormatZstd, FormatJSONL, FormatGzip} }

// FileFor is the name of the history file of format f in a run's output
// dir: history.jsonl.zst, history.jsonl or history.jsonl.gz ("" is the
// default format).
func FileFor(f Format) string {
	switch f {
	case "":
		return FileFor(DefaultFormat)
	case FormatZstd, FormatGzip:
		return FileName + "." + string(f)
	}
	return FileName
}

// ParseFormat checks a format's name ("" is the default).
func ParseFormat(s string) (Format, error) {
	if s == "" {
		return DefaultFormat, nil
	}
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("history format %q: want one of zst, jsonl, gz", s)
}

// formatOf is the format a path's extension names (plain unless .zst or .gz).
func formatOf(path string) Format {
	switch {
	case strings.HasSuffix(path, ".zst"):
		return FormatZstd
	case strings.HasSuffix(path, ".gz"):
		return FormatGzip
	}
	return FormatJSONL
}

// Writer streams records to a history file while the run goes, in the
// format its name's extension says (FileFor). It writes whole lines only
// and flushes at least every FlushEvery: a plain file gets the batch in
// one write call, a compressed one a complete zstd block or gzip sync
// flush. A crash of vigil (even SIGKILL) thus leaves a history that loads
// up to the last flush, and Load says it was cut. Compression runs in the
// flusher, not under the lock every recorded call takes. Safe for
// concurrent use.
type Writer struct {
	mu     sync.Mutex // guards buf, err and closed
	buf    []byte
	err    error
	closed bool

	// io serializes the flushes, so that batches reach the file in order.
	io    sync.Mutex
	f     *os.File
	z     compressor // nil for a plain file
	spare []byte     // the last batch's buffer, reused

	kick chan struct{}
	done chan struct{}
	wg   sync.WaitGroup
}

// compressor is zstd's Encoder or gzip's Writer: Flush ends a block that a
// reader can decode without what follows.
type compressor interface {
	io.WriteCloser
	Flush() error
}

// FlushEvery bounds how much of a run a crash can lose.
const FlushEvery = 100 * time.Millisecond

// Batch sizes: past flushAt the flusher is woken early; past stallAt
// (the flusher fell behind) Write flushes itself, so memory stays bounded.
const (
	flushAt = 1 << 20
	stallAt = 16 << 20
)

// Create opens path for writing (truncating it) in the format its
// extension names and starts the flusher.
func Create(path string) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{f: f, kick: make(chan struct{}, 1), done: make(chan struct{})}
	switch formatOf(path) {
	case FormatZstd:
		// The fastest level: on this project's runs it compresses as well
		// as the default level (13x) for the least CPU, which the system
		// under test shares. One goroutine: the flusher is the only caller.
		w.z, err = zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	case FormatGzip:
		w.z = gzip.NewWriter(f)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
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
		case <-w.kick:
		}
		w.flush()
	}
}

// flush takes the records written so far and writes them to the file,
// compressed and flushed to a decodable boundary.
func (w *Writer) flush() {
	w.io.Lock()
	defer w.io.Unlock()
	w.mu.Lock()
	batch := w.buf
	w.buf = w.spare[:0]
	failed := w.err != nil
	w.mu.Unlock()
	if len(batch) > 0 && !failed {
		if err := w.writeBatch(batch); err != nil {
			w.mu.Lock()
			if w.err == nil {
				w.err = err
			}
			w.mu.Unlock()
		}
	}
	w.spare = batch[:0]
}

func (w *Writer) writeBatch(b []byte) error {
	if w.z == nil {
		_, err := w.f.Write(b)
		return err
	}
	if _, err := w.z.Write(b); err != nil {
		return err
	}
	return w.z.Flush()
}

// Write appends one record. Errors are sticky and returned by Close too.
func (w *Writer) Write(r Record) error {
	line, err := jsonLine(r)
	if err != nil {
		return err
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errors.New("history writer is closed")
	}
	w.buf = append(w.buf, line...)
	n, err := len(w.buf), w.err
	w.mu.Unlock()
	switch {
	case n >= stallAt:
		w.flush()
	case n >= flushAt:
		select {
		case w.kick <- struct{}{}:
		default: // already woken
		}
	}
	return err
}

// Close flushes, ends the compressed stream (so that Load finds the file
// whole) and closes the file.
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
	w.flush()
	w.io.Lock()
	var err error
	if w.z != nil {
		err = w.z.Close()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.io.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
	return w.err
}

// Save writes a whole history to path, in the format its extension names.
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

// Compress gzips the history file at path into path.gz and removes path
// once the copy is complete; it returns the new path. Load reads both.
// A run writes its history compressed as it goes (FormatZstd); this is
// for a plain file written before or by hand.
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

// InDir returns the history file of a run's output dir: the first of
// history.jsonl.zst, history.jsonl and history.jsonl.gz that exists, or
// history.jsonl when none does.
func InDir(dir string) string {
	for _, f := range []Format{FormatZstd, FormatJSONL, FormatGzip} {
		p := filepath.Join(dir, FileFor(f))
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return filepath.Join(dir, FileName)
}
