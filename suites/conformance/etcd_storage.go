package conformance

import (
	. "github.com/onsi/gomega"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/checkers/linearizable"
	"github.com/vigil-suite/vigil/checkers/watch"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The Kubernetes storage layer writes in three transaction forms: a create
// (mod_revision = 0, then put), an update and a delete (mod_revision = R,
// then put or delete, else get). Servers built for Kubernetes (kine)
// implement these and refuse the rest of the API, so these probes hold
// them to etcd's semantics with requests they serve.

// create is the storage layer's create of key: it expects success and
// returns the revision.
func (p *P) create(name, value string) int64 {
	r, err := p.C.Txn(p.Ctx).If(clientv3.Compare(clientv3.ModRevision(p.K(name)), "=", 0)).
		Then(clientv3.OpPut(p.K(name), value)).Commit()
	p.Expect(err).NotTo(HaveOccurred(), "create %s", name)
	p.Expect(r.Succeeded).To(BeTrue(), "create %s", name)
	return r.Header.Revision
}

// guarded is the storage layer's update (value set) or delete (op nil)
// of key at mod revision mod.
func (p *P) guarded(name string, mod int64, op clientv3.Op) *clientv3.TxnResponse {
	r, err := p.C.Txn(p.Ctx).If(clientv3.Compare(clientv3.ModRevision(p.K(name)), "=", mod)).
		Then(op).Else(clientv3.OpGet(p.K(name))).Commit()
	p.Expect(err).NotTo(HaveOccurred(), "guarded write of %s", name)
	return r
}

func storageProbes() []EtcdProbe {
	return []EtcdProbe{
		{Info{"revision/guarded-delete-nothing", "a guarded delete of a missing key (mod_revision = 0, then delete) takes a revision",
			[]string{kv.NameRevisionMonotonic, linearizable.Name}}, func(p *P) {
			p.Put("a", "1")
			r := p.guarded("nope", 0, clientv3.OpDelete(p.K("nope")))
			p.Expect(r.Succeeded).To(BeTrue(), "mod_revision of a missing key is 0")
			p.Expect(r.Header.Revision).To(Equal(p.Rev(1)), "nothing was deleted")
			p.Expect(r.Responses[0].GetResponseDeleteRange().Deleted).To(BeZero())
			p.Expect(p.Put("b", "1")).To(Equal(p.Rev(2)))
		}},
		{Info{"watch/guarded-delete-nothing", "a guarded delete of a missing key sends a DELETE event",
			[]string{watch.NameReliable, watch.NamePrevKV}}, func(p *P) {
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, nil)
			p.guarded("nope", 0, clientv3.OpDelete(p.K("nope")))
			p.Put("b", "1")
			evs, _ := s.Events(1)
			p.Expect(p.KeysOf(evs[:1])).To(Equal([]string{"b"}))
			p.Expect(evs[0].Kv.ModRevision).To(Equal(p.Rev(1)))
		}},
		{Info{"watch/filter-noput-storage", "a watch with the NoPut filter receives the PUT events of transaction creates and updates",
			[]string{watch.NameFilter}}, func(p *P) {
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, func(r *pb.WatchCreateRequest) {
				r.Filters = []pb.WatchCreateRequest_FilterType{pb.WatchCreateRequest_NOPUT}
			})
			created := p.create("a", "1")
			updated := p.guarded("a", created, clientv3.OpPut(p.K("a"), "2")).Header.Revision
			p.Expect(p.guarded("a", updated, clientv3.OpDelete(p.K("a"))).Succeeded).To(BeTrue())
			evs, _ := s.Events(1)
			p.Expect(evs[0].Type).To(Equal(mvccpb.DELETE))
			p.Expect(evs[0].Kv.ModRevision).To(Equal(p.Rev(3)))
		}},
		{Info{"watch/filter-nodelete-storage", "a watch with the NoDelete filter receives the DELETE events of transaction deletes",
			[]string{watch.NameFilter}}, func(p *P) {
			s := p.Stream()
			defer s.Close()
			watchPrefix(p, s, func(r *pb.WatchCreateRequest) {
				r.Filters = []pb.WatchCreateRequest_FilterType{pb.WatchCreateRequest_NODELETE}
			})
			created := p.create("a", "1")
			p.Expect(p.guarded("a", created, clientv3.OpDelete(p.K("a"))).Succeeded).To(BeTrue())
			p.create("a", "2")
			evs, _ := s.Events(2)
			p.Expect([]mvccpb.Event_EventType{evs[0].Type, evs[1].Type}).To(Equal([]mvccpb.Event_EventType{mvccpb.PUT, mvccpb.PUT}))
			p.Expect(evs[1].Kv.ModRevision).To(Equal(p.Rev(3)))
		}},
		{Info{"revision/create-header", "a transaction create's response carries another revision than the one the key was stored at",
			[]string{kv.NameRevisionMonotonic, watch.NameReliable}}, func(p *P) {
			rev := p.create("a", "1")
			p.Expect(rev).To(Equal(p.Rev(1)))
			p.Expect(p.Get("a").Kvs[0].ModRevision).To(Equal(rev))
		}},
	}
}
