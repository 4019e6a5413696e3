// Package workload is what vigil sends: the etcd workload (KV clients
// sending requests drawn from the etcd API's grammar, package grammar;
// watchers, compactions, leases, the final write), the probe that asks
// the target for each production before the run, the workload shapes, and the Kubernetes workload
// (writers, racers, readers, informers, streamers, the etcd oracle). The
// one place that decides what is sent; package suites runs it.
package workload

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
	"github.com/vigil-suite/vigil/workload/grammar"
)

// Config sizes the KV + watch workload. The defaults suit a 2-core
// machine running a 3-member cluster beside vigil: several hundred ops/s.
type Config struct {
	Clients int // KV clients, one request at a time each
	// Rate is the total KV requests per second across clients; 0 means
	// unthrottled: each client sends its next request as soon as the last
	// one is answered (the highest load the clients can give).
	Rate     float64
	Duration time.Duration // how long the clients run
	Keys     int           // distinct keys under the prefix
	Watchers int           // concurrent watchers of the prefix
	// MinRevision, if set, is the lowest revision the workload reads,
	// watches from or compacts to: history made before the run (by
	// vigil run --conform's probes, which compact) is not in the run's
	// history, so the checks could not judge answers about it.
	MinRevision int64
	// Shape names the mix of requests and watch starts (shapes.go);
	// empty is ShapeDefault.
	Shape string
	// CompactEvery is the period of compactions (0: none). Each compacts to
	// a revision some way behind the head, so past-revision watches and
	// resumes sometimes meet ErrCompacted.
	CompactEvery   time.Duration
	RequestTimeout time.Duration
	// FinalTimeout bounds how long open watches get to reach the final write.
	FinalTimeout time.Duration
	// Prefix is prepended to every key; unique per run so runs never mix.
	Prefix string
	// Segment, when positive and shorter than Duration, cuts the run into
	// segments of this length (the last may be shorter), each under a
	// prefix of its own (Prefix + "s000/", ...), with watches of its own,
	// recorded and judged on its own (history.Segment): a long run is
	// then judged in memory bounded by a segment.
	Segment time.Duration
	// Refused lists the grammar's productions (and the forms and
	// capabilities older histories name) the target refused when asked
	// before the run, with its words; Probe fills it in and the workload
	// draws none of them.
	Refused map[string]string
	// served lists the productions the probe saw answered: a refusal
	// during the run does not blame them.
	served []string
	// NoEventFilters opens every watch without NoPut or NoDelete, as
	// Kubernetes does (the kubernetes profile): a server is then not
	// judged on filters Kubernetes never asks for.
	NoEventFilters bool
	// Patterns changes the shares of the placement and timing patterns
	// from the shape's (patterns.go, PatternShares): "none", or
	// comma-separated NAME=PERCENT.
	Patterns string
	// CompareEvery is the period of the member comparer's rounds
	// (members.go) while the run goes on; 0: none. With two members or
	// more, one more round follows the end-of-run convergence reads
	// either way.
	CompareEvery time.Duration
}

// DefaultConfig is what `vigil run` uses unless told otherwise.
func DefaultConfig() Config {
	return Config{
		Clients: 8, Rate: 600, Duration: 30 * time.Second, Keys: 16, Watchers: 12,
		CompactEvery: 8 * time.Second, RequestTimeout: 5 * time.Second, FinalTimeout: 10 * time.Second,
		CompareEvery: DefaultCompareEvery,
	}
}

// Validate reports the first unusable setting a user chose, in the words
// of the CLI; the prefix (namespace), which the run picks, is checked when
// the workload runs.
func (c Config) Validate() error {
	switch {
	case c.Clients < 1:
		return errors.New("--clients must be at least 1")
	case c.Rate < 0:
		return errors.New("--rate must not be negative (0: unthrottled)")
	case c.Duration <= 0:
		return errors.New("--duration must be positive")
	case validShape(c.Shape) != nil:
		return validShape(c.Shape)
	case c.Keys < 1:
		return errors.New("--keys must be at least 1")
	case c.Watchers < 0:
		return errors.New("--watchers must not be negative")
	case c.CompareEvery < 0:
		return errors.New("--compare-every must not be negative (0: compare the members only at the end)")
	}
	_, err := c.PatternShares()
	return err
}

