package etcd

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// The adapter sends every field of the grammar and reads every answer
// back, against a real etcd: each case's answer is what etcd documents.
func TestEveryFieldReachesEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real etcd")
	}
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: binaries.DefaultEtcdVersion, Progress: os.Stderr})
	g.Expect(err).NotTo(HaveOccurred())
	cl := etcdproc.New(etcdproc.Config{Binary: bin, Members: 1, Dir: t.TempDir()})
	t.Cleanup(func() { cl.Stop() })
	g.Expect(cl.Start(ctx)).To(Succeed())
	c, err := Dial(cl.Endpoints()[0], 5*time.Second, fixtures.Security{})
	g.Expect(err).NotTo(HaveOccurred())
	defer c.Close()

	do := func(req history.Request) *history.Response {
		t.Helper()
		resp, err := c.Do(ctx, req)
		g.Expect(err).NotTo(HaveOccurred(), "%+v", req)
		return resp
	}
	fails := func(req history.Request, code history.ErrorCode) {
		t.Helper()
		_, err := c.Do(ctx, req)
		g.Expect(err).To(HaveOccurred(), "%+v", req)
		g.Expect(targets.CodeOf(err)).To(Equal(code), "%v", err)
	}
	put := func(k, v string) int64 { return do(history.Request{Kind: history.OpPut, Key: k, Value: v}).Revision }

	ra := put("a", "3")
	rb := put("b", "1")
	put("b", "2")
	rc := put("c", "2")

	// Sort by value descending; ties (b and c hold "2") in either order.
	r := do(history.Request{Kind: history.OpRange, Key: "a", End: "d", SortOrder: history.SortDescend, SortTarget: history.SortByValue})
	g.Expect(r.KVs).To(HaveLen(3))
	g.Expect(r.KVs[0].Key).To(Equal("a"))
	// Sort by version ascending with a limit: a and c (version 1), then b.
	r = do(history.Request{Kind: history.OpRange, Key: "a", End: "d", SortTarget: history.SortByVersion, Limit: 2})
	g.Expect(r.KVs).To(HaveLen(2))
	g.Expect(r.More).To(BeTrue())
	g.Expect(r.Count).To(Equal(int64(3)))
	// The revision filters: keys created at or after b's creation and
	// modified at or before c's put.
	r = do(history.Request{Kind: history.OpRange, Key: "a", End: "d", MinCreateRevision: rb, MaxModRevision: rc})
	g.Expect(r.KVs).To(HaveLen(2))
	g.Expect(r.KVs[0].Key).To(Equal("b"))
	g.Expect(r.Count).To(Equal(int64(3)), "count is before the filters")
	r = do(history.Request{Kind: history.OpRange, Key: "a", End: "d", MaxCreateRevision: ra, MinModRevision: ra})
	g.Expect(r.KVs).To(HaveLen(1))

	// Leases: a grant and a revoke as operations, a put attached, compares
	// on the lease, ignore_lease keeps it, time-to-live lists the key.
	gr := do(history.Request{Kind: history.OpLeaseGrant, TTL: 600})
	g.Expect(gr.Lease).NotTo(BeZero())
	g.Expect(gr.TTL).To(Equal(int64(600)))
	do(history.Request{Kind: history.OpPut, Key: "l", Value: "x", Lease: gr.Lease})
	r = do(history.Request{Kind: history.OpTxn, Compares: []history.Compare{{Key: "l", Target: history.CompareLease, Result: "=", Int: gr.Lease}}})
	g.Expect(r.Succeeded).To(BeTrue())
	do(history.Request{Kind: history.OpPut, Key: "l", Value: "y", IgnoreLease: true})
	a, err := c.Lease(ctx, targets.LeaseRequest{Kind: history.CallLeaseTimeToLive, ID: gr.Lease, Attached: true})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(a.Keys).To(Equal([]string{"l"}))
	// ignore_value keeps "y" and bumps the version (ignore_lease keeps the
	// lease: a put without it detaches the key from its lease).
	do(history.Request{Kind: history.OpPut, Key: "l", IgnoreValue: true, IgnoreLease: true})
	r = do(history.Request{Kind: history.OpRange, Key: "l"})
	g.Expect(r.KVs[0].Value).To(Equal("y"))
	g.Expect(r.KVs[0].Version).To(Equal(int64(3)))
	rv := do(history.Request{Kind: history.OpLeaseRevoke, Lease: gr.Lease})
	g.Expect(rv.Revision).To(Equal(r.Revision+1), "the revoke deleted l in one revision")
	g.Expect(do(history.Request{Kind: history.OpRange, Key: "l"}).KVs).To(BeEmpty())

	// The definite errors.
	fails(history.Request{Kind: history.OpPut, Key: "nokey", IgnoreValue: true}, history.ErrKeyNotFound)
	fails(history.Request{Kind: history.OpPut, Key: "l", Value: "z", Lease: gr.Lease}, history.ErrLeaseNotFound)
	fails(history.Request{Kind: history.OpTxn, Success: []history.Request{
		{Kind: history.OpPut, Key: "a", Value: "1"}, {Kind: history.OpPut, Key: "a", Value: "2"}}}, history.ErrInvalid)
	fails(history.Request{Kind: history.OpTxn, Success: []history.Request{
		{Kind: history.OpPut, Key: "a", Value: "1"}, {Kind: history.OpRange, Key: "a", Revision: rv.Revision + 10}}}, history.ErrFutureRevision)

	// A nested txn and a compare over a range: version > 0 holds for a..d.
	r = do(history.Request{Kind: history.OpTxn,
		Compares: []history.Compare{{Key: "a", End: "d", Target: history.CompareVersion, Result: ">", Int: 0}},
		Success: []history.Request{{Kind: history.OpTxn,
			Compares: []history.Compare{{Key: "b", Target: history.CompareValue, Result: "=", Value: "nope"}},
			Success:  []history.Request{{Kind: history.OpPut, Key: "x", Value: "1"}},
			Failure:  []history.Request{{Kind: history.OpPut, Key: "y", Value: "1"}, {Kind: history.OpRange, Key: "y"}}}}})
	g.Expect(r.Succeeded).To(BeTrue())
	g.Expect(r.Responses).To(HaveLen(1))
	g.Expect(r.Responses[0].Succeeded).To(BeFalse())
	g.Expect(r.Responses[0].Responses).To(HaveLen(2))
	g.Expect(r.Responses[0].Responses[1].KVs).To(HaveLen(1), "a read after a put in one txn sees it")
	var executed []string
	req := history.Request{Kind: history.OpTxn, Success: []history.Request{{Kind: history.OpTxn,
		Failure: []history.Request{{Kind: history.OpPut, Key: "y"}, {Kind: history.OpRange, Key: "y"}}}}}
	history.Executed(&req, &history.Response{Succeeded: true, Responses: r.Responses}, func(q *history.Request, _ *history.Response) {
		executed = append(executed, string(q.Kind)+" "+q.Key)
	})
	g.Expect(executed).To(Equal([]string{"put y", "range y"}))

	// A physical compaction, then a txn reading below it fails whole.
	head := do(history.Request{Kind: history.OpRange, Key: "a"}).Revision
	do(history.Request{Kind: history.OpCompact, Revision: head - 1, Physical: true})
	fails(history.Request{Kind: history.OpTxn, Success: []history.Request{
		{Kind: history.OpPut, Key: "z", Value: "1"}, {Kind: history.OpRange, Key: "a", Revision: head - 2}}}, history.ErrCompacted)
	g.Expect(do(history.Request{Kind: history.OpRange, Key: "z"}).KVs).To(BeEmpty(), "the failed txn wrote nothing")
}
