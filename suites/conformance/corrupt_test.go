package conformance

import (
	"context"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// corruption makes a server look wrong in one way, from the client's side:
// it rewrites requests before they leave and answers before the probe sees
// them. That is what a server with that bug would send, so the probes that
// own the guarantee must fail, and no other.
type corruption struct {
	name string
	// unary rewrites a call's answer (resp is the typed reply).
	unary func(method string, req, resp any, err error) error
	// send rewrites a stream message before it is sent.
	send func(m any)
	// recv turns one received stream message into the messages the probe
	// gets (nil: unchanged).
	recv func(m any) []*pb.WatchResponse
	// mustFail are the probes that own the broken guarantee; mayFail may
	// fail too (they lean on it), every other probe must pass.
	mustFail, mayFail []string
}

func (c corruption) dialOptions() []grpc.DialOption {
	unary := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if c.unary != nil {
			return c.unary(path.Base(method), req, reply, err)
		}
		return err
	}
	stream := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		cs, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil {
			return nil, err
		}
		return &corruptStream{ClientStream: cs, c: c}, nil
	}
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(unary), grpc.WithChainStreamInterceptor(stream)}
}

type corruptStream struct {
	grpc.ClientStream
	c       corruption
	pending []*pb.WatchResponse
}

func (s *corruptStream) SendMsg(m any) error {
	if s.c.send != nil {
		s.c.send(m)
	}
	return s.ClientStream.SendMsg(m)
}

func (s *corruptStream) RecvMsg(m any) error {
	wr, ok := m.(*pb.WatchResponse)
	if ok && len(s.pending) > 0 {
		*wr, s.pending = *s.pending[0], s.pending[1:]
		return nil
	}
	if err := s.ClientStream.RecvMsg(m); err != nil || !ok || s.c.recv == nil {
		return err
	}
	if out := s.c.recv(wr); out != nil {
		first := out[0]
		s.pending = append(s.pending, out[1:]...)
		*wr = *first
	}
	return nil
}

func corruptions() []corruption {
	return []corruption{
		{name: "range at an old revision reports that revision in its header",
			unary: func(method string, req, resp any, err error) error {
				if rq, ok := req.(*pb.RangeRequest); ok && err == nil && rq.Revision > 0 {
					resp.(*pb.RangeResponse).Header.Revision = rq.Revision
				}
				return err
			},
			mustFail: []string{"kv/range-old-revision-header"}},
		{name: "range ignores sort order",
			unary: func(method string, req, resp any, err error) error {
				if rq, ok := req.(*pb.RangeRequest); ok && err == nil && rq.SortOrder != pb.RangeRequest_NONE {
					kvs := resp.(*pb.RangeResponse).Kvs
					sort.Slice(kvs, func(i, j int) bool { return string(kvs[i].Key) < string(kvs[j].Key) })
				}
				return err
			},
			mustFail: []string{"kv/range-sort-key-descend", "kv/range-sort-mod-revision", "kv/range-sort-create-revision-descend",
				"kv/range-sort-version", "kv/range-sort-value", "kv/range-sort-with-limit"}},
		{name: "range with a limit never says more",
			unary: func(method string, req, resp any, err error) error {
				if _, ok := req.(*pb.RangeRequest); ok && err == nil {
					resp.(*pb.RangeResponse).More = false
				}
				return err
			},
			mustFail: []string{"kv/range-limit-more-count", "kv/range-sort-with-limit"}},
		{name: "range below the compact revision answers with nothing",
			unary: func(method string, req, resp any, err error) error {
				if _, ok := req.(*pb.RangeRequest); ok && err != nil && strings.Contains(err.Error(), "compacted") {
					*resp.(*pb.RangeResponse) = pb.RangeResponse{Header: &pb.ResponseHeader{}}
					return nil
				}
				return err
			},
			mustFail: []string{"compaction/read-below"}},
		{name: "txn compares come out inverted",
			unary: func(method string, req, resp any, err error) error {
				if rq, ok := req.(*pb.TxnRequest); ok && err == nil && len(rq.Compare) > 0 {
					resp.(*pb.TxnResponse).Succeeded = !resp.(*pb.TxnResponse).Succeeded
				}
				return err
			},
			mustFail: append(txnCompareNames(), "txn/compare-lease", "txn/compare-missing-key-version", "txn/compare-missing-key-value",
				"txn/compare-range", "txn/else-branch", "revision/failed-txn-no-revision"),
			// Their compares still ran on the server; only the reported
			// branch is inverted, so a probe reading the outcome fails too.
			// The storage forms' probes build their writes on mod compares.
			mayFail: []string{"txn/compare-missing-key-create", "txn/nested", "revision/guarded-delete-nothing",
				"watch/filter-noput-storage", "watch/filter-nodelete-storage", "revision/create-header"}},
		{name: "lease time-to-live lists no keys",
			unary: func(method string, req, resp any, err error) error {
				if _, ok := req.(*pb.LeaseTimeToLiveRequest); ok && err == nil {
					resp.(*pb.LeaseTimeToLiveResponse).Keys = nil
				}
				return err
			},
			mustFail: []string{"lease/time-to-live-keys"}},
		{name: "revoking an unknown lease succeeds",
			unary: func(method string, req, resp any, err error) error {
				if _, ok := req.(*pb.LeaseRevokeRequest); ok && err != nil && strings.Contains(err.Error(), "lease not found") {
					*resp.(*pb.LeaseRevokeResponse) = pb.LeaseRevokeResponse{Header: &pb.ResponseHeader{}}
					return nil
				}
				return err
			},
			mustFail: []string{"lease/revoke-unknown"}},
		{name: "watch filters are dropped",
			send: func(m any) {
				if wr, ok := m.(*pb.WatchRequest); ok && wr.GetCreateRequest() != nil {
					wr.GetCreateRequest().Filters = nil
				}
			},
			mustFail: []string{"watch/filter-noput", "watch/filter-nodelete", "watch/filter-noput-storage", "watch/filter-nodelete-storage"}},
		{name: "watch events lose their prev_kv",
			recv: func(m any) []*pb.WatchResponse {
				for _, e := range m.(*pb.WatchResponse).Events {
					e.PrevKv = nil
				}
				return nil
			},
			mustFail: []string{"watch/prev-kv-put", "watch/prev-kv-delete"}},
		{name: "one revision's events arrive one per response",
			recv: func(m any) []*pb.WatchResponse {
				wr := m.(*pb.WatchResponse)
				if len(wr.Events) < 2 {
					return nil
				}
				var out []*pb.WatchResponse
				for _, e := range wr.Events {
					c := *wr
					c.Events = []*mvccpb.Event{e}
					out = append(out, &c)
				}
				return out
			},
			mustFail: []string{"watch/txn-one-response", "watch/delete-range-one-response", "lease/revoke-delete-events"},
			mayFail:  []string{"watch/fragment", "watch/from-past", "watch/from-future", "watch/filter-nodelete", "watch/is-create", "compaction/watch-at"}},
		{name: "watch events say every key is a create",
			recv: func(m any) []*pb.WatchResponse {
				for _, e := range m.(*pb.WatchResponse).Events {
					e.Kv.Version, e.Kv.CreateRevision = 1, e.Kv.ModRevision
				}
				return nil
			},
			mustFail: []string{"watch/is-create"}},
		{name: "progress notifications run ahead of the events",
			recv: func(m any) []*pb.WatchResponse {
				wr := m.(*pb.WatchResponse)
				if len(wr.Events) == 0 && !wr.Created && !wr.Canceled && wr.Header != nil {
					wr.Header.Revision += 5
				}
				return nil
			},
			mustFail: []string{"watch/progress-request", "watch/progress-then-no-older-event"}},
		{name: "a watch below the compact revision starts later instead of being canceled",
			recv: func(m any) []*pb.WatchResponse {
				wr := m.(*pb.WatchResponse)
				if wr.Canceled && wr.CompactRevision > 0 {
					wr.Canceled, wr.CompactRevision = false, 0
				}
				return nil
			},
			mustFail: []string{"compaction/watch-below", "watch/compacted-start-cancel"}},
	}
}

