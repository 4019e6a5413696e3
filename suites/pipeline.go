// Package suites holds the scenarios that wire a fixture, a target, a
// workload (package workload) and the checkers into one run, the one run
// pipeline both targets share, the conformance probes and the known-bug
// matrix.
package suites

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/checkers"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/kubeapiserver"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/internal/redact"
	"github.com/vigil-suite/vigil/reports"
	"github.com/vigil-suite/vigil/targets/sabotage"
)

// Common is what a run of either target takes besides its workload.
type Common struct {
	Out string // output dir; the history goes there as the run goes
	// HistoryFormat is how the history file is written ("": zstd, as
	// history.jsonl.zst; history.FileFor names each format's file).
	HistoryFormat history.Format
	Seed          int64
	Vigil         string // vigil's version, for the history's metadata
	Flags         map[string]string
	// Checks configures the checkers that judge the history.
	Checks check.Config
	// Sabotage, if set, names a sabotage mode of the run's target
	// (targets/sabotage): the run builds its Saboteur with the run's
	// recorder and wraps every client with it (inside the config's Wrap,
	// if both are set).
	Sabotage string
	// Schedule, if it has steps, runs beside the workload (chaos). Its
	// faults heal before the final phase.
	Schedule chaos.Schedule
	// Links, if set, is vigil's network on the system's links, for the
	// schedule's network faults.
	Links chaos.Links
	// Logf receives chaos's lines (fault injected, healed); nil: none.
	Logf func(string, ...any)
	// Progress receives a live line every ProgressEvery; nil for none.
	Progress      io.Writer
	ProgressEvery time.Duration
	// LiveEvery is the period of the live judge's passes over the
	// history while the run goes on (liveJudge): 0 is LiveEvery, a
	// negative one turns it off. FailFast stops the workload at the first
	// violation it finds: the faults heal, the history is kept and judged
	// in full, and the reports are written.
	LiveEvery time.Duration
	FailFast  bool
	// Segment, when positive and shorter than the run, cuts the run into
	// segments of this length (history.Segment), each judged as soon as
	// it is complete and then dropped: a run of hours is judged in the
	// memory of a few segments (and of the watches open across them).
	Segment time.Duration
	// Profile is recorded in the history: the checks outside it are
	// reported but decide no verdict (and the live judge skips them).
	Profile string
	// Limitations, when not nil, are the documented departures the run
	// declares (name: where the target says so), recorded in the history
	// in place of what the fixture documents (kine's).
	Limitations map[string]string
}

// Outcome is what a run produced.
type Outcome struct {
	History *history.History
	Results []check.Result
	// Elapsed is how long the workload ran (not counting setup and checks).
	Elapsed time.Duration
	// Interrupted: ctx ended before the workload finished; Results is empty.
	Interrupted bool
	// StoppedEarly says why --fail-fast, or a server's exit nothing
	// would undo, stopped the workload ("" if neither did); the history
	// up to there is judged in Results.
	StoppedEarly string
	// Segments counts the segments of a segmented run (0: not segmented),
	// whose History is nil: each segment was judged and dropped, Results
	// merges their results (check.Merger) and Digest holds what the
	// reports need of them.
	Segments int
	Digest   *reports.Digest
}

// Faults are the run's faults, from its history or its digest.
func (o *Outcome) Faults() []history.Fault {
	if o.Digest != nil {
		return o.Digest.Faults()
	}
	if o.History == nil {
		return nil
	}
	return o.History.Faults
}

// A scenario is one target's side of a run: its workload and what it
// needs of the target. run calls prepare, then workload, then the
// workload's run; progress prints the live line meanwhile.
type scenario interface {
	// prepare checks the workload's settings and readies the target
	// before the history starts. It returns the metadata only the target
	// knows (prefix, the forms it refuses; Flags are added to Common's) and what
	// to undo after the run.
	prepare(ctx context.Context, clock *history.Clock) (history.Meta, func(), error)
	// workload builds the workload over rec, its clients wrapped by sab
	// (nil: none). With faults, env is the faults' environment for the
	// scenario to complete (its clients for the requests a fault sends)
	// and during runs them beside the workload; both are nil without.
	// It returns the workload's run and what to close after it.
	workload(ctx context.Context, rec *history.Recorder, sab *sabotage.Saboteur, env *chaos.Env,
		during func(context.Context)) (func(context.Context) error, func(), error)
	// progress starts the live line, with extra's words at its end; the
	// function it returns stops it.
	progress(clock *history.Clock, extra func() string) func()
}

