package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recordTwoSegments records a run of two segments through a Recorder into
// path: an op and a watch in segment 0, an op of segment 0 recorded only
// after segment 1 opened (it was in flight), a fault across the boundary,
// and an op and a fault in segment 1. It returns the sealed histories in
// the order SealReady gave them.
func recordTwoSegments(t *testing.T, path string) []*History {
	t.Helper()
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(Meta{Seed: 1, Prefix: "/p/"}, NewClock(), w)
	rec.StartSegment(Segment{Index: 0, Prefix: "/p/s000/"})
	op := func(call time.Duration, key string) Record {
		return Record{Op: &Operation{ID: rec.NextOpID(), Call: call, Return: call + time.Millisecond,
			Request: Request{Kind: OpPut, Key: key, Value: key}, Response: &Response{Revision: 2}}}
	}
	now := rec.Now()
	rec.Add(op(now, "/p/s000/a"))
	rec.Add(Record{Watch: &Watch{ID: rec.NextWatchID(), Call: now, Request: WatchRequest{Key: "/p/s000/"}}})
	rec.Add(Record{WatchResponse: &WatchResponse{Watch: 1, Time: now}})
	// A write whose client gave up: it is carried into the next segment.
	rec.Add(Record{Op: &Operation{ID: rec.NextOpID(), Call: now, Return: now + time.Millisecond,
		Request: Request{Kind: OpDelete, Key: "/p/s000/gone"}, Code: ErrUnknown, Error: "timeout"}})
	inFlight, sentAt := rec.Begin(), rec.Now()
	faultAt := rec.Now()
	time.Sleep(2 * time.Millisecond)
	rec.StartSegment(Segment{Index: 1, Prefix: "/p/s001/"})
	if got := rec.SealReady(false); len(got) != 0 {
		t.Fatalf("segment 0 sealed while a request sent in it was in flight: %d", len(got))
	}
	rec.Add(op(sentAt, "/p/s000/late"))
	rec.End(inFlight)
	rec.Add(Record{Fault: &Fault{ID: 1, Name: "kill-leader", Start: faultAt, End: rec.Now()}})
	var sealed []*History
	sealed = append(sealed, rec.SealReady(false)...)
	if len(sealed) != 1 {
		t.Fatalf("SealReady after the horizon passed: %d segments, want segment 0", len(sealed))
	}
	rec.Add(op(rec.Now(), "/p/s001/b"))
	rec.Add(Record{Fault: &Fault{ID: 2, Name: "pause-leader", Start: rec.Now(), End: rec.Now() + time.Millisecond}})
	sealed = append(sealed, rec.SealReady(true)...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Err(); err != nil {
		t.Fatal(err)
	}
	if rec.History() != nil {
		t.Error("a segmented recorder keeps a whole history")
	}
	return sealed
}

func TestSegmentsRecordedAndReadBack(t *testing.T) {
	for _, name := range []string{"h.jsonl", "h.jsonl.zst"} {
		path := filepath.Join(t.TempDir(), name)
		live := recordTwoSegments(t, path)
		var read []*History
		whole, n, err := LoadSegments(path, func(h *History) error { read = append(read, h); return nil })
		if err != nil || whole != nil || n != 2 {
			t.Fatalf("%s: LoadSegments = %v, %d, %v; want 2 segments", name, whole, n, err)
		}
		for _, segs := range [][]*History{live, read} {
			if len(segs) != 2 {
				t.Fatalf("%s: %d segments, want 2", name, len(segs))
			}
			s0, s1 := segs[0], segs[1]
			if len(s0.Operations) != 3 || len(s1.Operations) != 2 {
				t.Errorf("%s: ops %d and %d, want 3 (the late one too) and 2 (the write of unknown outcome carried)", name, len(s0.Operations), len(s1.Operations))
			}
			if c := s1.Meta.Segment.Carried; len(c) != 1 || s1.Operations[0].ID != c[0] || s1.Operations[0].Request.Key != "/p/s000/gone" {
				t.Errorf("%s: carried %v, first op %+v: want the delete of unknown outcome, first", name, c, s1.Operations[0])
			}
			// The watch never ended: it belongs to the segment it ends in,
			// the last, whole.
			if len(s0.Watches) != 0 || len(s1.Watches) != 1 || len(s1.Watches[0].Responses) != 1 {
				t.Errorf("%s: segment 0's open watch did not move whole into segment 1: %d and %d watches", name, len(s0.Watches), len(s1.Watches))
			}
			if s1.Context == nil || len(s1.Context.Operations) != 3 {
				t.Errorf("%s: segment 1's context %+v: want segment 0's three writes", name, s1.Context)
			}
			if len(s0.Faults) != 1 || len(s1.Faults) != 2 {
				t.Errorf("%s: faults %d and %d, want 1 and 2 (the one across the boundary in both)", name, len(s0.Faults), len(s1.Faults))
			}
			if s0.Meta.Prefix != "/p/s000/" || s1.Meta.Prefix != "/p/s001/" || s0.Meta.Seed != 1 {
				t.Errorf("%s: metas %+v, %+v", name, s0.Meta, s1.Meta)
			}
			g0, g1 := s0.Meta.Segment, s1.Meta.Segment
			if g0.Last || !g1.Last || g0.End != g1.Start || g1.End <= g1.Start || !s0.NotLast() || s1.NotLast() {
				t.Errorf("%s: segments %+v, %+v: want 0 ending where 1 starts, 1 last", name, g0, g1)
			}
		}
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "segments") {
			t.Errorf("%s: Load of a segmented history = %v, want an error saying it is segmented", name, err)
		}
	}
}

func TestSegmentedHistoryCutShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	recordTwoSegments(t, path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut inside the record after segment 1's op: segment 1 is never sealed.
	i := strings.Index(string(b), `"/p/s001/b"`)
	if err := os.WriteFile(path, b[:i], 0o644); err != nil {
		t.Fatal(err)
	}
	var read []*History
	if _, n, err := LoadSegments(path, func(h *History) error { read = append(read, h); return nil }); err != nil || n != 2 {
		t.Fatalf("LoadSegments of a cut file: %d, %v", n, err)
	}
	last := read[1]
	if last.Cut == "" || last.Meta.Segment.End != 0 || last.Meta.Segment.Last {
		t.Errorf("the unsealed segment: Cut %q, segment %+v; want Cut set, still open", last.Cut, last.Meta.Segment)
	}
	if read[0].Cut != "" {
		t.Errorf("the sealed segment says it was cut: %q", read[0].Cut)
	}
}

func TestSegmenterRefusesDisorder(t *testing.T) {
	s := &Segmenter{Sealed: func(*History) error { return nil }}
	meta := Meta{Format: FormatVersion}
	if err := s.Add(Record{Meta: &meta}); err != nil {
		t.Fatal(err)
	}
	s.Add(Record{Mark: &Mark{Name: MarkSegment, Time: 1, Segment: &Segment{Index: 0}}})
	s.Add(Record{Mark: &Mark{Name: MarkSegment, Time: 10, Segment: &Segment{Index: 1}}})
	if err := s.Add(Record{Mark: &Mark{Name: MarkSegmentEnd, Time: 11, Segment: &Segment{Index: 1}}}); err == nil {
		t.Error("segment 1 sealed before segment 0: no error")
	}
	s.Add(Record{Mark: &Mark{Name: MarkSegmentEnd, Time: 11, Segment: &Segment{Index: 0}}})
	if err := s.Add(Record{Op: &Operation{ID: 1, Call: 5}}); err == nil || !strings.Contains(err.Error(), "sealed") {
		t.Errorf("an op of a sealed segment: %v, want an error saying it came after the seal", err)
	}
}

// TestServerExitGoesToItsSegment: a server exit belongs to the segment
// open at its time, and to the oldest open one when the segment of its
// time was sealed while the exit's log was being read; CutAt keeps it
// once it happened.
func TestServerExitGoesToItsSegment(t *testing.T) {
	var sealed []*History
	s := &Segmenter{Sealed: func(h *History) error { sealed = append(sealed, h); return nil }}
	add := func(r Record) {
		t.Helper()
		if err := s.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	add(Record{Meta: &Meta{Prefix: "/p/"}})
	add(Record{Mark: &Mark{Name: MarkSegment, Time: 0, Segment: &Segment{Index: 0, Prefix: "/p/s000/"}}})
	add(Record{ServerExit: &ServerExit{Process: "m0", Time: 5}})
	add(Record{Mark: &Mark{Name: MarkSegment, Time: 10, Segment: &Segment{Index: 1, Prefix: "/p/s001/"}}})
	add(Record{Mark: &Mark{Name: MarkSegmentEnd, Time: 11, Segment: &Segment{Index: 0}}})
	add(Record{ServerExit: &ServerExit{Process: "m1", Time: 9}}) // its segment is sealed
	add(Record{ServerExit: &ServerExit{Process: "m2", Time: 12}})
	if _, err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	if len(sealed) != 2 {
		t.Fatalf("%d segments", len(sealed))
	}
	names := func(h *History) (out []string) {
		for _, x := range h.ServerExits {
			out = append(out, x.Process)
		}
		return out
	}
	if got := names(sealed[0]); len(got) != 1 || got[0] != "m0" {
		t.Errorf("segment 0 has exits %v, want m0", got)
	}
	if got := names(sealed[1]); len(got) != 2 || got[0] != "m1" || got[1] != "m2" {
		t.Errorf("segment 1 has exits %v, want m1, m2", got)
	}
	if got := names(sealed[1].CutAt(10)); len(got) != 1 || got[0] != "m1" {
		t.Errorf("cut at 10 keeps exits %v, want m1", got)
	}
}
