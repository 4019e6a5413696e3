package history

import (
	"fmt"
	"slices"
	"time"
)

// A long run is cut into segments (vigil run --segment) so that it can be
// judged, and re-judged from its file, in memory bounded by one segment
// rather than by the run. A segment is a run of its own inside the run:
// its workload has keys (a prefix) and watches of its own, starts after
// the last one stopped, and reads, watches and compacts no revision below
// the store's head at its start (MinRevision), so nothing it sees depends
// on a record of another segment. Faults go on across segments: a fault
// that overlaps two is recorded in both.
//
// The history file stays one stream of records in the order they were
// recorded. Two marks cut it: MarkSegment opens segment k at its start
// (and ends segment k-1 there), MarkSegmentEnd seals segment k once every
// record of it is written (the recorder's horizon passed its end). A
// record belongs to the segment its request was sent in (a watch's
// responses and end to its watch's segment); the Segmenter applies that
// rule, the same one for the recorder and for a file read back, so a
// segment is complete when its seal is read. Two exceptions: a Kubernetes
// call belongs to the segment it was answered in, and a watch to the one
// it ended in (see handOver): their answers may show the writes of every
// segment up to there.

// Segment places one segment in its run.
type Segment struct {
	Index int           `json:"index"`
	Start time.Duration `json:"start_ns"`
	// End is where the next segment started (or the run ended); 0 while
	// the segment is open.
	End time.Duration `json:"end_ns,omitempty"`
	// Prefix is the segment's key prefix, the Meta.Prefix of its history.
	Prefix string `json:"prefix"`
	// Last marks the run's last segment, the one with the final phase
	// (the final write, the convergence reads, the end mark): checks that
	// judge the end of a run judge it only there.
	Last bool `json:"last,omitempty"`
	// Carried lists the writes of unknown outcome of the segment before,
	// which its history also holds (see Segmenter): the store may apply
	// such a write after the segment ended, taking a revision this one
	// sees. They are the one state a segment takes from another.
	Carried []int64 `json:"carried,omitempty"`
}

// The segment marks.
const (
	// MarkSegment opens the segment its Segment names, at Time.
	MarkSegment = "segment"
	// MarkSegmentEnd seals the segment its Segment names: every record
	// of it is before this mark.
	MarkSegmentEnd = "segment-end"
)

// NotLast reports whether h is a segment other than its run's last: one
// whose end is not the run's end, which the checks of a run's end leave
// to the last segment.
func (h *History) NotLast() bool { return h.Meta.Segment != nil && !h.Meta.Segment.Last }

// Segmenter splits a stream of records into the histories of its
// segments, calling Sealed with each one as its seal mark arrives. A
// stream with no segment marks is one whole history, given by Finish.
// Not safe for concurrent use.
type Segmenter struct {
	// Sealed receives each sealed segment's history, in order. The
	// Segmenter keeps no reference to it.
	Sealed func(*History) error

	meta      *Meta
	whole     *History   // the history of a stream without segments
	open      []*History // segments opened and not sealed, oldest first
	watchOf   map[int64]*History
	kwatchOf  map[int64]*History
	segmented bool
	sealed    int
}

