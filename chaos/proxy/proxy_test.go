package proxy

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// Many connections at once, each a large random payload echoed back whole.
func TestForwardsBothWaysIntact(t *testing.T) {
	noLeaks(t)
	g := NewWithT(t)
	s := newServer(t, echo)
	p := startProxy(t, s.addr(), Options{})
	const conns, size = 20, 2 << 20
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := range conns {
		wg.Go(func() {
			c, err := net.Dial("tcp", p.Addr())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			payload := make([]byte, size)
			r := rand.New(rand.NewPCG(uint64(i), 1))
			for j := range payload {
				payload[j] = byte(r.Uint32())
			}
			go func() {
				c.Write(payload)
				c.(*net.TCPConn).CloseWrite()
			}()
			got, err := io.ReadAll(c) // the echo ends when our half-close went through
			if err != nil {
				errs <- err
				return
			}
			if sha256.Sum256(got) != sha256.Sum256(payload) {
				errs <- errors.New("payload changed on the way")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Eventually(func() int { return p.Stats().Live }).Should(BeZero(), "every connection closed after both half-closes")
	st := p.Stats()
	g.Expect(st.Accepted).To(Equal(conns))
	g.Expect(st.Traffic[""]).To(Equal(Traffic{Up: conns * size, Down: conns * size}))
}

// HTTP/1.1 requests arrive with their headers and bodies intact; Identify
// sees the peer headers; a connection whose first requests carry no
// identity (etcd's prober) is named by the first that does.
func TestHTTPIntactAndIdentified(t *testing.T) {
	noLeaks(t)
	g := NewWithT(t)
	type seen struct {
		path string
		h    http.Header
		body string
	}
	got := make(chan seen, 10)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.URL.Path, r.Header.Clone(), string(b)}
		io.WriteString(w, "ok "+r.URL.Path)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	hs := &http.Server{Handler: mux}
	done := make(chan struct{})
	go func() { hs.Serve(ln); close(done) }()
	t.Cleanup(func() { hs.Close(); <-done })

	var mu sync.Mutex
	var asked []http.Header
	p := startProxy(t, ln.Addr().String(), Options{Identify: func(h http.Header) string {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, h.Clone())
		return fromHeader(h)
	}})
	tr := &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1} // one connection for every request
	t.Cleanup(tr.CloseIdleConnections)
	cl := &http.Client{Transport: tr}
	do := func(method, path, body string, h map[string]string) {
		t.Helper()
		req, err := http.NewRequest(method, "http://"+p.Addr()+path, strings.NewReader(body))
		g.Expect(err).NotTo(HaveOccurred())
		if body == "" {
			req.Body = nil
		}
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := cl.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		g.Expect(string(b)).To(Equal("ok " + path))
		s := <-got
		g.Expect(s.path).To(Equal(path))
		g.Expect(s.body).To(Equal(body))
		for k, v := range h {
			g.Expect(s.h.Get(k)).To(Equal(v), "header %s at the server", k)
		}
	}
	peer := map[string]string{
		"X-Server-From":  "8e9e05c52164694d",
		"X-PeerURLs":     "http://127.0.0.1:12380,http://127.0.0.1:12381",
		"X-Raft-To":      "91bc3c398fb3c146",
		"Content-Type":   "application/protobuf",
		"X-Etcd-Cluster": "cdf818194e3a8c32",
	}
	do(http.MethodGet, "/raft/probing", "", nil) // the prober: no identity
	do(http.MethodGet, "/raft/probing", "", nil)
	do(http.MethodPost, "/raft", strings.Repeat("raft message ", 5000), peer)
	do(http.MethodPost, "/raft", "again", map[string]string{"X-Server-From": "someone-else"})

	mu.Lock()
	g.Expect(asked).To(HaveLen(3), "asked per head until named, then never again")
	g.Expect(asked[2].Get("X-PeerURLs")).To(Equal(peer["X-PeerURLs"]))
	g.Expect(asked[2].Get("X-Server-From")).To(Equal(peer["X-Server-From"]))
	mu.Unlock()
	st := p.Stats()
	g.Expect(st.Accepted).To(Equal(1))
	g.Expect(st.Traffic).To(HaveKey("8e9e05c52164694d"))
	g.Expect(st.Traffic).NotTo(HaveKey("someone-else"), "the first named request decides")
}

// The HTTP/2 preface (gRPC on the client port) passes unparsed and at once.
func TestHTTP2PrefacePassesUnparsed(t *testing.T) {
	noLeaks(t)
	g := NewWithT(t)
	s := newServer(t, echo)
	var asked atomic.Int32
	p := startProxy(t, s.addr(), Options{
		IdentifyWait: 10 * time.Second,
		Identify:     func(http.Header) string { asked.Add(1); return "x" },
	})
	c := dial(t, p.Addr())
	msg := "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x12\x04\x00\x00\x00\x00\x00"
	start := time.Now()
	send(t, c, c, msg)
	g.Expect(time.Since(start)).To(BeNumerically("<", 5*time.Second), "not held for IdentifyWait")
	g.Expect(asked.Load()).To(BeZero())
	g.Expect(p.Stats().Traffic).To(HaveKey(""))
}

// A head that does not arrive whole is identified from what came, after
// IdentifyWait, and forwarded.
func TestPartialHeadAfterWait(t *testing.T) {
	noLeaks(t)
	g := NewWithT(t)
	s := newServer(t, nil)
	p := startProxy(t, s.addr(), Options{Identify: fromHeader, IdentifyWait: 200 * time.Millisecond})
	start := time.Now() // the proxy waits from when it accepted
	c := dial(t, p.Addr())
	part := "POST /raft HTTP/1.1\r\nX-Server-From: a\r\nContent-Len"
	io.WriteString(c, part)
	srv := s.accept(t)
	got := make([]byte, len(part))
	srv.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.ReadFull(srv, got)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(got)).To(Equal(part))
	g.Expect(time.Since(start)).To(BeNumerically(">=", 200*time.Millisecond))
	g.Expect(p.Stats().Traffic).To(HaveKey("a"))
	send(t, c, srv, "ength: 0\r\n\r\n")
}