// run is the one pipeline of a run of either target, against a started
// fixture the caller owns: the history and its metadata, the sabotage,
// the faults' environment, the workload, and the checks. An error means
// the run could not be made; an interrupted run returns its partial
// history and no verdicts.
func run(ctx context.Context, fx fixtures.Fixture, c Common, target string, duration, compactEvery time.Duration, sc scenario) (*Outcome, error) {
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return nil, err
	}
	if err := sabotageFits(c.Sabotage, target, duration, compactEvery); err != nil {
		return nil, err
	}
	clock := history.NewClock()
	meta, undo, err := sc.prepare(ctx, clock)
	if err != nil {
		return nil, err
	}
	defer undo()
	w, err := history.Create(filepath.Join(c.Out, history.FileFor(c.HistoryFormat)))
	if err != nil {
		return nil, err
	}
	flags := meta.Flags
	if flags == nil {
		flags = map[string]string{}
	}
	for k, v := range c.Flags {
		flags[k] = v
	}
	// The history is the first file that records the flags; a credential
	// in them stops here.
	meta.Vigil, meta.Target, meta.Seed, meta.Started, meta.Flags = c.Vigil, fx.Describe(), c.Seed, clock.Base(), redact.Flags(flags)
	meta.Profile = c.Profile
	if c.Limitations != nil {
		meta.Limitations = c.Limitations
	}
	if s, ok := fx.(fixtures.Supervised); ok {
		meta.Processes = s.Processes()
	}
	rec := history.NewRecorder(meta, clock, w)
	exits := watchExits(fx, rec, c)
	defer exits.close()
	var sab *sabotage.Saboteur
	if c.Sabotage != "" {
		if sab, err = sabotage.New(sabotage.Config{Mode: c.Sabotage, Seed: c.Seed, Recorder: rec, Duration: duration}); err != nil {
			w.Close()
			return nil, err
		}
	}
	var env *chaos.Env
	var during func(context.Context)
	if len(c.Schedule.Steps) > 0 {
		env = chaosEnv(fx, rec, c.Links)
		during = func(ctx context.Context) {
			exits.began()
			chaos.Run(ctx, env, c.Schedule, c.Logf)
		}
	}
	runWorkload, closeWorkload, err := sc.workload(ctx, rec, sab, env, during)
	if err != nil {
		w.Close()
		return nil, err
	}
	defer closeWorkload()
	judge := newLiveJudge(rec, c, c.Segment > 0 && duration > c.Segment)
	return runAndCheck(ctx, runWorkload, func() func() { return sc.progress(clock, judge.status) }, clock, w, rec, c.Checks, judge, exits)
}

