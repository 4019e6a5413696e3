package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/vigil-suite/vigil/history"
)

// WatchMessage is one thing a watch stream produced, without vigil's ids
// and times (Recording adds them). Exactly one field is set. Refused and
// Err end the stream; a stream whose channel closes after an Event ended
// cleanly: the server closed it (timeoutSeconds, an ERROR event, shutdown)
// or the caller's context ended.
type WatchMessage struct {
	Event *history.KubeEvent
	// Refused is the Status of an HTTP error answer to the watch request.
	Refused *history.KubeStatus
	// Err is a broken stream or an undecodable frame.
	Err error
}

// watchQuery is the query of a watch: watch=true and every parameter the
// request sets.
func watchQuery(req history.KubeWatchRequest) url.Values {
	q := url.Values{"watch": {"true"}}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("resourceVersion", req.ResourceVersion)
	set("resourceVersionMatch", req.ResourceVersionMatch)
	if req.AllowBookmarks {
		q.Set("allowWatchBookmarks", "true")
	}
	if req.SendInitialEvents != nil {
		q.Set("sendInitialEvents", strconv.FormatBool(*req.SendInitialEvents))
	}
	if req.TimeoutSeconds > 0 {
		q.Set("timeoutSeconds", fmt.Sprint(req.TimeoutSeconds))
	}
	set("labelSelector", req.LabelSelector)
	set("fieldSelector", req.FieldSelector)
	set("continue", req.Continue)
	return q
}

// Watch opens a watch on the resource. The channel carries every event and
// is closed when the stream ends; see WatchMessage for how it says why.
// Canceling ctx closes the stream.
func (c *Client) Watch(ctx context.Context, req history.KubeWatchRequest) <-chan WatchMessage {
	out := make(chan WatchMessage, 16)
	go func() {
		defer close(out)
		send := func(m WatchMessage) bool {
			select {
			case out <- m:
				return true
			case <-ctx.Done():
				// The caller closed the watch: what it did not take, it did not see.
				return false
			}
		}
		hreq, err := c.newRequest(ctx, http.MethodGet, c.cfg.Resource.path(c.cfg.Namespace), watchQuery(req), nil)
		if err != nil {
			send(WatchMessage{Err: err})
			return
		}
		resp, err := c.http.Do(hreq)
		if err != nil {
			send(WatchMessage{Err: err})
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			send(WatchMessage{Refused: statusFrom(resp.StatusCode, b)})
			return
		}
		decodeStream(resp.Body, send)
	}()
	return out
}

// decodeStream reads JSON watch frames from r until it ends, handing each
// event to send; a frame that does not decode, or a stream that breaks
// mid-frame, ends it with an Err. It stops when send reports false.
func decodeStream(r io.Reader, send func(WatchMessage) bool) {
	dec := json.NewDecoder(r)
	for {
		var we wireEvent
		err := dec.Decode(&we)
		if errors.Is(err, io.EOF) {
			return // the server closed the stream between two frames
		}
		if err != nil {
			send(WatchMessage{Err: fmt.Errorf("watch stream broke: %w", err)})
			return
		}
		ev, err := fromWireEvent(we)
		if err != nil {
			send(WatchMessage{Err: err})
			return
		}
		if !send(WatchMessage{Event: &ev}) {
			return
		}
	}
}
