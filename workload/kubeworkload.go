package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
	"github.com/vigil-suite/vigil/targets/kube"
)

// KubeConfig sizes the Kubernetes workload. The defaults suit a
// 2-core machine running etcd, one or two API servers and vigil.
type KubeConfig struct {
	// Writers do optimistic-concurrency updates (get, update with the RV,
	// retry on 409), creates, deletes with preconditions and label flips.
	Writers int
	// Racers update one object concurrently from the same RV, now and then:
	// of each race at most one may win.
	Racers int
	// Readers get and list with every resourceVersion form, page through
	// lists, read from the future, send invalid requests on purpose and
	// watch from compacted RVs.
	Readers int
	// Informers list, then watch from the list's RV with bookmarks, resume
	// from their last RV, relist on 410.
	Informers int
	// Streamers open streaming lists (sendInitialEvents) and plain watches
	// from RV unset or "0".
	Streamers int
	// Rate is the total requests per second of writers and readers.
	Rate     float64
	Duration time.Duration
	// Objects is the number of object names the writers share.
	Objects int
	// CompactEvery is the period of etcd compactions forced through the
	// etcd endpoints (0: none; needs the etcd under the API server).
	CompactEvery   time.Duration
	RequestTimeout time.Duration
	// FinalTimeout bounds how long open watches get to reach the final write.
	FinalTimeout time.Duration
	// Namespace is where everything happens; RunKube picks a fresh one.
	Namespace string
	// Resource is the collection's resource (kube.ConfigMaps when zero):
	// a custom one gets status writes and no strategic merge patches,
	// and server-side apply names its apiVersion and kind.
	Resource kube.Resource
	// Segment, when positive and shorter than Duration, cuts the run's
	// history into segments of this length (history.Segment), each judged
	// as soon as it is complete and then dropped. The workload goes on
	// across them (its objects, informers and the etcd oracle): a watch
	// that spans a boundary is judged whole in the segment it ends in,
	// and each segment holds what came before it that it needs
	// (history.Context). Every watch ends within a few segments: the
	// informers that would keep one open close and resume it.
	Segment time.Duration
}

// segmented reports whether the run is cut into segments.
func (c KubeConfig) segmented() bool { return c.Segment > 0 && c.Duration > c.Segment }

// stagger is the span over which the watchers open their first watch:
// the run, or its first segment.
func (c KubeConfig) stagger() time.Duration {
	if c.segmented() {
		return c.Segment
	}
	return c.Duration
}

// DefaultKubeConfig is what `vigil run --target kube` uses unless told otherwise.
func DefaultKubeConfig() KubeConfig {
	return KubeConfig{Writers: 4, Racers: 3, Readers: 2, Informers: 6, Streamers: 3, Rate: 120,
		Duration: 30 * time.Second, Objects: 16, CompactEvery: 5 * time.Second,
		RequestTimeout: 10 * time.Second, FinalTimeout: 15 * time.Second}
}

// Validate reports the first unusable setting a user chose, in the words
// of the CLI; the prefix (namespace), which the run picks, is checked when
// the workload runs.
func (c KubeConfig) Validate() error {
	switch {
	case c.Writers < 1:
		return errors.New("--clients must be at least 1")
	case c.Rate <= 0:
		return errors.New("--rate must be positive")
	case c.Duration <= 0:
		return errors.New("--duration must be positive")
	case c.Objects < 1:
		return errors.New("--keys must be at least 1")
	case c.Informers < 0 || c.Streamers < 0:
		return errors.New("--watchers must not be negative")
	case c.Readers < 0 || c.Racers < 0:
		return errors.New("readers and racers must not be negative")
	}
	return nil
}

// Label the writers flip and some watchers select on.
const (
	kubeGroupLabel = "vigil-group"
	kubeSelector   = kubeGroupLabel + "=a"
)

// KubeStats are live counters of a running Kubernetes workload.
type KubeStats struct {
	Ops, FailedOps, Events, Bookmarks atomic.Int64
	// Expired counts 410 answers: ERROR events, refused watches, lists.
	Expired, Relists, Resumes, Conflicts atomic.Int64
	// HeadRV is the highest resourceVersion any call or event showed.
	HeadRV atomic.Uint64
	// CompactRV is the etcd revision of the last forced compaction.
	CompactRV atomic.Int64
}

func (s *KubeStats) sawRV(rv string) {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return
	}
	for {
		cur := s.HeadRV.Load()
		if n <= cur || s.HeadRV.CompareAndSwap(cur, n) {
			return
		}
	}
}

