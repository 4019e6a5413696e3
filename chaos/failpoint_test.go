package chaos

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/vigil-suite/vigil/fixtures"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
)

// fakeFailpoints offers a fixed list of failpoints and nothing else.
type fakeFailpoints []string

func (f fakeFailpoints) FailpointNames() []string    { return f }
func (fakeFailpoints) FailpointAddr(string) string   { return "" }
func (fakeFailpoints) Exited(string) <-chan struct{} { return nil }

func TestFailpointNeeds(t *testing.T) {
	g := NewWithT(t)
	inj, ok := Lookup("failpoint:beforeCommit")
	g.Expect(ok).To(BeTrue())
	g.Expect(inj.Needs().Failpoint).To(Equal("beforeCommit"))
	g.Expect(Needs{Failpoint: "beforeCommit"}.Unmet(&Env{})).To(MatchError("needs a failpoint build: vigil run --failpoints"))
	g.Expect(Needs{Failpoints: true}.Unmet(&Env{Failpoints: fakeFailpoints(nil)})).To(MatchError(ContainSubstring("vigil run --failpoints")))
	g.Expect(Needs{Failpoint: "raftBeforeAdvance"}.Unmet(&Env{Failpoints: fakeFailpoints{"beforeCommit"}})).
		To(MatchError(ContainSubstring("raftBeforeAdvance, which this etcd build does not have")))
	g.Expect(Needs{Membership: true}.Unmet(&Env{})).To(MatchError(ContainSubstring("remove and add members")))

	s := Schedule{Steps: []Step{{Fault: "kill-leader"}}}
	g.Expect(s.NeedsFailpoints()).To(BeFalse())
	s.Steps = append(s.Steps, Step{Fault: "failpoint-random"})
	g.Expect(s.NeedsFailpoints()).To(BeTrue())
	for _, name := range []string{"failpoint:raftBeforeSave", "failpoint:raftAfterSave", "failpoint:beforeApplyOneEntryNormal",
		"failpoint:compactBeforeCommitScheduledCompact", "failpoint-sleep:raftBeforeSave", "failpoint-random", "member-replace"} {
		_, ok := Lookup(name)
		g.Expect(ok).To(BeTrue(), name)
	}
}

// onlyFailpoints narrows the failpoints a fixture offers, to steer
// failpoint-random.
type onlyFailpoints struct {
	Failpoints
	names []string
}

func (o onlyFailpoints) FailpointNames() []string { return o.names }

// put writes k until a write succeeds: a member may be down, or on its
// way down, when it is sent.
func put(g Gomega, cli *clientv3.Client, v string) {
	g.Eventually(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := cli.Put(ctx, "k", v)
		return err
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed(), "no write went through")
}

