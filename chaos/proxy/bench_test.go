package proxy

import (
	"io"
	"net"
	"testing"
)

// Forwarding throughput over one connection, 1 MiB writes into a sink.
func BenchmarkThroughput(b *testing.B) {
	for _, via := range []string{"direct", "proxy", "proxy-with-rules"} {
		b.Run(via, func(b *testing.B) {
			got := make(chan int64, 1)
			s := newServer(b, func(c net.Conn) {
				n, _ := io.Copy(io.Discard, c)
				c.Close()
				got <- n
			})
			addr := s.addr()
			if via != "direct" {
				p := startProxy(b, addr, Options{})
				if via == "proxy-with-rules" { // rules for others: the per-chunk lookup is not free
					p.Set("someone", Up, Rule{Latency: 1})
					p.Set("*", Down, Rule{Latency: 0, Jitter: 0, BytesPerSecond: 1 << 40})
				}
				addr = p.Addr()
			}
			c := dial(b, addr)
			buf := make([]byte, 1<<20)
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				if _, err := c.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			c.(*net.TCPConn).CloseWrite()
			if n := <-got; n != int64(b.N)*int64(len(buf)) {
				b.Fatalf("sink got %d bytes, want %d", n, b.N*len(buf))
			}
		})
	}
}

// One small message there and back per op: twice the per-chunk overhead
// (read, queue hand-off, rule lookup, write) on top of loopback.
func BenchmarkRoundTrip(b *testing.B) {
	for _, via := range []string{"direct", "proxy"} {
		b.Run(via, func(b *testing.B) {
			s := newServer(b, echo)
			addr := s.addr()
			if via == "proxy" {
				addr = startProxy(b, addr, Options{}).Addr()
			}
			c := dial(b, addr)
			msg := make([]byte, 64)
			for b.Loop() {
				if _, err := c.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c, msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
