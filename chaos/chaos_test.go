package chaos

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/history"
)

func TestPlanIsSeededAndFair(t *testing.T) {
	g := NewWithT(t)
	faults := []string{"kill-leader", "pause-follower", "compact-storm"}
	a := Plan(7, faults, 5*time.Second, 60*time.Second)
	b := Plan(7, faults, 5*time.Second, 60*time.Second)
	c := Plan(8, faults, 5*time.Second, 60*time.Second)
	g.Expect(a).To(Equal(b), "same seed, same schedule")
	g.Expect(reflect.DeepEqual(a.Steps, c.Steps)).To(BeFalse(), "another seed, another schedule")
	g.Expect(len(a.Steps)).To(BeNumerically(">=", 6))
	// Every fault comes up once before any comes up twice, in every round.
	for round := 0; round+len(faults) <= len(a.Steps); round += len(faults) {
		seen := map[string]bool{}
		for _, st := range a.Steps[round : round+len(faults)] {
			seen[st.Fault] = true
		}
		g.Expect(seen).To(HaveLen(len(faults)), "round at step %d", round)
	}
	for i, st := range a.Steps {
		g.Expect(st.At+st.Hold).To(BeNumerically("<=", 60*time.Second-healMargin), "step %d heals too late", i)
		if i > 0 {
			g.Expect(st.At).To(BeNumerically(">", a.Steps[i-1].At+a.Steps[i-1].Hold), "step %d overlaps the one before", i)
		}
	}
}

// TestScheduleRestarts: a dead process may come back only through a kill
// or restart of its layer that heals after its death.
func TestScheduleRestarts(t *testing.T) {
	g := NewWithT(t)
	s := Schedule{Steps: []Step{
		{At: 2 * time.Second, Hold: time.Second, Fault: "kill-leader"},
		{At: 5 * time.Second, Hold: time.Second, Fault: "pause-follower"},
		{At: 8 * time.Second, Hold: time.Second, Fault: "restart-apiserver"},
		{At: 11 * time.Second, Hold: time.Second, Fault: "kill-database"},
		{At: 14 * time.Second, Hold: time.Second, Fault: "failpoint:beforeCommit"},
	}}
	g.Expect(s.Restarts(history.RoleMember, time.Second)).To(BeTrue(), "kill-leader heals at 3s")
	g.Expect(s.Restarts(history.RoleMember, 2500*time.Millisecond)).To(BeTrue(), "kill-leader is still to heal")
	g.Expect(s.Restarts(history.RoleMember, 3*time.Second)).To(BeFalse(), "a pause and a failpoint start nothing")
	g.Expect(s.Restarts(history.RoleAPIServer, 4*time.Second)).To(BeTrue())
	g.Expect(s.Restarts(history.RoleAPIServer, 10*time.Second)).To(BeFalse())
	g.Expect(s.Restarts(history.RoleDatabase, 10*time.Second)).To(BeTrue())
	g.Expect(Schedule{}.Restarts(history.RoleMember, 0)).To(BeFalse())
	g.Expect(s.Restarts("", 0)).To(BeFalse(), "a process of no known role")
	g.Expect(Schedule{Steps: []Step{{At: time.Second, Fault: "member-replace"}}}.Restarts(history.RoleMember, 0)).To(BeTrue())
}

func TestScheduleFileRoundTrip(t *testing.T) {
	g := NewWithT(t)
	path := filepath.Join(t.TempDir(), ScheduleFile)
	s := Plan(3, []string{"kill-random", "restart-follower"}, 4*time.Second, 30*time.Second)
	g.Expect(s.Save(path)).To(Succeed())
	got, err := LoadSchedule(path)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(s))

	os.WriteFile(path, []byte(`{"steps":[{"at_ns":1,"fault":"explode-everything","hold_ns":1}]}`), 0o644)
	_, err = LoadSchedule(path)
	g.Expect(err).To(MatchError(ContainSubstring(`unknown fault "explode-everything"`)))
	os.WriteFile(path, []byte(`not json`), 0o644)
	_, err = LoadSchedule(path)
	g.Expect(err).To(MatchError(ContainSubstring("is not a vigil schedule")))
}

func TestParseList(t *testing.T) {
	g := NewWithT(t)
	names, err := ParseList("kill-leader, pause-random")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(names).To(Equal([]string{"kill-leader", "pause-random"}))
	_, err = ParseList("kill-leader,nuke")
	g.Expect(err).To(MatchError(ContainSubstring(`unknown fault "nuke"`)))
}

