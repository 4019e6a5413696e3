// Package proxy is vigil's TCP proxy: one sits in front of each listener of a
// member (peer and client) and injects network faults per link without root —
// refusals, blackholes, latency, jitter, resets and bandwidth limits.
//
// Each accepted connection is attributed to a source: the name Options.Identify
// gives the headers of its HTTP/1.x requests (etcd peers send X-Server-From and
// X-PeerURLs on every raft request). Bytes flowing from the connecting side to
// the target go Up; bytes flowing back go Down. A rule is set per source and
// direction and applies at once to live connections.
//
// On etcd's peer links almost everything flows Down. Member A reads B's
// messages on streams it opens to B (GET /raft/stream/{msgapp,message}/A;
// B writes the messages into the response), so at B's proxy the source A's
// Down carries B→A messages, and its Up only the stream request heads and
// the pipeline POSTs (/raft, /raft/snapshot) A sends when its streams are
// down. Cutting A→B entirely therefore takes two rules: at B's proxy, source
// A, Up (pipeline); at A's proxy, source B, Down (streams). A latency on Up
// alone barely slows raft.
package proxy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Direction is the way bytes flow through a connection.
type Direction int

const (
	// Up is from the side that connected to the target.
	Up Direction = iota
	// Down is from the target back to the side that connected.
	Down
)

func (d Direction) String() string {
	switch d {
	case Up:
		return "up"
	case Down:
		return "down"
	}
	return "direction(?)"
}

// Rule is a fault on one direction of a source's connections. The zero Rule
// is no fault. When a source has a rule of its own and "*" has one too, both
// apply: flags are or-ed, delays and probabilities take the larger, bandwidth
// the smaller limit.
type Rule struct {
	// Refuse closes the source's live connections (with a reset) and refuses
	// new ones: a hard partition, like an iptables REJECT. It applies to the
	// whole connection whichever direction it is set on.
	Refuse bool
	// Block stops forwarding in this direction and holds the bytes, like an
	// iptables DROP; the sender sees backpressure, never an error. When the
	// block is lifted, connections that held bytes because of it are reset,
	// their state being stale, so the peers reconnect. Connections with
	// nothing to send while blocked stay open.
	Block bool
	// Latency delays every chunk by this much from when the proxy read it;
	// chunks keep their order.
	Latency time.Duration
	// Jitter adds a uniform extra delay in [0, Jitter) per chunk.
	Jitter time.Duration
	// ResetProbability is the chance, per chunk, that the proxy resets the
	// connection (both sides) instead of forwarding it.
	ResetProbability float64
	// BytesPerSecond limits the bandwidth (0: no limit).
	BytesPerSecond int
}

func (r Rule) merge(o Rule) Rule {
	r.Refuse = r.Refuse || o.Refuse
	r.Block = r.Block || o.Block
	r.Latency = max(r.Latency, o.Latency)
	r.Jitter = max(r.Jitter, o.Jitter)
	r.ResetProbability = max(r.ResetProbability, o.ResetProbability)
	if r.BytesPerSecond == 0 || (o.BytesPerSecond > 0 && o.BytesPerSecond < r.BytesPerSecond) {
		r.BytesPerSecond = o.BytesPerSecond
	}
	return r
}

// Options configures a proxy.
type Options struct {
	// Identify names the source of a connection from the headers of its
	// HTTP/1.x requests. The proxy reads each request head whole before
	// forwarding it (it forwards it intact) and asks Identify; an answer of ""
	// means unknown, and as long as the connection's requests have no body the
	// next request head is asked too (etcd's prober sends header-less
	// GET /raft/probing on connections that later carry raft POSTs). The first
	// non-empty answer is the connection's source for good. Traffic that is
	// not HTTP/1.x (the HTTP/2 preface of gRPC) is not parsed; its source is
	// "". Nil: every source is "" and nothing is parsed.
	// Identify is called from the proxy's goroutines, and Close waits for it.
	// Identify sees only HTTP/1.x heads: a source named by X-PeerURLs must be
	// known before the connection comes (etcd peers send it on every raft
	// request, never on GET /version, /members or /raft/probing).
	Identify func(h http.Header) string
	// IdentifyWait bounds how long a request head may take to arrive whole
	// before the proxy gives up parsing and forwards what it has (default 1s).
	IdentifyWait time.Duration
	// Seed seeds the jitter and reset draws; connection n's direction d draws
	// from its own PCG stream, so draws do not depend on other connections.
	Seed int64
}

// Traffic is the bytes forwarded each way.
type Traffic struct {
	Up, Down int64
}

// Stats counts what a proxy did since it started.
type Stats struct {
	Accepted int // connections accepted
	Live     int // connections open now
	Refused  int // connections closed because a Refuse rule covered them
	Reset    int // connections reset by ResetProbability, ResetAll or a lifted Block
	// Traffic is the bytes forwarded per source; a connection's bytes count
	// under the source it is known by when Stats is taken (or when it closed).
	Traffic map[string]Traffic
}

