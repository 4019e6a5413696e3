package chaos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vigil-suite/vigil/chaos/proxy"
)

// NetnsNet is the privileged network (--net netns, root): every member in
// a network namespace of its own, on a bridge vigil creates, with iptables
// DROP rules inside the namespaces to cut links. Its addresses (10.213.K.x)
// exist only inside what it made; nothing is routed off the machine.
// Latency and the like need netem, which these kernels lack: degrading is
// left to the proxy network.
type NetnsNet struct {
	id     string // vg<pid><letter>: names everything, so cleanup can find it
	subnet string // 10.213.K
	bridge string

	mu      sync.Mutex
	members map[string]int // name -> index; member i has subnet.(i+2)
	ns      []string
	forward []string // the host FORWARD rule, as iptables args after -A/-D
}

var netnsCount atomic.Int32

// ErrNeedsProxyNet is returned for link faults only the proxy can make.
var ErrNeedsProxyNet = errors.New("this fault needs the proxy network (netem is not available here); run without --net netns")

// NewNetnsNet creates the bridge. It needs root, ip and iptables.
func NewNetnsNet() (*NetnsNet, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("--net netns needs root (network namespaces and iptables)")
	}
	for _, tool := range []string{"ip", "iptables"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("--net netns needs %s: install iproute2 and iptables", tool)
		}
	}
	n := &NetnsNet{id: fmt.Sprintf("vg%d%c", os.Getpid(), 'a'+netnsCount.Add(1)%26), members: map[string]int{}}
	n.bridge = "vgbr" + strings.TrimPrefix(n.id, "vg")
	routes, _ := exec.Command("ip", "-4", "-o", "route", "show", "table", "all").Output()
	for k := 200 + os.Getpid()%50; ; k++ {
		if k > 254 {
			return nil, errors.New("no free 10.213.K.0/24 subnet for vigil's bridge")
		}
		if s := fmt.Sprintf("10.213.%d.", k); !strings.Contains(string(routes), s) {
			n.subnet = s[:len(s)-1]
			break
		}
	}
	n.forward = forwardRule(n.id)
	steps := [][]string{
		{"ip", "link", "add", n.bridge, "type", "bridge"},
		{"ip", "addr", "add", n.subnet + ".1/24", "dev", n.bridge},
		{"ip", "link", "set", n.bridge, "up"},
		// Docker sets the FORWARD policy to DROP; members talk across the bridge.
		append([]string{"iptables", "-I"}, n.forward...),
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			n.Close()
			return nil, err
		}
	}
	return n, nil
}

// forwardRule is the host FORWARD rule of the net with this id, as the
// arguments after -I/-D.
func forwardRule(id string) []string {
	bridge := "vgbr" + strings.TrimPrefix(id, "vg")
	return []string{"FORWARD", "-i", bridge, "-o", bridge, "-j", "ACCEPT", "-m", "comment", "--comment", "vigil " + id}
}

// The rules the privileged networks (netns, and docker through nsenter)
// put inside a member's own network namespace, to be run there behind the
// network's command prefix. Members listen for clients on clientPort in
// their namespace.
const clientPort = 2379

// dropPeerRule drops every packet from the peer at fromIP: that peer's
// link towards this member is cut.
func dropPeerRule(fromIP string) []string {
	return []string{"iptables", "-A", "INPUT", "-s", fromIP, "-j", "DROP"}
}

// dropClientRule drops the client traffic that comes from this machine
// (hostIP, the bridge's address, as the member sees it).
func dropClientRule(hostIP string) []string {
	return []string{"iptables", "-A", "INPUT", "-s", hostIP, "-p", "tcp", "--dport", strconv.Itoa(clientPort), "-j", "DROP"}
}

// flushRule removes every rule the two above added.
func flushRule() []string { return []string{"iptables", "-F", "INPUT"} }

func run(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Front is not used: members get places of their own.
func (n *NetnsNet) Front(member, kind, addr string) (string, error) {
	return "", errors.New("the netns network places members; it does not front listeners")
}

// Place creates the member's namespace with a veth on the bridge.
func (n *NetnsNet) Place(member string) (string, []string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	i, ok := n.members[member]
	if ok {
		return n.ip(i), []string{"ip", "netns", "exec", n.nsName(i)}, nil
	}
	i = len(n.members)
	ns, host, inner := n.nsName(i), fmt.Sprintf("%sh%d", n.id, i), fmt.Sprintf("%sn%d", n.id, i)
	steps := [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "link", "add", host, "type", "veth", "peer", "name", inner},
		{"ip", "link", "set", inner, "netns", ns},
		{"ip", "link", "set", host, "master", n.bridge, "up"},
		{"ip", "netns", "exec", ns, "ip", "addr", "add", n.ip(i) + "/24", "dev", inner},
		{"ip", "netns", "exec", ns, "ip", "link", "set", inner, "up"},
		{"ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"},
	}
	n.ns = append(n.ns, ns)
	for _, s := range steps {
		if err := run(s...); err != nil {
			return "", nil, err
		}
	}
	n.members[member] = i
	return n.ip(i), []string{"ip", "netns", "exec", ns}, nil
}

