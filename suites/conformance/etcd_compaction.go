package conformance

import (
	. "github.com/onsi/gomega"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/checkers/linearizable"
	"github.com/vigil-suite/vigil/checkers/watch"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
)

// compacted writes a twice and b once (Rev 1..3) and compacts at Rev(2).
func compacted(p *P) {
	p.Put("a", "1")
	p.Put("a", "2")
	p.Put("b", "1")
	_, err := p.C.Compact(p.Ctx, p.Rev(2))
	p.Expect(err).NotTo(HaveOccurred())
}

func compactionProbes() []EtcdProbe {
	return []EtcdProbe{
		{Info{"compaction/read-below", "a range below the compact revision returns data instead of failing with ErrCompacted", []string{kv.NameCompaction}}, func(p *P) {
			compacted(p)
			_, err := p.C.Get(p.Ctx, p.K("a"), clientv3.WithRev(p.Rev(1)))
			p.ExpectCode(err, codes.OutOfRange, "compacted")
		}},
		{Info{"compaction/read-at", "a range at the compact revision fails, though that revision is kept", []string{kv.NameCompaction}}, func(p *P) {
			compacted(p)
			r := p.Get("a", clientv3.WithRev(p.Rev(2)))
			p.Expect(string(r.Kvs[0].Value)).To(Equal("2"))
		}},
		{Info{"compaction/read-above", "a range above the compact revision does not return that revision's state", []string{kv.NameCompaction, linearizable.Name}}, func(p *P) {
			compacted(p)
			r := p.Get("", clientv3.WithPrefix(), clientv3.WithRev(p.Rev(3)))
			p.Expect(p.Keys(r.Kvs)).To(Equal([]string{"a", "b"}))
		}},
		{Info{"compaction/keeps-latest", "a compaction above every write loses the keys' current values", []string{linearizable.Name}}, func(p *P) {
			compacted(p)
			_, err := p.C.Compact(p.Ctx, p.Rev(3))
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(p.Get("", clientv3.WithPrefix()).Kvs).To(HaveLen(2))
		}},
		{Info{"compaction/future", "a compaction at a future revision is accepted", []string{kv.NameCompaction}}, func(p *P) {
			p.Put("a", "1")
			_, err := p.C.Compact(p.Ctx, p.Rev(50))
			p.ExpectCode(err, codes.OutOfRange, "future revision")
		}},
		{Info{"compaction/twice", "compacting twice at the same revision is accepted", []string{kv.NameCompaction}}, func(p *P) {
			compacted(p)
			_, err := p.C.Compact(p.Ctx, p.Rev(2))
			p.ExpectCode(err, codes.OutOfRange, "compacted")
		}},
		{Info{"compaction/lower", "a compaction below the compact revision is accepted", []string{kv.NameCompaction}}, func(p *P) {
			compacted(p)
			_, err := p.C.Compact(p.Ctx, p.Rev(1))
			p.ExpectCode(err, codes.OutOfRange, "compacted")
		}},
		{Info{"compaction/header", "a compaction's header does not carry the store's revision", []string{kv.NameRevisionMonotonic}}, func(p *P) {
			p.Put("a", "1")
			p.Put("a", "2")
			r, err := p.C.Compact(p.Ctx, p.Rev(1))
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Header.Revision).To(Equal(p.Rev(2)))
		}},
		{Info{"compaction/no-revision", "a compaction takes a revision of its own", []string{kv.NameRevisionMonotonic}}, func(p *P) {
			p.Put("a", "1")
			_, err := p.C.Compact(p.Ctx, p.Rev(1))
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(p.Put("b", "1")).To(Equal(p.Rev(2)))
		}},
		{Info{"compaction/watch-below", "a watch started below the compact revision is not canceled with the compact revision", []string{watch.NameResumable}}, func(p *P) {
			compacted(p)
			s := p.Stream()
			defer s.Close()
			s.Create(&pb.WatchCreateRequest{Key: []byte(p.K("a")), StartRevision: p.Rev(1)})
			r := s.Recv()
			p.Expect(r.Canceled).To(BeTrue(), "the server must cancel the watch")
			p.Expect(r.CompactRevision).To(Equal(p.Rev(2)))
			p.Expect(r.Events).To(BeEmpty())
		}},
		{Info{"compaction/watch-at", "a watch started at the compact revision does not deliver that revision's change", []string{watch.NameResumable}}, func(p *P) {
			compacted(p)
			s := p.Stream()
			defer s.Close()
			s.Create(&pb.WatchCreateRequest{Key: []byte(p.K("a")), StartRevision: p.Rev(2)})
			evs, _ := s.Events(1)
			p.Expect(evs[0].Kv.ModRevision).To(Equal(p.Rev(2)))
			p.Expect(string(evs[0].Kv.Value)).To(Equal("2"))
		}},
	}
}
