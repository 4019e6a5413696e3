package etcd

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// Lease makes one call of the Lease service. A keep-alive is one
// LeaseKeepAlive exchange (KeepAliveOnce), not clientv3's background
// keeper: the workload decides when to renew, and records each renewal.
func (c *Client) Lease(ctx context.Context, kind history.CallKind, id, ttl int64) (targets.LeaseAnswer, error) {
	switch kind {
	case history.CallLeaseGrant:
		resp, err := c.c.Grant(ctx, ttl)
		if err != nil {
			return targets.LeaseAnswer{}, classify(err)
		}
		return targets.LeaseAnswer{ID: int64(resp.ID), TTL: resp.TTL, Revision: resp.Revision}, nil
	case history.CallLeaseKeepAlive:
		resp, err := c.c.KeepAliveOnce(ctx, clientv3.LeaseID(id))
		if err != nil {
			return targets.LeaseAnswer{}, classify(err)
		}
		return targets.LeaseAnswer{ID: int64(resp.ID), TTL: resp.TTL, Revision: resp.Revision}, nil
	case history.CallLeaseRevoke:
		resp, err := c.c.Revoke(ctx, clientv3.LeaseID(id))
		if err != nil {
			return targets.LeaseAnswer{}, classify(err)
		}
		return targets.LeaseAnswer{ID: id, Revision: resp.Header.Revision}, nil
	}
	return targets.LeaseAnswer{}, fmt.Errorf("etcd target: %q is not a lease call", kind)
}
