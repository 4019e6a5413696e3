// Package etcd is the target adapter for any server that speaks the etcd v3
// API, built on go.etcd.io/etcd/client/v3. It translates history requests
// into client calls and the answers back; targets.Recording records them.
package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// Supports lists what the etcd adapter can do.
func Supports() []targets.Feature {
	return []targets.Feature{targets.FeatureKV, targets.FeatureTxn, targets.FeatureCompact,
		targets.FeatureWatch, targets.FeatureWatchPrevKV, targets.FeatureProgressNotify,
		targets.FeatureWatchFilters, targets.FeatureHashKV}
}

// Client talks to one endpoint only, so the history knows which member
// answered (no client-side balancing across members).
type Client struct {
	c        *clientv3.Client
	endpoint string
}

// Dial connects to one endpoint, over TLS and with credentials as sec
// says. It does not wait for the connection (with a user, the client
// authenticates first, and a wrong password fails here).
func Dial(endpoint string, dialTimeout time.Duration, sec fixtures.Security) (*Client, error) {
	cfg, err := sec.ClientConfig(clientv3.Config{
		Endpoints:   []string{endpoint},
		DialTimeout: dialTimeout,
		// The client's own logs would drown vigil's output.
		Logger: zap.NewNop(),
		// Keep the connection alive through pauses of the member.
		DialKeepAliveTime:    5 * time.Second,
		DialKeepAliveTimeout: 5 * time.Second,
	}, endpoint)
	if err != nil {
		return nil, err
	}
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", endpoint, sec.Explain(err))
	}
	return &Client{c: c, endpoint: endpoint}, nil
}

// Wrap makes an adapter of a client already connected to endpoint (a
// recorded client of the conformance probes, say); Close closes it.
func Wrap(c *clientv3.Client, endpoint string) *Client { return &Client{c: c, endpoint: endpoint} }

// Member is the endpoint this client talks to.
func (c *Client) Member() string { return c.endpoint }

// Close closes the connection.
func (c *Client) Close() error { return c.c.Close() }

// Raw is the underlying etcd client, for fixtures and final reads.
func (c *Client) Raw() *clientv3.Client { return c.c }

// Do runs one request.
func (c *Client) Do(ctx context.Context, req history.Request) (*history.Response, error) {
	switch req.Kind {
	case history.OpRange, history.OpPut, history.OpDelete:
		op, err := toOp(req)
		if err != nil {
			return nil, err
		}
		resp, err := c.c.Do(ctx, op)
		if err != nil {
			return nil, classify(err)
		}
		return fromOpResponse(resp), nil
	case history.OpTxn:
		return c.txn(ctx, req)
	case history.OpCompact:
		var opts []clientv3.CompactOption
		if req.Physical {
			opts = append(opts, clientv3.WithCompactPhysical())
		}
		resp, err := c.c.Compact(ctx, req.Revision, opts...)
		if err != nil {
			return nil, classify(err)
		}
		return &history.Response{Revision: resp.Header.Revision, MemberID: resp.Header.MemberId, RaftTerm: resp.Header.RaftTerm}, nil
	case history.OpStatus:
		resp, err := c.c.Status(ctx, c.endpoint)
		if err != nil {
			return nil, classify(err)
		}
		return &history.Response{Revision: resp.Header.Revision, MemberID: resp.Header.MemberId, RaftTerm: resp.RaftTerm}, nil
	case history.OpDefrag:
		resp, err := c.c.Defragment(ctx, c.endpoint)
		if err != nil {
			return nil, classify(err)
		}
		// etcd answers a defragmentation without a header (3.5, 3.6).
		out := &history.Response{}
		if h := resp.Header; h != nil {
			out.Revision, out.MemberID = h.Revision, h.MemberId
		}
		return out, nil
	case history.OpLeaseGrant, history.OpLeaseRevoke:
		kind := history.CallLeaseGrant
		if req.Kind == history.OpLeaseRevoke {
			kind = history.CallLeaseRevoke
		}
		a, err := c.Lease(ctx, targets.LeaseRequest{Kind: kind, ID: req.Lease, TTL: req.TTL})
		if err != nil {
			return nil, err
		}
		return &history.Response{Revision: a.Revision, Lease: a.ID, TTL: a.TTL}, nil
	case history.OpHashKV:
		resp, err := c.c.HashKV(ctx, c.endpoint, req.Revision)
		if err != nil {
			return nil, classify(err)
		}
		return &history.Response{Revision: resp.Header.Revision, MemberID: resp.Header.MemberId,
			CompactRevision: resp.CompactRevision, Hash: resp.Hash}, nil
	}
	return nil, fmt.Errorf("etcd target: unsupported request kind %q", req.Kind)
}