// Add routes one record.
func (s *Segmenter) Add(r Record) error {
	if s.watchOf == nil {
		s.watchOf, s.kwatchOf = map[int64]*History{}, map[int64]*History{}
	}
	if r.Meta != nil {
		m := *r.Meta
		s.meta = &m
		if s.whole == nil && !s.segmented {
			s.whole = &History{}
			return s.whole.Add(r)
		}
		return nil
	}
	if r.Mark != nil && r.Mark.Segment != nil {
		switch r.Mark.Name {
		case MarkSegment:
			return s.begin(*r.Mark)
		case MarkSegmentEnd:
			return s.seal(*r.Mark)
		}
	}
	if !s.segmented {
		if s.whole == nil {
			return fmt.Errorf("a %s record before the meta record", kindOf(r))
		}
		return s.whole.Add(r)
	}
	switch {
	case r.Op != nil:
		return s.addAt(r, r.Op.Call)
	case r.Call != nil:
		return s.addAt(r, r.Call.Call)
	case r.KubeOp != nil:
		// A Kubernetes call belongs to the segment it was answered in:
		// the objects are the run's, so an answer after a boundary may
		// show a write of the next segment (see handOver).
		return s.addAt(r, max(r.KubeOp.Call, r.KubeOp.Return))
	case r.Mark != nil:
		return s.addAt(r, r.Mark.Time)
	case r.ServerExit != nil:
		// Not a request: the segment open at its time, or the oldest
		// open one when that was sealed while the exit was being read.
		h, err := s.at(r.ServerExit.Time, r)
		if err != nil && len(s.open) > 0 {
			h, err = s.open[0], nil
		}
		if err != nil {
			return err
		}
		return h.Add(r)
	case r.Watch != nil:
		h, err := s.at(r.Watch.Call, r)
		if err == nil {
			s.watchOf[r.Watch.ID] = h
			err = h.Add(r)
		}
		return err
	case r.KubeWatch != nil:
		h, err := s.at(r.KubeWatch.Call, r)
		if err == nil {
			s.kwatchOf[r.KubeWatch.ID] = h
			err = h.Add(r)
		}
		return err
	case r.WatchResponse != nil:
		return s.addToWatch(s.watchOf, r.WatchResponse.Watch, r)
	case r.WatchEnd != nil:
		return s.addToWatch(s.watchOf, r.WatchEnd.Watch, r)
	case r.KubeEvent != nil:
		return s.addToWatch(s.kwatchOf, r.KubeEvent.Watch, r)
	case r.KubeWatchEnd != nil:
		return s.addToWatch(s.kwatchOf, r.KubeWatchEnd.Watch, r)
	case r.Fault != nil:
		// Into every open segment it overlaps: each judges its
		// records with the faults around them.
		n := 0
		for _, h := range s.open {
			seg := h.Meta.Segment
			if r.Fault.Start < seg.End || seg.End == 0 {
				if r.Fault.End >= seg.Start || r.Fault.End == 0 {
					if err := h.Add(r); err != nil {
						return err
					}
					n++
				}
			}
		}
		if n == 0 {
			return fmt.Errorf("fault %d (%s, t=%v..%v) overlaps no open segment: it was recorded after its segment was sealed", r.Fault.ID, r.Fault.Name, r.Fault.Start, r.Fault.End)
		}
		return nil
	}
	return fmt.Errorf("a record of no known kind")
}

