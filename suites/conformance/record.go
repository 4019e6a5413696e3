package conformance

import (
	"context"
	"encoding/json"
	"path"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/protoadapt"

	etcdtarget "github.com/vigil-suite/vigil/targets/etcd"
)

// recorder keeps every gRPC request and answer of one probe, in the order
// they happened, as the wire carried them: whatever clientv3 helper the
// probe used, the transcript holds the real etcdserverpb messages.
type recorder struct {
	mu    sync.Mutex
	steps []rawStep
	// unimplemented: some call was refused as not implemented.
	unimplemented string
}

// rawStep is a step before normalization.
type rawStep struct {
	call string
	req  any
	resp any
	err  error
	// recvOnly: a stream message received (no request).
	recvOnly bool
	// reqPB and respPB are the messages as protobuf JSON, which a
	// reproduction program can decode back into the typed messages.
	reqPB, respPB json.RawMessage
}

func (r *recorder) add(s rawStep) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if etcdtarget.Refusal(s.err) && r.unimplemented == "" {
		r.unimplemented = s.call + ": " + status.Convert(s.err).Message()
	}
	r.steps = append(r.steps, s)
}

func (r *recorder) snapshot() []rawStep {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]rawStep(nil), r.steps...)
}

// clone copies a message so that later reuse of the buffer by gRPC or the
// client does not change what was recorded.
// protoJSON is m as protobuf JSON (nil if m is not a protobuf message).
func protoJSON(m any) json.RawMessage {
	pm, ok := m.(protoadapt.MessageV1)
	if !ok {
		return nil
	}
	b, err := protojson.Marshal(protoadapt.MessageV2Of(pm))
	if err != nil {
		return nil
	}
	return b
}

func clone(m any) any {
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return m
	}
	return out
}

// unary records one call and its answer.
func (r *recorder) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	s := rawStep{call: path.Base(method), req: clone(req), reqPB: protoJSON(req), err: err}
	if err == nil {
		s.resp, s.respPB = clone(reply), protoJSON(reply)
	}
	r.add(s)
	return err
}

// stream records what a stream sends and receives (Watch, LeaseKeepAlive).
func (r *recorder) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		r.add(rawStep{call: path.Base(method) + ".Open", err: err})
		return nil, err
	}
	return &recordedStream{ClientStream: cs, r: r, name: path.Base(method)}, nil
}

type recordedStream struct {
	grpc.ClientStream
	r    *recorder
	name string
}

func (s *recordedStream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(m)
	s.r.add(rawStep{call: s.name + ".Send", req: clone(m), reqPB: protoJSON(m), err: err})
	return err
}

func (s *recordedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil {
		if status.Code(err) != codes.Canceled {
			s.r.add(rawStep{call: s.name + ".Recv", err: err, recvOnly: true})
		}
		return err
	}
	s.r.add(rawStep{call: s.name + ".Recv", resp: clone(m), respPB: protoJSON(m), recvOnly: true})
	return nil
}

// dialOptions put the recorder (and, in tests, a corrupter) on a client.
func (r *recorder) dialOptions(extra ...grpc.DialOption) []grpc.DialOption {
	return append([]grpc.DialOption{grpc.WithChainUnaryInterceptor(r.unary), grpc.WithChainStreamInterceptor(r.stream)}, extra...)
}
