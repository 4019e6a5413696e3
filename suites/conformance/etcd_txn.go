package conformance

import (
	"fmt"

	. "github.com/onsi/gomega"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/checkers/linearizable"
	"github.com/vigil-suite/vigil/checkers/watch"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
)

// txnCase is a compare that must come out as want on key "a" holding
// value "5" at version 2, created at Rev(1), modified at Rev(2).
type txnCase struct {
	name, what string
	cmp        func(p *P) clientv3.Cmp
	want       bool
}

func txnCompareCases() []txnCase {
	v := func(op string, val string) func(p *P) clientv3.Cmp {
		return func(p *P) clientv3.Cmp { return clientv3.Compare(clientv3.Value(p.K("a")), op, val) }
	}
	ver := func(op string, n int64) func(p *P) clientv3.Cmp {
		return func(p *P) clientv3.Cmp { return clientv3.Compare(clientv3.Version(p.K("a")), op, n) }
	}
	cre := func(op string, n int64) func(p *P) clientv3.Cmp {
		return func(p *P) clientv3.Cmp { return clientv3.Compare(clientv3.CreateRevision(p.K("a")), op, p.Rev(n)) }
	}
	mod := func(op string, n int64) func(p *P) clientv3.Cmp {
		return func(p *P) clientv3.Cmp { return clientv3.Compare(clientv3.ModRevision(p.K("a")), op, p.Rev(n)) }
	}
	return []txnCase{
		{"value-equal", "value = the key's value", v("=", "5"), true},
		{"value-not-equal", "value != the key's value", v("!=", "5"), false},
		{"value-greater", `value > "4"`, v(">", "4"), true},
		{"value-less", `value < "4"`, v("<", "4"), false},
		{"version-equal", "version = 2", ver("=", 2), true},
		{"version-greater", "version > 2", ver(">", 2), false},
		{"version-less", "version < 3", ver("<", 3), true},
		{"version-not-equal", "version != 1", ver("!=", 1), true},
		{"create-revision-equal", "create_revision = the key's", cre("=", 1), true},
		{"create-revision-less", "create_revision < the key's", cre("<", 1), false},
		{"mod-revision-equal", "mod_revision = the key's", mod("=", 2), true},
		{"mod-revision-greater", "mod_revision > the previous revision", mod(">", 1), true},
		{"mod-revision-stale", "mod_revision = a stale revision", mod("=", 1), false},
	}
}