// Finish ends the stream: it returns the whole history of a stream
// without segments, or nil after calling Sealed with every segment. A
// segment opened and never sealed (the run was killed) is given to
// Sealed as it is, with End 0: what it holds is complete up to its last
// record, as a cut-short history is.
func (s *Segmenter) Finish() (*History, error) {
	if !s.segmented {
		if s.whole == nil {
			return nil, fmt.Errorf("empty history: no meta record")
		}
		return s.whole, nil
	}
	for len(s.open) > 0 {
		h := s.open[0]
		s.open = s.open[1:]
		s.sealed++
		if err := s.Sealed(h); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// Segments reports how many segments were sealed (0: the stream has none).
func (s *Segmenter) Segments() int { return s.sealed }

func (s *Segmenter) begin(m Mark) error {
	if s.meta == nil {
		return fmt.Errorf("segment %d opens before the meta record", m.Segment.Index)
	}
	if !s.segmented {
		if s.whole != nil && s.whole.records() > 0 {
			return fmt.Errorf("segment %d opens after records of no segment", m.Segment.Index)
		}
		s.segmented, s.whole = true, nil
	}
	if n := len(s.open); n > 0 {
		prev := s.open[n-1].Meta.Segment
		prev.End = m.Time
	}
	seg := *m.Segment
	seg.Start, seg.End = m.Time, 0
	meta := *s.meta
	meta.Prefix, meta.Segment = seg.Prefix, &seg
	h := New(meta)
	h.Meta.Format = s.meta.Format
	s.open = append(s.open, h)
	return h.Add(Record{Mark: &m})
}

func (s *Segmenter) seal(m Mark) error {
	if len(s.open) == 0 || s.open[0].Meta.Segment.Index != m.Segment.Index {
		return fmt.Errorf("segment %d is sealed out of order (open: %s)", m.Segment.Index, s.openText())
	}
	h := s.open[0]
	s.open = s.open[1:]
	seg := h.Meta.Segment
	// The end is where the next segment began (begin set it), as the
	// mark says, or the mark's time for the last.
	if m.Segment.End != 0 {
		seg.End = m.Segment.End
	}
	seg.Last = m.Segment.Last
	if seg.End == 0 {
		seg.End = m.Time
	}
	if err := h.Add(Record{Mark: &m}); err != nil {
		return err
	}
	if len(s.open) > 0 {
		carry(h, s.open[0])
		s.handOver(h, s.open[0])
	}
	for id, w := range s.watchOf {
		if w == h {
			delete(s.watchOf, id)
		}
	}
	for id, w := range s.kwatchOf {
		if w == h {
			delete(s.kwatchOf, id)
		}
	}
	s.sealed++
	return s.Sealed(h)
}

// carry puts the writes of unknown outcome of the sealed segment from
// into the next one, to, as blind writes (blind): a write whose client
// gave up may still be applied (a proposal committed after its leader
// died), and its revision then shows in to's answers, a gap its own writes
// cannot explain. They go first (they were called before anything of to)
// and are listed in its Segment.Carried. Only into the next segment: a
// write not applied within a segment's length (30 s by default) is not
// applied at all.
func carry(from, to *History) {
	var carried []Operation
	for i := range from.Operations {
		o := &from.Operations[i]
		if o.Response != nil || o.Code != ErrUnknown || slices.Contains(from.Meta.Segment.Carried, o.ID) {
			continue
		}
		if b, ok := blind(*o); ok {
			carried = append(carried, b)
			to.Meta.Segment.Carried = append(to.Meta.Segment.Carried, o.ID)
		}
	}
	if len(carried) > 0 {
		to.Operations = append(carried, to.Operations...)
	}
}

// blind is a carried write as the next segment can judge it: its effect
// on revisions, without conditions on keys that segment does not hold
// (their state there is unknown; the third soak stopped on a carried
// txn(if version(k) > 0 then put) that the next segment took for one
// whose compare failed, leaving the revision it took unexplained). Any
// write takes at most one revision, whichever of its paths ran, so it is
// carried as one unconditional put: of the key it writes first, with its
// value when it puts one (a value names its write across segments), else
// with a value naming the operation (a delete, a put keeping its value, a
// lease revoke, which deletes the keys attached to its lease). A
// compaction is kept; a write with nothing to write is not carried.
func blind(o Operation) (Operation, bool) {
	if o.Request.Kind == OpCompact {
		return o, true
	}
	marker := fmt.Sprintf("carried.%d", o.ID)
	var first *Request
	o.Request.Writes(func(w *Request, _ bool) {
		if first == nil {
			first = w
		}
	})
	switch {
	case o.Request.Kind == OpLeaseRevoke:
		o.Request = Request{Kind: OpPut, Key: fmt.Sprintf("carried-revoke/%d", o.Request.Lease), Value: marker}
	case first == nil:
		return o, false
	case first.Kind == OpPut && !first.IgnoreValue:
		o.Request = Request{Kind: OpPut, Key: first.Key, Value: first.Value}
	default:
		o.Request = Request{Kind: OpPut, Key: first.Key, Value: marker}
	}
	return o, true
}

func (s *Segmenter) openText() string {
	t := ""
	for _, h := range s.open {
		t += fmt.Sprintf(" %d", h.Meta.Segment.Index)
	}
	if t == "" {
		return "none"
	}
	return t[1:]
}

// at is the open segment a request sent at t belongs to.
func (s *Segmenter) at(t time.Duration, r Record) (*History, error) {
	for i := len(s.open) - 1; i >= 0; i-- {
		if seg := s.open[i].Meta.Segment; t >= seg.Start {
			return s.open[i], nil
		}
	}
	if len(s.open) > 0 && s.sealed == 0 {
		return s.open[0], nil // sent before the first segment opened (setup)
	}
	return nil, fmt.Errorf("a %s record sent at t=%v belongs to no open segment (open: %s): it came after its segment was sealed", kindOf(r), t, s.openText())
}

func (s *Segmenter) addAt(r Record, t time.Duration) error {
	h, err := s.at(t, r)
	if err != nil {
		return err
	}
	return h.Add(r)
}

func (s *Segmenter) addToWatch(of map[int64]*History, id int64, r Record) error {
	h := of[id]
	if h == nil {
		return fmt.Errorf("a %s record of watch %d, which no open segment holds", kindOf(r), id)
	}
	return h.Add(r)
}

// records counts h's records besides meta.
func (h *History) records() int {
	return len(h.Operations) + len(h.Watches) + len(h.Faults) + len(h.Marks) + len(h.Calls) + len(h.ServerExits) + len(h.KubeOps) + len(h.KubeWatches)
}

// kindOf names a record's kind as its JSON field does.
func kindOf(r Record) string {
	switch {
	case r.Meta != nil:
		return "meta"
	case r.Op != nil:
		return "op"
	case r.Watch != nil:
		return "watch"
	case r.WatchResponse != nil:
		return "wresp"
	case r.WatchEnd != nil:
		return "wend"
	case r.Fault != nil:
		return "fault"
	case r.Mark != nil:
		return "mark"
	case r.Call != nil:
		return "call"
	case r.ServerExit != nil:
		return "exit"
	case r.KubeOp != nil:
		return "kop"
	case r.KubeWatch != nil:
		return "kwatch"
	case r.KubeEvent != nil:
		return "kevent"
	}
	return "kwend"
}