// Rules set for one source touch only that source's connections.
func TestSetPerSource(t *testing.T) {
	noLeaks(t)
	s := newServer(t, nil)
	p := startProxy(t, s.addr(), Options{Identify: fromHeader})
	a, sa := peerPair(t, p, s, "a")
	b, sb := peerPair(t, p, s, "b")
	p.Set("a", Up, Rule{Block: true})
	io.WriteString(a, "to server")
	silent(t, sa, 300*time.Millisecond)
	send(t, b, sb, "b up")
	send(t, sb, b, "b down")
	send(t, sa, a, "a down still flows")
}

// Refuse resets the source's live connections and refuses new ones before
// they reach the target; Clear lets new ones in.
func TestRefuse(t *testing.T) {
	noLeaks(t)
	g := NewWithT(t)
	s := newServer(t, nil)
	p := startProxy(t, s.addr(), Options{Identify: fromHeader})
	a, sa := peerPair(t, p, s, "a")
	b, sb := peerPair(t, p, s, "b")
	p.Set("a", Down, Rule{Refuse: true}) // either direction refuses the whole connection
	closed(t, a)
	closed(t, sa)
	send(t, b, sb, "b unaffected")

	turnedAway(t, p.Addr(), peerHead("a"))
	s.acceptsNone(t, 200*time.Millisecond)
	g.Expect(p.Stats().Refused).To(Equal(2))

	p.Clear()
	a, sa = peerPair(t, p, s, "a")
	send(t, a, sa, "a is back")

	p.Set("*", Up, Rule{Refuse: true}) // everyone, named or not
	closed(t, a)
	closed(t, b)
	turnedAway(t, p.Addr(), "")
	s.acceptsNone(t, 200*time.Millisecond)
}

