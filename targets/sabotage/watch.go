package sabotage

import (
	"context"
	"fmt"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// Watch opens the inner watch and puts a goroutine between its channel and
// the one returned, where the stream-level sabotages happen.
func (c *client) Watch(ctx context.Context, req history.WatchRequest) <-chan targets.WatchMessage {
	st := &stream{c: c, s: c.s, ctx: ctx, req: req, out: make(chan targets.WatchMessage, 16),
		last: map[string]history.KV{}}
	go st.run(c.inner.Watch(ctx, req))
	return st.out
}

// stream is one wrapped watch stream.
type stream struct {
	c   *client
	s   *Saboteur
	ctx context.Context
	req history.WatchRequest
	out chan targets.WatchMessage

	events int // events delivered so far
	fw     targets.Forwarder
	last   map[string]history.KV // wrong-prev-kv: the last put delivered per key
	held   *held                 // a message held back (drop-event, reorder-events)
	// compaction-silent: the inner watch that continues this stream once
	// the first one ends, and whether its created response is still to be
	// swallowed.
	next        <-chan targets.WatchMessage
	skipCreated bool
	// quiet-end: the caller's channel was closed without a word.
	quiet bool
}

// held is a message held back until the next one shows whether the
// sabotage works out.
type held struct {
	orig, mod targets.WatchMessage
	rev       int64 // drop-event: the revision of the dropped event
	start     time.Duration
	details   map[string]string
}

func (st *stream) run(in <-chan targets.WatchMessage) {
	defer func() {
		if !st.quiet {
			close(st.out)
		}
	}()
	for {
		m, ok := <-in
		if !ok {
			if st.next != nil {
				in, st.next = st.next, nil
				continue
			}
			break
		}
		st.handle(m)
		if st.quiet {
			// quiet-end closed the caller's stream: keep draining the inner
			// one until the caller's cancel closes it.
			for range in {
			}
			return
		}
	}
	if h := st.held; h != nil { // the stream ended first: nothing happened
		st.held = nil
		st.emit(h.orig)
		st.s.release()
	}
}

// emit forwards one message; a message left with nothing to say (all its
// events dropped) is not forwarded.
func (st *stream) emit(m targets.WatchMessage) {
	r := &m.Response
	if m.Err == nil && len(r.Events) == 0 && !r.Created && !r.Progress && !r.Canceled && r.CompactRevision == 0 {
		return
	}
	for _, ev := range r.Events {
		if ev.Type == history.EventPut {
			st.last[ev.KV.Key] = ev.KV
		}
	}
	st.events += len(r.Events)
	st.fw.Send(st.ctx, st.out, m)
}

func (st *stream) handle(m targets.WatchMessage) {
	if st.skipCreated && m.Err == nil && m.Response.Created {
		st.skipCreated = false
		return
	}
	if st.held != nil {
		st.resolve(m)
		return
	}
	r := m.Response
	if m.Err != nil || (r.Canceled && st.s.mode.Name != "compaction-silent") {
		st.emit(m)
		return
	}
	switch st.s.mode.Name {
	case "drop-event":
		st.dropEvent(m)
	case "duplicate-event":
		st.duplicateEvent(m)
	case "reorder-events":
		st.reorderEvents(m)
	case "split-revision":
		st.splitRevision(m)
	case "future-progress":
		st.futureProgress(m)
	case "wrong-prev-kv":
		st.wrongPrevKV(m)
	case "fake-create":
		st.fakeCreate(m)
	case "resume-late":
		st.resumeLate(m)
	case "compaction-silent":
		st.compactionSilent(m)
	case "out-of-filter":
		st.outOfFilter(m)
	case "quiet-end":
		st.quietEnd(m)
	default:
		st.emit(m)
	}
}

// withEvents returns m carrying evs instead of its events.
func withEvents(m targets.WatchMessage, evs []history.Event) targets.WatchMessage {
	m.Response.Events = evs
	return m
}

func maxRevision(evs []history.Event) int64 {
	var r int64
	for _, ev := range evs {
		r = max(r, ev.Revision())
	}
	return r
}

// details starts a fault's details with the event concerned.
func (st *stream) details(ev history.Event, what string, a ...any) map[string]string {
	d := map[string]string{"key": ev.KV.Key, "revision": fmt.Sprint(ev.Revision()), "what": fmt.Sprintf(what, a...)}
	if st.req.StartRevision > 0 {
		d["start_revision"] = fmt.Sprint(st.req.StartRevision)
	}
	return d
}

// resolve decides about a held message when the next one arrives.
func (st *stream) resolve(m targets.WatchMessage) {
	h := st.held
	st.held = nil
	r := m.Response
	clean := m.Err == nil && !r.Canceled
	switch st.s.mode.Name {
	case "drop-event":
		// Only an event or a progress notification past the dropped event
		// makes the drop visible: without one it would be the last thing
		// the watch saw.
		if clean && (len(r.Events) > 0 || (r.Progress && r.Revision >= h.rev)) {
			st.emit(h.mod)
			st.s.commit(st.c, h.start, h.details)
			st.emit(m)
			return
		}
	case "reorder-events":
		if clean && len(r.Events) > 0 && r.Events[0].Revision() > maxRevision(h.orig.Response.Events) {
			st.emit(m)
			st.s.commit(st.c, h.start, h.details)
			st.emit(h.orig)
			return
		}
	}
	st.emit(h.orig)
	st.s.release()
	st.handle(m)
}

// dropEvent drops one event of a response, once the watch has delivered
// an event before (so the gap lies inside what it vouches for). When the
// dropped event is the response's last, the response is held until
// something past it arrives.
func (st *stream) dropEvent(m targets.WatchMessage) {
	evs := m.Response.Events
	if len(evs) == 0 || st.events == 0 || !st.s.claim(0) {
		st.emit(m)
		return
	}
	start := st.s.rec.Now()
	i := st.s.intn(len(evs))
	ev := evs[i]
	kept := append(append([]history.Event(nil), evs[:i]...), evs[i+1:]...)
	d := st.details(ev, "dropped the %s of %s at revision %d from a watch response", ev.Type, ev.KV.Key, ev.Revision())
	if i < len(evs)-1 {
		st.emit(withEvents(m, kept))
		st.s.commit(st.c, start, d)
		return
	}
	st.held = &held{orig: m, mod: withEvents(m, kept), rev: ev.Revision(), start: start, details: d}
}

// duplicateEvent delivers one event twice, the copy right after it.
func (st *stream) duplicateEvent(m targets.WatchMessage) {
	evs := m.Response.Events
	if len(evs) == 0 || !st.s.claim(0) {
		st.emit(m)
		return
	}
	start := st.s.rec.Now()
	i := st.s.intn(len(evs))
	ev := evs[i]
	dup := append(append(append([]history.Event(nil), evs[:i+1]...), ev), evs[i+1:]...)
	st.emit(withEvents(m, dup))
	st.s.commit(st.c, start, st.details(ev, "delivered the %s of %s at revision %d twice", ev.Type, ev.KV.Key, ev.Revision()))
}

// reorderEvents holds a response back and delivers it after the next one.
func (st *stream) reorderEvents(m targets.WatchMessage) {
	evs := m.Response.Events
	if len(evs) == 0 || !st.s.claim(0) {
		st.emit(m)
		return
	}
	ev := evs[0]
	st.held = &held{orig: m, start: st.s.rec.Now(), details: st.details(ev,
		"held back a response with %d events from revision %d (first: %s of %s) and delivered it after the next response",
		len(evs), ev.Revision(), ev.Type, ev.KV.Key)}
}

// splitRevision delivers the events of one revision in two responses.
func (st *stream) splitRevision(m targets.WatchMessage) {
	evs := m.Response.Events
	j := -1
	for i := 0; i+1 < len(evs); i++ {
		if evs[i].Revision() == evs[i+1].Revision() {
			j = i
			break
		}
	}
	if j < 0 || !st.s.claim(0) {
		st.emit(m)
		return
	}
	start := st.s.rec.Now()
	ev := evs[j+1]
	st.emit(withEvents(m, append([]history.Event(nil), evs[:j+1]...)))
	st.emit(withEvents(m, append([]history.Event(nil), evs[j+1:]...)))
	st.s.commit(st.c, start, st.details(ev, "split revision %d: its events up to %s in one response, from %s on in the next",
		ev.Revision(), evs[j].KV.Key, ev.KV.Key))
}

// futureProgress sends a progress notification at the revision of the
// events about to be delivered, before them.
func (st *stream) futureProgress(m targets.WatchMessage) {
	evs := m.Response.Events
	if len(evs) == 0 || st.events == 0 || !st.s.claim(0) {
		st.emit(m)
		return
	}
	start := st.s.rec.Now()
	p := maxRevision(evs)
	st.emit(targets.WatchMessage{Response: history.WatchResponse{Revision: p, Progress: true}})
	st.emit(m)
	ev := evs[0]
	st.s.commit(st.c, start, st.details(ev, "sent a progress notification at revision %d, then %d events from revision %d (first: %s of %s)",
		p, len(evs), ev.Revision(), ev.Type, ev.KV.Key))
}

// wrongPrevKV alters the prev_kv of one event on a prev_kv watch: an older
// value of the key this watch delivered, else a value never written.
func (st *stream) wrongPrevKV(m targets.WatchMessage) {
	evs := m.Response.Events
	i := -1
	for k, ev := range evs {
		if ev.PrevKV != nil {
			i = k
			break
		}
	}
	if !st.req.PrevKV || i < 0 || !st.s.claim(0) {
		st.emit(m)
		return
	}
	start := st.s.rec.Now()
	out := append([]history.Event(nil), evs...)
	ev := out[i]
	was := *ev.PrevKV
	wrong := was
	if old, ok := st.last[ev.KV.Key]; ok && old.Value != was.Value && old.ModRevision < was.ModRevision {
		wrong = old
	} else {
		wrong.Value = fmt.Sprintf("wrong.%d", st.s.intn(1_000_000))
	}
	ev.PrevKV = &wrong
	out[i] = ev
	st.emit(withEvents(m, out))
	d := st.details(ev, "the %s of %s at revision %d carried prev_kv %q (mod revision %d) instead of %q (mod revision %d)",
		ev.Type, ev.KV.Key, ev.Revision(), wrong.Value, wrong.ModRevision, was.Value, was.ModRevision)
	d["value"], d["real_value"] = wrong.Value, was.Value
	st.s.commit(st.c, start, d)
}

// fakeCreate marks a put on an existing key as a create.
func (st *stream) fakeCreate(m targets.WatchMessage) {
	evs := m.Response.Events
	i := -1
	for k, ev := range evs {
		if ev.Type == history.EventPut && ev.KV.Version > 1 {
			i = k
			break
		}
	}
	if i < 0 || !st.s.claim(0) {
		st.emit(m)
		return
	}
	start := st.s.rec.Now()
	out := append([]history.Event(nil), evs...)
	ev := out[i]
	was := ev.KV
	ev.KV.Version, ev.KV.CreateRevision, ev.IsCreate = 1, ev.KV.ModRevision, true
	out[i] = ev
	st.emit(withEvents(m, out))
	st.s.commit(st.c, start, st.details(ev, "marked the put of %s at revision %d as a create (version %d, create revision %d became 1, %d)",
		ev.KV.Key, ev.Revision(), was.Version, was.CreateRevision, ev.KV.ModRevision))
}

// resumeLate drops the events of the first revision a watch started at an
// explicit revision would deliver.
func (st *stream) resumeLate(m targets.WatchMessage) {
	evs := m.Response.Events
	if st.req.StartRevision <= 0 || st.events > 0 || len(evs) == 0 || !st.s.claim(0) {
		st.emit(m)
		return
	}
	start := st.s.rec.Now()
	first := evs[0].Revision()
	var kept []history.Event
	n := 0
	for _, ev := range evs {
		if ev.Revision() == first {
			n++
			continue
		}
		kept = append(kept, ev)
	}
	st.emit(withEvents(m, kept))
	st.s.commit(st.c, start, st.details(evs[0], "a watch started at revision %d skipped its first revision %d (%d events, first: %s of %s)",
		st.req.StartRevision, first, n, evs[0].Type, evs[0].KV.Key))
}

// compactionSilent swallows the server's cancel of a watch whose start
// revision is compacted and carries on with a watch from the compact
// revision, as if the first had delivered it.
func (st *stream) compactionSilent(m targets.WatchMessage) {
	r := m.Response
	if !r.Canceled || r.CompactRevision <= 0 || st.next != nil || !st.s.claim(0) {
		st.emit(m)
		return
	}
	start := st.s.rec.Now()
	req := st.req
	req.StartRevision = r.CompactRevision
	st.next, st.skipCreated = st.c.inner.Watch(st.ctx, req), true
	st.s.commit(st.c, start, map[string]string{
		"key": st.req.Key, "revision": fmt.Sprint(r.CompactRevision), "start_revision": fmt.Sprint(st.req.StartRevision),
		"what": fmt.Sprintf("the server canceled a watch from revision %d as compacted at %d; the cancel was swallowed "+
			"and the stream went on from revision %d", st.req.StartRevision, r.CompactRevision, r.CompactRevision),
	})
}

// outOfFilter adds an event the watch excludes after a response's last
// event, at that event's revision. Watches of one key or with a filter go
// first: plain range watches become eligible a little later.
func (st *stream) outOfFilter(m targets.WatchMessage) {
	evs := m.Response.Events
	if len(evs) == 0 {
		st.emit(m)
		return
	}
	last := evs[len(evs)-1]
	ev, why, ok := excluded(st.req, last.Revision())
	special := st.req.End == "" || st.req.NoPut || st.req.NoDelete
	delay := st.s.preferDelay
	if special {
		delay = 0
	}
	if !ok || !st.s.claim(delay) {
		st.emit(m)
		return
	}
	start := st.s.rec.Now()
	st.emit(withEvents(m, append(append([]history.Event(nil), evs...), ev)))
	st.s.commit(st.c, start, st.details(ev, "delivered a %s of %s at revision %d, which the watch excludes: %s",
		ev.Type, ev.KV.Key, ev.Revision(), why))
}

// excluded makes an event at revision rev that req excludes, on a key
// vigil's workload never writes: the filtered type on a filtered watch,
// another key on a single-key watch, else a key outside the range.
func excluded(req history.WatchRequest, rev int64) (history.Event, string, bool) {
	create := func(key string) history.Event {
		return history.Event{Type: history.EventPut, IsCreate: true,
			KV: history.KV{Key: key, Value: "sabotage", CreateRevision: rev, ModRevision: rev, Version: 1}}
	}
	inside, hasInside := unusedKeyInside(req)
	switch {
	case req.NoPut && hasInside:
		return create(inside), "a put on a watch that filters puts out", true
	case req.NoDelete && hasInside:
		return history.Event{Type: history.EventDelete, KV: history.KV{Key: inside, ModRevision: rev}},
			"a delete on a watch that filters deletes out", true
	}
	outside, ok := keyOutside(req)
	if !ok {
		return history.Event{}, "", false
	}
	if req.End == "" {
		return create(outside), "another key than the one watched", true
	}
	return create(outside), "a key outside the watched range", true
}

// unusedKeyInside is a key in the watched range that is not the watched
// key itself: only a range has one.
func unusedKeyInside(req history.WatchRequest) (string, bool) {
	if req.End == "" {
		return "", false
	}
	k := req.Key + "sabotage"
	return k, req.End == "\x00" || k < req.End
}

// keyOutside is a key outside the watched key or range, if there is one.
func keyOutside(req history.WatchRequest) (string, bool) {
	switch req.End {
	case "":
		return req.Key + "/sabotage", true
	case "\x00":
		if req.Key == "" || req.Key == "\x00" {
			return "", false // the whole keyspace
		}
		return req.Key[:len(req.Key)-1], true
	}
	return req.End + "sabotage", true
}

// quietEnd delivers a response with events, on a watch that delivered
// events before, and then closes the caller's channel with neither a
// cancel response nor an error: the watch just stops, as a server that
// drops a stream without a status would make it.
func (st *stream) quietEnd(m targets.WatchMessage) {
	evs := m.Response.Events
	if len(evs) == 0 || st.events == 0 || !st.s.claim(0) {
		st.emit(m)
		return
	}
	start := st.s.rec.Now()
	st.emit(m)
	if st.ctx.Err() != nil {
		st.s.release() // the caller closed it first: no quiet end to see
		return
	}
	last := evs[len(evs)-1]
	st.s.commit(st.c, start, st.details(last, "closed the watch stream after the %s of %s at revision %d (%d events "+
		"delivered) with no cancel response and no error", last.Type, last.KV.Key, last.Revision(), st.events))
	st.quiet = true
	close(st.out)
}
