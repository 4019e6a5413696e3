package chaos

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/vigil-suite/vigil/chaos/proxy"
)

// Links cuts and degrades single links of a cluster: peer links between
// two members, in one direction or both, and the client link of a member.
type Links interface {
	// CutPeer blackholes what member from sends to member to.
	CutPeer(from, to string) error
	// CutClient blackholes the client link of member, both ways.
	CutClient(member string) error
	// Degrade applies r to every link of member of the given kind ("peer"
	// or "client"), in the given directions (Up: towards the member).
	Degrade(member, kind string, dirs []proxy.Direction, r proxy.Rule) error
	// ResetAll closes every live connection of member's links of kind.
	ResetAll(member, kind string) error
	// Heal removes every cut and degradation.
	Heal() error
}

// ProxyNet is the unprivileged network: one vigil proxy in front of every
// member's client and peer listener. It tells peer connections apart by
// the sender's advertised peer URL (rafthttp's X-PeerURLs header), so a
// single direction of a single link can be cut without root.
type ProxyNet struct {
	seed int64

	mu      sync.Mutex
	proxies map[string]*proxy.Proxy // "member/kind"
	peerOf  map[string]string       // advertised peer URL -> member
}

// NewProxyNet makes an empty network; the fixture calls Front per listener.
func NewProxyNet(seed int64) *ProxyNet {
	return &ProxyNet{seed: seed, proxies: map[string]*proxy.Proxy{}, peerOf: map[string]string{}}
}

// Front starts (or replaces) the proxy in front of a member's listener.
func (n *ProxyNet) Front(member, kind, addr string) (string, error) {
	if kind != "client" && kind != "peer" {
		return "", fmt.Errorf("unknown link kind %q", kind)
	}
	n.mu.Lock()
	old := n.proxies[member+"/"+kind]
	n.mu.Unlock()
	if old != nil {
		old.Close()
	}
	opts := proxy.Options{Seed: n.seed}
	if kind == "peer" {
		opts.Identify = n.identify
	}
	p, err := proxy.Start("127.0.0.1:0", addr, opts)
	if err != nil {
		return "", err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.proxies[member+"/"+kind] = p
	if kind == "peer" {
		n.peerOf["http://"+p.Addr()] = member
	}
	return p.Addr(), nil
}

// identify names the member that opened a peer connection.
func (n *ProxyNet) identify(h http.Header) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, u := range strings.Split(h.Get("X-PeerURLs"), ",") {
		if m, ok := n.peerOf[strings.TrimSpace(u)]; ok {
			return m
		}
	}
	return ""
}

func (n *ProxyNet) get(member, kind string) (*proxy.Proxy, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.proxies[member+"/"+kind]
	if p == nil {
		return nil, fmt.Errorf("no %s link for member %q", kind, member)
	}
	return p, nil
}

// CutPeer blackholes from→to: the requests from opened to to, and the
// responses to's streams carry back to from on connections to opened.
func (n *ProxyNet) CutPeer(from, to string) error {
	atTo, err := n.get(to, "peer")
	if err != nil {
		return err
	}
	atFrom, err := n.get(from, "peer")
	if err != nil {
		return err
	}
	atTo.Set(from, proxy.Up, proxy.Rule{Block: true})
	atFrom.Set(to, proxy.Down, proxy.Rule{Block: true})
	return nil
}

// CutClient blackholes the client link of member.
func (n *ProxyNet) CutClient(member string) error {
	return n.Degrade(member, "client", []proxy.Direction{proxy.Up, proxy.Down}, proxy.Rule{Block: true})
}

// Degrade applies r to all of member's links of kind, in dirs.
func (n *ProxyNet) Degrade(member, kind string, dirs []proxy.Direction, r proxy.Rule) error {
	p, err := n.get(member, kind)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		p.Set("*", d, r)
	}
	return nil
}

// ResetAll closes every live connection through member's link of kind.
func (n *ProxyNet) ResetAll(member, kind string) error {
	p, err := n.get(member, kind)
	if err != nil {
		return err
	}
	p.ResetAll()
	return nil
}

// Heal clears every rule on every proxy.
func (n *ProxyNet) Heal() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range n.proxies {
		p.Clear()
	}
	return nil
}

// Close stops every proxy. The lock is let go first: a proxy's Close
// waits for its goroutines, and one may be in identify, which takes it.
func (n *ProxyNet) Close() error {
	n.mu.Lock()
	ps := n.proxies
	n.proxies = map[string]*proxy.Proxy{}
	n.mu.Unlock()
	for _, p := range ps {
		p.Close()
	}
	return nil
}
