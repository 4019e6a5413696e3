package conformance

import (
	"strings"

	. "github.com/onsi/gomega"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/checkers/linearizable"
	"github.com/vigil-suite/vigil/checkers/watch"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
)

func kvProbes() []EtcdProbe {
	return []EtcdProbe{
		{Info{"kv/put-header-revision", "a put's response header does not carry the revision the put created", []string{kv.NameRevisionMonotonic}}, func(p *P) {
			p.Expect(p.Put("a", "1")).To(Equal(p.Rev(1)))
		}},
		{Info{"kv/range-header-revision", "a range's response header does not carry the store's current revision", []string{kv.NameRevisionMonotonic}}, func(p *P) {
			p.Put("a", "1")
			p.Put("b", "2")
			p.Expect(p.Get("a").Header.Revision).To(Equal(p.Rev(2)))
		}},
		{Info{"kv/range-old-revision-header", "a range at an old revision reports that old revision in its header instead of the store's current revision", []string{kv.NameRevisionMonotonic, linearizable.Name}}, func(p *P) {
			r1 := p.Put("a", "1")
			p.Put("a", "2")
			r := p.Get("a", clientv3.WithRev(r1))
			p.Expect(r.Header.Revision).To(Equal(p.Rev(2)), "the header names the store's revision, not the one read")
		}},
		{Info{"kv/range-old-revision-value", "a range at an old revision does not return the value the key had at that revision", []string{linearizable.Name}}, func(p *P) {
			r1 := p.Put("a", "1")
			p.Put("a", "2")
			r := p.Get("a", clientv3.WithRev(r1))
			p.Expect(r.Kvs).To(HaveLen(1))
			p.Expect(string(r.Kvs[0].Value)).To(Equal("1"))
			p.Expect(r.Kvs[0].ModRevision).To(Equal(r1))
		}},
		{Info{"kv/range-old-revision-before-create", "a range at a revision before a key was created returns the key", []string{linearizable.Name}}, func(p *P) {
			p.Put("x", "0")
			p.Put("a", "1")
			r := p.Get("a", clientv3.WithRev(p.Rev(1)))
			p.Expect(r.Kvs).To(BeEmpty())
			p.Expect(r.Count).To(BeZero())
		}},
		{Info{"kv/range-missing-key", "a range of a missing key returns something or a wrong header", []string{linearizable.Name}}, func(p *P) {
			p.Put("a", "1")
			r := p.Get("nope")
			p.Expect(r.Kvs).To(BeEmpty())
			p.Expect(r.Count).To(BeZero())
			p.Expect(r.More).To(BeFalse())
			p.Expect(r.Header.Revision).To(Equal(p.Rev(1)))
		}},
		{Info{"kv/range-limit-more-count", "a range with a limit does not report more=true and the full count", nil}, func(p *P) {
			for _, k := range []string{"a", "b", "c", "d", "e"} {
				p.Put(k, k)
			}
			r := p.Get("", clientv3.WithPrefix(), clientv3.WithLimit(2))
			p.Expect(p.Keys(r.Kvs)).To(Equal([]string{"a", "b"}))
			p.Expect(r.More).To(BeTrue())
			p.Expect(r.Count).To(Equal(int64(5)))
		}},
		{Info{"kv/range-limit-equal-count", "a range whose limit equals the number of keys reports more=true", nil}, func(p *P) {
			for _, k := range []string{"a", "b", "c"} {
				p.Put(k, k)
			}
			r := p.Get("", clientv3.WithPrefix(), clientv3.WithLimit(3))
			p.Expect(r.Kvs).To(HaveLen(3))
			p.Expect(r.More).To(BeFalse())
			p.Expect(r.Count).To(Equal(int64(3)))
		}},
		{Info{"kv/range-count-only", "a count-only range returns key-values or a wrong count", nil}, func(p *P) {
			for _, k := range []string{"a", "b", "c", "d"} {
				p.Put(k, k)
			}
			r := p.Get("", clientv3.WithPrefix(), clientv3.WithCountOnly())
			p.Expect(r.Kvs).To(BeEmpty())
			p.Expect(r.Count).To(Equal(int64(4)))
		}},
		{Info{"kv/range-keys-only", "a keys-only range returns values, or drops the keys' metadata", nil}, func(p *P) {
			rev := p.Put("a", "value")
			r := p.Get("a", clientv3.WithKeysOnly())
			p.Expect(r.Kvs).To(HaveLen(1))
			p.Expect(r.Kvs[0].Value).To(BeEmpty())
			p.Expect(r.Kvs[0].ModRevision).To(Equal(rev))
			p.Expect(r.Kvs[0].Version).To(Equal(int64(1)))
		}},
		{Info{"kv/range-prefix", "a prefix range returns keys outside the prefix or misses keys inside it", nil}, func(p *P) {
			p.Put("a", "1")
			p.Put("ab", "2")
			p.Put("abc", "3")
			p.Put("b", "4")
			r := p.Get("a", clientv3.WithPrefix())
			p.Expect(p.Keys(r.Kvs)).To(Equal([]string{"a", "ab", "abc"}))
		}},
		{Info{"kv/range-end-exclusive", "a range includes its range end", nil}, func(p *P) {
			for _, k := range []string{"a", "b", "c"} {
				p.Put(k, k)
			}
			r := p.Get("a", clientv3.WithRange(p.K("c")))
			p.Expect(p.Keys(r.Kvs)).To(Equal([]string{"a", "b"}))
		}},
		{Info{"kv/range-from-key", `a range to "\x00" (from a key on) does not return the keys from that key on, in order`, nil}, func(p *P) {
			for _, k := range []string{"a", "b", "c", "d"} {
				p.Put(k, k)
			}
			r := p.Get("b", clientv3.WithFromKey(), clientv3.WithLimit(3))
			p.Expect(p.Keys(r.Kvs)).To(Equal([]string{"b", "c", "d"}))
		}},
		{Info{"kv/range-sort-key-descend", "a range sorted by key, descending, is not in descending key order", nil}, func(p *P) {
			for _, k := range []string{"b", "a", "c"} {
				p.Put(k, k)
			}
			r := p.Get("", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend))
			p.Expect(p.Keys(r.Kvs)).To(Equal([]string{"c", "b", "a"}))
		}},
		{Info{"kv/range-sort-mod-revision", "a range sorted by mod revision is not in mod revision order", nil}, func(p *P) {
			for _, k := range []string{"c", "a", "b"} {
				p.Put(k, k)
			}
			r := p.Get("", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByModRevision, clientv3.SortAscend))
			p.Expect(p.Keys(r.Kvs)).To(Equal([]string{"c", "a", "b"}))
		}},
		{Info{"kv/range-sort-create-revision-descend", "a range sorted by create revision, descending, is not in that order", nil}, func(p *P) {
			for _, k := range []string{"c", "a", "b"} {
				p.Put(k, k)
			}
			p.Put("c", "again")
			r := p.Get("", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortDescend))
			p.Expect(p.Keys(r.Kvs)).To(Equal([]string{"b", "a", "c"}))
		}},
		{Info{"kv/range-sort-version", "a range sorted by version is not in version order", nil}, func(p *P) {
			p.Put("a", "1")
			p.Put("a", "2")
			p.Put("a", "3")
			p.Put("b", "1")
			p.Put("c", "1")
			p.Put("c", "2")
			r := p.Get("", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByVersion, clientv3.SortAscend))
			p.Expect(p.Keys(r.Kvs)).To(Equal([]string{"b", "c", "a"}))
		}},
		{Info{"kv/range-sort-value", "a range sorted by value is not in value order", nil}, func(p *P) {
			p.Put("a", "z")
			p.Put("b", "x")
			p.Put("c", "y")
			r := p.Get("", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByValue, clientv3.SortAscend))
			p.Expect(p.Keys(r.Kvs)).To(Equal([]string{"b", "c", "a"}))
		}},
		{Info{"kv/range-sort-with-limit", "a sorted range with a limit does not return the first keys of the whole sorted result", nil}, func(p *P) {
			for _, k := range []string{"a", "b", "c", "d"} {
				p.Put(k, k)
			}
			r := p.Get("", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend), clientv3.WithLimit(2))
			p.Expect(p.Keys(r.Kvs)).To(Equal([]string{"d", "c"}))
			p.Expect(r.More).To(BeTrue())
		}},
		{Info{"kv/range-min-mod-revision", "a range with a minimum mod revision returns keys modified before it", nil}, func(p *P) {
			p.Put("a", "1")
			p.Put("b", "1")
			r2 := p.Put("c", "1")
			r := p.Get("", clientv3.WithPrefix(), clientv3.WithMinModRev(r2-1))
			p.Expect(p.Keys(r.Kvs)).To(Equal([]string{"b", "c"}))
		}},
		{Info{"kv/range-max-mod-revision", "a range with a maximum mod revision returns keys modified after it", nil}, func(p *P) {
			r1 := p.Put("a", "1")
			p.Put("b", "1")
			p.Put("c", "1")
			r := p.Get("", clientv3.WithPrefix(), clientv3.WithMaxModRev(r1+1))
			p.Expect(p.Keys(r.Kvs)).To(Equal([]string{"a", "b"}))
		}},
		{Info{"kv/range-min-create-revision", "a range with a minimum create revision returns keys created before it", nil}, func(p *P) {
			p.Put("a", "1")
			r2 := p.Put("b", "1")
			p.Put("a", "2")
			r := p.Get("", clientv3.WithPrefix(), clientv3.WithMinCreateRev(r2))
			p.Expect(p.Keys(r.Kvs)).To(Equal([]string{"b"}))
		}},
		{Info{"kv/range-max-create-revision", "a range with a maximum create revision returns keys created after it", nil}, func(p *P) {
			r1 := p.Put("a", "1")
			p.Put("b", "1")
			p.Put("a", "2")
			r := p.Get("", clientv3.WithPrefix(), clientv3.WithMaxCreateRev(r1))
			p.Expect(p.Keys(r.Kvs)).To(Equal([]string{"a"}))
		}},
		{Info{"kv/range-serializable", "a serializable range on an idle single server does not return the latest value", nil}, func(p *P) {
			rev := p.Put("a", "1")
			r := p.Get("a", clientv3.WithSerializable())
			p.Expect(r.Kvs).To(HaveLen(1))
			p.Expect(r.Kvs[0].ModRevision).To(Equal(rev))
		}},
		{Info{"kv/put-prev-kv", "a put with prev_kv does not return the key's previous value", nil}, func(p *P) {
			r1 := p.Put("a", "old")
			r, err := p.C.Put(p.Ctx, p.K("a"), "new", clientv3.WithPrevKV())
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.PrevKv).NotTo(BeNil())
			p.Expect(string(r.PrevKv.Value)).To(Equal("old"))
			p.Expect(r.PrevKv.ModRevision).To(Equal(r1))
		}},
		{Info{"kv/put-prev-kv-new-key", "a put with prev_kv on a new key returns a previous value", nil}, func(p *P) {
			r, err := p.C.Put(p.Ctx, p.K("a"), "new", clientv3.WithPrevKV())
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.PrevKv).To(BeNil())
		}},
		{Info{"kv/put-ignore-value", "a put with ignore_value changes the value, or does not count as a write", nil}, func(p *P) {
			p.Put("a", "keep")
			rev := p.Put("a", "", clientv3.WithIgnoreValue())
			r := p.Get("a")
			p.Expect(string(r.Kvs[0].Value)).To(Equal("keep"))
			p.Expect(r.Kvs[0].Version).To(Equal(int64(2)))
			p.Expect(r.Kvs[0].ModRevision).To(Equal(rev))
		}},
		{Info{"kv/put-ignore-value-missing-key", "a put with ignore_value on a missing key succeeds", nil}, func(p *P) {
			_, err := p.C.Put(p.Ctx, p.K("a"), "", clientv3.WithIgnoreValue())
			p.ExpectCode(err, codes.InvalidArgument, "key not found")
		}},
		{Info{"kv/put-ignore-lease", "a put with ignore_lease drops the key's lease", nil}, func(p *P) {
			l, err := p.C.Grant(p.Ctx, 60)
			p.Expect(err).NotTo(HaveOccurred())
			defer p.C.Revoke(p.Ctx, l.ID)
			p.Put("a", "1", clientv3.WithLease(l.ID))
			p.Put("a", "2", clientv3.WithIgnoreLease())
			r := p.Get("a")
			p.Expect(clientv3.LeaseID(r.Kvs[0].Lease)).To(Equal(l.ID))
			p.Expect(string(r.Kvs[0].Value)).To(Equal("2"))
		}},
		{Info{"kv/delete-prev-kv", "a delete with prev_kv does not return the deleted key-value", nil}, func(p *P) {
			p.Put("a", "gone")
			r, err := p.C.Delete(p.Ctx, p.K("a"), clientv3.WithPrevKV())
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Deleted).To(Equal(int64(1)))
			p.Expect(r.PrevKvs).To(HaveLen(1))
			p.Expect(string(r.PrevKvs[0].Value)).To(Equal("gone"))
		}},
		{Info{"kv/delete-missing-key", "a delete of a missing key reports a deletion or a new revision", []string{kv.NameRevisionMonotonic}}, func(p *P) {
			p.Put("a", "1")
			r, err := p.C.Delete(p.Ctx, p.K("nope"))
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Deleted).To(BeZero())
			p.Expect(r.Header.Revision).To(Equal(p.Rev(1)))
		}},
		{Info{"kv/delete-range", "a range delete does not delete every key of the range", nil}, func(p *P) {
			for _, k := range []string{"a1", "a2", "a3", "b"} {
				p.Put(k, k)
			}
			r, err := p.C.Delete(p.Ctx, p.K("a"), clientv3.WithPrefix())
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Deleted).To(Equal(int64(3)))
			p.Expect(p.Keys(p.Get("", clientv3.WithPrefix()).Kvs)).To(Equal([]string{"b"}))
		}},
		{Info{"kv/empty-key-put", "a put with an empty key is accepted", nil}, func(p *P) {
			_, err := p.C.Put(p.Ctx, "", "v")
			p.ExpectCode(err, codes.InvalidArgument, "key is not provided")
		}},
		{Info{"kv/empty-key-range", "a range with an empty key is accepted", nil}, func(p *P) {
			_, err := p.C.Get(p.Ctx, "")
			p.ExpectCode(err, codes.InvalidArgument, "key is not provided")
		}},
		{Info{"kv/future-revision-range", "a range at a future revision returns data instead of failing with ErrFutureRev", []string{kv.NameCompaction}}, func(p *P) {
			p.Put("a", "1")
			_, err := p.C.Get(p.Ctx, p.K("a"), clientv3.WithRev(p.Rev(100)))
			p.ExpectCode(err, codes.OutOfRange, "future revision")
		}},
		{Info{"kv/oversized-request", "a request over the server's size limit (1.5 MiB by default) is accepted", nil}, func(p *P) {
			_, err := p.C.Put(p.Ctx, p.K("big"), strings.Repeat("x", 1700*1024))
			p.Expect(err).To(HaveOccurred(), "a 1.7 MiB put must be refused")
			p.Expect(Code(err)).To(Or(ContainSubstring("request is too large"), ContainSubstring("ResourceExhausted")))
		}},
		{Info{"kv/value-binary-roundtrip", "a value with arbitrary bytes does not come back byte for byte", nil}, func(p *P) {
			b := make([]byte, 256)
			for i := range b {
				b[i] = byte(i)
			}
			p.Put("bin", string(b))
			p.Expect(p.Get("bin").Kvs[0].Value).To(Equal(b))
		}},
		{Info{"kv/version-counts-writes", "a key's version does not count its writes since creation", []string{watch.NameIsCreate}}, func(p *P) {
			r1 := p.Put("a", "1")
			p.Put("a", "2")
			p.Put("a", "3")
			kv := p.Get("a").Kvs[0]
			p.Expect(kv.Version).To(Equal(int64(3)))
			p.Expect(kv.CreateRevision).To(Equal(r1))
		}},
		{Info{"kv/version-reset-after-delete", "a key re-created after a delete keeps its old version or create revision", []string{watch.NameIsCreate}}, func(p *P) {
			p.Put("a", "1")
			p.Put("a", "2")
			_, err := p.C.Delete(p.Ctx, p.K("a"))
			p.Expect(err).NotTo(HaveOccurred())
			r := p.Put("a", "3")
			kv := p.Get("a").Kvs[0]
			p.Expect(kv.Version).To(Equal(int64(1)))
			p.Expect(kv.CreateRevision).To(Equal(r))
		}},
	}
}