func (c *Client) txn(ctx context.Context, req history.Request) (*history.Response, error) {
	cmps, then, els, err := txnParts(req)
	if err != nil {
		return nil, err
	}
	resp, err := c.c.Txn(ctx).If(cmps...).Then(then...).Else(els...).Commit()
	if err != nil {
		return nil, classify(err)
	}
	out := &history.Response{Revision: resp.Header.Revision, MemberID: resp.Header.MemberId,
		RaftTerm: resp.Header.RaftTerm, Succeeded: resp.Succeeded}
	for _, r := range resp.Responses {
		out.Responses = append(out.Responses, fromResponseOp(r))
	}
	return out, nil
}

// txnParts translates a txn's compares and branches.
func txnParts(req history.Request) (cmps []clientv3.Cmp, then, els []clientv3.Op, err error) {
	cmps = make([]clientv3.Cmp, 0, len(req.Compares))
	for _, cm := range req.Compares {
		cmp, err := toCmp(cm)
		if err != nil {
			return nil, nil, nil, err
		}
		cmps = append(cmps, cmp)
	}
	if then, err = toOps(req.Success); err != nil {
		return nil, nil, nil, err
	}
	if els, err = toOps(req.Failure); err != nil {
		return nil, nil, nil, err
	}
	return cmps, then, els, nil
}