// KubeDialer opens a client to API server number i (modulo their count).
type KubeDialer func(i int) (kube.API, error)

// KubeWrapper wraps the Kubernetes client numbered id before it is
// recorded: the place for sabotage, which changes what vigil's clients see.
type KubeWrapper func(c kube.API, id int) kube.API

// KubeWorkload runs the Kubernetes clients against one namespace of a
// Kubernetes API target and records everything through kube.Recording.
type KubeWorkload struct {
	cfg     KubeConfig
	dial    KubeDialer
	servers int
	rec     *history.Recorder
	seed    int64
	Stats   *KubeStats
	// Etcd, if set, dials the etcd under the API servers: for forced
	// compactions (recorded as etcd operations) and the oracle watch of
	// the API servers' keys.
	Etcd func() (targets.Client, error)
	// EtcdPrefix is where the API servers keep the resource's objects in
	// etcd, e.g. /registry/configmaps/<namespace>/.
	EtcdPrefix string
	// During, if set, runs beside the clients with the same deadline (the
	// chaos schedule).
	During func(ctx context.Context)
	// Wrap, if set, wraps every Kubernetes client before it is recorded.
	Wrap KubeWrapper

	oracle  *kubeOracle // nil without etcd
	nextID  atomic.Int64
	mu      sync.Mutex
	watches map[*kubeWatchState]struct{} // open watches, for the final phase
	// compactNow asks the compactor for one compaction at the head, now
	// (a paging reader wants its continue token to expire).
	compactNow chan chan struct{}
}

// NewKube prepares a Kubernetes workload; Run starts it.
func NewKube(cfg KubeConfig, dial KubeDialer, servers int, rec *history.Recorder, seed int64) *KubeWorkload {
	return &KubeWorkload{cfg: cfg, dial: dial, servers: servers, rec: rec, seed: seed, Stats: &KubeStats{},
		watches: map[*kubeWatchState]struct{}{}, compactNow: make(chan chan struct{})}
}

// client dials server (mod the server count) as a new recorded client.
func (w *KubeWorkload) client(server int) (*kube.Recording, error) {
	c, err := w.dial(server % max(1, w.servers))
	if err != nil {
		return nil, err
	}
	id := int(w.nextID.Add(1) - 1)
	if w.Wrap != nil {
		c = w.Wrap(c, id)
	}
	return kube.Record(c, id, w.rec), nil
}

// EtcdClient dials the etcd under the API servers as a new recorded client
// (chaos sends its compactions through one).
func (w *KubeWorkload) EtcdClient() (*targets.Recording, error) {
	c, err := w.Etcd()
	if err != nil {
		return nil, err
	}
	return targets.Record(c, int(w.nextID.Add(1)-1), w.rec), nil
}

// objectName is the name of pool slot i.
func (w *KubeWorkload) objectName(i int) string { return fmt.Sprintf("o-%02d", i) }

// value is unique in the run: "val:<client>.<seq>". The prefix lets the
// etcd oracle find it inside the stored (protobuf) object.
func kubeValue(client, seq int) string { return fmt.Sprintf("val:%d.%d", client, seq) }

// do runs one call with the request timeout and counts it.
func (w *KubeWorkload) do(ctx context.Context, c *kube.Recording, req history.KubeRequest) (*history.KubeResponse, error) {
	rctx, cancel := context.WithTimeout(ctx, w.cfg.RequestTimeout)
	defer cancel()
	resp, err := c.Do(rctx, req)
	w.Stats.Ops.Add(1)
	if err != nil {
		w.Stats.FailedOps.Add(1)
		if st := kube.StatusOf(err); st != nil {
			switch st.Code {
			case 410:
				w.Stats.Expired.Add(1)
			case 409:
				w.Stats.Conflicts.Add(1)
			}
		}
		return nil, err
	}
	if resp.Object != nil {
		w.Stats.sawRV(resp.Object.ResourceVersion)
	}
	w.Stats.sawRV(resp.ListRV)
	return resp, nil
}

