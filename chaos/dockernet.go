package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vigil-suite/vigil/chaos/proxy"
)

// Containers is what a container fixture (fixtures/containers) offers the
// docker network: where each member lives and how to reach into it.
type Containers interface {
	// MemberIP is the member's address on the run's network.
	MemberIP(name string) (string, error)
	// MemberPID is a host pid inside the member's network namespace (its
	// container's process), 0 when the member is not running.
	MemberPID(name string) (int, error)
	// GatewayIP is where traffic from this machine comes from, as the
	// members see it.
	GatewayIP() string
	// DisconnectMember and ConnectMember take the member off the run's
	// network and put it back with the same address.
	DisconnectMember(ctx context.Context, name string) error
	ConnectMember(ctx context.Context, name string) error
}

// DockerNet cuts links of a cluster running in Docker: the same iptables
// DROP rules as the netns network, put inside a container's network
// namespace from this machine (nsenter -t <pid> -n), since a FROM-scratch
// image has no iptables and no shell of its own; and docker network
// disconnect/connect. Rules live in the container's namespace: a member
// restarted while cut comes back whole (docker gives it a new namespace),
// and removing the container takes them along. Latency, resets and
// bandwidth limits need vigil's TCP proxy, which docker mode does not put
// on the links: those faults are refused (see DockerRefuses).
type DockerNet struct {
	c Containers

	mu           sync.Mutex
	cut          map[string]bool // members with rules in their namespace
	disconnected map[string]bool
}

// NewDockerNet checks that this machine can enter a container's network
// namespace (root, nsenter, iptables) and returns the network.
func NewDockerNet(c Containers) (*DockerNet, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("network faults in docker mode need root (nsenter into the containers' network namespaces)")
	}
	for _, tool := range []string{"nsenter", "iptables"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("network faults in docker mode need %s on this machine: install util-linux and iptables", tool)
		}
	}
	return &DockerNet{c: c, cut: map[string]bool{}, disconnected: map[string]bool{}}, nil
}

// inNamespace runs rule inside member's network namespace.
func (n *DockerNet) inNamespace(member string, rule []string) error {
	pid, err := n.c.MemberPID(member)
	if err != nil {
		return err
	}
	if pid == 0 {
		return fmt.Errorf("member %s is not running: there is no network namespace to cut", member)
	}
	return run(append([]string{"nsenter", "-t", strconv.Itoa(pid), "-n", "--"}, rule...)...)
}

// CutPeer drops, inside to's namespace, every packet from from.
func (n *DockerNet) CutPeer(from, to string) error {
	ip, err := n.c.MemberIP(from)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cut[to] = true
	return n.inNamespace(to, dropPeerRule(ip))
}

// CutClient drops, inside member's namespace, client traffic from this
// machine. A link named "<client>><member>" (an API server's link to an
// etcd member, both containers on the run's network) is cut as the
// packets client sends member.
func (n *DockerNet) CutClient(member string) error {
	if from, to, ok := strings.Cut(member, ">"); ok {
		return n.CutPeer(from, to)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cut[member] = true
	return n.inNamespace(member, dropClientRule(n.c.GatewayIP()))
}

// ErrDockerNoProxy is returned for link faults only vigil's proxy can make.
var ErrDockerNoProxy = errors.New("this fault needs vigil's TCP proxy on the links (latency, resets, bandwidth limits, watch-drop/-starve), which docker mode does not have (no netem here either); run it with --fixture process")

// Degrade is not possible without the proxy.
func (n *DockerNet) Degrade(string, string, []proxy.Direction, proxy.Rule) error {
	return ErrDockerNoProxy
}

// ResetAll is not possible without the proxy.
func (n *DockerNet) ResetAll(string, string) error { return ErrDockerNoProxy }

// Disconnect takes member off the run's network (docker network disconnect).
func (n *DockerNet) Disconnect(ctx context.Context, member string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.c.DisconnectMember(ctx, member); err != nil {
		return err
	}
	n.disconnected[member] = true
	return nil
}

// Heal connects what was disconnected and flushes the rules inside every
// namespace it cut. A member that is not running needs no flush: its
// namespace went with its process. It goes on past errors.
func (n *DockerNet) Heal() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, m := range sortedKeys(n.disconnected) {
		if err := n.c.ConnectMember(ctx, m); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(n.disconnected, m)
	}
	for _, m := range sortedKeys(n.cut) {
		pid, err := n.c.MemberPID(m)
		if err == nil && pid != 0 {
			err = n.inNamespace(m, flushRule())
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		delete(n.cut, m)
	}
	return errors.Join(errs...)
}

// Close heals; the rules go with the containers anyway.
func (n *DockerNet) Close() error { return n.Heal() }

func sortedKeys(m map[string]bool) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// DockerRefuses says why a fault cannot run on a cluster in Docker, or nil
// if it can: the proxy's link faults, and membership changes, which the
// container fixture does not offer.
func DockerRefuses(name string) error {
	inj, ok := Lookup(name)
	if !ok {
		return fmt.Errorf("unknown fault %q", name)
	}
	if f, ok := inj.(linkFault); ok && !f.cut {
		return fmt.Errorf("%s: %w", name, ErrDockerNoProxy)
	}
	if inj.Needs().Membership {
		return fmt.Errorf("%s needs membership changes, which the docker fixture does not offer; run it with --fixture process", name)
	}
	return nil
}

// dockerDisconnect takes one member off the run's Docker network.
type dockerDisconnect struct{}

func (dockerDisconnect) Name() string { return "docker-disconnect" }
func (dockerDisconnect) Needs() Needs { return Needs{Links: true, Docker: true} }
func (dockerDisconnect) Describe() string {
	return "docker network disconnect a member (peers and clients lose it), connect it again with its address when healed (--fixture docker)"
}

func (d dockerDisconnect) Inject(ctx context.Context, env *Env, pick uint32) (Injected, error) {
	if err := d.Needs().Unmet(env); err != nil {
		return Injected{}, err
	}
	dn, ok := env.Links.(*DockerNet)
	if !ok {
		return Injected{}, errors.New("needs --fixture docker (the members' Docker network)")
	}
	m := rotated(env.Fixture.Members(), pick)[0]
	if err := dn.Disconnect(ctx, m); err != nil {
		return Injected{}, err
	}
	return Injected{Targets: []string{m}, Details: map[string]string{"network": "disconnected"},
		Heal: func(context.Context) error { return dn.Heal() }}, nil
}

func init() { register(dockerDisconnect{}) }

var _ Links = (*DockerNet)(nil)