// Block holds one direction's bytes while the other flows; lifting the
// block resets the connections that held bytes, not the others.
func TestBlock(t *testing.T) {
	for _, dir := range []Direction{Up, Down} {
		t.Run(dir.String(), func(t *testing.T) {
			noLeaks(t)
			g := NewWithT(t)
			s := newServer(t, nil)
			p := startProxy(t, s.addr(), Options{Identify: fromHeader})
			a, sa := peerPair(t, p, s, "a")
			idle, sidle := peerPair(t, p, s, "a")
			from, to, back, forth := a, sa, sa, a // the blocked way, then the free way
			if dir == Down {
				from, to, back, forth = sa, a, a, sa
			}
			p.Set("a", dir, Rule{Block: true})
			io.WriteString(from, "held")
			silent(t, to, 300*time.Millisecond)
			send(t, back, forth, "the other way flows")
			send(t, back, forth, "still")

			p.Clear()
			closed(t, a)
			closed(t, sa)
			g.Expect(p.Stats().Reset).To(Equal(1))
			send(t, idle, sidle, "a connection that held nothing stays")
			send(t, sidle, idle, "both ways")
		})
	}
}

// An end of stream is held by a Block like data, and delayed by latency.
func TestEndOfStreamFollowsRules(t *testing.T) {
	noLeaks(t)
	g := NewWithT(t)
	s := newServer(t, nil)
	p := startProxy(t, s.addr(), Options{Identify: fromHeader})
	a, sa := peerPair(t, p, s, "a")
	p.Set("a", Up, Rule{Block: true})
	a.(*net.TCPConn).CloseWrite()
	silent(t, sa, 300*time.Millisecond)
	send(t, sa, a, "down still flows after the half-close")

	b, sb := peerPair(t, p, s, "b")
	const lat = 200 * time.Millisecond
	p.Set("b", Up, Rule{Latency: lat})
	start := time.Now()
	b.(*net.TCPConn).CloseWrite()
	sb.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := sb.Read(make([]byte, 1))
	g.Expect(err).To(MatchError(io.EOF))
	g.Expect(time.Since(start)).To(BeNumerically(">=", lat))
}

// A block lifted by Set (not Clear) resets too; a stricter "*" rule still
// applies to a source with a rule of its own.
func TestRulesMergeAndLift(t *testing.T) {
	noLeaks(t)
	s := newServer(t, nil)
	p := startProxy(t, s.addr(), Options{Identify: fromHeader})
	a, sa := peerPair(t, p, s, "a")
	p.Set("a", Up, Rule{Latency: time.Millisecond})
	p.Set("*", Up, Rule{Block: true})
	io.WriteString(a, "held")
	silent(t, sa, 300*time.Millisecond)
	p.Set("*", Up, Rule{})
	closed(t, a)
}

// Latency delays every chunk by at least the latency; with jitter, order holds.
func TestLatencyAndJitter(t *testing.T) {
	noLeaks(t)
	g := NewWithT(t)
	s := newServer(t, nil)
	p := startProxy(t, s.addr(), Options{Identify: fromHeader, Seed: 3})
	a, sa := peerPair(t, p, s, "a")
	const lat = 200 * time.Millisecond
	p.Set("a", Up, Rule{Latency: lat})
	start := time.Now()
	send(t, a, sa, "slow")
	g.Expect(time.Since(start)).To(BeNumerically(">=", lat))

	p.Set("a", Up, Rule{Latency: 5 * time.Millisecond, Jitter: 20 * time.Millisecond})
	var want bytes.Buffer
	for i := range 200 {
		msg := strings.Repeat(string(rune('a'+i%26)), 1+i%7)
		want.WriteString(msg)
		io.WriteString(a, msg)
		time.Sleep(100 * time.Microsecond)
	}
	got := make([]byte, want.Len())
	sa.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.ReadFull(sa, got)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(got)).To(Equal(want.String()), "order kept under jitter")
}

