package targets

import (
	"context"
	"testing"

	"github.com/vigil-suite/vigil/history"
)

// Once the caller closed the watch, no later message may get through, even
// though the channel has room: a gap would read as a missed event.
func TestForwarderDeliversAPrefix(t *testing.T) {
	for round := 0; round < 200; round++ {
		ctx, cancel := context.WithCancel(context.Background())
		out := make(chan WatchMessage, 16)
		var fw Forwarder
		for rev := int64(1); rev <= 4; rev++ {
			if rev == 3 {
				cancel()
			}
			fw.Send(ctx, out, WatchMessage{Response: history.WatchResponse{Revision: rev}})
		}
		cancel()
		close(out)
		want := int64(1)
		for m := range out {
			if m.Response.Revision != want {
				t.Fatalf("round %d: got revision %d, want %d: the delivered messages are not a prefix", round, m.Response.Revision, want)
			}
			want++
		}
		if want != 3 {
			t.Fatalf("round %d: delivered up to %d, want 1 and 2 only", round, want-1)
		}
	}
}
