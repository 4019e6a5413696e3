package conformance

import (
	"context"
	"errors"
	"time"

	"github.com/onsi/gomega"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Stream is a raw watch stream: the probe sends WatchRequests and reads
// WatchResponses itself, so it sees created, canceled, progress and
// fragment responses exactly as the server sent them.
type Stream struct {
	p      *P
	c      pb.Watch_WatchClient
	cancel context.CancelFunc
}

// Stream opens a raw watch stream on the probe's connection.
func (p *P) Stream() *Stream {
	ctx, cancel := context.WithCancel(p.Ctx)
	c, err := pb.NewWatchClient(p.C.ActiveConnection()).Watch(ctx)
	p.Expect(err).NotTo(gomega.HaveOccurred(), "opening a watch stream")
	return &Stream{p: p, c: c, cancel: cancel}
}

// Close ends the stream.
func (s *Stream) Close() { s.c.CloseSend(); s.cancel() }

// Create asks for a watch and returns the created response.
func (s *Stream) Create(req *pb.WatchCreateRequest) *pb.WatchResponse {
	s.p.Expect(s.c.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CreateRequest{CreateRequest: req}})).To(gomega.Succeed())
	r := s.Recv()
	s.p.Expect(r.Created).To(gomega.BeTrue(), "the first answer to a watch create request is its created response, got %v", r)
	return r
}

// CancelWatch asks the server to cancel watch id.
func (s *Stream) CancelWatch(id int64) {
	s.p.Expect(s.c.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CancelRequest{CancelRequest: &pb.WatchCancelRequest{WatchId: id}}})).To(gomega.Succeed())
}

// Progress asks for a progress notification.
func (s *Stream) Progress() {
	s.p.Expect(s.c.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_ProgressRequest{ProgressRequest: &pb.WatchProgressRequest{}}})).To(gomega.Succeed())
}

// Recv waits (up to 5 s) for the next response.
func (s *Stream) Recv() *pb.WatchResponse {
	type got struct {
		r   *pb.WatchResponse
		err error
	}
	ch := make(chan got, 1)
	go func() {
		r, err := s.c.Recv()
		ch <- got{r, err}
	}()
	select {
	case g := <-ch:
		s.p.Expect(g.err).NotTo(gomega.HaveOccurred(), "receiving on the watch stream")
		return g.r
	case <-time.After(5 * time.Second):
		s.p.Fail("no watch response within 5 s")
	case <-s.p.Ctx.Done():
		s.p.Fail("the probe's time ran out waiting for a watch response")
	}
	return nil
}

// Events receives responses until n events have arrived (at most 20
// responses), and returns them with the responses that carried them.
func (s *Stream) Events(n int) ([]*mvccpb.Event, []*pb.WatchResponse) {
	var evs []*mvccpb.Event
	var rs []*pb.WatchResponse
	for i := 0; i < 20 && len(evs) < n; i++ {
		r := s.Recv()
		rs = append(rs, r)
		evs = append(evs, r.Events...)
	}
	s.p.Expect(evs).To(gomega.HaveLen(n), "events delivered")
	return evs, rs
}

// Fail ends the probe with msg.
func (p *P) Fail(msg string) { FailProbe(msg) }

// Code is the gRPC code and message of err ("OK" for nil).
func Code(err error) string {
	if err == nil {
		return "OK"
	}
	st := status.Convert(err)
	return st.Code().String() + ": " + st.Message()
}

// ExpectCode expects err to be a gRPC error of code c whose message
// contains msg.
func (p *P) ExpectCode(err error, c codes.Code, msg string) {
	p.ExpectWithOffset(1, err).To(gomega.HaveOccurred(), "want %s %q", c, msg)
	code := status.Code(err)
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		code = ee.Code() // clientv3 turns etcd's gRPC errors into these
	}
	p.ExpectWithOffset(1, code).To(gomega.Equal(c), "error %v", err)
	p.ExpectWithOffset(1, err.Error()).To(gomega.ContainSubstring(msg))
}

// Head is the store's current revision, read through the recorded client.
func (p *P) Head() int64 {
	r, err := p.C.Get(p.Ctx, p.K("\x00head"))
	p.Expect(err).NotTo(gomega.HaveOccurred())
	return r.Header.Revision
}

// Get reads one key (or more with options) and expects success.
func (p *P) Get(name string, opts ...clientv3.OpOption) *clientv3.GetResponse {
	r, err := p.C.Get(p.Ctx, p.K(name), opts...)
	p.Expect(err).NotTo(gomega.HaveOccurred(), "get %s", name)
	return r
}

// Keys are the keys of kvs without the probe's prefix.
func (p *P) Keys(kvs []*mvccpb.KeyValue) []string {
	out := make([]string, len(kvs))
	for i, kv := range kvs {
		out[i] = string(kv.Key)[len(p.Prefix):]
	}
	return out
}

// KeysOf are the keys of events without the probe's prefix.
func (p *P) KeysOf(evs []*mvccpb.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = string(e.Kv.Key)[len(p.Prefix):]
	}
	return out
}

// End is the exclusive end of the probe's whole prefix.
func (p *P) End() string { return clientv3.GetPrefixRangeEnd(p.Prefix) }
