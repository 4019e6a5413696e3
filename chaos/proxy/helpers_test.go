package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// noLeaks fails the test if goroutines started during it are still running
// once its other cleanups (registered later, run earlier) are done.
func noLeaks(t testing.TB) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		g := NewWithT(t)
		g.Eventually(runtime.NumGoroutine).WithTimeout(5*time.Second).WithPolling(20*time.Millisecond).
			Should(BeNumerically("<=", before), func() string {
				buf := make([]byte, 1<<20)
				return fmt.Sprintf("goroutines left behind:\n%s", buf[:runtime.Stack(buf, true)])
			})
	})
}

// server is a TCP listener on 127.0.0.1 that hands every connection it
// accepts to the test (conns) or to handle.
type server struct {
	ln     net.Listener
	conns  chan net.Conn
	wg     sync.WaitGroup
	mu     sync.Mutex
	open   []net.Conn
	handle func(net.Conn)
}

// newServer starts a server; handle nil means "send conns to the test".
func newServer(t testing.TB, handle func(net.Conn)) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{ln: ln, conns: make(chan net.Conn, 100), handle: handle}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.open = append(s.open, c)
			s.mu.Unlock()
			if handle == nil {
				s.conns <- c
				continue
			}
			s.wg.Go(func() { handle(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.open {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *server) addr() string { return s.ln.Addr().String() }

// accept returns the next connection the server got, or fails.
func (s *server) accept(t testing.TB) net.Conn {
	t.Helper()
	select {
	case c := <-s.conns:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("the server got no connection")
		return nil
	}
}

// acceptsNone checks that the server gets no connection within d.
func (s *server) acceptsNone(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case <-s.conns:
		t.Fatal("the server got a connection it should not have")
	case <-time.After(d):
	}
}

func echo(c net.Conn) {
	io.Copy(c, c)
	c.Close()
}

func startProxy(t testing.TB, target string, opts Options) *Proxy {
	t.Helper()
	p, err := Start("127.0.0.1:0", target, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// fromHeader names a source by its X-Server-From header, as the tests' peers send it.
func fromHeader(h http.Header) string { return h.Get("X-Server-From") }

// peerHead is the head of a stream GET as a peer named from sends it.
func peerHead(from string) string {
	return "GET /raftstream/message/" + from + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
		"X-Server-From: " + from + "\r\nX-PeerURLs: http://" + from + ".invalid:2380\r\n\r\n"
}

// peerPair opens a connection through p as peer from and returns both ends,
// the server's with the request head already read off.
func peerPair(t testing.TB, p *Proxy, s *server, from string) (client, srv net.Conn) {
	t.Helper()
	client = dial(t, p.Addr())
	head := peerHead(from)
	if _, err := io.WriteString(client, head); err != nil {
		t.Fatal(err)
	}
	srv = s.accept(t)
	got := make([]byte, len(head))
	srv.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(srv, got); err != nil || string(got) != head {
		t.Fatalf("head through the proxy: %q, %v", got, err)
	}
	srv.SetReadDeadline(time.Time{})
	return client, srv
}

// send writes msg on from and checks it arrives whole on to within 5s.
func send(t testing.TB, from, to net.Conn, msg string) {
	t.Helper()
	if _, err := io.WriteString(from, msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	to.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer to.SetReadDeadline(time.Time{})
	if _, err := io.ReadFull(to, got); err != nil || string(got) != msg {
		t.Fatalf("sent %q, got %q (%v)", msg, got, err)
	}
}

// silent checks that nothing can be read from c within d.
func silent(t testing.TB, c net.Conn, d time.Duration) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, 1)
	n, err := c.Read(buf)
	if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read %d bytes (%v), want nothing for %v", n, err, d)
	}
}

// closed checks that c is closed by the other side (EOF or reset) within 5s.
func closed(t testing.TB, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, 64<<10)
	for {
		_, err := c.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("the connection is still open")
		}
		if err != nil {
			return
		}
	}
}

// turnedAway checks that a connection to addr sending first is refused:
// either the dial fails (the reset came before connect returned, as it can on
// loopback) or the connection is closed right after.
func turnedAway(t testing.TB, addr, first string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer c.Close()
	io.WriteString(c, first)
	closed(t, c)
}
