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
		resp, err := c.lease().LeaseGrant(ctx, &pb.LeaseGrantRequest{TTL: req.TTL, ID: req.ID})
		if err != nil {
			return targets.LeaseAnswer{}, classify(err)
		}
		if resp.Error != "" {
			return targets.LeaseAnswer{}, classify(fmt.Errorf("%s", resp.Error))
		}
		return targets.LeaseAnswer{ID: resp.ID, TTL: resp.TTL, Revision: resp.Header.GetRevision()}, nil
	case history.CallLeaseKeepAlive:
		resp, err := c.c.KeepAliveOnce(ctx, clientv3.LeaseID(req.ID))
		if err != nil {
			return targets.LeaseAnswer{}, classify(err)
		}
		return targets.LeaseAnswer{ID: int64(resp.ID), TTL: resp.TTL, Revision: resp.Revision}, nil
	case history.CallLeaseRevoke:
		resp, err := c.lease().LeaseRevoke(ctx, &pb.LeaseRevokeRequest{ID: req.ID})
		if err != nil {
			return targets.LeaseAnswer{}, classify(err)
		}
		return targets.LeaseAnswer{ID: req.ID, Revision: resp.Header.GetRevision()}, nil
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

// lease is the Lease service without clientv3's lessor: the lessor sends
// grants and revokes as repeatable, and so sends them again when the
// connection breaks after the server took them. A revoke the server
// applied then comes back "lease not found" from its second sending, and
// a grant grants twice. One call recorded must be one request sent: on
// the bare connection a write is sent again only when it never left
// (the client's policy for puts and txns).
func (c *Client) lease() pb.LeaseClient {
	return pb.NewLeaseClient(c.c.ActiveConnection())
}
