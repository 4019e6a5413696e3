package chaos

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/history"
)

func TestParseFailpointNames(t *testing.T) {
	g := NewWithT(t)
	for name, want := range map[string]struct {
		point string
		aim   aim
		term  string
	}{
		"failpoint:raftBeforeSave@leader":                  {"raftBeforeSave", aimLeader, panicTerm},
		"failpoint:defragBeforeCopy":                       {"defragBeforeCopy", aimRandom, panicTerm},
		"failpoint:someOtherPoint@follower":                {"someOtherPoint", aimFollower, panicTerm},
		"failpoint-sleep:beforeCommit@leader=250ms":        {"beforeCommit", aimLeader, "sleep(250)"},
		"failpoint-sleep:raftBeforeSave=2s":                {"raftBeforeSave", aimRandom, "sleep(2000)"},
		"failpoint-sleep:raftBeforeLeaderSend":             {"raftBeforeLeaderSend", aimLeader, "sleep(100)"},
		"failpoint-sleep:beforeApplyOneEntryNormal@random": {"beforeApplyOneEntryNormal", aimRandom, "sleep(100)"},
	} {
		inj, ok := Lookup(name)
		g.Expect(ok).To(BeTrue(), name)
		f := inj.(failpointFault)
		g.Expect(f.Name()).To(Equal(name))
		g.Expect(f.point.name).To(Equal(want.point), name)
		g.Expect(f.point.aim).To(Equal(want.aim), name)
		g.Expect(f.term()).To(Equal(want.term), name)
	}
	for _, bad := range []string{"failpoint:", "failpoint:x@nowhere", "failpoint:x=1s", "failpoint-sleep:x=fast",
		"failpoint-sleep:x=0s", "failpoint:a b", "failpointx:y"} {
		_, ok := Lookup(bad)
		g.Expect(ok).To(BeFalse(), bad)
	}
	g.Expect(ParseList("defrag-leader, failpoint:defragBeforeRename@follower")).To(HaveLen(2))
}

func TestDefragFaultDefragmentsTheAimedMember(t *testing.T) {
	g := NewWithT(t)
	c, env, cli := testCluster{members: 3}.start(t)
	ctx := context.Background()
	var asked []string
	env.DoOn = func(ctx context.Context, member string, req history.Request) (*history.Response, error) {
		g.Expect(req.Kind).To(Equal(history.OpDefrag))
		asked = append(asked, member)
		for _, m := range c.Members() {
			if m.Name == member {
				if _, err := cli.Defragment(ctx, m.ClientURL); err != nil {
					return nil, err
				}
				return &history.Response{}, nil
			}
		}
		return nil, os.ErrNotExist
	}
	leader, err := c.Leader(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	inj, ok := Lookup("defrag-leader")
	g.Expect(ok).To(BeTrue())
	in, err := inj.Inject(ctx, env, 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(in.Targets).To(Equal([]string{leader.Name}))
	g.Expect(asked).To(Equal([]string{leader.Name}))
	g.Expect(in.Details).NotTo(HaveKey("error"))
	g.Expect(in.Details).To(HaveKey("took"))
	g.Expect(in.Heal(ctx)).To(Succeed())

	follower, _ := Lookup("defrag-follower")
	in, err = follower.Inject(ctx, env, 1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(in.Targets[0]).NotTo(Equal(leader.Name))
	allServe(g, c)

	env.DoOn = nil
	_, err = inj.Inject(ctx, env, 0)
	g.Expect(err).To(MatchError(ContainSubstring("needs a client on each member")))
}

// A panic armed at defragBeforeCopy fires because the fault defragments
// the armed member itself; the aim in the name picks a follower.
func TestDefragFailpointCrashesTheAimedMember(t *testing.T) {
	g := NewWithT(t)
	c, env, cli := testCluster{members: 3, failpoints: true}.start(t)
	ctx := context.Background()
	env.DoOn = func(ctx context.Context, member string, req history.Request) (*history.Response, error) {
		for _, m := range c.Members() {
			if m.Name == member {
				_, err := cli.Defragment(ctx, m.ClientURL)
				return &history.Response{}, err
			}
		}
		return nil, os.ErrNotExist
	}
	leader, err := c.Leader(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	inj, ok := Lookup("failpoint:defragBeforeCopy@follower")
	g.Expect(ok).To(BeTrue())
	in, err := inj.Inject(ctx, env, 0)
	g.Expect(err).NotTo(HaveOccurred())
	target := in.Targets[0]
	g.Expect(target).NotTo(Equal(leader.Name))
	g.Eventually(func() int { return c.PID(target) }, 10*time.Second, 50*time.Millisecond).Should(BeZero(), "the follower did not crash in its defragmentation")
	g.Expect(in.Heal(ctx)).To(Succeed())
	g.Expect(in.Details).To(HaveKeyWithValue("fired", "true"))
	g.Expect(in.Details).To(HaveKeyWithValue("term", panicTerm))
	allServe(g, c)

	sleep, _ := Lookup("failpoint-sleep:raftBeforeSave@leader=300ms")
	in, err = sleep.Inject(ctx, env, 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(in.Targets).To(Equal([]string{leader.Name}))
	g.Expect(in.Details).To(HaveKeyWithValue("term", "sleep(300)"))
	start := time.Now()
	put(g, cli, "slow")
	g.Expect(time.Since(start)).To(BeNumerically(">=", 250*time.Millisecond), "the leader's raft loop did not sleep")
	g.Expect(in.Heal(ctx)).To(Succeed())
	allServe(g, c)
}
