package proxy

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

const (
	bigSize   = 32 << 10 // what one read may return
	smallSize = 4 << 10  // a read this short is copied to a small buffer
	// maxQueued bounds the buffer memory a direction holds between its
	// reader and its writer (under latency, or a Block); past it the reader
	// stops reading and the sender feels TCP's backpressure. Counting memory
	// rather than chunks keeps many small messages from queueing in the
	// kernel, where they would not be stamped with their arrival.
	maxQueued   = 2 << 20
	dialTimeout = 5 * time.Second
	// minPiece is the smallest write under a bandwidth limit; larger limits
	// write a twentieth of a second's worth at a time.
	minPiece = 1 << 10
)

var (
	bigPool   = sync.Pool{New: func() any { b := make([]byte, bigSize); return &b }}
	smallPool = sync.Pool{New: func() any { b := make([]byte, smallSize); return &b }}
)

// chunk is what one read returned, stamped with when it was read.
type chunk struct {
	data []byte
	buf  *[]byte // the pool buffer data lives in, or nil
	at   time.Time
	eof  bool // the sender closed its side (no data): it too waits for the rules
}

// cost is the memory the chunk holds.
func (ch chunk) cost() int64 {
	if ch.buf != nil {
		return int64(cap(*ch.buf))
	}
	return int64(len(ch.data))
}

func (ch chunk) free() {
	switch {
	case ch.buf == nil:
	case cap(*ch.buf) == bigSize:
		bigPool.Put(ch.buf)
	default:
		smallPool.Put(ch.buf)
	}
}

// queue carries one direction's chunks from its reader to its writer,
// bounded by maxQueued bytes of buffers.
type queue struct {
	ch    chan chunk
	held  atomic.Int64
	space chan struct{} // a token when the writer freed some
}

func newQueue() *queue {
	return &queue{ch: make(chan chunk, maxQueued/smallSize+1), space: make(chan struct{}, 1)}
}

func (q *queue) put(ch chunk, done <-chan struct{}) bool {
	for q.held.Load() >= maxQueued {
		select {
		case <-q.space:
		case <-done:
			return false
		}
	}
	q.held.Add(ch.cost())
	select {
	case q.ch <- ch:
		return true
	case <-done:
		return false
	}
}

// release gives back a chunk the writer is done with.
func (q *queue) release(ch chunk) {
	q.held.Add(-ch.cost())
	ch.free()
	select {
	case q.space <- struct{}{}:
	default:
	}
}

// conn is one proxied connection. Four goroutines serve it: per direction a
// reader (source socket → queue) and a writer (queue → rules → destination
// socket), so that delays pipeline like they do on a wire.
type conn struct {
	p      *Proxy
	id     uint64
	client net.Conn
	src    atomic.Pointer[string]
	held   [2]atomic.Bool  // per direction: a writer parked on a Block with bytes in hand
	bytes  [2]atomic.Int64 // per direction: bytes forwarded
	open   atomic.Int32    // directions whose end of stream is not yet delivered
	done   chan struct{}   // closed by close

	mu     sync.Mutex
	server net.Conn
	closed bool
}

func newConn(p *Proxy, id uint64, client net.Conn) *conn {
	c := &conn{p: p, id: id, client: client, done: make(chan struct{})}
	c.open.Store(2)
	return c
}

func (c *conn) source() string {
	if s := c.src.Load(); s != nil {
		return *s
	}
	return ""
}

// ending says why a connection is closed.
type ending int

const (
	finished ending = iota // both sides closed, or the proxy closes: FIN
	broken                 // a side reset or failed: pass the reset on
	refused                // a Refuse rule covers it: reset, counted
	faulted                // ResetProbability, ResetAll, a lifted Block: reset, counted
)

// close closes both sockets, with a reset (RST) unless the connection
// finished, and reports whether this call was the one that closed it. The
// count is taken before the sockets close, so that whoever sees them closed
// sees it in Stats.
func (c *conn) close(why ending) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.closed = true
	switch why {
	case refused:
		c.p.refused.Add(1)
	case faulted:
		c.p.reset.Add(1)
	}
	reset := why != finished
	close(c.done)
	for _, nc := range []net.Conn{c.client, c.server} {
		if nc == nil {
			continue
		}
		if tc, ok := nc.(*net.TCPConn); ok && reset {
			tc.SetLinger(0)
		}
		nc.Close()
	}
	return true
}

func (c *conn) setServer(s net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.server = s
	return true
}

