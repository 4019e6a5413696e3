package facts_test

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

const sec = int(time.Second)

// Each rule of the classifier, with a history just inside it and one just
// outside. The names say the request kind, the situation and the class.
func TestWatchEndings(t *testing.T) {
	compacted := "etcdserver: mvcc: required revision has been compacted"
	for _, c := range []struct {
		name  string
		build func(b *histbuild.Builder) int64
		want  facts.EndingClass
		why   string
	}{
		{"etcd watch - closed by vigil - client", func(b *histbuild.Builder) int64 {
			w := b.Watch(1, 1, 0, histbuild.PrefixWatch())
			b.End(w, 10, history.EndClient)
			return w
		}, facts.EndingClient, "vigil"},
		{"etcd watch - no end recorded - open", func(b *histbuild.Builder) int64 {
			return b.Watch(1, 1, 0, histbuild.PrefixWatch())
		}, facts.EndingOpen, "no end"},
		{"etcd watch - canceled with a compact revision - expired", func(b *histbuild.Builder) int64 {
			w := b.Watch(1, 1, 0, histbuild.PrefixWatch())
			b.Wresp(history.WatchResponse{Watch: w, Time: 5, Canceled: true, CancelReason: compacted, CompactRevision: 7})
			b.EndWith(w, 6, history.EndServer, compacted)
			return w
		}, facts.EndingExpired, "compact revision 7"},
		{"etcd watch - canceled with a reason - answered", func(b *histbuild.Builder) int64 {
			w := b.Watch(1, 1, 0, histbuild.PrefixWatch())
			b.Wresp(history.WatchResponse{Watch: w, Time: 5, Canceled: true, CancelReason: "permission denied"})
			b.EndWith(w, 6, history.EndServer, "permission denied")
			return w
		}, facts.EndingAnswered, "permission denied"},
		{"etcd watch - canceled at creation as unsupported - refused", func(b *histbuild.Builder) int64 {
			w := b.Watch(1, 1, 0, history.WatchRequest{Key: histbuild.TestPrefix, Fragment: true})
			b.Wresp(history.WatchResponse{Watch: w, Time: 5, Canceled: true, CancelReason: "fragment is not supported"})
			b.EndWith(w, 6, history.EndServer, "fragment is not supported")
			return w
		}, facts.EndingRefused, "unsupported"},
		{"etcd watch - broke with a gRPC status - answered", func(b *histbuild.Builder) int64 {
			w := b.Watch(1, 1, 0, histbuild.PrefixWatch())
			b.Wresp(history.WatchResponse{Watch: w, Time: 7, Error: "rpc error: code = Unavailable"})
			b.EndWith(w, 8, history.EndError, "rpc error: code = Unavailable")
			return w
		}, facts.EndingAnswered, "Unavailable"},
		{"etcd watch - canceled with nothing said - unexplained", func(b *histbuild.Builder) int64 {
			w := b.Watch(1, 1, 0, histbuild.PrefixWatch())
			b.Wresp(history.WatchResponse{Watch: w, Time: 5, Revision: 30, Canceled: true})
			b.End(w, 6, history.EndServer)
			return w
		}, facts.EndingUnexplained, "no cancel reason"},
		{"etcd watch - closed quietly - unexplained", func(b *histbuild.Builder) int64 {
			w := b.Watch(1, 1, 0, histbuild.PrefixWatch())
			b.Events(w, 10, histbuild.PutEv("a", "1.1", 11, 11, 1))
			b.EndWith(w, 20, history.EndError, history.QuietClose)
			return w
		}, facts.EndingUnexplained, "without a cancel reason or an error"},
		{"etcd watch - closed quietly during a fault - unexplained", func(b *histbuild.Builder) int64 {
			b.Fault("kill-leader", 5, 30)
			w := b.Watch(1, 1, 0, histbuild.PrefixWatch())
			b.EndWith(w, 20, history.EndError, history.QuietClose)
			return w
		}, facts.EndingUnexplained, "which does not explain it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := histbuild.New()
			id := c.build(b)
			got := facts.WatchEnding(b.H, b.H.WatchByID(id))
			if got.Class != c.want || !strings.Contains(got.Why+" "+got.Note, c.why) {
				t.Fatalf("%s (%s), want %s saying %q", got.Class, got.Why, c.want, c.why)
			}
		})
	}
}