func toOps(reqs []history.Request) ([]clientv3.Op, error) {
	ops := make([]clientv3.Op, 0, len(reqs))
	for _, r := range reqs {
		op, err := toOp(r)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}

func toOp(req history.Request) (clientv3.Op, error) {
	switch req.Kind {
	case history.OpRange:
		var opts []clientv3.OpOption
		if req.End != "" {
			opts = append(opts, clientv3.WithRange(req.End))
		}
		if req.Limit > 0 {
			opts = append(opts, clientv3.WithLimit(req.Limit))
		}
		if req.Revision > 0 {
			opts = append(opts, clientv3.WithRev(req.Revision))
		}
		if req.Serializable {
			opts = append(opts, clientv3.WithSerializable())
		}
		if req.KeysOnly {
			opts = append(opts, clientv3.WithKeysOnly())
		}
		if req.CountOnly {
			opts = append(opts, clientv3.WithCountOnly())
		}
		if req.SortOrder != "" || req.SortTarget != "" {
			order, target, err := toSort(req.SortOrder, req.SortTarget)
			if err != nil {
				return clientv3.Op{}, err
			}
			opts = append(opts, clientv3.WithSort(target, order))
		}
		for _, f := range []struct {
			rev int64
			opt func(int64) clientv3.OpOption
		}{{req.MinModRevision, clientv3.WithMinModRev}, {req.MaxModRevision, clientv3.WithMaxModRev},
			{req.MinCreateRevision, clientv3.WithMinCreateRev}, {req.MaxCreateRevision, clientv3.WithMaxCreateRev}} {
			if f.rev != 0 {
				opts = append(opts, f.opt(f.rev))
			}
		}
		return clientv3.OpGet(req.Key, opts...), nil
	case history.OpPut:
		var opts []clientv3.OpOption
		if req.PrevKV {
			opts = append(opts, clientv3.WithPrevKV())
		}
		if req.Lease != 0 {
			opts = append(opts, clientv3.WithLease(clientv3.LeaseID(req.Lease)))
		}
		if req.IgnoreValue {
			opts = append(opts, clientv3.WithIgnoreValue())
		}
		if req.IgnoreLease {
			opts = append(opts, clientv3.WithIgnoreLease())
		}
		return clientv3.OpPut(req.Key, req.Value, opts...), nil
	case history.OpDelete:
		var opts []clientv3.OpOption
		if req.End != "" {
			opts = append(opts, clientv3.WithRange(req.End))
		}
		if req.PrevKV {
			opts = append(opts, clientv3.WithPrevKV())
		}
		return clientv3.OpDelete(req.Key, opts...), nil
	case history.OpTxn:
		cmps, then, els, err := txnParts(req)
		if err != nil {
			return clientv3.Op{}, err
		}
		return clientv3.OpTxn(cmps, then, els), nil
	}
	return clientv3.Op{}, fmt.Errorf("etcd target: %q cannot be a single op", req.Kind)
}

// toSort translates a range's sort; an order without a target sorts by
// key, a target without an order leaves the order to the server (which
// then sorts ascending, as etcd's RangeRequest documents).
func toSort(order, target string) (clientv3.SortOrder, clientv3.SortTarget, error) {
	o, ok := map[string]clientv3.SortOrder{"": clientv3.SortNone, history.SortAscend: clientv3.SortAscend,
		history.SortDescend: clientv3.SortDescend}[order]
	if !ok {
		return 0, 0, fmt.Errorf("etcd target: unknown sort order %q", order)
	}
	t, ok := map[string]clientv3.SortTarget{"": clientv3.SortByKey, history.SortByKey: clientv3.SortByKey,
		history.SortByVersion: clientv3.SortByVersion, history.SortByCreate: clientv3.SortByCreateRevision,
		history.SortByMod: clientv3.SortByModRevision, history.SortByValue: clientv3.SortByValue}[target]
	if !ok {
		return 0, 0, fmt.Errorf("etcd target: unknown sort target %q", target)
	}
	return o, t, nil
}

func toCmp(c history.Compare) (clientv3.Cmp, error) {
	var cmp clientv3.Cmp
	switch c.Target {
	case "mod":
		cmp = clientv3.Compare(clientv3.ModRevision(c.Key), c.Result, c.Int)
	case "create":
		cmp = clientv3.Compare(clientv3.CreateRevision(c.Key), c.Result, c.Int)
	case "version":
		cmp = clientv3.Compare(clientv3.Version(c.Key), c.Result, c.Int)
	case "value":
		cmp = clientv3.Compare(clientv3.Value(c.Key), c.Result, c.Value)
	case "lease":
		cmp = clientv3.Compare(clientv3.LeaseValue(c.Key), c.Result, c.Int)
	default:
		return cmp, fmt.Errorf("etcd target: unknown compare target %q", c.Target)
	}
	if c.End != "" {
		cmp = cmp.WithRange(c.End)
	}
	return cmp, nil
}

// fromResponseOp converts one txn branch response. Branch responses may
// carry no header of their own: the txn's header holds the revision.
func fromResponseOp(r *pb.ResponseOp) history.Response {
	var out history.Response
	if g := r.GetResponseRange(); g != nil {
		out.Revision = g.GetHeader().GetRevision()
		out.KVs, out.Count, out.More = fromKVs(g.Kvs), g.Count, g.More
	}
	if p := r.GetResponsePut(); p != nil {
		out.Revision = p.GetHeader().GetRevision()
		if p.PrevKv != nil {
			out.PrevKVs = []history.KV{fromKV(p.PrevKv)}
		}
	}
	if d := r.GetResponseDeleteRange(); d != nil {
		out.Revision = d.GetHeader().GetRevision()
		out.Deleted, out.PrevKVs = d.Deleted, fromKVs(d.PrevKvs)
	}
	if t := r.GetResponseTxn(); t != nil {
		out.Revision, out.Succeeded = t.GetHeader().GetRevision(), t.Succeeded
		for _, in := range t.Responses {
			out.Responses = append(out.Responses, fromResponseOp(in))
		}
	}
	return out
}

func fromOpResponse(r clientv3.OpResponse) *history.Response {
	out := &history.Response{}
	switch {
	case r.Get() != nil:
		g := r.Get()
		out.Revision, out.MemberID, out.RaftTerm = g.Header.Revision, g.Header.MemberId, g.Header.RaftTerm
		out.KVs, out.Count, out.More = fromKVs(g.Kvs), g.Count, g.More
	case r.Put() != nil:
		p := r.Put()
		out.Revision, out.MemberID, out.RaftTerm = p.Header.Revision, p.Header.MemberId, p.Header.RaftTerm
		if p.PrevKv != nil {
			out.PrevKVs = []history.KV{fromKV(p.PrevKv)}
		}
	case r.Del() != nil:
		d := r.Del()
		out.Revision, out.MemberID, out.RaftTerm = d.Header.Revision, d.Header.MemberId, d.Header.RaftTerm
		out.Deleted, out.PrevKVs = d.Deleted, fromKVs(d.PrevKvs)
	}
	return out
}

func fromKVs(kvs []*mvccpb.KeyValue) []history.KV {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]history.KV, len(kvs))
	for i, kv := range kvs {
		out[i] = fromKV(kv)
	}
	return out
}

