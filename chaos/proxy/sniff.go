package proxy

import (
	"bufio"
	"bytes"
	"net/http"
	"time"
)

const (
	maxMethod = 16       // longest method token we take for HTTP
	maxLine   = 8 << 10  // longest request line
	maxHead   = 64 << 10 // longest request head we hold back to parse
)

// sniffer reads the request heads at the start of a connection's Up stream
// to name its source. It holds a head back until it is whole, then releases
// it unchanged. It stops (and passes everything through) once the source is
// named, the traffic is not HTTP/1.x, a request has a body, or a head does
// not arrive whole in time.
type sniffer struct {
	identify func(http.Header) string
	active   bool
	pending  []byte    // the part of a head read so far
	since    time.Time // when pending's first byte arrived
	name     string    // the source once named
}

type headScan int

const (
	needMore headScan = iota
	notHTTP
	whole
)

// scanHead looks at b, which starts where a request would, and says whether
// it holds a whole HTTP/1.x request head (and how long it is), cannot be one,
// or may still become one.
func scanHead(b []byte) (headScan, int) {
	sp := bytes.IndexByte(b, ' ')
	method := b
	if sp >= 0 {
		method = b[:sp]
	}
	if len(method) > maxMethod || sp == 0 {
		return notHTTP, 0
	}
	for _, ch := range method {
		if ch < 'A' || ch > 'Z' {
			return notHTTP, 0
		}
	}
	eol := bytes.Index(b, []byte("\r\n"))
	if eol < 0 {
		if len(b) > maxLine {
			return notHTTP, 0
		}
		return needMore, 0
	}
	line := b[:eol]
	if sp < 0 || !(bytes.HasSuffix(line, []byte(" HTTP/1.1")) || bytes.HasSuffix(line, []byte(" HTTP/1.0"))) {
		return notHTTP, 0 // the HTTP/2 preface "PRI * HTTP/2.0" ends here
	}
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		if len(b) > maxHead {
			return notHTTP, 0
		}
		return needMore, 0
	}
	return whole, end + 4
}

func parseHead(head []byte) (*http.Request, error) {
	return http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
}

// bodiless reports whether the request ends with its head, so that the next
// request's head follows right after it.
func bodiless(r *http.Request) bool {
	return r.ContentLength == 0 && len(r.TransferEncoding) == 0 &&
		r.Method != http.MethodConnect && r.Header.Get("Upgrade") == ""
}

// feed takes bytes read from the connection and returns what may be
// forwarded now, in order. It may hold bytes back (returning nothing).
func (s *sniffer) feed(b []byte, now time.Time) [][]byte {
	if len(s.pending) == 0 {
		s.since = now
	}
	s.pending = append(s.pending, b...)
	var out [][]byte
	for s.active && len(s.pending) > 0 {
		res, n := scanHead(s.pending)
		switch res {
		case needMore:
			return out
		case notHTTP:
			return append(out, s.stop())
		}
		head := s.pending[:n:n]
		req, err := parseHead(head)
		if err != nil {
			return append(out, s.stop())
		}
		if s.name = s.identify(req.Header); s.name != "" || !bodiless(req) {
			return append(out, s.stop())
		}
		out = append(out, head)
		s.pending = append([]byte(nil), s.pending[n:]...)
		s.since = now
	}
	return out
}

// giveUp is called when a head did not arrive whole in time: it names the
// source from the header lines that did come, if it can, and releases them.
func (s *sniffer) giveUp() [][]byte {
	if i := bytes.LastIndex(s.pending, []byte("\r\n")); i >= 0 {
		partial := append(s.pending[:i+2:i+2], "\r\n"...)
		if req, err := parseHead(partial); err == nil {
			s.name = s.identify(req.Header)
		}
	}
	if len(s.pending) == 0 {
		s.active = false
		return nil
	}
	return [][]byte{s.stop()}
}

// stop ends sniffing and returns the bytes held back.
func (s *sniffer) stop() []byte {
	s.active = false
	b := s.pending
	s.pending = nil
	return b
}
