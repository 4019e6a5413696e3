package conformance

import (
	. "github.com/onsi/gomega"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/checkers/watch"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
)

// grant grants a lease the probe revokes when it ends.
func grant(p *P, ttl int64) clientv3.LeaseID {
	l, err := p.C.Grant(p.Ctx, ttl)
	p.Expect(err).NotTo(HaveOccurred(), "lease grant")
	p.Expect(l.ID).NotTo(BeZero())
	return l.ID
}

func leaseProbes() []EtcdProbe {
	return []EtcdProbe{
		{Info{"lease/grant", "a lease grant does not return an id and the TTL asked for", nil}, func(p *P) {
			l, err := p.C.Grant(p.Ctx, 30)
			p.Expect(err).NotTo(HaveOccurred())
			defer p.C.Revoke(p.Ctx, l.ID)
			p.Expect(l.ID).NotTo(BeZero())
			p.Expect(l.TTL).To(Equal(int64(30)))
		}},
		{Info{"lease/grant-no-revision", "a lease grant takes a store revision", []string{kv.NameRevisionMonotonic}}, func(p *P) {
			p.Put("a", "1")
			id := grant(p, 30)
			defer p.C.Revoke(p.Ctx, id)
			p.Expect(p.Put("b", "1")).To(Equal(p.Rev(2)))
		}},
		{Info{"lease/time-to-live-keys", "a lease's time-to-live does not list the keys attached to it", nil}, func(p *P) {
			id := grant(p, 30)
			defer p.C.Revoke(p.Ctx, id)
			p.Put("a", "1", clientv3.WithLease(id))
			p.Put("b", "1", clientv3.WithLease(id))
			r, err := p.C.TimeToLive(p.Ctx, id, clientv3.WithAttachedKeys())
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.GrantedTTL).To(Equal(int64(30)))
			p.Expect(r.TTL).To(And(BeNumerically(">", 0), BeNumerically("<=", 30)))
			keys := []string{}
			for _, k := range r.Keys {
				keys = append(keys, string(k)[len(p.Prefix):])
			}
			p.Expect(keys).To(ConsistOf("a", "b"))
		}},
		{Info{"lease/keepalive-once", "a lease keep-alive does not renew the lease's TTL", nil}, func(p *P) {
			id := grant(p, 30)
			defer p.C.Revoke(p.Ctx, id)
			r, err := p.C.KeepAliveOnce(p.Ctx, id)
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.ID).To(Equal(id))
			p.Expect(r.TTL).To(Equal(int64(30)))
		}},
		{Info{"lease/revoke-deletes-keys", "revoking a lease does not delete every attached key in one revision", []string{kv.NameRevisionMonotonic, watch.NameAtomic}}, func(p *P) {
			id := grant(p, 30)
			p.Put("a", "1", clientv3.WithLease(id))
			p.Put("b", "1", clientv3.WithLease(id))
			r, err := p.C.Revoke(p.Ctx, id)
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Header.Revision).To(Equal(p.Rev(3)))
			p.Expect(p.Get("", clientv3.WithPrefix()).Kvs).To(BeEmpty())
		}},
		{Info{"lease/revoke-delete-events", "revoking a lease does not send a DELETE event per attached key, in one watch response", []string{watch.NameReliable, watch.NameAtomic}}, func(p *P) {
			id := grant(p, 30)
			p.Put("a", "1", clientv3.WithLease(id))
			p.Put("b", "1", clientv3.WithLease(id))
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, nil)
			_, err := p.C.Revoke(p.Ctx, id)
			p.Expect(err).NotTo(HaveOccurred())
			r := s.Recv()
			p.Expect(r.Events).To(HaveLen(2))
			for _, e := range r.Events {
				p.Expect(e.Type).To(Equal(mvccpb.DELETE))
				p.Expect(e.Kv.ModRevision).To(Equal(p.Rev(3)))
			}
		}},
		{Info{"lease/put-revoked-lease", "a put with a revoked lease is accepted", nil}, func(p *P) {
			id := grant(p, 30)
			_, err := p.C.Revoke(p.Ctx, id)
			p.Expect(err).NotTo(HaveOccurred())
			_, err = p.C.Put(p.Ctx, p.K("a"), "1", clientv3.WithLease(id))
			p.ExpectCode(err, codes.NotFound, "lease not found")
		}},
		{Info{"lease/revoke-unknown", "revoking a lease that does not exist succeeds", nil}, func(p *P) {
			id := grant(p, 30)
			_, err := p.C.Revoke(p.Ctx, id)
			p.Expect(err).NotTo(HaveOccurred())
			_, err = p.C.Revoke(p.Ctx, id)
			p.ExpectCode(err, codes.NotFound, "lease not found")
		}},
		{Info{"lease/list", "the lease list does not include a granted lease", nil}, func(p *P) {
			id := grant(p, 30)
			defer p.C.Revoke(p.Ctx, id)
			r, err := p.C.Leases(p.Ctx)
			p.Expect(err).NotTo(HaveOccurred())
			var ids []clientv3.LeaseID
			for _, l := range r.Leases {
				ids = append(ids, l.ID)
			}
			p.Expect(ids).To(ContainElement(id))
		}},
		{Info{"lease/attach-moves-key", "putting a key with another lease leaves it attached to the old one", nil}, func(p *P) {
			a, b := grant(p, 30), grant(p, 30)
			defer p.C.Revoke(p.Ctx, b)
			p.Put("k", "1", clientv3.WithLease(a))
			p.Put("k", "2", clientv3.WithLease(b))
			_, err := p.C.Revoke(p.Ctx, a)
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(p.Get("k").Kvs).To(HaveLen(1), "revoking the old lease must not delete the key")
		}},
	}
}

// EtcdProbes lists every etcd probe, by area.
func EtcdProbes() []EtcdProbe {
	var all []EtcdProbe
	for _, area := range [][]EtcdProbe{kvProbes(), revisionProbes(), txnProbes(), storageProbes(), compactionProbes(), watchProbes(), leaseProbes()} {
		all = append(all, area...)
	}
	return all
}