// serve runs one connection: names its source from its first request (before
// dialing the target, so that a refused source never reaches it), dials, and
// pumps both ways until both are done.
func (p *Proxy) serve(c *conn) {
	defer p.wg.Done()
	defer p.forget(c)
	if p.rules.Load().refusesAll() {
		c.close(refused)
		return
	}
	up := &reader{c: c, from: c.client, sn: &sniffer{identify: p.opts.Identify, active: p.opts.Identify != nil}}
	first, eof, err := up.first(p.opts.IdentifyWait)
	if err != nil {
		c.close(broken)
		return
	}
	if p.rules.Load().refuses(c.source()) {
		c.close(refused)
		return
	}
	d := net.Dialer{Timeout: dialTimeout}
	server, err := d.DialContext(p.ctx, "tcp", p.target)
	if err != nil {
		c.close(broken) // as the target would: refused
		return
	}
	if !c.setServer(server) {
		server.Close()
		return
	}
	upQ, downQ := newQueue(), newQueue()
	down := &reader{c: c, from: server, sn: &sniffer{}}
	var wg sync.WaitGroup
	wg.Go(func() { newWriter(c, Up, server, upQ).run() })
	wg.Go(func() { newWriter(c, Down, c.client, downQ).run() })
	wg.Go(func() { down.run(downQ, nil, false) })
	up.run(upQ, first, eof)
	wg.Wait()
}

// reader reads one direction into its queue; on the Up side it sniffs the
// request heads first.
type reader struct {
	c        *conn
	from     net.Conn
	sn       *sniffer
	deadline bool    // a read deadline is set on from
	scratch  []chunk // step's result, reused: its caller is done with it before the next step
	big      *[]byte // the buffer to read into, kept while reads are short
}

// first reads until the first request head is whole, the traffic is known
// not to be HTTP/1.x, wait has passed, or the sender closed; it returns the
// chunks to forward first.
func (r *reader) first(wait time.Duration) ([]chunk, bool, error) {
	var out []chunk
	until := time.Now().Add(wait)
	for r.sn.active && len(out) == 0 {
		chunks, eof, timedOut, err := r.step(until)
		out = append(out, chunks...)
		if eof || err != nil {
			return out, eof, err
		}
		if timedOut {
			if len(r.sn.pending) > 0 {
				out = append(out, r.giveUp()...)
			}
			break
		}
	}
	return out, false, nil
}

// run forwards what first returned, then reads until end of stream or error.
func (r *reader) run(q *queue, first []chunk, eof bool) {
	defer func() {
		if r.big != nil {
			bigPool.Put(r.big)
		}
	}()
	for _, ch := range first {
		if !q.put(ch, r.c.done) {
			return
		}
	}
	for !eof {
		var until time.Time
		if r.sn.active && len(r.sn.pending) > 0 {
			until = r.sn.since.Add(r.c.p.opts.IdentifyWait)
		}
		chunks, e, timedOut, err := r.step(until)
		if timedOut {
			chunks = append(chunks, r.giveUp()...)
		}
		for _, ch := range chunks {
			if !q.put(ch, r.c.done) {
				return
			}
		}
		if err != nil {
			r.c.close(broken) // the sender reset, or the connection was closed
			return
		}
		eof = e
	}
	q.put(chunk{eof: true, at: time.Now()}, r.c.done)
}

// step does one read. until, if not zero, is a deadline for it (timedOut).
func (r *reader) step(until time.Time) (out []chunk, eof, timedOut bool, err error) {
	if !until.IsZero() {
		r.from.SetReadDeadline(until)
		r.deadline = true
	} else if r.deadline {
		r.from.SetReadDeadline(time.Time{})
		r.deadline = false
	}
	if r.big == nil {
		r.big = bigPool.Get().(*[]byte)
	}
	n, err := r.from.Read(*r.big)
	now := time.Now()
	out = r.scratch[:0]
	switch {
	case n == 0:
	case r.sn.active:
		out = r.wrap(out, r.sn.feed((*r.big)[:n], now), now)
	case n <= smallSize:
		sb := smallPool.Get().(*[]byte)
		out = append(out, chunk{data: (*sb)[:copy(*sb, (*r.big)[:n])], buf: sb, at: now})
	default:
		out = append(out, chunk{data: (*r.big)[:n], buf: r.big, at: now})
		r.big = nil
	}
	r.scratch = out
	switch {
	case err == nil:
	case errors.Is(err, os.ErrDeadlineExceeded) && !until.IsZero():
		return out, false, true, nil
	case errors.Is(err, io.EOF):
		if r.sn.active {
			out = append(out, r.giveUp()...)
		}
		return out, true, false, nil
	default:
		return out, false, false, err
	}
	return out, false, false, nil
}

