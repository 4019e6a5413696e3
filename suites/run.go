package suites

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
	etcdtarget "github.com/vigil-suite/vigil/targets/etcd"
	"github.com/vigil-suite/vigil/targets/sabotage"
	"github.com/vigil-suite/vigil/workload"
)

// EtcdConfig is one run of the etcd KV + watch scenario.
type EtcdConfig struct {
	Common
	Workload workload.Config
	// Security is how the clients reach the endpoints: TLS, credentials.
	Security fixtures.Security
	// Wrap, if set, wraps every client before it is recorded (sabotage).
	Wrap workload.Wrapper
	// Dial, if set, opens the clients; by default they dial the fixture's
	// endpoints (client i the member i modulo their number) with Security.
	Dial workload.Dialer
}

// RunEtcd drives the workload against a started fixture, records the
// history into cfg.Out, and checks it. The caller owns the fixture (starts
// and stops it). An error means the run could not be made; an interrupted
// run returns its partial history and no verdicts.
func RunEtcd(ctx context.Context, fx fixtures.Fixture, cfg EtcdConfig) (*Outcome, error) {
	return run(ctx, fx, cfg.Common, sabotage.TargetEtcd, cfg.Workload.Duration, cfg.Workload.CompactEvery, &etcdScenario{cfg: cfg, fx: fx})
}

// etcdScenario is the etcd side of a run.
type etcdScenario struct {
	cfg     EtcdConfig
	fx      fixtures.Fixture
	members int
	wl      *workload.Workload
}

func (s *etcdScenario) prepare(ctx context.Context, clock *history.Clock) (history.Meta, func(), error) {
	w := &s.cfg.Workload
	w.Segment = s.cfg.Segment
	if w.Prefix == "" {
		w.Prefix = fmt.Sprintf("/vigil/%d-%x/", s.cfg.Seed, clock.Base().UnixNano())
	}
	if err := w.Validate(); err != nil {
		return history.Meta{}, nil, err
	}
	s.members = len(s.fx.Endpoints())
	if s.cfg.Dial == nil {
		endpoints, sec := s.fx.Endpoints(), s.cfg.Security
		s.cfg.Dial = func(ctx context.Context, member int) (targets.Client, error) {
			return etcdtarget.Dial(endpoints[member%len(endpoints)], 5*time.Second, sec)
		}
	}
	// What the target refuses, asked before the history starts: the
	// workload avoids it and the history says so.
	probe, err := s.cfg.Dial(ctx, 0)
	if err != nil {
		return history.Meta{}, nil, err
	}
	err = w.Probe(ctx, probe)
	probe.Close()
	if err != nil {
		return history.Meta{}, nil, err
	}
	refused := w.Refused
	if len(refused) > 0 && s.cfg.Logf != nil {
		s.cfg.Logf("the target refuses %s; the workload avoids them", workload.RefusedText(refused))
	}
	supports := []string{}
	for _, f := range etcdtarget.Supports() {
		supports = append(supports, string(f))
	}
	var limits map[string]string
	if l, ok := s.fx.(interface{ Limitations() map[string]string }); ok {
		limits = l.Limitations()
	}
	return history.Meta{Prefix: w.Prefix, Supports: supports, Refuses: refused, Limitations: limits,
		Productions: w.Productions()}, func() {}, nil
}

func (s *etcdScenario) workload(ctx context.Context, rec *history.Recorder, sab *sabotage.Saboteur, env *chaos.Env,
	during func(context.Context)) (func(context.Context) error, func(), error) {
	wrap := s.cfg.Wrap
	if sab != nil {
		wrap = sabotageWrapper(sab.Wrap, s.cfg.Wrap)
	}
	s.wl = workload.New(s.cfg.Workload, s.cfg.Dial, s.members, rec, s.cfg.Seed, wrap)
	run := func(ctx context.Context) error {
		err := s.wl.Run(ctx)
		if p := s.wl.PrunedDuring(); p != "" && s.cfg.Logf != nil {
			s.cfg.Logf("refused during the run, so no longer drawn: %s", p)
		}
		return err
	}
	if env == nil {
		return run, func() {}, nil
	}
	// chaos's own client, for the requests a fault sends (compactions);
	// on the last member, away from the control client on the first.
	cc, err := s.wl.NewClient(ctx, s.members-1)
	if err != nil {
		return nil, nil, err
	}
	env.Do = cc.Do
	doOn, closeAll := memberClients(s.fx, s.wl)
	env.DoOn = doOn
	env.Edge = s.wl.FaultEdge // the workload's bursts at a fault's start and heal
	s.wl.During = during
	return run, func() { closeAll(); cc.Close() }, nil
}

func (s *etcdScenario) progress(clock *history.Clock, extra func() string) func() {
	st := s.wl.Stats
	return progressTicker(s.cfg.Progress, s.cfg.ProgressEvery, clock, st.Ops.Load, func(now time.Duration, ops int64, rate float64) string {
		return fmt.Sprintf("[%5.1fs] ops %d (%.0f/s)  errors %d  watch events %d  slowest watcher lag %d rev",
			now.Seconds(), ops, rate, st.FailedOps.Load(), st.WatchEvents.Load(), st.SlowestWatchLag())
	}, extra)
}

// sabotageWrapper applies sab first, then outer if set.
func sabotageWrapper(sab, outer workload.Wrapper) workload.Wrapper {
	return func(c targets.Client, id int) targets.Client {
		c = sab(c, id)
		if outer != nil {
			c = outer(c, id)
		}
		return c
	}
}

// memberClients gives chaos a recorded client per member, dialed on first
// use, for requests one member must answer (a defragmentation).
func memberClients(fx fixtures.Fixture, wl *workload.Workload) (func(context.Context, string, history.Request) (*history.Response, error), func()) {
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