// Run drives the workload for cfg.Duration (or until ctx ends), then makes
// the final write, waits for the open watches to reach it, and closes them.
func (w *KubeWorkload) Run(ctx context.Context) error {
	if err := w.cfg.Validate(); err != nil {
		return err
	}
	if w.cfg.Namespace == "" {
		return errors.New("workload namespace must not be empty")
	}
	if w.cfg.Resource == (kube.Resource{}) {
		w.cfg.Resource = kube.ConfigMaps
	}
	var closers []interface{ Close() error }
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	newClient := func(server int) (*kube.Recording, error) {
		c, err := w.client(server)
		if err == nil {
			closers = append(closers, c)
		}
		return c, err
	}
	control, err := newClient(0)
	if err != nil {
		return err
	}
	if w.cfg.segmented() {
		w.rec.StartSegment(history.Segment{Index: 0, Prefix: w.EtcdPrefix})
	}
	// A consistent list first: the head RV anchors the first reads, and the
	// checks learn the collection's state before the workload.
	if resp, err := w.do(ctx, control, history.KubeRequest{Verb: history.KubeList}); err != nil {
		return fmt.Errorf("first list of the namespace failed: %w", err)
	} else {
		w.Stats.sawRV(resp.ListRV)
	}

	watchCtx, stopWatches := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWatches()
	var watchWG sync.WaitGroup
	goWatch := func(f func()) {
		watchWG.Add(1)
		go func() { defer watchWG.Done(); f() }()
	}

	var oracle *kubeOracle
	if w.Etcd != nil {
		oc, err := w.EtcdClient()
		if err != nil {
			return fmt.Errorf("etcd under the API server: %w", err)
		}
		closers = append(closers, oc)
		oracle = newKubeOracle(w, oc)
		if err := oracle.start(ctx); err != nil {
			return err
		}
		w.oracle = oracle
		goWatch(func() { oracle.run(watchCtx) })
	}

	for i := 0; i < w.cfg.Informers; i++ {
		c, err := newClient(i)
		if err != nil {
			return err
		}
		inf := newInformer(w, i, c, seeded(w.seed, fmt.Sprintf("kube-informer-%d", i)))
		goWatch(func() { inf.run(watchCtx, ctx) })
	}
	for i := 0; i < w.cfg.Streamers; i++ {
		c, err := newClient(i + 1)
		if err != nil {
			return err
		}
		st := newStreamer(w, i, c, seeded(w.seed, fmt.Sprintf("kube-streamer-%d", i)))
		goWatch(func() { st.run(watchCtx) })
	}

	runCtx, stop := context.WithTimeout(ctx, w.cfg.Duration)
	defer stop()
	var wg sync.WaitGroup
	goRun := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	for i := 0; i < w.cfg.Writers; i++ {
		c, err := newClient(i)
		if err != nil {
			return err
		}
		rng := seeded(w.seed, fmt.Sprintf("kube-writer-%d", i))
		goRun(func() { w.writer(runCtx, ctx, i, c, rng) })
	}
	if w.cfg.Racers >= 2 {
		var racers []*kube.Recording
		for i := 0; i < w.cfg.Racers; i++ {
			c, err := newClient(i)
			if err != nil {
				return err
			}
			racers = append(racers, c)
		}
		rng := seeded(w.seed, "kube-racers")
		goRun(func() { w.races(runCtx, ctx, racers, rng) })
	}
	for i := 0; i < w.cfg.Readers; i++ {
		c, err := newClient(i + 1)
		if err != nil {
			return err
		}
		rd := &kubeReader{w: w, c: c, rng: seeded(w.seed, fmt.Sprintf("kube-reader-%d", i)), index: i}
		if w.Etcd != nil && i == 0 {
			// The first reader can make its continue token expire (it asks
			// the compactor) and needs nothing of its own for that.
			rd.canExpire = w.cfg.CompactEvery > 0
		}
		goRun(func() { rd.run(runCtx, ctx) })
	}
	if w.cfg.Readers > 0 {
		c, err := newClient(1)
		if err != nil {
			return err
		}
		goRun(func() { w.fieldWatcher(runCtx, c, "kube-field-watcher") })
	}
	if w.Etcd != nil && w.cfg.CompactEvery > 0 {
		cc, err := w.EtcdClient()
		if err != nil {
			return fmt.Errorf("etcd under the API server: %w", err)
		}
		closers = append(closers, cc)
		rng := seeded(w.seed, "kube-compactor")
		goRun(func() { w.compactor(runCtx, ctx, cc, rng) })
	}
	if w.During != nil {
		goRun(func() { w.During(runCtx) })
	}
	if w.cfg.segmented() {
		goRun(func() { w.segments(runCtx) })
	}
	wg.Wait()

	err = ctx.Err()
	if err == nil {
		w.finalPhase(ctx, control, newClient, oracle)
	}
	stopWatches()
	watchWG.Wait()
	if err == nil {
		w.rec.Add(history.Record{Mark: &history.Mark{Name: history.MarkEnd, Time: w.rec.Now()}})
	}
	return err
}

