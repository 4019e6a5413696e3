package history

import (
	"sync"
	"sync/atomic"
	"time"
)

// Recorder is where a running workload puts its records: each one goes to
// the history file at once (so a crash loses little) and into the
// in-memory history the checkers read at the end — or, in a segmented
// run, into the open segment's history, which SealReady hands over and
// forgets once it is complete. Safe for concurrent use.
type Recorder struct {
	clock *Clock
	w     *Writer // may be nil: memory only

	mu     sync.Mutex
	seg    Segmenter
	sealed []*History // sealed by the last SealReady, not yet taken
	err    error

	nextOp, nextWatch, nextFault, nextCall atomic.Int64

	// pending holds the send times of requests not recorded yet (KV and
	// Kubernetes calls in flight, faults not yet healed), by token.
	pendMu  sync.Mutex
	pending map[int64]time.Duration
	nextTok int64
}

// NewRecorder starts a history with meta, writing to w if it is not nil.
func NewRecorder(meta Meta, clock *Clock, w *Writer) *Recorder {
	meta.Format = FormatVersion
	r := &Recorder{clock: clock, w: w}
	r.seg.Sealed = func(h *History) error { r.sealed = append(r.sealed, h); return nil }
	r.add(Record{Meta: &meta})
	return r
}

// Clock is the run's clock; every timestamp comes from it.
func (r *Recorder) Clock() *Clock { return r.clock }

// Now reads the run's clock.
func (r *Recorder) Now() time.Duration { return r.clock.Now() }

// NextOpID, NextWatchID, NextFaultID and NextCallID hand out ids unique
// in the run.
func (r *Recorder) NextOpID() int64    { return r.nextOp.Add(1) }
func (r *Recorder) NextCallID() int64  { return r.nextCall.Add(1) }
func (r *Recorder) NextWatchID() int64 { return r.nextWatch.Add(1) }
func (r *Recorder) NextFaultID() int64 { return r.nextFault.Add(1) }

// Add records one record. The first error (a full disk, say) is kept and
// returned by Err; recording goes on in memory.
func (r *Recorder) Add(rec Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.add(rec)
}

func (r *Recorder) add(rec Record) {
	if err := r.seg.Add(rec); err != nil && r.err == nil {
		r.err = err
	}
	if r.w != nil {
		if err := r.w.Write(rec); err != nil && r.err == nil {
			r.err = err
		}
	}
}

// Begin notes a request (or a fault) sent now whose record comes later,
// and returns the token that End takes once it is recorded. Until then
// the Horizon stays at or before its send time.
func (r *Recorder) Begin() int64 {
	r.pendMu.Lock()
	defer r.pendMu.Unlock()
	if r.pending == nil {
		r.pending = map[int64]time.Duration{}
	}
	r.nextTok++
	r.pending[r.nextTok] = r.clock.Now()
	return r.nextTok
}

// End notes that the request of tok is recorded.
func (r *Recorder) End(tok int64) {
	r.pendMu.Lock()
	defer r.pendMu.Unlock()
	delete(r.pending, tok)
}

// Horizon is the time up to which the history is complete: the send time
// of the oldest request not recorded yet, or now when none is pending.
// Everything sent before it is in the history, so History().CutAt(Horizon)
// can be judged while the run goes on.
func (r *Recorder) Horizon() time.Duration {
	r.pendMu.Lock()
	defer r.pendMu.Unlock()
	h := r.clock.Now()
	for _, t := range r.pending {
		h = min(h, t)
	}
	return h
}

// Snapshot is the history cut at its horizon (see CutAt), taken under the
// recorder's lock so that no record is half added, and that horizon. In a
// segmented run it is the oldest open segment's, cut there: a newer one
// gets its context (and the watches still open) only when the one before
// it is sealed.
func (r *Recorder) Snapshot() (*History, time.Duration) {
	t := r.Horizon()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.seg.segmented {
		return r.seg.whole.CutAt(t), t
	}
	return r.seg.open[0].CutAt(t), t
}

// StartSegment opens the next segment of a segmented run now (the first
// call makes the run segmented, before any record but the meta): what is
// sent from now on belongs to it, and the segment before ends here. It
// returns the segment's start.
func (r *Recorder) StartSegment(seg Segment) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	seg.Start = r.clock.Now()
	r.add(Record{Mark: &Mark{Name: MarkSegment, Time: seg.Start, Segment: &seg}})
	return seg.Start
}

// SealReady seals each segment that ended before the horizon (everything
// sent in it is recorded) and returns their histories, oldest first; the
// recorder keeps none of them. With last, the run's workload has ended
// and every request is recorded: the newest segment ends now, marked
// Last, and is sealed too. Without segments it returns nothing.
func (r *Recorder) SealReady(last bool) []*History {
	t := r.Horizon()
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.err == nil && len(r.seg.open) > 0 {
		h := r.seg.open[0]
		seg := *h.Meta.Segment
		newest := len(r.seg.open) == 1
		switch {
		case newest && last:
			seg.End, seg.Last = r.clock.Now(), true
		case newest || seg.End > t:
			return r.takeSealed()
		}
		r.add(Record{Mark: &Mark{Name: MarkSegmentEnd, Time: r.clock.Now(), Segment: &seg}})
	}
	return r.takeSealed()
}

func (r *Recorder) takeSealed() []*History {
	out := r.sealed
	r.sealed = nil
	return out
}

// Err returns the first recording error, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// History returns the in-memory history. Call it once recording has
// stopped. A segmented run has none (nil): its segments went to SealReady.
func (r *Recorder) History() *History {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seg.segmented {
		return nil
	}
	return r.seg.whole
}