func txnCompareNames() []string {
	var out []string
	for _, tc := range txnCompareCases() {
		out = append(out, "txn/compare-"+tc.name)
	}
	return out
}

// Every probe family can fail: with one guarantee broken at a time, the
// probes that own it fail and every other probe passes.
func TestEtcdProbesCatchCorruptedAnswers(t *testing.T) {
	eps := startEtcd(t, "v3.6.16")
	all := map[string]bool{}
	for _, p := range EtcdProbes() {
		all[p.Name] = true
	}
	for _, c := range corruptions() {
		t.Run(c.name, func(t *testing.T) {
			for _, n := range append(append([]string{}, c.mustFail...), c.mayFail...) {
				if !all[n] {
					t.Fatalf("no probe %s", n)
				}
			}
			res, err := RunEtcdProbes(context.Background(), EtcdConfig{Endpoints: eps, DialOptions: c.dialOptions()}, EtcdProbes())
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, r := range res {
				if r.Verdict == Pass {
					continue
				}
				failed = append(failed, r.Name)
				if !slices.Contains(c.mustFail, r.Name) && !slices.Contains(c.mayFail, r.Name) {
					t.Errorf("%s failed, though it does not own this guarantee: %s %s", r.Name, r.Reason, r.Failure)
				}
			}
			for _, n := range c.mustFail {
				if !slices.Contains(failed, n) {
					t.Errorf("%s passed against a server that breaks its guarantee", n)
				}
			}
		})
	}
}

// A server that answers a request with gRPC Unimplemented makes the probes
// that need it unsupported (listed apart), not failed; a probe that skips
// itself says why.
func TestUnimplementedIsUnsupportedAndSkipIsSkipped(t *testing.T) {
	eps := startEtcd(t, "v3.6.16")
	noLeases := grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if strings.Contains(method, "Lease") {
			return status.Error(codes.Unimplemented, "leases are not implemented here")
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	})
	probes := append(EtcdProbes(), EtcdProbe{Info{"test/skips", "never fails", nil}, func(p *P) { p.Skip("nothing to do here") }})
	res, err := RunEtcdProbes(context.Background(), EtcdConfig{Endpoints: eps, DialOptions: []grpc.DialOption{noLeases},
		Only: []string{"lease/", "kv/put-ignore-lease", "kv/put-header-revision", "test/skips"}}, probes)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]Verdict{}
	for _, r := range res {
		verdicts[r.Name] = r.Verdict
		if strings.HasPrefix(r.Name, "lease/") && (r.Verdict != Unsupported || !strings.Contains(r.Reason, "LeaseGrant")) {
			t.Errorf("%s: %s %q, want unsupported naming LeaseGrant", r.Name, r.Verdict, r.Reason)
		}
	}
	if verdicts["kv/put-ignore-lease"] != Unsupported || verdicts["kv/put-header-revision"] != Pass || verdicts["test/skips"] != Skipped {
		t.Errorf("verdicts: %v", verdicts)
	}
	if len(verdicts) != 13 {
		t.Errorf("want the 10 lease probes and 3 others, got %d", len(verdicts))
	}
}
