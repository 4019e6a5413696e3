package suites

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/checkers"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
	etcdtarget "github.com/vigil-suite/vigil/targets/etcd"
	"github.com/vigil-suite/vigil/targets/sabotage"
)

// Config is one run of the etcd KV + watch scenario.
type Config struct {
	Out      string // output dir; history.jsonl goes there as the run goes
	Seed     int64
	Vigil    string // vigil's version, for the history's metadata
	Flags    map[string]string
	Workload WorkloadConfig
	Checks   check.Config
	// Security is how the clients reach the endpoints: TLS, credentials.
	Security fixtures.Security
	// Wrap, if set, wraps every client before it is recorded (sabotage).
	Wrap Wrapper
	// Sabotage, if set, names a sabotage mode (targets/sabotage): RunEtcd
	// builds the run's Saboteur with its recorder and wraps every client
	// with it (inside Wrap, if both are set).
	Sabotage string
	// Schedule, if it has steps, runs beside the workload (chaos). Its
	// faults heal before the final phase.
	Schedule chaos.Schedule
	// Links, if set, is vigil's network on the cluster's links, for the
	// schedule's network faults.
	Links chaos.Links
	// Logf receives chaos's lines (fault injected, healed); nil: none.
	Logf func(string, ...any)
	// Progress receives a live line every ProgressEvery; nil for none.
	Progress      io.Writer
	ProgressEvery time.Duration
}

// Outcome is what a run produced.
type Outcome struct {
	History *history.History
	Results []check.Result
	// Elapsed is how long the workload ran (not counting setup and checks).
	Elapsed time.Duration
	// Interrupted: ctx ended before the workload finished; Results is empty.
	Interrupted bool
}

// RunEtcd drives the workload against a started fixture, records the
// history into cfg.Out, and checks it. The caller owns the fixture (starts
// and stops it). An error means the run could not be made; an interrupted
// run returns its partial history and no verdicts.
func RunEtcd(ctx context.Context, fx fixtures.Fixture, cfg Config) (*Outcome, error) {
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	clock := history.NewClock()
	if cfg.Workload.Prefix == "" {
		cfg.Workload.Prefix = fmt.Sprintf("/vigil/%d-%x/", cfg.Seed, clock.Base().UnixNano())
	}
	if err := cfg.Workload.Validate(); err != nil {
		return nil, err
	}
	if err := sabotageFits(cfg.Sabotage, sabotage.TargetEtcd, cfg.Workload.Duration, cfg.Workload.CompactEvery); err != nil {
		return nil, err
	}
	endpoints := fx.Endpoints()
	dial := func(ctx context.Context, member int) (targets.Client, error) {
		return etcdtarget.Dial(endpoints[member%len(endpoints)], 5*time.Second, cfg.Security)
	}
	// What the target refuses, asked before the history starts: the
	// workload avoids it and the history says so.
	probe, err := dial(ctx, 0)
	if err != nil {
		return nil, err
	}
	refused := probeCapabilities(ctx, probe, cfg.Workload.Prefix)
	probe.Close()
	if err := cfg.Workload.adapt(refused); err != nil {
		return nil, err
	}
	if len(refused) > 0 && cfg.Logf != nil {
		cfg.Logf("the target refuses %s; the workload avoids them", refusedText(refused))
	}
	w, err := history.Create(filepath.Join(cfg.Out, history.FileName))
	if err != nil {
		return nil, err
	}
	supports := []string{}
	for _, f := range etcdtarget.Supports() {
		supports = append(supports, string(f))
	}
	var limits map[string]string
	if l, ok := fx.(interface{ Limitations() map[string]string }); ok {
		limits = l.Limitations()
	}
	rec := history.NewRecorder(history.Meta{Vigil: cfg.Vigil, Target: fx.Describe(), Seed: cfg.Seed,
		Started: clock.Base(), Prefix: cfg.Workload.Prefix, Flags: cfg.Flags, Supports: supports, Refuses: refused,
		Limitations: limits}, clock, w)

	wrap := cfg.Wrap
	if cfg.Sabotage != "" {
		sab, err := sabotage.New(sabotage.Config{Mode: cfg.Sabotage, Seed: cfg.Seed, Recorder: rec, Duration: cfg.Workload.Duration})
		if err != nil {
			w.Close()
			return nil, err
		}
		wrap = sabotageWrapper(sab.Wrap, cfg.Wrap)
	}
	wl := NewWorkload(cfg.Workload, dial, len(endpoints), rec, cfg.Seed, wrap)
	if len(cfg.Schedule.Steps) > 0 {
		env := chaosEnv(fx, fx, rec, cfg.Links)
		// chaos's own client, for the requests a fault sends (compactions);
		// on the last member, away from the control client on the first.
		cc, err := wl.NewClient(ctx, len(endpoints)-1)
		if err != nil {
			return nil, err
		}
		defer cc.Close()
		env.Do = cc.Do
		doOn, closeAll := memberClients(fx, wl)
		defer closeAll()
		env.DoOn = doOn
		wl.During = func(ctx context.Context) { chaos.Run(ctx, env, cfg.Schedule, cfg.Logf) }
	}
	return runAndCheck(ctx, wl.Run, startProgress(cfg, wl.Stats, clock), clock, w, rec, cfg.Checks)
}

