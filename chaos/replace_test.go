package chaos

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// member-replace takes a member out of the membership while it holds and
// brings it back under its name with a new ID; the cluster ends with three
// healthy members.
func TestMemberReplace(t *testing.T) {
	g := NewWithT(t)
	c, env, _ := testCluster{members: 3}.start(t)
	env.Membership = c
	ctx := context.Background()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints()[:2], DialTimeout: time.Second, Logger: zap.NewNop()})
	g.Expect(err).NotTo(HaveOccurred())
	defer cli.Close()
	ids := func() map[string]uint64 {
		lctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		resp, err := cli.MemberList(lctx)
		g.Expect(err).NotTo(HaveOccurred())
		out := map[string]uint64{}
		for _, m := range resp.Members {
			out[m.Name] = m.ID
		}
		return out
	}
	before := ids()

	inj, _ := Lookup("member-replace")
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second) // as the schedule gives it
	in, err := inj.Inject(ictx, env, 2)
	cancel()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(in.Targets).To(Equal([]string{"m2"}))
	g.Expect(ids()).To(HaveLen(2))
	g.Expect(ids()).NotTo(HaveKey("m2"))
	g.Expect(c.PID("m2")).To(BeZero())

	g.Expect(in.Heal(ctx)).To(Succeed())
	after := ids()
	g.Expect(after).To(HaveLen(3))
	g.Expect(after["m2"]).NotTo(Or(BeZero(), Equal(before["m2"])), "m2 has a new ID")
	g.Expect(after["m0"]).To(Equal(before["m0"]))
	g.Expect(after["m1"]).To(Equal(before["m1"]))
	allServe(g, c)
}