func txnProbes() []EtcdProbe {
	var out []EtcdProbe
	for _, tc := range txnCompareCases() {
		tc := tc
		out = append(out, EtcdProbe{Info{"txn/compare-" + tc.name,
			fmt.Sprintf("a txn comparing %s takes the %s branch", tc.what, map[bool]string{true: "else", false: "then"}[tc.want]),
			[]string{linearizable.Name}}, func(p *P) {
			p.Put("a", "4")
			p.Put("a", "5")
			r, err := p.C.Txn(p.Ctx).If(tc.cmp(p)).Then(clientv3.OpGet(p.K("a"))).Commit()
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Succeeded).To(Equal(tc.want))
		}})
	}
	return append(out, []EtcdProbe{
		{Info{"txn/compare-lease", "a txn comparing a key's lease does not match the key's lease", nil}, func(p *P) {
			l, err := p.C.Grant(p.Ctx, 60)
			p.Expect(err).NotTo(HaveOccurred())
			defer p.C.Revoke(p.Ctx, l.ID)
			p.Put("a", "1", clientv3.WithLease(l.ID))
			r, err := p.C.Txn(p.Ctx).If(clientv3.Compare(clientv3.LeaseValue(p.K("a")), "=", l.ID)).Commit()
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Succeeded).To(BeTrue())
		}},
		{Info{"txn/compare-missing-key-version", "a txn comparing version = 0 on a missing key fails", []string{linearizable.Name}}, func(p *P) {
			r, err := p.C.Txn(p.Ctx).If(clientv3.Compare(clientv3.Version(p.K("nope")), "=", 0)).Commit()
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Succeeded).To(BeTrue())
		}},
		{Info{"txn/compare-missing-key-create", "a txn comparing create_revision = 0 on a missing key fails (the create-if-absent idiom breaks)", []string{linearizable.Name}}, func(p *P) {
			r, err := p.C.Txn(p.Ctx).If(clientv3.Compare(clientv3.CreateRevision(p.K("nope")), "=", 0)).
				Then(clientv3.OpPut(p.K("nope"), "created")).Commit()
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Succeeded).To(BeTrue())
			p.Expect(string(p.Get("nope").Kvs[0].Value)).To(Equal("created"))
		}},
		{Info{"txn/compare-missing-key-value", "a txn comparing the value of a missing key succeeds", nil}, func(p *P) {
			r, err := p.C.Txn(p.Ctx).If(clientv3.Compare(clientv3.Value(p.K("nope")), "=", "")).Commit()
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Succeeded).To(BeFalse())
		}},
		{Info{"txn/compare-range", "a txn compare over a key range does not require every key of the range to match", nil}, func(p *P) {
			p.Put("r1", "x")
			p.Put("r2", "x")
			p.Put("r3", "y")
			all := clientv3.Compare(clientv3.Value(p.K("r")), "=", "x").WithPrefix()
			r, err := p.C.Txn(p.Ctx).If(all).Commit()
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Succeeded).To(BeFalse(), "r3 does not hold x")
		}},
		{Info{"txn/else-branch", "a txn whose compare fails does not run its else branch", []string{linearizable.Name}}, func(p *P) {
			p.Put("a", "1")
			r, err := p.C.Txn(p.Ctx).If(clientv3.Compare(clientv3.Value(p.K("a")), "=", "2")).
				Then(clientv3.OpPut(p.K("then"), "t")).Else(clientv3.OpPut(p.K("else"), "e")).Commit()
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Succeeded).To(BeFalse())
			p.Expect(p.Get("then").Kvs).To(BeEmpty())
			p.Expect(p.Get("else").Kvs).To(HaveLen(1))
		}},
		{Info{"txn/range-sees-own-writes", "a range inside a txn does not see the txn's own earlier writes", []string{linearizable.Name}}, func(p *P) {
			p.Put("a", "old")
			r, err := p.C.Txn(p.Ctx).Then(clientv3.OpPut(p.K("a"), "new"), clientv3.OpGet(p.K("a"))).Commit()
			p.Expect(err).NotTo(HaveOccurred())
			kvs := r.Responses[1].GetResponseRange().Kvs
			p.Expect(kvs).To(HaveLen(1))
			p.Expect(string(kvs[0].Value)).To(Equal("new"))
		}},
		{Info{"txn/responses-in-order", "a txn's responses do not follow its operations one for one", nil}, func(p *P) {
			p.Put("d", "x")
			r, err := p.C.Txn(p.Ctx).Then(clientv3.OpPut(p.K("a"), "1"), clientv3.OpGet(p.K("a")), clientv3.OpDelete(p.K("d"))).Commit()
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Responses).To(HaveLen(3))
			p.Expect(r.Responses[0].GetResponsePut()).NotTo(BeNil())
			p.Expect(r.Responses[1].GetResponseRange()).NotTo(BeNil())
			p.Expect(r.Responses[2].GetResponseDeleteRange().Deleted).To(Equal(int64(1)))
		}},
		{Info{"txn/nested", "a txn nested in a txn is not run, or not answered", nil}, func(p *P) {
			inner := clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.Version(p.K("a")), "=", 0)},
				[]clientv3.Op{clientv3.OpPut(p.K("a"), "inner")}, nil)
			r, err := p.C.Txn(p.Ctx).Then(inner).Commit()
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Responses[0].GetResponseTxn().Succeeded).To(BeTrue())
			p.Expect(string(p.Get("a").Kvs[0].Value)).To(Equal("inner"))
		}},
		{Info{"txn/duplicate-key", "a txn that puts the same key twice is accepted", nil}, func(p *P) {
			_, err := p.C.Txn(p.Ctx).Then(clientv3.OpPut(p.K("a"), "1"), clientv3.OpPut(p.K("a"), "2")).Commit()
			p.ExpectCode(err, codes.InvalidArgument, "duplicate key")
		}},
		{Info{"txn/too-many-operations", "a txn with more operations than the server's limit (128 by default) is accepted", nil}, func(p *P) {
			ops := make([]clientv3.Op, 129)
			for i := range ops {
				ops[i] = clientv3.OpPut(p.K(fmt.Sprintf("k%03d", i)), "v")
			}
			_, err := p.C.Txn(p.Ctx).Then(ops...).Commit()
			p.ExpectCode(err, codes.InvalidArgument, "too many operations")
		}},
		{Info{"txn/header-revision", "a writing txn's header does not carry the revision it created", []string{kv.NameRevisionMonotonic}}, func(p *P) {
			r, err := p.C.Txn(p.Ctx).Then(clientv3.OpPut(p.K("a"), "1")).Commit()
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Header.Revision).To(Equal(p.Rev(1)))
		}},
	}...)
}

