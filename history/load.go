package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Load reads a history file: plain JSON lines, zstd or gzip (told by the
// file's first bytes, not its name). A line that is not a valid record is
// an error naming the file and the line. A file that ends inside a record
// or a compressed stream that ends before its end (a run killed while
// writing) loads up to its last complete record, and History.Cut says so.
// A segmented history (vigil run --segment) is judged segment by segment:
// Load refuses it and says to use LoadSegments.
func Load(path string) (*History, error) {
	h, n, err := LoadSegments(path, func(*History) error { return errSegmented })
	if errors.Is(err, errSegmented) || n > 0 {
		return nil, fmt.Errorf("%s: the history is cut into segments (vigil run --segment); it is read and judged one segment at a time (vigil check does; in Go, history.LoadSegments)", path)
	}
	return h, err
}

var errSegmented = errors.New("segmented")

// LoadSegments reads a history file as Load does, in memory bounded by
// one segment: for a segmented history it calls fn with each segment's
// history as its last record is read, and returns nil and the number of
// segments; a history without segments it returns whole (fn is not
// called). A file cut short gives its last segment as it stands, with
// Cut set.
func LoadSegments(path string, fn func(*History) error) (*History, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	var r io.Reader = br
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", path, err)
		}
		defer z.Close()
		r = z
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		// One goroutine: the JSON decoding after it is the slow part.
		z, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", path, err)
		}
		defer z.Close()
		r = z
	}
	h, n, err := ReadSegments(r, fn)
	if err != nil {
		return nil, n, fmt.Errorf("%s: %w", path, err)
	}
	if h != nil && h.Cut != "" {
		h.Cut = path + ": " + h.Cut
	}
	return h, n, nil
}

// Read decodes a history from JSON lines. When r ends inside a record, or
// fails with io.ErrUnexpectedEOF (a compressed stream cut short), the
// records before are the history and Cut says where it ends. A segmented
// stream is an error: see ReadSegments.
func Read(r io.Reader) (*History, error) {
	h, n, err := ReadSegments(r, func(*History) error { return errSegmented })
	if errors.Is(err, errSegmented) || n > 0 {
		return nil, errors.New("the history is cut into segments: read it with ReadSegments")
	}
	return h, err
}

// ReadSegments decodes a history from JSON lines as Read does, giving a
// segmented one to fn segment by segment (see LoadSegments).
func ReadSegments(r io.Reader, fn func(*History) error) (*History, int, error) {
	var cut string
	seg := &Segmenter{}
	seg.Sealed = func(h *History) error {
		if h.Meta.Segment != nil && h.Meta.Segment.End == 0 && cut != "" {
			h.Cut = cut
		}
		return fn(h)
	}
	br := bufio.NewReaderSize(r, 1<<20)
	sawMeta := false
	records := 0
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, seg.Segments(), fmt.Errorf("line %d: %w", n, err)
		}
		if len(line) > 0 && line[len(line)-1] != '\n' {
			// The writer writes whole lines only: a line without its
			// newline is a record the run did not finish writing.
			cut = fmt.Sprintf("the history ends inside line %d: loaded the %d complete records before it (the run was killed while writing it?)", n, records)
			break
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			var rec Record
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.DisallowUnknownFields()
			if derr := dec.Decode(&rec); derr != nil {
				return nil, seg.Segments(), fmt.Errorf("line %d: not a history record: %v", n, derr)
			}
			if !sawMeta && rec.Meta == nil {
				return nil, seg.Segments(), fmt.Errorf("line %d: the first record must be meta; is this a vigil history?", n)
			}
			if rec.fields() != 1 {
				return nil, seg.Segments(), fmt.Errorf("line %d: a record must have exactly one of meta, op, watch, wresp, wend, fault, mark, call, exit, kop, kwatch, kevent, kwend; this one has %d", n, rec.fields())
			}
			if rec.Meta != nil && rec.Meta.Format > FormatVersion {
				return nil, seg.Segments(), fmt.Errorf("line %d: history format %d is newer than this vigil understands (%d); use a newer vigil", n, rec.Meta.Format, FormatVersion)
			}
			sawMeta = sawMeta || rec.Meta != nil
			if aerr := seg.Add(rec); aerr != nil {
				if errors.Is(aerr, errSegmented) {
					return nil, seg.Segments(), aerr
				}
				return nil, seg.Segments(), fmt.Errorf("line %d: %w", n, aerr)
			}
			records++
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			cut = fmt.Sprintf("the compressed history ends before its end: loaded its %d complete records (the run was killed while writing it?)", records)
			break
		}
		if err == io.EOF {
			break
		}
	}
	if !sawMeta {
		if cut != "" {
			return nil, 0, fmt.Errorf("empty history: no complete record (%s)", cut)
		}
		return nil, 0, errors.New("empty history: no records")
	}
	h, err := seg.Finish()
	if err != nil {
		return nil, seg.Segments(), err
	}
	if h != nil {
		h.Cut = cut
	}
	return h, seg.Segments(), nil
}

func jsonLine(r Record) ([]byte, error) {
	b, err := json.Marshal(r)
	return append(b, '\n'), err
}

// LoadRun loads the history of a saved run from its output dir (InDir)
// or from its history file, as the commands that read saved runs (vigil
// check, report, selftest) take either, and returns the file's path. A
// missing file is an error that says what to give instead. A history cut
// short loads; its Cut says so, for the command to tell.
func LoadRun(path string) (*History, string, error) {
	path, err := RunFile(path)
	if err != nil {
		return nil, path, err
	}
	h, err := Load(path)
	return h, path, err
}

// RunFile is the history file of a saved run given as its output dir
// (InDir) or as the file itself; a missing one is an error that says what
// to give instead.
func RunFile(path string) (string, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = InDir(path)
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return path, fmt.Errorf("%s does not exist: give the output dir of a vigil run", path)
	}
	return path, nil
}
