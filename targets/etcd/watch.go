package etcd

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// Watch opens one watch stream. clientv3 re-establishes broken streams by
// itself, resuming after the last revision it delivered; that is what an
// application sees, so that is what vigil records.
func (c *Client) Watch(ctx context.Context, req history.WatchRequest) <-chan targets.WatchMessage {
	opts := []clientv3.OpOption{clientv3.WithCreatedNotify()}
	if req.End != "" {
		opts = append(opts, clientv3.WithRange(req.End))
	}
	if req.StartRevision > 0 {
		opts = append(opts, clientv3.WithRev(req.StartRevision))
	}
	if req.PrevKV {
		opts = append(opts, clientv3.WithPrevKV())
	}
	if req.ProgressNotify {
		opts = append(opts, clientv3.WithProgressNotify())
	}
	if req.Fragment {
		opts = append(opts, clientv3.WithFragment())
	}
	if req.NoPut {
		opts = append(opts, clientv3.WithFilterPut())
	}
	if req.NoDelete {
		opts = append(opts, clientv3.WithFilterDelete())
	}
	in := c.c.Watch(ctx, req.Key, opts...)
	out := make(chan targets.WatchMessage, 16)
	go func() {
		defer close(out)
		var fw targets.Forwarder
		for resp := range in {
			// Keep draining after the caller closed the watch, so clientv3
			// can close the channel.
			m := targets.WatchMessage{Response: fromWatchResponse(resp)}
			if err := resp.Err(); err != nil && !resp.Canceled {
				m.Err = err
			}
			fw.Send(ctx, out, m)
		}
	}()
	return out
}

// RequestProgress asks for a progress notification on this client's stream.
func (c *Client) RequestProgress(ctx context.Context) error {
	return c.c.RequestProgress(ctx)
}

func fromWatchResponse(r clientv3.WatchResponse) history.WatchResponse {
	out := history.WatchResponse{
		Revision:        r.Header.Revision,
		Created:         r.Created,
		Progress:        r.IsProgressNotify(),
		Canceled:        r.Canceled,
		CompactRevision: r.CompactRevision,
	}
	if r.Canceled {
		if err := r.Err(); err != nil {
			out.CancelReason = err.Error()
		}
	}
	for _, e := range r.Events {
		ev := history.Event{KV: fromKV(e.Kv), IsCreate: e.IsCreate()}
		if e.Type == clientv3.EventTypeDelete {
			ev.Type = history.EventDelete
		} else {
			ev.Type = history.EventPut
		}
		if e.PrevKv != nil {
			p := fromKV(e.PrevKv)
			ev.PrevKV = &p
		}
		out.Events = append(out.Events, ev)
	}
	return out
}
