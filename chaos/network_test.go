package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/vigil-suite/vigil/fixtures"
)

// Clients and peers go through the proxies: every advertised URL is a front.
func TestProxiedClusterWorks(t *testing.T) {
	g := NewWithT(t)
	c, _, _ := testCluster{members: 3, proxied: true}.start(t)
	for _, m := range c.Members() {
		g.Expect(answers(m.ClientURL)).To(BeTrue(), "member %s through its front", m.Name)
	}
}

// After isolate-leader another member becomes leader; after healing the
// old leader is back in the cluster.
func TestIsolateLeaderElectsAnother(t *testing.T) {
	g := NewWithT(t)
	c, env, _ := testCluster{members: 3, proxied: true}.start(t)
	ctx := context.Background()
	old, err := c.Leader(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	inj, _ := Lookup("isolate-leader")
	in, err := inj.Inject(ctx, env, 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(in.Targets).To(ContainElement(old.Name))
	g.Eventually(func() string {
		m, err := c.Leader(ctx)
		if err != nil {
			return ""
		}
		return m.Name
	}, 20*time.Second, 200*time.Millisecond).ShouldNot(Or(BeEmpty(), Equal(old.Name)))
	g.Expect(answers(old.ClientURL)).To(BeFalse(), "an isolated member cannot serve a linearizable read")
	g.Expect(in.Heal(ctx)).To(Succeed())
	g.Eventually(func() bool { return answers(old.ClientURL) }, 20*time.Second, 200*time.Millisecond).Should(BeTrue())
}

// During client-cut, requests through the cut member's client link fail
// and requests through the others succeed.
func TestClientCutFailsOnlyThatLink(t *testing.T) {
	g := NewWithT(t)
	c, env, _ := testCluster{members: 3, proxied: true}.start(t)
	ctx := context.Background()
	inj, _ := Lookup("client-cut")
	in, err := inj.Inject(ctx, env, 1)
	g.Expect(err).NotTo(HaveOccurred())
	cut := in.Targets[0]
	for _, m := range c.Members() {
		if m.Name == cut {
			g.Expect(answers(m.ClientURL)).To(BeFalse(), "requests through the cut link of %s", m.Name)
		} else {
			g.Expect(answers(m.ClientURL)).To(BeTrue(), "requests through %s", m.Name)
		}
	}
	g.Expect(in.Heal(ctx)).To(Succeed())
	g.Eventually(func() bool { return answers(endpointOf(c, cut)) }, 20*time.Second, 200*time.Millisecond).Should(BeTrue())
}

// Every other network fault injects and heals on a real cluster, leaving
// it able to serve through every member.
func TestNetworkFaultsHeal(t *testing.T) {
	g := NewWithT(t)
	c, env, _ := testCluster{members: 5, proxied: true}.start(t)
	ctx := context.Background()
	for _, name := range []string{"isolate-follower", "split-minority", "ring", "bridge", "one-way", "latency", "client-latency", "reset", "client-reset", "bandwidth", "watch-drop", "watch-starve"} {
		inj, ok := Lookup(name)
		g.Expect(ok).To(BeTrue(), name)
		in, err := inj.Inject(ctx, env, 3)
		g.Expect(err).NotTo(HaveOccurred(), name)
		g.Expect(in.Targets).NotTo(BeEmpty(), name)
		time.Sleep(500 * time.Millisecond)
		g.Expect(in.Heal(ctx)).To(Succeed(), name)
		for _, m := range c.Members() {
			g.Eventually(func() bool { return answers(m.ClientURL) }, 20*time.Second, 200*time.Millisecond).Should(BeTrue(), "%s: member %s after healing", name, m.Name)
		}
	}
}

func TestPartitionShapes(t *testing.T) {
	g := NewWithT(t)
	ms := []string{"a", "b", "c", "d", "e"}
	count := func(name, leader string) map[[2]string]bool {
		inj, _ := Lookup(name)
		set := map[[2]string]bool{}
		for _, c := range inj.(partition).cuts(ms, leader) {
			set[c] = true
		}
		return set
	}
	ring := count("ring", "")
	g.Expect(ring).To(HaveLen(10), "5 members, each cut from its 2 non-neighbours, both ways")
	g.Expect(ring).NotTo(HaveKey([2]string{"a", "b"}))
	g.Expect(ring).To(HaveKey([2]string{"a", "c"}))
	bridge := count("bridge", "")
	g.Expect(bridge).NotTo(HaveKey([2]string{"a", "c"}), "the middle member reaches both halves")
	g.Expect(bridge).To(HaveKey([2]string{"a", "d"}))
	one := count("one-way", "c")
	g.Expect(one).To(HaveLen(1))
	g.Expect(one).To(HaveKey([2]string{"c", "a"}))
	split := count("split-minority", "")
	g.Expect(split).To(HaveLen(2 * 2 * 3))
}

// isolate-follower-until-snapshot heals only once the cluster has moved
// 500 revisions on; with snapshots every 10 entries and 10 catch-up
// entries the leader has by then dropped the entries the follower lacks,
// so the follower comes back through a snapshot (its log says so).
func TestIsolateFollowerUntilSnapshot(t *testing.T) {
	g := NewWithT(t)
	c, env, _ := testCluster{members: 3, proxied: true,
		settings: fixtures.EtcdSettings{SnapshotCount: 10, SnapshotCatchUpEntries: 10}}.start(t)
	ctx := context.Background()
	inj, ok := Lookup("isolate-follower-until-snapshot")
	g.Expect(ok).To(BeTrue())
	in, err := inj.Inject(ctx, env, 1)
	g.Expect(err).NotTo(HaveOccurred())
	// The cut follower is the target that is not linked to both others'
	// majority: the one whose every peer link is cut.
	cut := map[string]int{}
	for k := range in.Details {
		var a, b string
		fmt.Sscanf(strings.ReplaceAll(strings.TrimPrefix(k, "cut "), "->", " "), "%s %s", &a, &b)
		cut[a]++
		cut[b]++
	}
	var follower string
	for m, n := range cut {
		if n == 4 {
			follower = m
		}
	}
	g.Expect(follower).NotTo(BeEmpty(), "the cut follower among %v", in.Details)
	// Writes go to the members still in touch, each with a deadline.
	var others []string
	for _, m := range c.Members() {
		if m.Name != follower {
			others = append(others, m.ClientURL)
		}
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: others, DialTimeout: time.Second, Logger: zap.NewNop()})
	g.Expect(err).NotTo(HaveOccurred())
	defer cli.Close()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 5000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			cli.Put(pctx, fmt.Sprintf("k%d", i%20), "v")
			cancel()
		}
	}()
	begin := time.Now()
	g.Expect(in.Heal(ctx)).To(Succeed())
	g.Expect(time.Since(begin)).To(BeNumerically("<", 25*time.Second))
	close(stop)
	<-done
	cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c.PID(follower)))
	g.Expect(err).NotTo(HaveOccurred())
	var dataDir string
	args := strings.Split(string(cmd), "\x00")
	for i, a := range args {
		if a == "--data-dir" && i+1 < len(args) {
			dataDir = args[i+1]
		}
	}
	logFile := filepath.Join(filepath.Dir(dataDir), "etcd.log")
	g.Eventually(func() string {
		b, _ := os.ReadFile(logFile)
		return string(b)
	}, 20*time.Second, 200*time.Millisecond).Should(ContainSubstring("applied snapshot"), "the follower %s caught up without a snapshot (%s)", follower, logFile)
}
