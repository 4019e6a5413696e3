package targets

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/vigil-suite/vigil/history"
)

// scripted is a stand-in for an adapter, to test what Recording writes down.
type scripted struct {
	resp  *history.Response
	err   error
	watch []WatchMessage
}

func (s *scripted) Do(context.Context, history.Request) (*history.Response, error) {
	return s.resp, s.err
}
func (s *scripted) RequestProgress(context.Context) error { return nil }
func (s *scripted) Lease(_ context.Context, req LeaseRequest) (LeaseAnswer, error) {
	id, ttl := req.ID, req.TTL
	if s.err != nil {
		return LeaseAnswer{}, s.err
	}
	if req.Kind == history.CallLeaseGrant {
		id = 77
	}
	return LeaseAnswer{ID: id, TTL: ttl, Revision: 9}, nil
}
func (s *scripted) Member() string { return "m" }
func (s *scripted) Close() error   { return nil }
func (s *scripted) Watch(ctx context.Context, _ history.WatchRequest) <-chan WatchMessage {
	ch := make(chan WatchMessage, len(s.watch))
	for _, m := range s.watch {
		ch <- m
	}
	close(ch)
	return ch
}

func TestRecordingDo(t *testing.T) {
	rec := history.NewRecorder(history.Meta{}, history.NewClock(), nil)
	ok := Record(&scripted{resp: &history.Response{Revision: 5}}, 3, rec)
	if _, err := ok.Do(context.Background(), history.Request{Kind: history.OpPut, Key: "k", Value: "v"}); err != nil {
		t.Fatal(err)
	}
	bad := Record(&scripted{err: &OpError{Code: history.ErrCompacted, Err: errors.New("compacted")}}, 4, rec)
	bad.Do(context.Background(), history.Request{Kind: history.OpRange, Key: "k", Revision: 1})
	h := rec.History()
	if len(h.Operations) != 2 {
		t.Fatalf("%d operations recorded, want 2", len(h.Operations))
	}
	a, b := h.Operations[0], h.Operations[1]
	if a.Client != 3 || a.Response == nil || a.Response.Revision != 5 || a.Return < a.Call || a.Member != "m" {
		t.Fatalf("bad record of a successful call: %+v", a)
	}
	if b.Client != 4 || b.Response != nil || b.Code != history.ErrCompacted || b.Error != "compacted" {
		t.Fatalf("bad record of a failed call: %+v", b)
	}
	if ok.LastOp() != a.ID || bad.LastOp() != b.ID {
		t.Fatal("LastOp does not name the last recorded operation")
	}
}

func TestRecordingWatchEnds(t *testing.T) {
	cases := []struct {
		name   string
		msgs   []WatchMessage
		cancel bool
		want   history.WatchEndReason
	}{
		{"server cancel", []WatchMessage{{Response: history.WatchResponse{Created: true}},
			{Response: history.WatchResponse{Canceled: true, CompactRevision: 7, CancelReason: "compacted"}}}, false, history.EndServer},
		{"stream error", []WatchMessage{{Err: errors.New("connection reset")}}, false, history.EndError},
		{"silent close", []WatchMessage{{Response: history.WatchResponse{Created: true}}}, false, history.EndError},
		{"client close", nil, true, history.EndClient},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := history.NewRecorder(history.Meta{}, history.NewClock(), nil)
			r := Record(&scripted{watch: c.msgs}, 1, rec)
			ctx, cancel := context.WithCancel(context.Background())
			if c.cancel {
				cancel()
			}
			defer cancel()
			rw := r.Watch(ctx, history.WatchRequest{Key: "k"}, 0)
			n := 0
			for resp := range rw.C {
				if resp.Watch != rw.ID {
					t.Fatalf("response carries watch %d, want %d", resp.Watch, rw.ID)
				}
				n++
			}
			ws := rec.History().WatchByID(rw.ID)
			if ws == nil || len(ws.Responses) != n || n != len(c.msgs) {
				t.Fatalf("recorded %v responses, delivered %d, sent %d", ws, n, len(c.msgs))
			}
			if ws.End == nil || ws.End.Reason != c.want {
				t.Fatalf("end recorded as %+v, want reason %s", ws.End, c.want)
			}
		})
	}
}

// BenchmarkRecordingDo measures what recording adds to each call: ids,
// two clock reads, one JSON line to the history file (compressed by the
// writer's flusher, as in a run).
func BenchmarkRecordingDo(b *testing.B) {
	w, err := history.Create(filepath.Join(b.TempDir(), history.FileFor(history.DefaultFormat)))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	rec := history.NewRecorder(history.Meta{}, history.NewClock(), w)
	inner := &scripted{resp: &history.Response{Revision: 5, KVs: []history.KV{{Key: "/vigil/k001", Value: "3.1415", ModRevision: 5, CreateRevision: 2, Version: 3}}}}
	r := Record(inner, 1, rec)
	req := history.Request{Kind: history.OpRange, Key: "/vigil/k001"}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Do(ctx, req)
	}
}