// Dialer opens a client to member number i (taken modulo the member count).
type Dialer func(ctx context.Context, member int) (targets.Client, error)

// Stats are live counters of a running workload, for the progress line.
type Stats struct {
	Ops, FailedOps, WatchEvents atomic.Int64
	// StoreRevision is the highest header revision any client saw.
	StoreRevision atomic.Int64
	// CompactRevision is the revision of the last successful compaction.
	CompactRevision atomic.Int64

	mu       sync.Mutex
	watchers map[*watcher]struct{}
}

func (s *Stats) sawRevision(rev int64) {
	for {
		cur := s.StoreRevision.Load()
		if rev <= cur || s.StoreRevision.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// SlowestWatchLag is how many revisions the slowest open watcher trails the
// highest revision seen by any client.
func (s *Stats) SlowestWatchLag() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	head, lag := s.StoreRevision.Load(), int64(0)
	for w := range s.watchers {
		if l := head - w.lastRev.Load(); w.lastRev.Load() > 0 && l > lag {
			lag = l
		}
	}
	return lag
}

// seeded derives a named sub-seed, so each part of a run draws from its own
// stream and adding a part does not change the others' choices.
func seeded(seed int64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}

// Wrapper wraps the client numbered id before it is recorded: the place for
// sabotage, which changes what vigil's clients see.
type Wrapper func(c targets.Client, id int) targets.Client

// Workload runs KV clients, watchers and compactions against one target and
// records everything through targets.Recording.
type Workload struct {
	cfg     Config
	dial    Dialer
	members int
	rec     *history.Recorder
	seed    int64
	wrap    Wrapper // nil: none
	Stats   *Stats

	// During, if set, runs beside the KV clients with the same deadline
	// (the chaos schedule); the final phase waits for it to return.
	During  func(ctx context.Context)
	nextID  atomic.Int64  // the next free client id, past the watchers
	total   time.Duration // the run's length (cfg.Duration is a segment's while one runs)
	seqs    []int         // each KV client's next value, across segments
	segment int           // the segment running (0 when the run is whole)
	leases  leasePool     // the background leases, kept alive by the leaser
	weights *grammar.Weights
	// pruner holds the productions the target refused, before the run or
	// during it, shared by the generators; gleases the leases of the
	// segment running that the generators draw from.
	pruner  *grammar.Pruner
	gleases *grammar.Leases
	pat     *patterns // the placement and timing patterns (patterns.go); nil: none
	// readers are the member comparer's clients, one per member (none
	// with one member: nothing to compare); cmp is the segment's comparer.
	readers []memberReader
	cmp     *comparer
	// In a segmented run the watchers go on across segments: cur is the
	// prefix of the segment running (for the watchers of one key) and
	// watchFloor the lowest revision a watch may start from (see
	// runSegment); both are read while the segments change.
	cur        atomic.Pointer[string]
	watchFloor atomic.Int64
}

// New prepares a workload; Run starts it. wrap may be nil.
func New(cfg Config, dial Dialer, members int, rec *history.Recorder, seed int64, wrap Wrapper) *Workload {
	if cfg.Shape == ShapeDeleteHeavy && (cfg.CompactEvery <= 0 || cfg.CompactEvery > deleteHeavyCompactEvery) {
		cfg.CompactEvery = deleteHeavyCompactEvery
	}
	w := &Workload{cfg: cfg, dial: dial, members: members, rec: rec, seed: seed, wrap: wrap, total: cfg.Duration, seqs: make([]int, cfg.Clients),
		Stats: &Stats{watchers: map[*watcher]struct{}{}}}
	w.nextID.Store(int64(cfg.Clients + 1 + cfg.Watchers))
	w.weights, w.pruner, w.gleases = cfg.weights().Without(cfg.refuses), grammar.NewPruner(), &grammar.Leases{}
	for name, words := range cfg.Refused {
		w.pruner.Refuse(name, words)
	}
	for _, p := range cfg.served {
		w.pruner.MarkServed(p)
	}
	return w
}

// NewClient dials member (mod the member count) as a new recorded client
// with an id of its own, for parts of the run beside the workload (chaos).
func (w *Workload) NewClient(ctx context.Context, member int) (*targets.Recording, error) {
	return w.client(ctx, member, int(w.nextID.Add(1)-1))
}

// client dials member member%members and records it as client id.
func (w *Workload) client(ctx context.Context, member, id int) (*targets.Recording, error) {
	c, err := w.dial(ctx, member%w.members)
	if err != nil {
		return nil, err
	}
	if w.wrap != nil {
		c = w.wrap(c, id)
	}
	return targets.Record(c, id, w.rec), nil
}

// seeded is the named stream of the segment running: a segment after the
// first draws anew rather than replay the first one's choices.
func (w *Workload) seeded(name string) *rand.Rand {
	if w.segment > 0 {
		name = fmt.Sprintf("%s/segment-%d", name, w.segment)
	}
	return seeded(w.seed, name)
}

// floor raises a revision the workload picked to the lowest it may use.
func (w *Workload) floor(rev int64) int64 { return max(rev, w.cfg.MinRevision, 1) }

func (w *Workload) key(i int) string { return keyIn(w.cfg.Prefix, i) }

// keyIn is key number i under prefix.
func keyIn(prefix string, i int) string { return fmt.Sprintf("%sk%03d", prefix, i) }

// Run drives the workload for cfg.Duration (or until ctx ends), then makes
// the final write and waits for the open watches to reach it. Client ids:
// 0..Clients-1 are KV clients, Clients is the compactor and the final
// writer, watchers follow. With cfg.Segment, the run is a sequence of
// segments (runSegment), the chaos of During going on across them.
func (w *Workload) Run(ctx context.Context) error {
	if err := w.cfg.Validate(); err != nil {
		return err
	}
	if w.cfg.Prefix == "" {
		return errors.New("workload prefix must not be empty")
	}
	var clients []*targets.Recording
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	for i := 0; i <= w.cfg.Clients; i++ {
		c, err := w.client(ctx, i, i)
		if err != nil {
			return err
		}
		clients = append(clients, c)
	}
	lc, err := w.NewClient(ctx, w.cfg.Clients)
	if err != nil {
		return err
	}
	clients = append(clients, lc)
	if w.members > 1 {
		for i := 0; i < w.members; i++ {
			rc, err := w.NewClient(ctx, i)
			if err != nil {
				return err
			}
			clients = append(clients, rc)
			w.readers = append(w.readers, rc)
		}
	}
	watchClients := make([]*targets.Recording, w.cfg.Watchers)
	for i := range watchClients {
		if watchClients[i], err = w.client(ctx, i, w.cfg.Clients+1+i); err != nil {
			return err
		}
		clients = append(clients, watchClients[i])
	}
	// The patterns' clients (patterns.go), after all others.
	if err := w.openPatterns(ctx, func(c *targets.Recording) { clients = append(clients, c) }); err != nil {
		return err
	}

	runCtx, stop := context.WithTimeout(ctx, w.cfg.Duration)
	defer stop()
	var during sync.WaitGroup
	if w.During != nil {
		during.Add(1)
		go func() {
			defer during.Done()
			w.During(runCtx)
		}()
	}
	segs := w.cfg.segments()
	base := w.cfg
	var shared *watcherSet
	for k, d := range segs {
		last := k == len(segs)-1
		if len(segs) > 1 {
			w.cfg.Prefix, w.cfg.Duration, w.segment = fmt.Sprintf("%ss%03d/", base.Prefix, k), d, k
			w.leases = leasePool{}
			w.rec.StartSegment(history.Segment{Index: k, Prefix: w.cfg.Prefix})
			p := w.cfg.Prefix
			w.cur.Store(&p)
			if k == 0 {
				// The watchers watch the whole run's keys and go on across
				// segments: a watch that spans a boundary is judged whole in
				// the segment it ends in (history.Context).
				w.watchFloor.Store(w.cfg.MinRevision)
				shared = w.startWatchers(ctx, watchClients, base.Prefix)
				defer shared.stop()
			}
		}
		err = w.runSegment(ctx, clients[:w.cfg.Clients+1], lc, watchClients, shared, k > 0, last, &during)
		if err != nil || ctx.Err() != nil {
			break
		}
	}
	w.cfg.Prefix, w.cfg.Duration = base.Prefix, base.Duration
	stop()
	during.Wait()
	return err
}

// watcherSet is a run's watchers, going until stop returns.
type watcherSet struct {
	list    []*watcher
	stopped bool
	cancel  func()
	wg      *sync.WaitGroup
}

func (s *watcherSet) stop() {
	if !s.stopped {
		s.stopped = true
		s.cancel()
		s.wg.Wait()
	}
}

// startWatchers starts a watcher on each of watchClients, watching the keys
// under prefix, until the set is stopped (or ctx, the run's, ends).
func (w *Workload) startWatchers(ctx context.Context, watchClients []*targets.Recording, prefix string) *watcherSet {
	watchCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	set := &watcherSet{cancel: cancel, wg: &sync.WaitGroup{}}
	for i, rc := range watchClients {
		wt := newWatcher(w, i, rc, w.seeded(fmt.Sprintf("watcher-%d", i)), prefix)
		set.list = append(set.list, wt)
		set.wg.Add(1)
		go func() {
			defer set.wg.Done()
			wt.run(watchCtx, ctx)
		}()
	}
	return set
}

// watchAttempts bounds the watches one watcher opens in a run of length d:
// 10,000 and 100 a second more, far more than a run opens (each waits for
// its watch to end or a pause), so that a server ending every watch at
// once cannot spin a watcher without end, yet an all-night run never
// runs out.
func watchAttempts(d time.Duration) int { return 10000 + int(d/(10*time.Millisecond)) }

// segments are the lengths of the run's segments: the whole run when it
// is not segmented or not longer than one segment.
func (c Config) segments() []time.Duration {
	if c.Segment <= 0 || c.Duration <= c.Segment {
		return []time.Duration{c.Duration}
	}
	var out []time.Duration
	for left := c.Duration; left > 0; left -= c.Segment {
		out = append(out, min(left, c.Segment))
	}
	return out
}

// runSegment runs the clients, watchers, leaser and compactor for
// cfg.Duration; the last segment then waits for During (the faults heal)
// and makes the final phase, and every segment closes its watches and
// marks its end. A segment after the first reads and watches nothing
// below the store's head at its start (raise): what is older belongs to
// the segments before.
//
// With shared (a segmented run), the watchers are the run's: they go on
// across segments, and a watch may start no lower than the head at the
// start of the segment before (watchFloor), whose writes the segment's
// context holds; the last segment stops them after the final phase.
func (w *Workload) runSegment(ctx context.Context, clients []*targets.Recording, lc *targets.Recording,
	watchClients []*targets.Recording, shared *watcherSet, raise, last bool, during *sync.WaitGroup) error {
	control := clients[w.cfg.Clients]
	// The head revision anchors the first watchers' start revisions; the
	// compact revision before the run (HashKV says it) tells the checkers
	// what was compacted before vigil came (a reused or external cluster).
	if resp, err := control.Do(ctx, history.Request{Kind: history.OpRange, Key: w.key(0)}); err == nil {
		w.Stats.sawRevision(resp.Revision)
		if raise {
			w.watchFloor.Store(w.cfg.MinRevision)
			w.cfg.MinRevision = max(w.cfg.MinRevision, resp.Revision)
		}
	}
	if shared == nil {
		w.watchFloor.Store(w.cfg.MinRevision)
	}
	if _, refused := w.cfg.Refused[history.CapHashKV]; !refused {
		if resp, err := control.Do(ctx, history.Request{Kind: history.OpHashKV}); err == nil {
			w.Stats.CompactRevision.Store(resp.CompactRevision)
		}
	}

	// Leases before the clients start, so leased puts have one to attach to.
	w.gleases = &grammar.Leases{}
	w.grantLeases(ctx, lc)
	w.beginPatterns(ctx)

	watchers := shared
	if watchers == nil {
		watchers = w.startWatchers(ctx, watchClients, w.cfg.Prefix)
		defer watchers.stop()
	}

	segCtx, stop := context.WithTimeout(ctx, w.cfg.Duration)
	defer stop()
	var wg sync.WaitGroup
	cmp := w.comparer()
	w.cmp = cmp
	defer func() { w.cmp = nil }()
	if cmp != nil && w.cfg.CompareEvery > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmp.run(segCtx, ctx, w.cfg.CompareEvery)
		}()
	}
	for i := 0; i < w.cfg.Clients; i++ {
		wg.Add(1)
		go func(c *targets.Recording) {
			defer wg.Done()
			w.kvClient(segCtx, ctx, c, w.seeded(fmt.Sprintf("client-%d", c.ID())))
		}(clients[i])
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.leaser(segCtx, ctx, lc, w.seeded("leaser"))
	}()
	if w.cfg.CompactEvery > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.compactor(segCtx, ctx, control, w.seeded("compactor"))
		}()
	}
	wg.Wait()
	if last {
		during.Wait() // the faults heal before the final phase
	}
	w.endPatterns() // the bursts at the faults' edges are over too

	err := ctx.Err() // interrupted: record what we have, skip the final phase
	if err == nil && last {
		w.finalPhase(ctx, control, watchers.list)
	}
	if shared == nil || last || err != nil {
		watchers.stop()
	}
	// The end mark says the workload finished and closed its watches: in
	// a segmented run, at its end (a segment's seal says it is complete).
	if err == nil && (shared == nil || last) {
		if last {
			w.convergence(ctx, w.cfg.Clients)
			if cmp != nil {
				cmp.round(ctx) // after the convergence reads, which kv/convergence judges as they were
			}
		}
		w.rec.Add(history.Record{Mark: &history.Mark{Name: history.MarkEnd, Time: w.rec.Now()}})
	}
	return err
}