// newLiveJudge is the run's live judge, or nil when c turns it off. A
// segmented run always has one, to judge and drop its segments; c's
// LiveEvery then turns off its cut passes only.
func newLiveJudge(rec *history.Recorder, c Common, segmented bool) *liveJudge {
	every := c.LiveEvery
	switch {
	case every < 0 && !segmented:
		return nil
	case every < 0:
		every = 0
	case every == 0:
		every = LiveEvery
	}
	j := &liveJudge{rec: rec, cfg: c.Checks, every: every, failFast: c.FailFast}
	if segmented {
		j.digest = reports.NewDigest()
		j.onSegment = j.digest.Add
	}
	return j
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

// chaosEnv is what the faults may act on: what fx offers, and the data
// store under it (an etcd-API fixture is its own store; an API server
// fixture may name one).
func chaosEnv(fx fixtures.Fixture, rec *history.Recorder, links chaos.Links) *chaos.Env {
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
	var store any = fx
	if s, ok := fx.(interface{ Store() kubeapiserver.Store }); ok {
		store = s.Store()
	}
	if db, ok := store.(chaos.Database); ok {
		env.Database = db
	}
	return env
}

// runAndCheck runs the workload until it ends or ctx is canceled, with
// the live judge (if any) beside it, stops the progress line, closes the
// history and, unless the run was cut short, judges it. A run cut short
// by ctx is Interrupted, with its partial history; one the live judge
// stopped (fail-fast) or a server's death stopped (exits, nil when vigil
// runs no process) is judged like a finished one.
func runAndCheck(ctx context.Context, run func(context.Context) error, startProgress func() func(), clock *history.Clock,
	w *history.Writer, rec *history.Recorder, checks check.Config, judge *liveJudge, exits *exitWatch) (*Outcome, error) {
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	exits.start(stopRun)
	judgeCtx, stopJudge := context.WithCancel(ctx)
	judged := make(chan struct{})
	if judge != nil {
		judge.stop = stopRun
		go func() { defer close(judged); judge.run(judgeCtx) }()
	} else {
		close(judged)
	}
	stopProgress := startProgress()
	start := clock.Now()
	runErr := run(runCtx)
	elapsed := clock.Now() - start
	exits.close()
	stopJudge()
	<-judged
	stopProgress()
	// A segmented run's last segments are sealed into the file before it
	// is closed, and judged after.
	var rest []*history.History
	if judge != nil {
		rest = rec.SealReady(true)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("writing the history: %w", err)
	}
	if err := rec.Err(); err != nil {
		return nil, fmt.Errorf("recording the history: %w", err)
	}
	out := &Outcome{History: rec.History(), Elapsed: elapsed, StoppedEarly: judge.failFastReason()}
	if out.StoppedEarly == "" {
		out.StoppedEarly = exits.stoppedReason()
	}
	if out.History == nil {
		// Segmented: the segments left are complete now and judged; an
		// interrupted run keeps them for its reports and drops the verdicts.
		judge.judgeSegments(rest)
		out.Segments, out.Digest = judge.merged.Segments(), judge.digest
	}
	if runErr != nil && out.StoppedEarly == "" {
		if ctx.Err() != nil {
			out.Interrupted = true
			return out, nil
		}
		return out, runErr
	}
	if out.Segments > 0 {
		out.Results = judge.results()
		return out, nil
	}
	out.Results = Check(out.History, checks)
	return out, nil
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

// progressTicker prints line to w every period (2 s if zero) until the
// returned stop is called; rate is ops per second since the last line.
// A nil w prints nothing.
func progressTicker(w io.Writer, every time.Duration, clock *history.Clock, ops func() int64,
	line func(now time.Duration, ops int64, rate float64) string, extra func() string) (stop func()) {
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
			fmt.Fprintln(w, line(now, n, rate)+extra())
			lastOps, last = n, now
		}
	}()
	return func() { close(done); <-finished }
}

// CheckFile judges a saved history file: a whole history as Check does,
// a segmented one segment by segment as the file is read, in the memory
// of a few segments: each is judged (CheckWorkers at once), merged and
// added to the digest in order, and dropped. seen, if set, is told of
// each segment once judged.
func CheckFile(path string, cfg check.Config, seen func(seg *history.History)) (*Outcome, error) {
	type judged struct {
		h       *history.History
		results []check.Result
	}
	type job struct {
		h   *history.History
		out chan judged
	}
	var merged check.Merger
	digest := reports.NewDigest()
	// The reader hands segments out in order, each with the channel its
	// result comes back on; the committer takes those channels in the
	// same order, so merging and the digest see the segments as the run
	// did, while up to CheckWorkers are judged at once.
	work, order := make(chan job), make(chan chan judged, CheckWorkers)
	var wg sync.WaitGroup
	for range CheckWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				j.out <- judged{j.h, Check(j.h, cfg)}
			}
		}()
	}
	committed := make(chan struct{})
	go func() {
		defer close(committed)
		for c := range order {
			j := <-c
			merged.Add(j.h.Meta.Segment.Index, j.h.Meta.Segment.Last, j.results)
			digest.Add(j.h, j.results)
			if seen != nil {
				seen(j.h)
			}
		}
	}()
	h, n, err := history.LoadSegments(path, func(seg *history.History) error {
		out := make(chan judged, 1)
		order <- out
		work <- job{seg, out}
		return nil
	})
	close(work)
	close(order)
	<-committed
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return &Outcome{History: h, Results: Check(h, cfg), Elapsed: h.End()}, nil
	}
	return &Outcome{Results: merged.Results(), Segments: n, Digest: digest, Elapsed: digest.End()}, nil
}

// CheckWorkers is how many segments CheckFile judges at once: one per
// core, each with its segment's memory.
var CheckWorkers = max(1, runtime.GOMAXPROCS(0))
