package suites

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/workload"
)

// BenchmarkRecordingVsPlain measures, side by side on one real 3-member
// etcd cluster, the operations per second of vigil's recording workload at
// its maximum rate (Rate 0: unthrottled) against a bare clientv3 load
// generator (plainLoad) with the same clients, keys and connections. Phases
// of equal length alternate (plain, vigil, plain with as many bare watches
// as vigil has watchers, vigil without watchers; the order rotates each
// round) so that drift in what else runs on the machine
// hits all of them alike.
//
// vigil runs as in a real run: its 12 watchers (opened over the first half
// of the phase), compactions, history file, final phase and convergence;
// only its KV clients' answers within the phase count. Every vigil phase's
// history must pass every check, or the figure means nothing.
//
// Run with -benchtime 1x; VIGIL_BENCH_PHASE (default 10s) and
// VIGIL_BENCH_ROUNDS (default 3) size it.
func BenchmarkRecordingVsPlain(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a real etcd cluster")
	}
	phase, rounds := 10*time.Second, 3
	if v := os.Getenv("VIGIL_BENCH_PHASE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 2*time.Second {
			b.Fatalf("VIGIL_BENCH_PHASE=%q: want a duration of at least 2s, e.g. 10s", v)
		}
		phase = d
	}
	if v := os.Getenv("VIGIL_BENCH_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("VIGIL_BENCH_ROUNDS=%q: want a positive number", v)
		}
		rounds = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: "v3.6.16", Progress: os.Stderr})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	fx := etcdproc.New(etcdproc.Config{Binary: bin, Members: 3, Dir: filepath.Join(dir, "cluster"), Version: "v3.6.16"})
	defer fx.Stop()
	if err := fx.Start(ctx); err != nil {
		b.Fatal(err)
	}
	for _, shape := range []struct {
		name     string
		putsOnly bool
	}{{"puts", true}, {"mix", false}} {
		b.Run(shape.name, func(b *testing.B) {
			m := throughput{b: b, ctx: ctx, fx: fx, dir: filepath.Join(dir, shape.name), phase: phase, putsOnly: shape.putsOnly}
			for r := 0; r < rounds; r++ {
				// Rotate the order so that no kind always runs first.
				for k := 0; k < numKinds; k++ {
					m.runPhase(r, (r+k)%numKinds)
				}
			}
			m.report()
		})
	}
}

// throughput accumulates one shape's phases.
type throughput struct {
	b        *testing.B
	ctx      context.Context
	fx       *etcdproc.Cluster
	dir      string
	phase    time.Duration
	putsOnly bool

	ops     [numKinds]int64         // per kind: answers counted
	elapsed [numKinds]time.Duration // per kind: time they took
	// late counts vigil's answers in the second half of each phase, when
	// all its watchers are open.
	late        int64
	lateElapsed time.Duration
}

const (
	kindPlain = iota
	kindVigil
	kindPlainWatched
	// kindVigilUnwatched is vigil with no watchers: what recording alone
	// costs, beside what feeding 12 watches costs etcd.
	kindVigilUnwatched
	numKinds
)

var kindNames = [numKinds]string{"plain", "vigil", "plain+watches", "vigil-no-watch"}

func (m *throughput) runPhase(round, kind int) {
	b := m.b
	wl := workload.DefaultConfig()
	wl.Rate, wl.Duration = 0, m.phase
	if m.putsOnly {
		wl.Shape = workload.ShapeWriteHeavy
	}
	wl.Prefix = fmt.Sprintf("/bench/%s-%d-%d/", filepath.Base(m.dir), round, kind)
	var n int64
	var took time.Duration
	switch kind {
	case kindPlain, kindPlainWatched:
		p := plainLoad{endpoints: m.fx.Endpoints(), clients: wl.Clients, keys: wl.Keys, prefix: wl.Prefix, putsOnly: m.putsOnly}
		if kind == kindPlainWatched {
			p.watchers = wl.Watchers
		}
		var err error
		if n, took, err = p.run(m.ctx, m.phase, int64(round)); err != nil {
			b.Fatal(err)
		}
	case kindVigil, kindVigilUnwatched:
		if kind == kindVigilUnwatched {
			wl.Watchers = 0
		}
		out, err := RunEtcd(m.ctx, m.fx, EtcdConfig{Common: Common{Out: filepath.Join(m.dir, fmt.Sprintf("round-%d-%d", round, kind)), Seed: int64(round), Vigil: "bench",
			Checks: check.DefaultConfig()}, Workload: wl})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range out.Results {
			if r.Verdict != check.Pass && r.Verdict != check.Skipped {
				b.Fatalf("round %d: %s: %s %s %v", round, r.Name, r.Verdict, r.Reason, r.Violations)
			}
		}
		var late int64
		n, late = countKV(out.History, wl.Clients, m.phase)
		took = m.phase
		if kind == kindVigil {
			m.late += late
			m.lateElapsed += m.phase / 2
		}
	}
	m.ops[kind] += n
	m.elapsed[kind] += took
	b.Logf("round %d %-13s %7.0f ops/s", round, kindNames[kind], float64(n)/took.Seconds())
}

// countKV counts the answers vigil's KV clients (ids below clients) got
// within phase of their first call, and those in its second half: their
// operations and the lease calls the grammar draws beside them.
func countKV(h *history.History, clients int, phase time.Duration) (all, late int64) {
	first := time.Duration(-1)
	for _, op := range h.Operations {
		if op.Client < clients && (first < 0 || op.Call < first) {
			first = op.Call
		}
	}
	count := func(client int, ret time.Duration) {
		if client >= clients || ret > first+phase {
			return
		}
		all++
		if ret > first+phase/2 {
			late++
		}
	}
	for _, op := range h.Operations {
		count(op.Client, op.Return)
	}
	for _, c := range h.Calls {
		count(c.Client, c.Return)
	}
	return all, late
}

func (m *throughput) report() {
	rate := func(k int) float64 { return float64(m.ops[k]) / m.elapsed[k].Seconds() }
	plain, vigil, watched := rate(kindPlain), rate(kindVigil), rate(kindPlainWatched)
	late := float64(m.late) / m.lateElapsed.Seconds()
	m.b.ReportMetric(plain, "plain-ops/s")
	m.b.ReportMetric(vigil, "vigil-ops/s")
	m.b.ReportMetric(100*vigil/plain, "vigil-%-of-plain")
	m.b.ReportMetric(100*late/plain, "late-%-of-plain")
	m.b.ReportMetric(watched, "plainwatch-ops/s")
	m.b.ReportMetric(100*vigil/watched, "vigil-%-of-plainwatch")
	m.b.ReportMetric(100*rate(kindVigilUnwatched)/plain, "vigilnowatch-%-of-plain")
}