// comparer is the member comparer of the segment running, or nil with
// one member.
func (w *Workload) comparer() *comparer {
	if len(w.readers) < 2 {
		return nil
	}
	return newComparer(w.readers, w.cfg.Prefix, w.cfg.RequestTimeout, w.cfg.Refused, func() int64 {
		return w.floor(w.Stats.CompactRevision.Load())
	})
}

// finalPhase writes one last change and waits until every open watch has
// delivered it (bounded by FinalTimeout); the checkers hold the watches to
// it. The change is one txn that puts one key and deletes another, so that
// watches filtering out puts or deletes get an event too (finalRequest).
func (w *Workload) finalPhase(ctx context.Context, c *targets.Recording, watchers []*watcher) {
	finalKey := w.cfg.Prefix + history.FinalKey
	var final *history.Response
	var opID int64
	for attempt := 0; attempt < 5 && final == nil && ctx.Err() == nil; attempt++ {
		rctx, cancel := context.WithTimeout(ctx, w.cfg.RequestTimeout)
		if req, ok := w.finalRequest(rctx, c, attempt); ok {
			if resp, err := c.Do(rctx, req); err == nil && (req.Kind != history.OpTxn || resp.Succeeded) {
				final, opID = resp, c.LastOp()
			}
		}
		cancel()
	}
	if final == nil {
		return // no mark: the checkers will say the final phase is missing
	}
	w.Stats.sawRevision(final.Revision)
	w.rec.Add(history.Record{Mark: &history.Mark{Name: history.MarkFinalWrite, Time: w.rec.Now(),
		Op: opID, Revision: final.Revision}})
	// The system's health at the end: a linearizable read must succeed
	// too, within as many attempts (run/availability judges them).
	for attempt := 0; attempt < 5 && ctx.Err() == nil; attempt++ {
		rctx, cancel := context.WithTimeout(ctx, w.cfg.RequestTimeout)
		_, err := c.Do(rctx, history.Request{Kind: history.OpRange, Key: finalKey})
		cancel()
		if err == nil {
			break
		}
	}
	deadline := time.Now().Add(w.cfg.FinalTimeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		behind := 0
		for _, wt := range watchers {
			if !wt.reached(final.Revision) {
				behind++
				wt.nudge(ctx)
			}
		}
		if behind == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// finalRequest is the final write's attempt-th try, of the best form the
// target serves: one txn that puts the final key and deletes another (put
// first, in a request of its own), else a plain put of the final key,
// else the storage layer's update of it. A watch that filters puts out
// may then see no event, but a target without such txns gets no better.
func (w *Workload) finalRequest(ctx context.Context, c *targets.Recording, attempt int) (history.Request, bool) {
	finalKey, doomed := w.cfg.Prefix+history.FinalKey, w.cfg.Prefix+"final-del"
	value := fmt.Sprintf("final.%d", attempt)
	if _, no := w.cfg.Refused[formFinal]; !no {
		_, err := c.Do(ctx, history.Request{Kind: history.OpPut, Key: doomed, Value: fmt.Sprintf("final-del.%d", attempt)})
		return finalWrite(finalKey, doomed, value), err == nil
	}
	if !w.cfg.refuses("request.kind=put") {
		return history.Request{Kind: history.OpPut, Key: finalKey, Value: value}, true
	}
	resp, err := c.Do(ctx, history.Request{Kind: history.OpRange, Key: finalKey})
	if err != nil {
		return history.Request{}, false
	}
	var mod int64
	if len(resp.KVs) > 0 {
		mod = resp.KVs[0].ModRevision
	}
	return kubeUpdate(finalKey, value, mod), true
}

// convergence waits (bounded) until every member reports the same
// revision, then records each member's Status and HashKV at that revision,
// for kv/convergence.
func (w *Workload) convergence(ctx context.Context, id int) {
	var members []*targets.Recording
	defer func() {
		for _, m := range members {
			m.Close()
		}
	}()
	for i := 0; i < w.members; i++ {
		c, err := w.client(ctx, i, id)
		if err != nil {
			return
		}
		members = append(members, c)
	}
	deadline := time.Now().Add(w.cfg.FinalTimeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		revs := map[int64]bool{}
		var rev int64
		for _, m := range members {
			rctx, cancel := context.WithTimeout(ctx, w.cfg.RequestTimeout)
			resp, err := m.Do(rctx, history.Request{Kind: history.OpStatus})
			cancel()
			if err != nil {
				revs[-1] = true
				continue
			}
			revs[resp.Revision], rev = true, resp.Revision
		}
		_, noHash := w.cfg.Refused[history.CapHashKV]
		if len(revs) == 1 && !revs[-1] && !noHash {
			for _, m := range members {
				rctx, cancel := context.WithTimeout(ctx, w.cfg.RequestTimeout)
				m.Do(rctx, history.Request{Kind: history.OpHashKV, Revision: rev})
				cancel()
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	w.rec.Add(history.Record{Mark: &history.Mark{Name: history.MarkConvergence, Time: w.rec.Now()}})
}
