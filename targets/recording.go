package targets

import (
	"context"
	"slices"
	"sync"

	"github.com/vigil-suite/vigil/history"
)

// Recording wraps a Client so that every call and every watch message lands
// in the history, stamped with the client's id and times from the run's
// clock. It is the only way the workload talks to a target.
type Recording struct {
	inner  Client
	id     int
	rec    *history.Recorder
	lastOp int64 // id of the last operation Do recorded

	mu   sync.Mutex
	open []int64 // the watches of this client whose end is not recorded yet
}

// Record wraps c as client number id of the run.
func Record(c Client, id int, rec *history.Recorder) *Recording {
	return &Recording{inner: c, id: id, rec: rec}
}

// ID is the client's number in the history.
func (r *Recording) ID() int { return r.id }

// Member is the endpoint the client talks to.
func (r *Recording) Member() string { return r.inner.Member() }

// Close closes the underlying client.
func (r *Recording) Close() error { return r.inner.Close() }

// RequestProgress asks for a progress notification on the client's watch
// stream and records the request, with the watches it was sent for; the
// notifications it causes are recorded on those watches.
func (r *Recording) RequestProgress(ctx context.Context) error {
	c := history.Call{ID: r.rec.NextCallID(), Client: r.id, Member: r.inner.Member(), Kind: history.CallProgress,
		Watches: r.openWatches()}
	tok := r.rec.Begin()
	defer r.rec.End(tok)
	c.Call = r.rec.Now()
	err := r.inner.RequestProgress(ctx)
	c.Return = r.rec.Now()
	if err != nil {
		c.Error, c.Code = err.Error(), CodeOf(err)
	}
	r.rec.Add(history.Record{Call: &c})
	return err
}

// Lease makes one lease call and records it as a history.Call of its
// kind, with the lease's id and the TTL answered (or, for a grant that
// failed, asked for), and the keys a time-to-live call answered. draw
// names the grammar productions it was drawn from, if any.
func (r *Recording) Lease(ctx context.Context, req LeaseRequest, draw ...string) (LeaseAnswer, error) {
	c := history.Call{Kind: req.Kind, Lease: req.ID, TTL: req.TTL, Attached: req.Attached, Draw: draw}
	tok := r.rec.Begin()
	defer r.rec.End(tok)
	c.Call = r.rec.Now()
	a, err := r.inner.Lease(ctx, req)
	c.Return = r.rec.Now()
	if err != nil {
		c.Error, c.Code = err.Error(), CodeOf(err)
	} else {
		c.Revision = a.Revision
		if a.ID != 0 {
			c.Lease = a.ID
		}
		if req.Kind != history.CallLeaseRevoke {
			c.TTL = a.TTL
		}
		c.Keys = a.Keys
	}
	r.record(c)
	return a, err
}

// record stamps a call with the client's id, member and a fresh call id,
// and records it.
func (r *Recording) record(c history.Call) {
	c.ID, c.Client, c.Member = r.rec.NextCallID(), r.id, r.inner.Member()
	r.rec.Add(history.Record{Call: &c})
}

func (r *Recording) openWatches() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.open)
}

func (r *Recording) setOpen(id int64, open bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if open {
		r.open = append(r.open, id)
	} else {
		r.open = slices.DeleteFunc(r.open, func(x int64) bool { return x == id })
	}
}

// Do runs and records one request.
func (r *Recording) Do(ctx context.Context, req history.Request) (*history.Response, error) {
	return r.DoDrawn(ctx, req, nil)
}

// DoDrawn is Do recording draw as the operation's Draw: the grammar
// productions the request was drawn from, or the part of vigil that sent
// it and why.
func (r *Recording) DoDrawn(ctx context.Context, req history.Request, draw []string) (*history.Response, error) {
	op := history.Operation{ID: r.rec.NextOpID(), Client: r.id, Member: r.inner.Member(), Request: req, Draw: draw}
	tok := r.rec.Begin()
	defer r.rec.End(tok)
	op.Call = r.rec.Now()
	resp, err := r.inner.Do(ctx, req)
	op.Return = r.rec.Now()
	if err != nil {
		op.Error, op.Code = err.Error(), CodeOf(err)
		resp = nil
	} else {
		op.Response = resp
	}
	r.rec.Add(history.Record{Op: &op})
	r.lastOp = op.ID
	return resp, err
}

// LastOp is the id of the last operation Do recorded. Like Do, it is for
// the one goroutine that uses this client for requests.
func (r *Recording) LastOp() int64 { return r.lastOp }

// RecordedWatch is a watch stream being recorded.
type RecordedWatch struct {
	ID int64
	// C carries every response as recorded (with the watch id and receive
	// time) and is closed when the stream has ended and its end is recorded.
	C <-chan history.WatchResponse
}

// Watch opens and records a watch. resumes is the id of the watch this one
// continues, or 0; draw names the grammar productions it was drawn from.
// Cancel ctx to close it; the end is recorded either way.
func (r *Recording) Watch(ctx context.Context, req history.WatchRequest, resumes int64, draw ...string) RecordedWatch {
	return r.WatchDrawn(ctx, req, resumes, draw)
}

// WatchDrawn is Watch with the watch's draw entries (history.Watch.Draw).
func (r *Recording) WatchDrawn(ctx context.Context, req history.WatchRequest, resumes int64, draw []string) RecordedWatch {
	w := history.Watch{ID: r.rec.NextWatchID(), Client: r.id, Member: r.inner.Member(), Resumes: resumes, Request: req, Draw: draw}
	w.Call = r.rec.Now()
	r.rec.Add(history.Record{Watch: &w})
	r.setOpen(w.ID, true)
	in := r.inner.Watch(ctx, req)
	out := make(chan history.WatchResponse, 64)
	go func() {
		defer close(out)
		end := history.WatchEnd{Watch: w.ID}
		var last *history.WatchResponse
		for m := range in {
			resp := m.Response
			resp.Watch, resp.Time = w.ID, r.rec.Now()
			if m.Err != nil {
				resp.Error = m.Err.Error()
			}
			r.rec.Add(history.Record{WatchResponse: &resp})
			out <- resp
			last = &resp
		}
		end.Time = r.rec.Now()
		switch {
		case ctx.Err() != nil:
			end.Reason = history.EndClient
		case last != nil && last.Canceled:
			end.Reason = history.EndServer
			end.Error = last.CancelReason
		case last != nil && last.Error != "":
			end.Reason, end.Error = history.EndError, last.Error
		default:
			end.Reason, end.Error = history.EndError, history.QuietClose
		}
		r.setOpen(w.ID, false)
		r.rec.Add(history.Record{WatchEnd: &end})
	}()
	return RecordedWatch{ID: w.ID, C: out}
}