// Proxy forwards connections from its listener to one target.
type Proxy struct {
	ln     net.Listener
	target string
	opts   Options
	ctx    context.Context // cancelled by Close: ends dials in progress
	cancel context.CancelFunc

	rules   atomic.Pointer[ruleSet]
	refused atomic.Int64 // Stats.Refused
	reset   atomic.Int64 // Stats.Reset

	mu       sync.Mutex // guards the fields below and serialises rule changes
	closed   bool
	conns    map[*conn]struct{}
	nextID   uint64
	accepted int
	traffic  map[string]Traffic // of the connections that have ended
	wg       sync.WaitGroup     // every goroutine the proxy started
}

// Start listens on listen (e.g. "127.0.0.1:0") and forwards every connection
// to target.
func Start(listen, target string, opts Options) (*Proxy, error) {
	if opts.IdentifyWait <= 0 {
		opts.IdentifyWait = time.Second
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		ln: ln, target: target, opts: opts, ctx: ctx, cancel: cancel,
		conns: map[*conn]struct{}{}, traffic: map[string]Traffic{},
	}
	p.rules.Store(newRuleSet(nil))
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address the proxy listens on, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Set puts rule r on direction dir of source's connections, replacing the
// rule that source and direction had; the zero Rule removes it. Source "*"
// is every source, the unidentified ("") included.
func (p *Proxy) Set(source string, dir Direction, r Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.rules.Load().copyRules()
	k := ruleKey{source, dir}
	if r == (Rule{}) {
		delete(m, k)
	} else {
		m[k] = r
	}
	p.swapRules(m)
}

// Clear removes every rule (heals the link): connections that held bytes
// because of a Block are reset, the others carry on.
func (p *Proxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.swapRules(nil)
}

// swapRules installs m, wakes parked writers and closes the connections the
// new rules refuse or whose block was lifted. p.mu is held.
func (p *Proxy) swapRules(m map[ruleKey]Rule) {
	rs := newRuleSet(m)
	old := p.rules.Swap(rs)
	close(old.changed)
	for c := range p.conns {
		src := c.source()
		switch {
		case rs.refuses(src):
			c.close(refused)
		case c.held[Up].Load() && !rs.lookup(src, Up).Block,
			c.held[Down].Load() && !rs.lookup(src, Down).Block:
			c.close(faulted)
		}
	}
}

// ResetAll resets every live connection now.
func (p *Proxy) ResetAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.close(faulted)
	}
}

// Stats returns the counts so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Stats{
		Accepted: p.accepted, Live: len(p.conns),
		Refused: int(p.refused.Load()), Reset: int(p.reset.Load()),
		Traffic: make(map[string]Traffic, len(p.traffic)),
	}
	for k, v := range p.traffic {
		s.Traffic[k] = v
	}
	for c := range p.conns {
		addTraffic(s.Traffic, c)
	}
	return s
}

func addTraffic(m map[string]Traffic, c *conn) {
	t := m[c.source()]
	t.Up += c.bytes[Up].Load()
	t.Down += c.bytes[Down].Load()
	m[c.source()] = t
}

// Close stops listening, closes every connection and returns once every
// goroutine of the proxy has ended, calls to Identify included: the caller
// must not hold anything Identify waits for. Calling it again does nothing
// more. (Set, Clear, ResetAll and Stats never wait for the proxy's
// goroutines.)
func (p *Proxy) Close() error {
	p.mu.Lock()
	var err error
	if !p.closed {
		p.closed = true
		err = p.ln.Close()
		p.cancel()
		for c := range p.conns {
			c.close(finished)
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors and the like: back off a little.
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			nc.Close()
			return
		}
		p.nextID++
		c := newConn(p, p.nextID, nc)
		p.conns[c] = struct{}{}
		p.accepted++
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serve(c)
	}
}

// forget removes a finished connection, keeping its traffic in the totals.
func (p *Proxy) forget(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
	addTraffic(p.traffic, c)
}

type ruleKey struct {
	source string
	dir    Direction
}

// ruleSet is an immutable set of rules; changed is closed when it is
// replaced, which wakes the writers parked on a Block.
type ruleSet struct {
	rules   map[ruleKey]Rule
	changed chan struct{}
}

func newRuleSet(m map[ruleKey]Rule) *ruleSet {
	return &ruleSet{rules: m, changed: make(chan struct{})}
}

func (rs *ruleSet) copyRules() map[ruleKey]Rule {
	m := make(map[ruleKey]Rule, len(rs.rules)+1)
	for k, v := range rs.rules {
		m[k] = v
	}
	return m
}

// lookup is the rule in force for source's direction dir.
func (rs *ruleSet) lookup(source string, dir Direction) Rule {
	if len(rs.rules) == 0 {
		return Rule{}
	}
	return rs.rules[ruleKey{source, dir}].merge(rs.rules[ruleKey{"*", dir}])
}

func (rs *ruleSet) refuses(source string) bool {
	return rs.lookup(source, Up).Refuse || rs.lookup(source, Down).Refuse
}

// refusesAll reports whether every source is refused, whoever it turns out to be.
func (rs *ruleSet) refusesAll() bool {
	return rs.rules[ruleKey{"*", Up}].Refuse || rs.rules[ruleKey{"*", Down}].Refuse
}
