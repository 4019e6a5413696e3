package etcd

import (
	"context"
	"fmt"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// Lease makes one call of the Lease service. A keep-alive is one
// LeaseKeepAlive exchange (KeepAliveOnce), not clientv3's background
// keeper: the workload decides when to renew, and records each renewal.
func (c *Client) Lease(ctx context.Context, req targets.LeaseRequest) (targets.LeaseAnswer, error) {
	switch req.Kind {
	case history.CallLeaseGrant:
		var resp *clientv3.LeaseGrantResponse
		var err error
		if req.ID != 0 { // clientv3's Grant lets the server choose the id; the API takes one
			resp, err = c.grantWithID(ctx, req.TTL, req.ID)
		} else {
			resp, err = c.c.Grant(ctx, req.TTL)
		}
		if err != nil {
			return targets.LeaseAnswer{}, classify(err)
		}
		return targets.LeaseAnswer{ID: int64(resp.ID), TTL: resp.TTL, Revision: resp.Revision}, nil
	case history.CallLeaseKeepAlive:
		resp, err := c.c.KeepAliveOnce(ctx, clientv3.LeaseID(req.ID))
		if err != nil {
			return targets.LeaseAnswer{}, classify(err)
		}
		return targets.LeaseAnswer{ID: int64(resp.ID), TTL: resp.TTL, Revision: resp.Revision}, nil
	case history.CallLeaseRevoke:
		resp, err := c.c.Revoke(ctx, clientv3.LeaseID(req.ID))
		if err != nil {
			return targets.LeaseAnswer{}, classify(err)
		}
		return targets.LeaseAnswer{ID: req.ID, Revision: resp.Header.Revision}, nil
	case history.CallLeaseTimeToLive:
		var opts []clientv3.LeaseOption
		if req.Attached {
			opts = append(opts, clientv3.WithAttachedKeys())
		}
		resp, err := c.c.TimeToLive(ctx, clientv3.LeaseID(req.ID), opts...)
		if err != nil {
			return targets.LeaseAnswer{}, classify(err)
		}
		a := targets.LeaseAnswer{ID: int64(resp.ID), TTL: resp.TTL, Revision: resp.Revision}
		for _, k := range resp.Keys {
			a.Keys = append(a.Keys, string(k))
		}
		return a, nil
	}
	return targets.LeaseAnswer{}, fmt.Errorf("etcd target: %q is not a lease call", req.Kind)
}

// grantWithID grants a lease of the given id, through the raw gRPC
// client (clientv3's Grant has no option for it).
func (c *Client) grantWithID(ctx context.Context, ttl, id int64) (*clientv3.LeaseGrantResponse, error) {
	resp, err := pb.NewLeaseClient(c.c.ActiveConnection()).LeaseGrant(ctx, &pb.LeaseGrantRequest{TTL: ttl, ID: id})
	if err != nil {
		return nil, err
	}
	return &clientv3.LeaseGrantResponse{ResponseHeader: resp.Header, ID: clientv3.LeaseID(resp.ID), TTL: resp.TTL, Error: resp.Error}, nil
}
