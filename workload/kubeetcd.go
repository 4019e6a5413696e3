package workload

import (
	"context"
	"math/rand/v2"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// The etcd side of a Kubernetes run, when vigil runs the etcd under the API
// server: compactions forced from outside (so watches and continue tokens
// expire, as they do when the API server or an operator compacts), and the
// oracle, a plain etcd watch of the API server's keys that
// kube/cache-agrees-with-etcd compares the API server's answers with.

// compactor compacts etcd every CompactEvery (jittered) to a revision a
// little behind the head, and at the head when a reader asks
// (compactHead). Its calls are recorded as etcd operations.
func (w *KubeWorkload) compactor(runCtx, reqCtx context.Context, c *targets.Recording, rng *rand.Rand) {
	t := time.NewTimer(jitter(rng, w.cfg.CompactEvery))
	defer t.Stop()
	for {
		var done chan struct{}
		behind := int64(0)
		select {
		case <-runCtx.Done():
			return
		case done = <-w.compactNow:
		case <-t.C:
			behind = int64(10 + rng.IntN(50))
			t.Reset(jitter(rng, w.cfg.CompactEvery))
		}
		w.compact(reqCtx, c, behind)
		if done != nil {
			close(done)
		}
	}
}

// compact compacts to behind revisions below the head (and not past the
// oracle).
func (w *KubeWorkload) compact(ctx context.Context, c *targets.Recording, behind int64) {
	rctx, cancel := context.WithTimeout(ctx, w.cfg.RequestTimeout)
	defer cancel()
	st, err := c.Do(rctx, history.Request{Kind: history.OpStatus})
	if err != nil {
		return
	}
	rev := st.Revision - behind
	if w.oracle != nil {
		// Never past what the oracle has seen: a compaction there would
		// leave it a gap (its watch would be canceled on resuming after a
		// broken stream), and the oracle is the reference of the run.
		rev = min(rev, w.oracle.lastRev.Load())
	}
	if rev <= w.Stats.CompactRV.Load() {
		return
	}
	if _, err := c.Do(rctx, history.Request{Kind: history.OpCompact, Revision: rev}); err == nil {
		w.Stats.CompactRV.Store(rev)
	}
}

// compactHead asks the compactor for a compaction at the head and waits
// for it (bounded); without a compactor it does nothing.
func (w *KubeWorkload) compactHead(ctx context.Context) {
	if w.Etcd == nil || w.cfg.CompactEvery <= 0 {
		return
	}
	done := make(chan struct{})
	select {
	case w.compactNow <- done:
	case <-ctx.Done():
		return
	case <-time.After(2 * time.Second):
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	case <-time.After(w.cfg.RequestTimeout):
	}
}

// kubeValuePattern finds a write's unique value inside a stored object:
// strings are kept verbatim in the API server's protobuf (and JSON)
// encodings.
var kubeValuePattern = regexp.MustCompile(`val:-?[0-9]+\.-?[0-9]+`)

// oracleValues stands between the etcd client and its recording: the
// values of the API server's keys are whole encoded objects, so each
// event's value is replaced by the object's unique data["value"] (empty
// when none is found) and prev_kv is never asked for. The history keeps
// what the checks compare (key, revision, type, value) and stays small.
type OracleValues struct{ targets.Client }

func (o OracleValues) Watch(ctx context.Context, req history.WatchRequest) <-chan targets.WatchMessage {
	in := o.Client.Watch(ctx, req)
	out := make(chan targets.WatchMessage, 16)
	go func() {
		defer close(out)
		for m := range in {
			for i := range m.Response.Events {
				kv := &m.Response.Events[i].KV
				kv.Value = kubeValuePattern.FindString(kv.Value)
				m.Response.Events[i].PrevKV = nil
			}
			out <- m
		}
	}()
	return out
}

// kubeOracle is the etcd watch of the API server's keys of the namespace,
// open from before the first write to after the final one. It resumes after
// a break from the revision after the last it saw.
type kubeOracle struct {
	w       *KubeWorkload
	c       *targets.Recording
	rng     *rand.Rand
	next    int64
	lastRev atomic.Int64
}

func newKubeOracle(w *KubeWorkload, c *targets.Recording) *kubeOracle {
	return &kubeOracle{w: w, c: c, rng: seeded(w.seed, "kube-oracle")}
}

// start reads etcd's head, so the watch begins before any write of the
// workload (the namespace is empty and new).
func (o *kubeOracle) start(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, o.w.cfg.RequestTimeout)
	defer cancel()
	st, err := o.c.Do(rctx, history.Request{Kind: history.OpStatus})
	if err != nil {
		return err
	}
	o.next = st.Revision + 1
	o.lastRev.Store(st.Revision)
	return nil
}

func (o *kubeOracle) reached(rev int64) bool { return o.lastRev.Load() >= rev }

// nudge asks etcd for a progress notification, so the oracle can show it
// reached the final revision without another write.
func (o *kubeOracle) nudge(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	o.c.RequestProgress(rctx)
	cancel()
}

func (o *kubeOracle) run(watchCtx context.Context) {
	req := history.WatchRequest{Key: o.w.EtcdPrefix, End: prefixEnd(o.w.EtcdPrefix), ProgressNotify: true}
	var resumes int64
	for attempt := 0; attempt < watchAttempts(o.w.cfg.Duration) && watchCtx.Err() == nil; attempt++ {
		req.StartRevision = o.next
		ctx, cancel := context.WithCancel(watchCtx)
		stopRestart := func() bool { return false }
		if o.w.cfg.segmented() {
			// One watch per segment or so, resumed: the segment a watch
			// ends in holds it whole, so none may span the run.
			stopRestart = time.AfterFunc(jitter(o.rng, o.w.cfg.Segment), cancel).Stop
		}
		rw := o.c.Watch(ctx, req, resumes)
		compacted := int64(0)
		for resp := range rw.C {
			for _, ev := range resp.Events {
				if r := ev.Revision(); r > o.lastRev.Load() {
					o.lastRev.Store(r)
				}
			}
			if resp.Progress && resp.Revision > o.lastRev.Load() {
				o.lastRev.Store(resp.Revision)
			}
			if resp.Canceled && resp.CompactRevision > 0 {
				compacted = resp.CompactRevision
			}
		}
		stopRestart()
		cancel()
		if compacted > 0 {
			// A gap the history shows: the oracle vouches only from here on.
			o.next, resumes = compacted, 0
		} else {
			o.next, resumes = max(o.next, o.lastRev.Load()+1), rw.ID
		}
		sleepCtx(watchCtx, 100*time.Millisecond)
	}
}