// Many small messages in flight at once each get the latency, not more:
// the proxy reads them as they come and stamps each with its arrival.
func TestLatencyPerMessage(t *testing.T) {
	noLeaks(t)
	g := NewWithT(t)
	s := newServer(t, nil)
	p := startProxy(t, s.addr(), Options{})
	c := dial(t, p.Addr())
	srv := s.accept(t)
	const lat, msgs = 500 * time.Millisecond, 200
	p.Set("*", Up, Rule{Latency: lat})
	var mu sync.Mutex // the race detector does not see TCP as synchronisation
	sent := make([]time.Time, msgs)
	go func() {
		for i := range msgs {
			mu.Lock()
			sent[i] = time.Now()
			mu.Unlock()
			c.Write([]byte{byte(i)})
			time.Sleep(time.Millisecond)
		}
	}()
	var worst time.Duration
	buf := make([]byte, msgs)
	srv.SetReadDeadline(time.Now().Add(20 * time.Second))
	for got := 0; got < msgs; {
		n, err := srv.Read(buf[got:])
		g.Expect(err).NotTo(HaveOccurred())
		now := time.Now()
		delays := make([]time.Duration, n)
		mu.Lock()
		for i := range delays {
			delays[i] = now.Sub(sent[got+i])
		}
		mu.Unlock()
		for i, d := range delays {
			g.Expect(buf[got+i]).To(Equal(byte(got + i)))
			g.Expect(d).To(BeNumerically(">=", lat), "message %d", got+i)
			worst = max(worst, d)
		}
		got += n
	}
	// Reading 8 chunks ahead only, the first burst waited up to twice the latency.
	g.Expect(worst).To(BeNumerically("<", lat*3/2), "slowest message")
	t.Logf("slowest of %d messages: %v (latency %v)", msgs, worst, lat)
}

// ResetProbability 1 resets at the first chunk, both sides.
func TestResetProbability(t *testing.T) {
	noLeaks(t)
	g := NewWithT(t)
	s := newServer(t, nil)
	p := startProxy(t, s.addr(), Options{Identify: fromHeader})
	a, sa := peerPair(t, p, s, "a")
	p.Set("a", Down, Rule{ResetProbability: 1})
	send(t, a, sa, "up is fine")
	io.WriteString(sa, "down resets")
	closed(t, a)
	closed(t, sa)
	g.Expect(p.Stats().Reset).To(Equal(1))
}

// ResetAll resets every live connection; new ones work.
func TestResetAll(t *testing.T) {
	noLeaks(t)
	g := NewWithT(t)
	s := newServer(t, nil)
	p := startProxy(t, s.addr(), Options{})
	c1 := dial(t, p.Addr())
	s1 := s.accept(t) // one at a time: the proxy may reach the server in any order
	c2 := dial(t, p.Addr())
	s2 := s.accept(t)
	send(t, c1, s1, "x")
	send(t, c2, s2, "y")
	p.ResetAll()
	for _, c := range []net.Conn{c1, c2, s1, s2} {
		closed(t, c)
	}
	g.Expect(p.Stats().Reset).To(Equal(2))
	c3 := dial(t, p.Addr())
	send(t, c3, s.accept(t), "z")
}

// 64 KiB at 32 KiB/s takes about 2 s (loose lower bound: shared machine).
func TestBandwidth(t *testing.T) {
	noLeaks(t)
	g := NewWithT(t)
	s := newServer(t, nil)
	p := startProxy(t, s.addr(), Options{})
	c := dial(t, p.Addr())
	srv := s.accept(t)
	p.Set("*", Down, Rule{BytesPerSecond: 32 << 10})
	payload := bytes.Repeat([]byte("0123456789abcdef"), 4<<10)
	start := time.Now()
	go srv.Write(payload)
	got := make([]byte, len(payload))
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := io.ReadFull(c, got)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(payload))
	g.Expect(time.Since(start)).To(BeNumerically(">=", 1500*time.Millisecond))
}

