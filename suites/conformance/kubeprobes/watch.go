package kubeprobes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/onsi/gomega"
)

// KWatch is one open watch of a probe.
type KWatch struct {
	k    *K
	name string
	ch   <-chan frame
	stop context.CancelFunc
	// Refused is the HTTP error answer to the watch request, if any.
	Refused *KResp
}

// KEvent is one frame of a watch: its type and object (a Status for
// ERROR).
type KEvent struct {
	Type   string
	Object KObj
}

type frame struct {
	ev  *KEvent
	raw json.RawMessage
	err error // the stream broke or ended (io.EOF: closed cleanly)
	at  time.Time
}

// Watch opens a recorded watch on the probe's collection. A refusal (an
// HTTP error answer) is kept in Refused; the probe decides what it means.
func (k *K) Watch(q url.Values) *KWatch {
	k.watches++
	w := &KWatch{k: k, name: fmt.Sprintf("WATCH#%d", k.watches)}
	wq := url.Values{}
	for key, v := range q {
		wq[key] = v
	}
	wq.Set("watch", "true")
	ctx, cancel := context.WithCancel(k.Ctx)
	w.stop = cancel
	path := k.Res.CollectionPath(k.NS)
	resp, err := k.c.Raw(ctx, http.MethodGet, path, wq, nil)
	k.Expect(err).NotTo(gomega.HaveOccurred(), "watch %s: no answer", path)
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		r := KResp{Code: resp.StatusCode}
		_ = json.Unmarshal(raw, &r.KObj)
		w.Refused = &r
		k.rec.add(rawStep{call: w.name + " open", method: http.MethodGet, path: path, query: wq, code: resp.StatusCode, answer: raw})
		cancel()
		return w
	}
	k.rec.add(rawStep{call: w.name + " open", method: http.MethodGet, path: path, query: wq, code: resp.StatusCode})
	ch := make(chan frame, 64)
	w.ch = ch
	go func() {
		defer resp.Body.Close()
		defer close(ch)
		dec := json.NewDecoder(resp.Body)
		for {
			var f struct {
				Type   string          `json:"type"`
				Object json.RawMessage `json:"object"`
			}
			err := dec.Decode(&f)
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = io.EOF
				}
				select {
				case ch <- frame{err: err, at: time.Now()}:
				case <-ctx.Done():
				}
				return
			}
			ev := &KEvent{Type: f.Type}
			_ = json.Unmarshal(f.Object, &ev.Object)
			select {
			case ch <- frame{ev: ev, raw: f.Object, at: time.Now()}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return w
}

// Next returns the next event within d, or nil when none came (timeout)
// or the stream ended; Ended tells which.
func (w *KWatch) Next(d time.Duration) *KEvent {
	ev, _ := w.next(d)
	return ev
}

// next returns the next event, or nil and whether the stream ended.
func (w *KWatch) next(d time.Duration) (*KEvent, bool) {
	w.k.Expect(w.Refused).To(gomega.BeNil(), "%s was refused", w.name)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case f, ok := <-w.ch:
		if !ok {
			return nil, true
		}
		if f.err != nil {
			end := "the server closed the stream"
			if f.err != io.EOF {
				end = "the stream broke: " + f.err.Error()
			}
			w.k.rec.add(rawStep{call: w.name + ".end", note: end})
			w.k.Expect(f.err).To(gomega.Equal(io.EOF), "%s broke", w.name)
			return nil, true
		}
		w.k.rec.add(rawStep{call: w.name + ".event", event: f.ev.Type, answer: f.raw})
		return f.ev, false
	case <-t.C:
		return nil, false
	}
}

// Expect reads the next event, which must come within 10 s and have the
// type and object name given ("" for any name); it returns it.
func (w *KWatch) Expect(typ, name string) KEvent {
	ev, ended := w.next(10 * time.Second)
	w.k.Expect(ended).To(gomega.BeFalse(), "%s ended while a %s event of %q was expected", w.name, typ, name)
	w.k.Expect(ev).NotTo(gomega.BeNil(), "%s: no event within 10 s; expected %s %q", w.name, typ, name)
	w.k.Expect(ev.Type).To(gomega.Equal(typ), "%s: event type (object %q, rv %s)", w.name, ev.Object.Metadata.Name, ev.Object.RV())
	if name != "" {
		w.k.Expect(ev.Object.Metadata.Name).To(gomega.Equal(name), "%s: the %s event's object", w.name, typ)
	}
	return *ev
}

// NextNonBookmark reads events, passing over BOOKMARKs, and returns the
// first of another type; nil when none came within d or the stream ended.
func (w *KWatch) NextNonBookmark(d time.Duration) *KEvent {
	for range 1000 {
		ev, ended := w.next(d)
		if ev == nil || ended || ev.Type != "BOOKMARK" {
			return ev
		}
	}
	return nil
}

// Ends waits up to d for the server to end the stream cleanly, failing
// the probe on any event in between but BOOKMARKs, and if it does not end.
func (w *KWatch) Ends(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		ev, ended := w.next(time.Until(deadline))
		if ended {
			return
		}
		if ev != nil {
			w.k.Expect(ev.Type).To(gomega.Equal("BOOKMARK"), "%s: an event where the stream should end", w.name)
		}
	}
	w.k.Expect(false).To(gomega.BeTrue(), "%s did not end within %v", w.name, d)
}

// Close stops the watch.
func (w *KWatch) Close() {
	if w.stop != nil {
		w.stop()
	}
}

// Fence writes a fence object and reads w up to its ADDED event, failing
// the probe on any other event before it: the watch delivered nothing
// else that was written before the fence. BOOKMARKs are passed over.
func (w *KWatch) Fence(name string) KEvent {
	obj := w.k.Create(name, "fence", nil)
	ev := w.NextNonBookmark(10 * time.Second)
	w.k.Expect(ev).NotTo(gomega.BeNil(), "%s: the fence %q never came", w.name, name)
	w.k.Expect(ev.Type+" "+ev.Object.Metadata.Name).To(gomega.Equal("ADDED "+name),
		"%s: an event before the fence (rv %s; the fence is at %s)", w.name, ev.Object.RV(), obj.RV())
	return *ev
}