// answers reports whether a member serves a linearizable read within 1 s.
func answers(endpoint string) bool {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		return false
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = cli.Get(ctx, "probe")
	return err == nil
}

func endpointOf(c *etcdproc.Cluster, name string) string {
	for _, m := range c.Members() {
		if m.Name == name {
			return m.ClientURL
		}
	}
	return ""
}

// After kill-leader the old leader's process is gone and another member
// leads; healing brings it back.
func TestKillLeaderElectsAnother(t *testing.T) {
	g := NewWithT(t)
	c, env, _ := testCluster{members: 3}.start(t)
	ctx := context.Background()
	old, err := c.Leader(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	inj, _ := Lookup("kill-leader")
	in, err := inj.Inject(ctx, env, 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(in.Targets).To(Equal([]string{old.Name}))
	g.Expect(c.PID(old.Name)).To(BeZero(), "killed member still has a process")
	g.Eventually(func() string {
		m, err := c.Leader(ctx)
		if err != nil {
			return ""
		}
		return m.Name
	}, 15*time.Second, 200*time.Millisecond).ShouldNot(Or(BeEmpty(), Equal(old.Name)))
	g.Expect(in.Heal(ctx)).To(Succeed())
	g.Expect(c.PID(old.Name)).NotTo(BeZero())
	g.Eventually(func() bool { return answers(old.ClientURL) }, 15*time.Second, 200*time.Millisecond).Should(BeTrue())
}

// During pause-follower that member answers nothing while the others do;
// after healing it answers again.
func TestPauseFollowerStopsAnswering(t *testing.T) {
	g := NewWithT(t)
	c, env, _ := testCluster{members: 3}.start(t)
	ctx := context.Background()
	inj, _ := Lookup("pause-follower")
	in, err := inj.Inject(ctx, env, 1)
	g.Expect(err).NotTo(HaveOccurred())
	paused := in.Targets[0]
	leader, err := c.Leader(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(leader.Name).NotTo(Equal(paused))
	g.Expect(c.PID(paused)).NotTo(BeZero(), "a paused member keeps its process")
	g.Expect(answers(endpointOf(c, paused))).To(BeFalse(), "a paused member must not answer")
	g.Expect(answers(leader.ClientURL)).To(BeTrue(), "the others go on")
	g.Expect(in.Heal(ctx)).To(Succeed())
	g.Eventually(func() bool { return answers(endpointOf(c, paused)) }, 15*time.Second, 200*time.Millisecond).Should(BeTrue())
}

// A schedule runs its steps, records each fault with start and end, and
// leaves every member up.
func TestRunRecordsFaults(t *testing.T) {
	g := NewWithT(t)
	c, env, cli := testCluster{members: 3}.start(t)
	for i := 0; i < 20; i++ {
		_, err := cli.Put(context.Background(), "k", strings.Repeat("v", i))
		g.Expect(err).NotTo(HaveOccurred())
	}
	s := Schedule{Steps: []Step{
		{At: 0, Fault: "restart-random", Hold: 500 * time.Millisecond, Pick: 2},
		{At: 2 * time.Second, Fault: "compact-storm", Hold: 700 * time.Millisecond},
		{At: 3 * time.Second, Fault: "kill-follower", Hold: 500 * time.Millisecond},
	}}
	var edges []bool // the workload is told each fault's start and heal, in order
	env.Edge = func(healed bool) { edges = append(edges, healed) }
	Run(context.Background(), env, s, t.Logf)
	g.Expect(edges).To(Equal([]bool{false, true, false, true, false, true}))
	faults := env.Rec.History().Faults
	g.Expect(faults).To(HaveLen(3))
	for i, f := range faults {
		g.Expect(f.Name).To(Equal(s.Steps[i].Fault))
		g.Expect(f.Details).NotTo(HaveKey("error"))
		g.Expect(f.End).To(BeNumerically(">=", f.Start+s.Steps[i].Hold))
	}
	g.Expect(faults[0].Targets).To(Equal([]string{"m2"}), "pick 2 of the random aim is member m2")
	g.Expect(faults[1].Details["compactions"]).NotTo(Or(BeEmpty(), Equal("0")))
	for _, m := range c.Members() {
		g.Expect(c.PID(m.Name)).NotTo(BeZero(), "member %s left down", m.Name)
	}
}