// allServe waits until every member serves a linearizable read and a
// leader is known.
func allServe(g Gomega, c *etcdproc.Cluster) {
	for _, m := range c.Members() {
		g.Eventually(func() bool { return answers(m.ClientURL) }, 20*time.Second, 200*time.Millisecond).Should(BeTrue(), "member %s", m.Name)
	}
	_, err := c.Leader(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
}

// A panic armed at beforeCommit takes its member down at the next write;
// healing finds it fired and restarts the member. A leader panic at
// raftBeforeLeaderSend needs no write at all; a compaction failpoint is
// reached through the compaction the fault sends itself. A sleep slows its
// member without taking it down.
func TestFailpointPanicCrashesAndHeals(t *testing.T) {
	g := NewWithT(t)
	c, env, cli := testCluster{members: 3, failpoints: true}.start(t)
	ctx := context.Background()
	var mu sync.Mutex
	var exits []fixtures.Exit
	c.WatchExits(func(x fixtures.Exit) { mu.Lock(); exits = append(exits, x); mu.Unlock() })

	inj, _ := Lookup("failpoint:beforeCommit")
	in, err := inj.Inject(ctx, env, 1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(in.Targets).To(Equal([]string{"m1"}), "pick 1 of the random aim is m1")
	exited := c.Exited("m1")
	put(g, cli, "v")
	g.Eventually(exited, 10*time.Second).Should(BeClosed(), "m1 did not crash at beforeCommit")
	g.Expect(c.PID("m1")).To(BeZero())
	g.Expect(in.Heal(ctx)).To(Succeed())
	g.Expect(in.Details).To(HaveKeyWithValue("fired", "true"))
	g.Expect(in.Details).To(HaveKeyWithValue("failpoint", "beforeCommit"))
	g.Expect(in.Details).To(HaveKey("exited_after"))
	g.Expect(c.PID("m1")).NotTo(BeZero(), "healing restarts the member")
	log, err := os.ReadFile(c.Members()[1].LogFile)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(log)).To(ContainSubstring(`failpoint panic: vigil`), "m1 crashed elsewhere")
	// The panic is reported as the fault's: expected, with the crash.
	mu.Lock()
	g.Expect(exits).To(HaveLen(1))
	x := exits[0]
	mu.Unlock()
	g.Expect(x.Process).To(Equal("m1"))
	g.Expect(x.Expected).To(ContainSubstring("failpoint beforeCommit armed to panic"))
	g.Expect(x.Crash).NotTo(BeNil())
	g.Expect(x.Crash.Message).To(Equal("panic: failpoint panic: vigil"))
	allServe(g, c)

	leader, err := c.Leader(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	random, _ := Lookup("failpoint-random")
	renv := *env
	renv.Failpoints = onlyFailpoints{c, []string{"raftBeforeLeaderSend"}}
	in, err = random.Inject(ctx, &renv, 7)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(in.Targets).To(Equal([]string{leader.Name}))
	g.Eventually(func() int { return c.PID(leader.Name) }, 10*time.Second, 50*time.Millisecond).Should(BeZero(), "the leader did not crash")
	g.Expect(in.Heal(ctx)).To(Succeed())
	g.Expect(in.Details).To(HaveKeyWithValue("fired", "true"))
	allServe(g, c)

	compact, _ := Lookup("failpoint:compactBeforeCommitScheduledCompact")
	in, err = compact.Inject(ctx, env, 2)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() int { return c.PID("m2") }, 10*time.Second, 50*time.Millisecond).Should(BeZero(), "no crash at compaction")
	g.Expect(in.Heal(ctx)).To(Succeed())
	g.Expect(in.Details).To(HaveKeyWithValue("fired", "true"))
	allServe(g, c)

	sleep, _ := Lookup("failpoint-sleep:raftBeforeSave")
	in, err = sleep.Inject(ctx, env, 0)
	g.Expect(err).NotTo(HaveOccurred())
	for i := 0; i < 3; i++ {
		put(g, cli, "w")
	}
	g.Expect(in.Heal(ctx)).To(Succeed())
	g.Expect(in.Details).To(HaveKeyWithValue("fired", "true"))
	g.Expect(in.Details).NotTo(HaveKey("exited"))
	g.Expect(in.Details["hits"]).NotTo(Or(BeEmpty(), Equal("0")))
	g.Expect(c.PID(in.Targets[0])).NotTo(BeZero(), "a sleep takes no member down")
	allServe(g, c)
	mu.Lock()
	defer mu.Unlock()
	for _, x := range exits {
		g.Expect(x.Expected).NotTo(BeEmpty(), "%s exited unexpected: %+v", x.Process, x.ServerExit)
	}
}

// A panic at a failpoint the member never reaches does not fire: healing
// disarms it, says so, and leaves the member running.
func TestFailpointThatNeverFires(t *testing.T) {
	g := NewWithT(t)
	c, env, _ := testCluster{members: 3, failpoints: true}.start(t)
	ctx := context.Background()
	inj := failpointFault{point: crashPoint{name: "defragBeforeCopy", aim: aimRandom}}
	g.Expect(slices.Contains(c.FailpointNames(), "defragBeforeCopy")).To(BeTrue())
	in, err := inj.Inject(ctx, env, 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(in.Heal(ctx)).To(Succeed())
	g.Expect(in.Details).To(HaveKeyWithValue("fired", "false"))
	g.Expect(c.PID(in.Targets[0])).NotTo(BeZero())
	// Disarmed: a defrag now passes there unharmed.
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpointOf(c, in.Targets[0])}, DialTimeout: time.Second, Logger: zap.NewNop()})
	g.Expect(err).NotTo(HaveOccurred())
	defer cli.Close()
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err = cli.Defragment(dctx, endpointOf(c, in.Targets[0]))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.PID(in.Targets[0])).NotTo(BeZero())
}