// A dead target looks like a refused connection; Close frees the port and
// leaves no goroutine, with connections open and one blocked.
func TestCloseCleansUp(t *testing.T) {
	noLeaks(t)
	g := NewWithT(t)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	deadAddr := dead.Addr().String()
	dead.Close()
	p0 := startProxy(t, deadAddr, Options{})
	turnedAway(t, p0.Addr(), "")
	g.Expect(p0.Close()).To(Succeed())

	s := newServer(t, nil)
	p, err := Start("127.0.0.1:0", s.addr(), Options{Identify: fromHeader})
	g.Expect(err).NotTo(HaveOccurred())
	addr := p.Addr()
	a, sa := peerPair(t, p, s, "a")
	p.Set("a", Up, Rule{Block: true})
	io.WriteString(a, "held")
	slow := dial(t, addr) // still being identified
	io.WriteString(slow, "GET / HTTP/1.1\r\n")
	idle := dial(t, addr)
	_ = idle
	g.Expect(p.Close()).To(Succeed())
	g.Expect(p.Close()).To(Succeed(), "twice is fine")
	closed(t, a)
	closed(t, sa)
	ln, err := net.Listen("tcp", addr)
	g.Expect(err).NotTo(HaveOccurred(), "the port is free")
	ln.Close()
}

func TestScanHead(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want headScan
		n    int
	}{
		{"GET whole - whole", "GET / HTTP/1.1\r\nHost: x\r\n\r\nnext", whole, 27},
		{"HTTP/1.0 - whole", "GET / HTTP/1.0\r\n\r\n", whole, 18},
		{"method only - needMore", "POS", needMore, 0},
		{"line without end - needMore", "POST /raft HTTP/1.", needMore, 0},
		{"headers without end - needMore", "POST /raft HTTP/1.1\r\nX-Server-From: a\r\n", needMore, 0},
		{"HTTP/2 preface - notHTTP", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", notHTTP, 0},
		{"TLS hello - notHTTP", "\x16\x03\x01\x02\x00", notHTTP, 0},
		{"lower-case method - notHTTP", "get / HTTP/1.1\r\n\r\n", notHTTP, 0},
		{"leading space - notHTTP", " GET / HTTP/1.1\r\n\r\n", notHTTP, 0},
		{"no version - notHTTP", "GET /\r\n\r\n", notHTTP, 0},
		{"endless line - notHTTP", "GET /" + strings.Repeat("a", maxLine), notHTTP, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, n := scanHead([]byte(tc.in))
			if got != tc.want || n != tc.n {
				t.Fatalf("scanHead(%q) = %v, %d; want %v, %d", tc.in, got, n, tc.want, tc.n)
			}
		})
	}
}

// The head the sniffer releases is byte for byte what came in, however it
// was cut into reads.
func TestSnifferKeepsBytes(t *testing.T) {
	in := "GET /raft/probing HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /raft/probing HTTP/1.1\r\nHost: x\r\n\r\n" +
		"POST /raft HTTP/1.1\r\nX-Server-From: a\r\nContent-Length: 3\r\n\r\nabc" + "rest"
	for cut := 1; cut < len(in); cut += 7 {
		sn := &sniffer{identify: fromHeader, active: true}
		var out bytes.Buffer
		r := bufio.NewReaderSize(strings.NewReader(in), 16)
		buf := make([]byte, cut)
		for {
			n, err := r.Read(buf)
			if !sn.active { // as the reader does: past the sniffer, bytes go straight on
				out.Write(buf[:n])
			} else {
				for _, b := range sn.feed(buf[:n], time.Now()) {
					out.Write(b)
				}
			}
			if err != nil {
				break
			}
		}
		if out.String() != in || sn.name != "a" || sn.active {
			t.Fatalf("reads of %d: released %q, named %q, active %v", cut, out.String(), sn.name, sn.active)
		}
	}
}