func (r *reader) giveUp() []chunk { return r.wrap(nil, r.sn.giveUp(), time.Now()) }

// wrap turns what the sniffer released into chunks, after naming the
// connection's source if the sniffer just learnt it (so that the writer
// applies that source's rules to the very head that named it).
func (r *reader) wrap(out []chunk, bs [][]byte, now time.Time) []chunk {
	if r.sn.name != "" && r.c.source() == "" {
		name := r.sn.name
		r.c.src.Store(&name)
	}
	for _, b := range bs {
		if len(b) > 0 {
			out = append(out, chunk{data: b, at: now})
		}
	}
	return out
}

// writer applies the rules to one direction's chunks and writes them out.
type writer struct {
	c       *conn
	dir     Direction
	to      net.Conn
	q       *queue
	rng     *rand.Rand
	timer   *time.Timer
	lastDue time.Time // when the previous chunk was due (keeps order under jitter)
	bwNext  time.Time // when the bandwidth limit lets the next piece go
}

func newWriter(c *conn, dir Direction, to net.Conn, q *queue) *writer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &writer{
		c: c, dir: dir, to: to, q: q, timer: t,
		rng: rand.New(rand.NewPCG(uint64(c.p.opts.Seed), c.id<<1|uint64(dir))),
	}
}

func (w *writer) run() {
	defer w.timer.Stop()
	for {
		var ch chunk
		select {
		case ch = <-w.q.ch:
		case <-w.c.done:
			return
		}
		ok := w.deliver(ch)
		w.q.release(ch)
		if !ok {
			return
		}
		if ch.eof {
			if cw, ok := w.to.(interface{ CloseWrite() error }); ok {
				cw.CloseWrite()
			}
			if w.c.open.Add(-1) == 0 {
				w.c.close(finished)
			}
			return
		}
	}
}

// deliver forwards one chunk (or lets an end of stream go) under the rules
// in force, consulted again before every write; false means the connection
// is gone.
func (w *writer) deliver(ch chunk) bool {
	r, ok := w.admit()
	if !ok {
		return false
	}
	if r.ResetProbability > 0 && w.rng.Float64() < r.ResetProbability {
		w.c.close(faulted)
		return false
	}
	if r.Latency > 0 || r.Jitter > 0 {
		d := r.Latency
		if r.Jitter > 0 {
			d += time.Duration(w.rng.Int64N(int64(r.Jitter)))
		}
		due := ch.at.Add(d)
		if due.Before(w.lastDue) {
			due = w.lastDue
		}
		w.lastDue = due
		if !w.sleepUntil(due) {
			return false
		}
	}
	for data := ch.data; len(data) > 0; {
		if r, ok = w.admit(); !ok {
			return false
		}
		piece := data
		if r.BytesPerSecond > 0 {
			piece = data[:min(len(data), max(minPiece, r.BytesPerSecond/20))]
			now := time.Now()
			if w.bwNext.Before(now) {
				w.bwNext = now
			} else if !w.sleepUntil(w.bwNext) {
				return false
			}
			w.bwNext = w.bwNext.Add(time.Duration(len(piece)) * time.Second / time.Duration(r.BytesPerSecond))
		}
		n, err := w.to.Write(piece)
		w.c.bytes[w.dir].Add(int64(n))
		if err != nil {
			w.c.close(broken) // the receiver is gone: pass the reset on
			return false
		}
		data = data[n:]
	}
	return true
}

// admit waits while this direction is blocked and returns the rule in force
// once it may send; false means the connection is gone (or was closed here
// because it is refused, or its block was lifted).
func (w *writer) admit() (Rule, bool) {
	c := w.c
	for {
		rs := c.p.rules.Load()
		src := c.source()
		r := rs.lookup(src, w.dir)
		switch {
		case r.Refuse || rs.refuses(src): // a Refuse on either direction
			c.close(refused)
			return r, false
		case r.Block:
			c.held[w.dir].Store(true)
			select {
			case <-rs.changed:
				continue
			case <-c.done:
				return r, false
			}
		case c.held[w.dir].Load():
			// The block was lifted: what the peers think of this connection
			// is stale, so reset it rather than deliver late bytes.
			c.close(faulted)
			return r, false
		}
		return r, true
	}
}

func (w *writer) sleepUntil(t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	w.timer.Reset(d)
	select {
	case <-w.timer.C:
		return true
	case <-w.c.done:
		w.timer.Stop()
		return false
	}
}