func fromKV(kv *mvccpb.KeyValue) history.KV {
	return history.KV{Key: string(kv.Key), Value: string(kv.Value), CreateRevision: kv.CreateRevision,
		ModRevision: kv.ModRevision, Version: kv.Version}
}

// classify marks the errors whose outcome is definite.
func classify(err error) error {
	switch {
	case errors.Is(err, rpctypes.ErrCompacted) || strings.Contains(err.Error(), rpctypes.ErrCompacted.Error()):
		return &targets.OpError{Code: history.ErrCompacted, Err: err}
	case errors.Is(err, rpctypes.ErrFutureRev) || strings.Contains(err.Error(), rpctypes.ErrFutureRev.Error()):
		return &targets.OpError{Code: history.ErrFutureRevision, Err: err}
	case Refusal(err):
		return &targets.OpError{Code: history.ErrRefused, Err: err}
	case errors.Is(err, rpctypes.ErrKeyNotFound) || strings.Contains(err.Error(), rpctypes.ErrKeyNotFound.Error()):
		return &targets.OpError{Code: history.ErrKeyNotFound, Err: err}
	case errors.Is(err, rpctypes.ErrLeaseNotFound) || strings.Contains(err.Error(), rpctypes.ErrLeaseNotFound.Error()):
		return &targets.OpError{Code: history.ErrLeaseNotFound, Err: err}
	case grpcCode(err) == codes.InvalidArgument:
		// Refused before it reached the store (a key written twice in a
		// txn, too many operations, a value given with ignore_value):
		// nothing was applied. A refusal in words was taken above.
		return &targets.OpError{Code: history.ErrInvalid, Err: err}
	}
	return &targets.OpError{Code: history.ErrUnknown, Err: err}
}

// grpcCode is err's gRPC code, also where clientv3 turned the status into
// an rpctypes.EtcdError.
func grpcCode(err error) codes.Code {
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return ee.Code()
	}
	return status.Code(err)
}

// Refusal says whether err is the server declining a request as not
// implemented: gRPC Unimplemented, or a message saying so.
func Refusal(err error) bool {
	if err == nil {
		return false
	}
	st := status.Convert(err)
	// In another code than Unimplemented, kine says "lease revoke is not
	// supported" (Unknown) and "unsupported operations in txn request"
	// (InvalidArgument).
	return st.Code() == codes.Unimplemented || history.SaysRefused(st.Message())
}
