package kube

import (
	"context"

	"github.com/vigil-suite/vigil/history"
)

// API is what Recording wraps: the HTTP Client, or a wrapper around it
// that changes what vigil's clients see (sabotage).
type API interface {
	// Do runs one call. A definite error answer of the server is a
	// *StatusError; anything else means no answer came.
	Do(ctx context.Context, req history.KubeRequest) (*history.KubeResponse, error)
	// Watch opens a watch; see WatchMessage.
	Watch(ctx context.Context, req history.KubeWatchRequest) <-chan WatchMessage
	// Server is how the history names the API server.
	Server() string
	Close() error
}

var _ API = (*Client)(nil)

// Recording wraps an API so that every call and every watch event lands in
// the history, stamped with the client's id and times from the run's
// clock. It is the only way the workload talks to a Kubernetes target.
type Recording struct {
	inner  API
	id     int
	rec    *history.Recorder
	lastOp int64
}

// Record wraps c as client number id of the run.
func Record(c API, id int, rec *history.Recorder) *Recording {
	return &Recording{inner: c, id: id, rec: rec}
}

// ID is the client's number in the history.
func (r *Recording) ID() int { return r.id }

// Server names the API server the client talks to.
func (r *Recording) Server() string { return r.inner.Server() }

// Close closes the underlying client.
func (r *Recording) Close() error { return r.inner.Close() }

// LastOp is the id of the last operation Do recorded; for the one
// goroutine that uses this client for calls.
func (r *Recording) LastOp() int64 { return r.lastOp }

// Do runs and records one call. The returned error is the API's, so the
// caller can read the Status (StatusOf) whichever way it was recorded.
func (r *Recording) Do(ctx context.Context, req history.KubeRequest) (*history.KubeResponse, error) {
	op := history.KubeOperation{ID: r.rec.NextOpID(), Client: r.id, Server: r.inner.Server(), Request: req}
	tok := r.rec.Begin()
	defer r.rec.End(tok)
	op.Call = r.rec.Now()
	resp, err := r.inner.Do(ctx, req)
	op.Return = r.rec.Now()
	switch st := StatusOf(err); {
	case err == nil:
		op.Response = resp
	case st != nil && Definite(req.Verb, st.Code):
		op.Status = st
	default:
		op.Error = err.Error()
		resp = nil
	}
	r.rec.Add(history.Record{KubeOp: &op})
	r.lastOp = op.ID
	return resp, err
}

// Definite reports whether an error answer with this HTTP code says for
// sure that the call did not happen. Reads are always definite. A write
// answered 5xx is not: the API server answers 500 or 504 when etcd did not
// confirm in time, and etcd may still commit the write, so the history
// records it as an error with an unknown outcome.
func Definite(verb history.KubeVerb, code int) bool {
	return !verb.IsWrite() || code < 500
}

// Origin says where a watch comes from, for the checks that follow a
// chain of watches.
type Origin struct {
	// Resumes is the watch this one continues from its last RV; 0 if none.
	Resumes int64
	// AfterList is the list operation whose RV this watch starts from; 0 if none.
	AfterList int64
}

// RecordedWatch is a watch being recorded.
type RecordedWatch struct {
	ID int64
	// C carries every event as recorded and is closed once the stream has
	// ended and its end is recorded.
	C   <-chan history.KubeEvent
	end history.KubeWatchEnd
}

// End says how the watch ended. Read it only after C is closed.
func (w *RecordedWatch) End() history.KubeWatchEnd { return w.end }

// Watch opens and records a watch. Cancel ctx to close it; the end is
// recorded either way.
func (r *Recording) Watch(ctx context.Context, req history.KubeWatchRequest, from Origin) *RecordedWatch {
	kw := history.KubeWatch{ID: r.rec.NextWatchID(), Client: r.id, Server: r.inner.Server(),
		Resumes: from.Resumes, AfterList: from.AfterList, Request: req}
	kw.Call = r.rec.Now()
	r.rec.Add(history.Record{KubeWatch: &kw})
	in := r.inner.Watch(ctx, req)
	out := make(chan history.KubeEvent, 64)
	rw := &RecordedWatch{ID: kw.ID, C: out}
	go func() {
		defer close(out)
		end := history.KubeWatchEnd{Watch: kw.ID, Reason: history.EndServer}
		for m := range in {
			switch {
			case m.Event != nil:
				ev := *m.Event
				ev.Watch, ev.Time = kw.ID, r.rec.Now()
				r.rec.Add(history.Record{KubeEvent: &ev})
				out <- ev
			case m.Refused != nil:
				end.Reason, end.Status = history.EndError, m.Refused
			case m.Err != nil:
				end.Reason, end.Error = history.EndError, m.Err.Error()
			}
		}
		end.Time = r.rec.Now()
		if ctx.Err() != nil && end.Status == nil {
			// vigil closed it; a break that came with the cancel is its doing.
			end.Reason, end.Error = history.EndClient, ""
		}
		rw.end = end
		r.rec.Add(history.Record{KubeWatchEnd: &end})
	}()
	return rw
}