func (n *NetnsNet) nsName(i int) string { return fmt.Sprintf("%sm%d", n.id, i) }
func (n *NetnsNet) ip(i int) string     { return fmt.Sprintf("%s.%d", n.subnet, i+2) }

func (n *NetnsNet) index(member string) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	i, ok := n.members[member]
	if !ok {
		return 0, fmt.Errorf("no member %q in the netns network", member)
	}
	return i, nil
}

// CutPeer drops, inside to's namespace, every packet from from.
func (n *NetnsNet) CutPeer(from, to string) error {
	f, err := n.index(from)
	if err != nil {
		return err
	}
	t, err := n.index(to)
	if err != nil {
		return err
	}
	return run(append([]string{"ip", "netns", "exec", n.nsName(t)}, dropPeerRule(n.ip(f))...)...)
}

// CutClient drops, inside member's namespace, client traffic from the host.
func (n *NetnsNet) CutClient(member string) error {
	i, err := n.index(member)
	if err != nil {
		return err
	}
	return run(append([]string{"ip", "netns", "exec", n.nsName(i)}, dropClientRule(n.subnet+".1")...)...)
}

// Degrade is not possible without netem.
func (n *NetnsNet) Degrade(string, string, []proxy.Direction, proxy.Rule) error {
	return ErrNeedsProxyNet
}

// ResetAll is not possible without the proxy either.
func (n *NetnsNet) ResetAll(string, string) error { return ErrNeedsProxyNet }

// Heal flushes the rules inside every namespace.
func (n *NetnsNet) Heal() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	for _, ns := range n.ns {
		if err := run(append([]string{"ip", "netns", "exec", ns}, flushRule()...)...); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close removes the namespaces (their veths and rules go with them), the
// bridge and the host rule. It goes on past errors: all of it must go.
func (n *NetnsNet) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	// The host ends first: deleting a veth takes its peer along at once,
	// while a deleted namespace lets go of its devices only later.
	for i := range n.ns {
		run("ip", "link", "del", fmt.Sprintf("%sh%d", n.id, i))
	}
	for _, ns := range n.ns {
		if err := run("ip", "netns", "del", ns); err != nil {
			errs = append(errs, err)
		}
	}
	n.ns = nil
	run(append([]string{"iptables", "-D"}, n.forward...)...)
	run("ip", "link", "del", n.bridge)
	return errors.Join(errs...)
}

var leftoverName = regexp.MustCompile(`^vg(?:br)?(\d+)[a-z]`)

// CleanupNetns removes the namespaces, bridges and host rules of vigil
// processes that are gone (all of them if all is set). It returns what it
// removed.
func CleanupNetns(all bool) []string {
	if os.Geteuid() != 0 {
		return nil
	}
	dead := func(name string) bool {
		m := leftoverName.FindStringSubmatch(name)
		if m == nil {
			return false
		}
		pid, _ := strconv.Atoi(m[1])
		switch {
		case all:
			return true
		case pid == os.Getpid():
			return false
		}
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return err != nil
	}
	var removed []string
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) > 0 && dead(f[0]) && run("ip", "netns", "del", f[0]) == nil {
				removed = append(removed, "network namespace "+f[0])
			}
		}
	}
	if out, err := exec.Command("ip", "-o", "link", "show").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
			if strings.HasPrefix(name, "vg") && dead(name) && run("ip", "link", "del", name) == nil {
				removed = append(removed, "link "+name)
			}
		}
	}
	if out, err := exec.Command("iptables", "-S", "FORWARD").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			i := strings.Index(line, `"vigil `)
			if !strings.HasPrefix(line, "-A ") || i < 0 {
				continue
			}
			id := strings.Fields(strings.Trim(line[i+len(`"vigil `):], `"`))[0]
			id = strings.Trim(id, `"`)
			if dead(id) && run(append([]string{"iptables", "-D"}, forwardRule(id)...)...) == nil {
				removed = append(removed, "iptables rule "+line)
			}
		}
	}
	return removed
}