// sabotageFits checks that mode (if any) is a sabotage mode of target
// that a workload of this duration and compaction period can trip.
func sabotageFits(mode, target string, d, compactEvery time.Duration) error {
	if mode == "" {
		return nil
	}
	m, ok := sabotage.Lookup(mode)
	if !ok || m.Target != target {
		return fmt.Errorf("%q is not a sabotage mode of the %s target; modes: %v", mode, target, sabotage.NamesFor(target))
	}
	return m.Fits(d, compactEvery)
}

// chaosEnv is what the faults may act on: what fx (and store, the data
// store under it) offer.
func chaosEnv(fx fixtures.Fixture, store any, rec *history.Recorder, links chaos.Links) *chaos.Env {
	env := &chaos.Env{Fixture: fx, Rec: rec, Links: links}
	if p, ok := fx.(chaos.Processes); ok {
		env.Processes = p
	}
	if fp, ok := fx.(chaos.Failpoints); ok {
		env.Failpoints = fp
	}
	if m, ok := fx.(chaos.Membership); ok {
		env.Membership = m
	}
	if db, ok := store.(chaos.Database); ok {
		env.Database = db
	}
	return env
}

// runAndCheck runs the workload until it ends or ctx is canceled, stops
// the progress line, closes the history and, unless the run was cut short,
// judges it. A run cut short by ctx is Interrupted, with its partial history.
func runAndCheck(ctx context.Context, run func(context.Context) error, stopProgress func(), clock *history.Clock,
	w *history.Writer, rec *history.Recorder, checks check.Config) (*Outcome, error) {
	start := clock.Now()
	runErr := run(ctx)
	elapsed := clock.Now() - start
	stopProgress()
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("writing the history: %w", err)
	}
	if err := rec.Err(); err != nil {
		return nil, fmt.Errorf("recording the history: %w", err)
	}
	out := &Outcome{History: rec.History(), Elapsed: elapsed}
	if runErr != nil {
		if ctx.Err() != nil {
			out.Interrupted = true
			return out, nil
		}
		return out, runErr
	}
	out.Results = Check(out.History, checks)
	return out, nil
}

// sabotageWrapper applies sab first, then outer if set.
func sabotageWrapper(sab, outer Wrapper) Wrapper {
	return func(c targets.Client, id int) targets.Client {
		c = sab(c, id)
		if outer != nil {
			c = outer(c, id)
		}
		return c
	}
}

// Check runs every checker that judges h (the etcd checks, or the
// Kubernetes ones for a kube run) and measures each (checkers read no clock).
func Check(h *history.History, cfg check.Config) []check.Result {
	var results []check.Result
	for _, c := range checkers.ForHistory(h) {
		start := time.Now()
		r := check.Run(c, h, cfg)
		r.Elapsed = time.Since(start)
		results = append(results, r)
	}
	return results
}

// startProgress prints a live line now and then: elapsed time, op rate,
// errors, watch events, and how far the slowest watcher trails.
func startProgress(cfg Config, s *Stats, clock *history.Clock) func() {
	return progressTicker(cfg.Progress, cfg.ProgressEvery, clock, s.Ops.Load, func(now time.Duration, ops int64, rate float64) string {
		return fmt.Sprintf("[%5.1fs] ops %d (%.0f/s)  errors %d  watch events %d  slowest watcher lag %d rev",
			now.Seconds(), ops, rate, s.FailedOps.Load(), s.WatchEvents.Load(), s.SlowestWatchLag())
	})
}

// progressTicker prints line to w every period (2 s if zero) until the
// returned stop is called; rate is ops per second since the last line.
// A nil w prints nothing.
func progressTicker(w io.Writer, every time.Duration, clock *history.Clock, ops func() int64,
	line func(now time.Duration, ops int64, rate float64) string) (stop func()) {
	if w == nil {
		return func() {}
	}
	if every <= 0 {
		every = 2 * time.Second
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		var lastOps int64
		last := clock.Now()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			now, n := clock.Now(), ops()
			rate := float64(n-lastOps) / (now - last).Seconds()
			fmt.Fprintln(w, line(now, n, rate))
			lastOps, last = n, now
		}
	}()
	return func() { close(done); <-finished }
}

// memberClients gives chaos a recorded client per member, dialed on first
// use, for requests one member must answer (a defragmentation).
func memberClients(fx fixtures.Fixture, wl *Workload) (func(context.Context, string, history.Request) (*history.Response, error), func()) {
	var mu sync.Mutex
	clients := map[string]*targets.Recording{}
	do := func(ctx context.Context, member string, req history.Request) (*history.Response, error) {
		mu.Lock()
		c, ok := clients[member]
		if !ok {
			idx := slices.Index(fixtures.Names(fx.Members()), member)
			if idx < 0 {
				mu.Unlock()
				return nil, fmt.Errorf("no member %q", member)
			}
			var err error
			if c, err = wl.NewClient(ctx, idx); err != nil {
				mu.Unlock()
				return nil, err
			}
			clients[member] = c
		}
		mu.Unlock()
		return c.Do(ctx, req)
	}
	closeAll := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range clients {
			c.Close()
		}
	}
	return do, closeAll
}