func revisionProbes() []EtcdProbe {
	return []EtcdProbe{
		{Info{"revision/put-increments-by-one", "successive puts do not get successive revisions", []string{kv.NameRevisionMonotonic}}, func(p *P) {
			p.Expect([]int64{p.Put("a", "1"), p.Put("b", "1"), p.Put("a", "2")}).To(Equal([]int64{p.Rev(1), p.Rev(2), p.Rev(3)}))
		}},
		{Info{"revision/txn-one-revision", "a txn of several writes takes more than one revision", []string{kv.NameRevisionMonotonic, watch.NameAtomic}}, func(p *P) {
			r, err := p.C.Txn(p.Ctx).Then(clientv3.OpPut(p.K("a"), "1"), clientv3.OpPut(p.K("b"), "1"), clientv3.OpPut(p.K("c"), "1")).Commit()
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Header.Revision).To(Equal(p.Rev(1)))
			for _, kv := range p.Get("", clientv3.WithPrefix()).Kvs {
				p.Expect(kv.ModRevision).To(Equal(p.Rev(1)), "key %s", kv.Key)
			}
		}},
		{Info{"revision/failed-txn-no-revision", "a txn whose compare fails still takes a revision", []string{kv.NameRevisionMonotonic}}, func(p *P) {
			p.Put("a", "1")
			r, err := p.C.Txn(p.Ctx).If(clientv3.Compare(clientv3.Value(p.K("a")), "=", "2")).Then(clientv3.OpPut(p.K("a"), "3")).Commit()
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Succeeded).To(BeFalse())
			p.Expect(r.Header.Revision).To(Equal(p.Rev(1)))
			p.Expect(p.Put("b", "1")).To(Equal(p.Rev(2)))
		}},
		{Info{"revision/read-only-txn-no-revision", "a txn that only reads takes a revision", []string{kv.NameRevisionMonotonic}}, func(p *P) {
			p.Put("a", "1")
			_, err := p.C.Txn(p.Ctx).Then(clientv3.OpGet(p.K("a"))).Commit()
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(p.Put("b", "1")).To(Equal(p.Rev(2)))
		}},
		{Info{"revision/delete-nothing-no-revision", "a delete of a missing key takes a revision", []string{kv.NameRevisionMonotonic}}, func(p *P) {
			p.Put("a", "1")
			_, err := p.C.Delete(p.Ctx, p.K("nope"))
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(p.Put("b", "1")).To(Equal(p.Rev(2)))
		}},
		{Info{"revision/delete-range-one-revision", "a range delete of several keys takes more than one revision", []string{kv.NameRevisionMonotonic, watch.NameAtomic}}, func(p *P) {
			p.Put("a1", "1")
			p.Put("a2", "1")
			r, err := p.C.Delete(p.Ctx, p.K("a"), clientv3.WithPrefix())
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(r.Header.Revision).To(Equal(p.Rev(3)))
			p.Expect(p.Put("b", "1")).To(Equal(p.Rev(4)))
		}},
		{Info{"revision/create-revision-after-recreate", "a re-created key keeps the create revision of its first life", []string{watch.NameIsCreate}}, func(p *P) {
			p.Put("a", "1")
			_, err := p.C.Delete(p.Ctx, p.K("a"))
			p.Expect(err).NotTo(HaveOccurred())
			p.Put("a", "2")
			p.Expect(p.Get("a").Kvs[0].CreateRevision).To(Equal(p.Rev(3)))
		}},
		{Info{"revision/old-revision-after-delete", "a range at a revision before a delete does not return the deleted key", []string{linearizable.Name}}, func(p *P) {
			r1 := p.Put("a", "1")
			_, err := p.C.Delete(p.Ctx, p.K("a"))
			p.Expect(err).NotTo(HaveOccurred())
			p.Expect(p.Get("a").Kvs).To(BeEmpty())
			p.Expect(string(p.Get("a", clientv3.WithRev(r1)).Kvs[0].Value)).To(Equal("1"))
		}},
	}
}