func TestKubeWatchEndings(t *testing.T) {
	timed := func(b *histbuild.KubeBuilder) int64 {
		return b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9", TimeoutSeconds: 5})
	}
	status := func(code int) *history.KubeStatus { return &history.KubeStatus{Code: code} }
	tol := int(facts.TimeoutTolerance)
	settle := int(facts.FaultSettle)
	for _, c := range []struct {
		name  string
		build func(b *histbuild.KubeBuilder)
		want  facts.EndingClass
		why   string
	}{
		{"kube watch - closed by vigil - client", func(b *histbuild.KubeBuilder) { b.End(timed(b), 2*sec, history.EndClient, nil) },
			facts.EndingClient, "vigil"},
		{"kube watch - no end recorded - open", func(b *histbuild.KubeBuilder) { timed(b) }, facts.EndingOpen, "no end"},
		{"kube watch - ERROR 410 - expired", func(b *histbuild.KubeBuilder) {
			b.ErrEv(timed(b), sec, 410, "Expired")
			b.End(1, sec, history.EndServer, nil)
		}, facts.EndingExpired, "410 Expired"},
		{"kube watch - ERROR 500 - answered", func(b *histbuild.KubeBuilder) {
			b.ErrEv(timed(b), sec, 500, "InternalError")
			b.End(1, sec, history.EndServer, nil)
		}, facts.EndingAnswered, "500"},
		{"kube watch - HTTP 410 - expired", func(b *histbuild.KubeBuilder) { b.End(timed(b), sec, history.EndError, status(410)) },
			facts.EndingExpired, "HTTP 410"},
		{"kube watch - HTTP 422 - refused", func(b *histbuild.KubeBuilder) { b.End(timed(b), sec, history.EndError, status(422)) },
			facts.EndingRefused, "HTTP 422"},
		{"kube watch - HTTP 501 - refused", func(b *histbuild.KubeBuilder) { b.End(timed(b), sec, history.EndError, status(501)) },
			facts.EndingRefused, "HTTP 501"},
		{"kube watch - HTTP 429 - answered", func(b *histbuild.KubeBuilder) { b.End(timed(b), sec, history.EndError, status(429)) },
			facts.EndingAnswered, "HTTP 429"},
		{"kube watch - clean close at T - timeout", func(b *histbuild.KubeBuilder) { b.End(timed(b), 5*sec+5, history.EndServer, nil) },
			facts.EndingTimeout, "at or after timeoutSeconds=5"},
		{"kube watch - clean close within the tolerance before T - timeout", func(b *histbuild.KubeBuilder) {
			b.End(timed(b), 5*sec-tol, history.EndServer, nil)
		}, facts.EndingTimeout, "within the tolerance"},
		{"kube watch - clean close just outside the tolerance before T - unexplained", func(b *histbuild.KubeBuilder) {
			b.End(timed(b), 5*sec-tol-1, history.EndServer, nil)
		}, facts.EndingUnexplained, "before its timeoutSeconds=5"},
		{"kube watch - clean close during a fault on its server - fault", func(b *histbuild.KubeBuilder) {
			b.Fault(1, "restart-apiserver", sec, 2*sec, "kube-0")
			b.End(timed(b), 2*sec, history.EndServer, nil)
		}, facts.EndingFault, "restart-apiserver"},
		{"kube watch - clean close at the end of the settle time - fault", func(b *histbuild.KubeBuilder) {
			b.Fault(1, "pause-member", sec, 2*sec, "m0")
			b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9", TimeoutSeconds: 30})
			b.End(1, 2*sec+settle, history.EndServer, nil)
		}, facts.EndingFault, "pause-member"},
		{"kube watch - clean close just past the settle time - unexplained", func(b *histbuild.KubeBuilder) {
			b.Fault(1, "pause-member", sec, 2*sec, "m0")
			b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9", TimeoutSeconds: 30})
			b.End(1, 2*sec+settle+1, history.EndServer, nil)
		}, facts.EndingUnexplained, "no fault"},
		{"kube watch - clean close during a fault on another API server - unexplained", func(b *histbuild.KubeBuilder) {
			b.Fault(1, "restart-apiserver", sec, 3*sec, "kube-1")
			b.End(timed(b), 2*sec, history.EndServer, nil)
		}, facts.EndingUnexplained, "no fault"},
		{"kube watch - clean close during a sabotage record - unexplained", func(b *histbuild.KubeBuilder) {
			b.Fault(1, "sabotage:kube-quiet-end", 2*sec, 2*sec, "client-5", "kube-0")
			b.End(timed(b), 2*sec, history.EndServer, nil)
		}, facts.EndingUnexplained, "no fault"},
		{"kube watch - broke outside faults - broken", func(b *histbuild.KubeBuilder) {
			b.Add(history.Record{KubeWatchEnd: &history.KubeWatchEnd{Watch: timed(b), Time: time.Duration(2 * sec),
				Reason: history.EndError, Error: "unexpected EOF"}})
		}, facts.EndingBroken, "unexpected EOF"},
		{"kube watch - broke during a fault - fault", func(b *histbuild.KubeBuilder) {
			b.Fault(1, "restart-apiserver", sec, 3*sec, "kube-0")
			b.Add(history.Record{KubeWatchEnd: &history.KubeWatchEnd{Watch: timed(b), Time: time.Duration(2 * sec),
				Reason: history.EndError, Error: "GOAWAY"}})
		}, facts.EndingFault, "restart-apiserver"},
		{"kube watch - no timeoutSeconds, clean close after seconds - unexplained", func(b *histbuild.KubeBuilder) {
			b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9"})
			b.End(1, 3*sec, history.EndServer, nil)
		}, facts.EndingUnexplained, "no timeoutSeconds"},
		{"kube watch - no timeoutSeconds, clean close past the server's floor - timeout", func(b *histbuild.KubeBuilder) {
			b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9"})
			b.End(1, int(facts.ServerTimeoutFloor)+5, history.EndServer, nil)
		}, facts.EndingTimeout, "past the"},
		{"kube watch - no timeoutSeconds, an external server's clean close - timeout", func(b *histbuild.KubeBuilder) {
			b.H.Meta.Target.Fixture = "external"
			b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9"})
			b.End(1, 3*sec, history.EndServer, nil)
		}, facts.EndingTimeout, "not known"},
		// Bounded by the run: an external server that says it is
		// kube-apiserver picks at least half the longest life the run saw.
		{"kube watch - no timeoutSeconds, an external kube-apiserver's clean close below the run's floor - unexplained", func(b *histbuild.KubeBuilder) {
			b.H.Meta.Target.Fixture, b.H.Meta.Target.Version = "external", "v1.36.3"
			b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9"})
			b.End(1, 3*sec, history.EndServer, nil)
			b.Watch(2, 6, 0, history.KubeWatchRequest{ResourceVersion: "9"})
			b.End(2, 100*sec, history.EndClient, nil)
		}, facts.EndingUnexplained, "watch 2 of this run stayed open 100.00s on it, so that timeout is at least 49.50s"},
		{"kube watch - no timeoutSeconds, an external kube-apiserver's clean close above the run's floor - timeout", func(b *histbuild.KubeBuilder) {
			b.H.Meta.Target.Fixture, b.H.Meta.Target.Version = "external", "v1.36.3"
			b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9"})
			b.End(1, 3*sec, history.EndServer, nil)
			b.Watch(2, 6, 0, history.KubeWatchRequest{ResourceVersion: "9"})
			b.End(2, 5*sec, history.EndClient, nil)
		}, facts.EndingTimeout, "beyond what the run observed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := histbuild.NewKube()
			c.build(b)
			got := facts.KubeWatchEnding(b.H, b.H.KubeWatchByID(1))
			if got.Class != c.want || !strings.Contains(got.Why, c.why) {
				t.Fatalf("%s (%s), want %s saying %q", got.Class, got.Why, c.want, c.why)
			}
		})
	}
}

func TestEndingFiguresListEveryClass(t *testing.T) {
	f := facts.EndingFigures([]facts.Ending{{Class: facts.EndingUnexplained}, {Class: facts.EndingClient}, {Class: facts.EndingClient}})
	if len(f) != len(facts.EndingClasses) || f["ending_unexplained"] != 1 || f["ending_client"] != 2 || f["ending_fault"] != 0 {
		t.Fatalf("figures %v", f)
	}
}