// finalPhase writes one last object, reads the collection consistently
// through every API server, and waits until every open watch (and the etcd
// oracle) has seen the final write, bounded by FinalTimeout. The final
// object carries the selector's label, so selecting watches see it too.
func (w *KubeWorkload) finalPhase(ctx context.Context, control *kube.Recording,
	newClient func(int) (*kube.Recording, error), oracle *kubeOracle) {
	var final *history.Object
	var opID int64
	for attempt := 0; attempt < 5 && final == nil && ctx.Err() == nil; attempt++ {
		obj := &history.Object{Name: fmt.Sprintf("final-%d", attempt), Value: kubeValue(control.ID(), -1-attempt),
			Labels: map[string]string{kubeGroupLabel: "a"}}
		resp, err := w.do(ctx, control, history.KubeRequest{Verb: history.KubeCreate, Object: obj})
		if err == nil && resp.Object != nil {
			final, opID = resp.Object, control.LastOp()
		}
	}
	if final == nil {
		return // no mark: the checks will say the final phase is missing
	}
	rv, _ := strconv.ParseInt(final.ResourceVersion, 10, 64)
	w.rec.Add(history.Record{Mark: &history.Mark{Name: history.MarkFinalWrite, Time: w.rec.Now(), Op: opID, Revision: rv}})
	for i := 0; i < w.servers; i++ {
		if c, err := newClient(i); err == nil {
			w.do(ctx, c, history.KubeRequest{Verb: history.KubeList})
		}
	}
	deadline := time.Now().Add(w.cfg.FinalTimeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		behind := 0
		w.mu.Lock()
		for ws := range w.watches {
			if !ws.reached(final) {
				behind++
			}
		}
		w.mu.Unlock()
		if oracle != nil && !oracle.reached(rv) {
			behind++
			oracle.nudge(ctx)
		}
		if behind == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// segments opens segment 1, 2, ... every Segment until runCtx ends (the
// run's length: the last segment holds the final phase). Nothing stops
// at a boundary.
func (w *KubeWorkload) segments(runCtx context.Context) {
	start := time.Now()
	for k := 1; ; k++ {
		at := time.Duration(k) * w.cfg.Segment
		if at >= w.cfg.Duration || !sleepCtx(runCtx, time.Until(start.Add(at))) {
			return
		}
		w.rec.StartSegment(history.Segment{Index: k, Prefix: w.EtcdPrefix})
	}
}

// kubeWatchState is what the final phase knows of one open watch.
type kubeWatchState struct {
	lastRV   atomic.Uint64 // highest RV seen on the current watch (event or bookmark)
	startRV  atomic.Uint64 // the current watch's starting RV, when explicit
	sawFinal atomic.Bool   // the final object showed up (servers with non-numeric RVs)
}

func (s *kubeWatchState) observe(ev history.KubeEvent) {
	if ev.Object == nil {
		return
	}
	if n, err := strconv.ParseUint(ev.Object.ResourceVersion, 10, 64); err == nil && n > s.lastRV.Load() {
		s.lastRV.Store(n)
	}
	if len(ev.Object.Name) > 6 && ev.Object.Name[:6] == "final-" {
		s.sawFinal.Store(true)
	}
}

func (s *kubeWatchState) reached(final *history.Object) bool {
	if s.sawFinal.Load() {
		return true
	}
	n, err := strconv.ParseUint(final.ResourceVersion, 10, 64)
	return err == nil && (s.lastRV.Load() >= n || s.startRV.Load() > n)
}

func (w *KubeWorkload) track(s *kubeWatchState) {
	w.mu.Lock()
	w.watches[s] = struct{}{}
	w.mu.Unlock()
}

func (w *KubeWorkload) untrack(s *kubeWatchState) {
	w.mu.Lock()
	delete(w.watches, s)
	w.mu.Unlock()
}

// pace sleeps until the client's next slot; false when runCtx ended.
func pace(runCtx context.Context, next *time.Time, interval time.Duration) bool {
	*next = next.Add(interval)
	if d := time.Until(*next); d > 0 {
		select {
		case <-runCtx.Done():
			return false
		case <-time.After(d):
		}
	} else if d < -time.Second {
		*next = time.Now() // fell behind (a fault); do not burst to catch up
	}
	return runCtx.Err() == nil
}

// sleepCtx sleeps d or until ctx ends; false if ctx ended.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// jitter is d plus or minus up to a quarter, drawn from rng.
func jitter(rng *rand.Rand, d time.Duration) time.Duration {
	q := int64(d / 4)
	if q <= 0 {
		return d
	}
	return d - time.Duration(q) + time.Duration(rng.Int64N(2*q))
}
