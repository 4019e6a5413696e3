package chaos

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/history"
)

func needRoot(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("creates network namespaces")
	}
	if os.Geteuid() != 0 {
		t.Skip("--net netns needs root; this test is skipped, not passed")
	}
}

// traces lists what of the net with this id is still on the machine.
func traces(id string) []string {
	var found []string
	ns, _ := exec.Command("ip", "netns", "list").Output()
	links, _ := exec.Command("ip", "-o", "link").Output()
	rules, _ := exec.Command("iptables", "-S", "FORWARD").Output()
	for _, out := range []string{string(ns), string(links), string(rules)} {
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, id) || strings.Contains(line, "vgbr"+strings.TrimPrefix(id, "vg")) {
				found = append(found, line)
			}
		}
	}
	return found
}

// Members in namespaces of their own form a cluster; isolating the leader
// by iptables elects another; a client cut fails only that link; Close
// leaves no namespace, veth, bridge or rule behind.
func TestNetnsNetwork(t *testing.T) {
	needRoot(t)
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := binaries.Etcd(ctx, binaries.Options{Progress: os.Stderr})
	g.Expect(err).NotTo(HaveOccurred())
	net, err := NewNetnsNet()
	g.Expect(err).NotTo(HaveOccurred())
	defer net.Close()
	c := etcdproc.New(etcdproc.Config{Binary: bin, Members: 3, Dir: t.TempDir(), Network: net})
	defer c.Stop()
	g.Expect(c.Start(ctx)).To(Succeed())
	for _, m := range c.Members() {
		g.Expect(m.ClientURL).To(HavePrefix("http://10.213."), "member %s lives in its namespace", m.Name)
	}
	env := &Env{Fixture: c, Processes: c, Links: net, Rec: history.NewRecorder(history.Meta{}, history.NewClock(), nil)}

	old, err := c.Leader(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	inj, _ := Lookup("isolate-leader")
	in, err := inj.Inject(ctx, env, 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() string {
		m, err := c.Leader(ctx)
		if err != nil {
			return ""
		}
		return m.Name
	}, 20*time.Second, 200*time.Millisecond).ShouldNot(Or(BeEmpty(), Equal(old.Name)))
	g.Expect(in.Heal(ctx)).To(Succeed())
	g.Eventually(func() bool { return answers(old.ClientURL) }, 20*time.Second, 200*time.Millisecond).Should(BeTrue())

	inj, _ = Lookup("client-cut")
	in, err = inj.Inject(ctx, env, 2)
	g.Expect(err).NotTo(HaveOccurred())
	for _, m := range c.Members() {
		g.Expect(answers(m.ClientURL)).To(Equal(m.Name != in.Targets[0]), "member %s during the cut of %s", m.Name, in.Targets[0])
	}
	g.Expect(in.Heal(ctx)).To(Succeed())

	lat, _ := Lookup("latency")
	_, err = lat.Inject(ctx, env, 0)
	g.Expect(err).To(MatchError(ErrNeedsProxyNet))

	c.Stop()
	g.Expect(net.Close()).To(Succeed())
	g.Expect(traces(net.id)).To(BeEmpty())
}

// What a killed vigil left (its pid is gone) is found and removed.
func TestCleanupNetnsRemovesLeftovers(t *testing.T) {
	needRoot(t)
	g := NewWithT(t)
	id := "vg999999z" // no such pid
	bridge := "vgbr999999z"
	defer func() {
		run("ip", "netns", "del", id+"m0")
		run("ip", "link", "del", bridge)
		run(append([]string{"iptables", "-D"}, forwardRule(id)...)...)
	}()
	g.Expect(run("ip", "netns", "add", id+"m0")).To(Succeed())
	g.Expect(run("ip", "link", "add", bridge, "type", "bridge")).To(Succeed())
	g.Expect(run(append([]string{"iptables", "-I"}, forwardRule(id)...)...)).To(Succeed())
	g.Expect(traces(id)).To(HaveLen(3))
	removed := CleanupNetns(false)
	g.Expect(removed).To(HaveLen(3))
	g.Expect(traces(id)).To(BeEmpty())
}
