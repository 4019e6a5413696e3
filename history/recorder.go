package history

import (
	"sync"
	"sync/atomic"
	"time"
)

// Recorder is where a running workload puts its records: each one goes to
// the history file at once (so a crash loses little) and into the
// in-memory history the checkers read at the end. Safe for concurrent use.
type Recorder struct {
	clock *Clock
	w     *Writer // may be nil: memory only

	mu  sync.Mutex
	h   *History
	err error

	nextOp, nextWatch, nextFault, nextCall atomic.Int64
}

// NewRecorder starts a history with meta, writing to w if it is not nil.
func NewRecorder(meta Meta, clock *Clock, w *Writer) *Recorder {
	r := &Recorder{clock: clock, w: w, h: New(meta)}
	if w != nil {
		m := r.h.Meta
		r.err = w.Write(Record{Meta: &m})
	}
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
	if err := r.h.Add(rec); err != nil && r.err == nil {
		r.err = err
	}
	if r.w != nil {
		if err := r.w.Write(rec); err != nil && r.err == nil {
			r.err = err
		}
	}
}

// Err returns the first recording error, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// History returns the in-memory history. Call it once recording has stopped.
func (r *Recorder) History() *History {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.h
}
