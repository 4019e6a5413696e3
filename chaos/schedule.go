package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// ScheduleFile is the name of the schedule in a run's output dir.
const ScheduleFile = "schedule.json"

// Step is one planned fault: when it starts (after the workload starts),
// how long it holds before it heals, and the seeded pick of its target.
type Step struct {
	At    time.Duration `json:"at_ns"`
	Fault string        `json:"fault"`
	Hold  time.Duration `json:"hold_ns"`
	Pick  uint32        `json:"pick"`
}

// Schedule is the whole plan of a run's faults. It is saved with the run,
// and `--schedule FILE` replays it.
type Schedule struct {
	Seed     int64         `json:"seed"`
	Faults   []string      `json:"faults"`
	Interval time.Duration `json:"interval_ns"`
	Steps    []Step        `json:"steps"`
}

// NeedsLinks reports whether any step needs vigil's network on the links.
func (s Schedule) NeedsLinks() bool {
	for _, st := range s.Steps {
		if inj, ok := Lookup(st.Fault); ok && inj.Needs().Links {
			return true
		}
	}
	return false
}

// NeedsPeerLinks reports whether any step acts on the links between
// members (partitions, peer latency), which vigil's proxies attribute to
// a member by the HTTP headers of its peer connections.
func (s Schedule) NeedsPeerLinks() bool {
	for _, st := range s.Steps {
		if inj, ok := Lookup(st.Fault); ok && inj.Needs().Links && inj.Needs().Peers {
			return true
		}
	}
	return false
}

// restarter is an injector whose heal starts a process of a role
// (history.RoleMember, ...) again: the one it hit, which may be one that
// had died by itself, since killing or stopping a process that is not
// running does nothing and the heal starts it all the same.
type restarter interface{ restarts() string }

// Restarts reports whether a step of s that heals after at (time since
// the schedule began) may start a process of role again: a kill or
// restart of that layer. Whom it hits is chosen when it comes (the
// leader, a seeded pick), so this says only that one may.
func (s Schedule) Restarts(role string, at time.Duration) bool {
	for _, st := range s.Steps {
		inj, _ := Lookup(st.Fault)
		if r, ok := inj.(restarter); ok && role != "" && r.restarts() == role && st.At+st.Hold > at {
			return true
		}
	}
	return false
}

// healMargin keeps the last fault healed this long before the workload
// ends, so the cluster is whole again for the final phase.
const healMargin = 2 * time.Second

// Plan makes a schedule for a workload of the given duration: a fault
// every interval (with up to a quarter of jitter), each held for 30–60% of
// the interval. Faults take turns in a seeded order, so every named fault
// comes up once before any comes up twice. The same arguments give the
// same schedule.
func Plan(seed int64, faults []string, interval, duration time.Duration) Schedule {
	h := fnv.New64a()
	h.Write([]byte("chaos"))
	rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	s := Schedule{Seed: seed, Faults: faults, Interval: interval}
	if len(faults) == 0 || interval <= 0 {
		return s
	}
	var order []string
	at := interval
	for i := 0; i < 10000; i++ {
		if len(order) == 0 {
			order = append([]string(nil), faults...)
			rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		}
		hold := interval * time.Duration(30+rng.IntN(31)) / 100
		at += time.Duration(rng.Int64N(int64(interval)/4 + 1))
		if at+hold > duration-healMargin {
			break
		}
		s.Steps = append(s.Steps, Step{At: at, Fault: order[0], Hold: hold, Pick: rng.Uint32()})
		order = order[1:]
		at += interval
	}
	return s
}

// Save writes the schedule as JSON.
func (s Schedule) Save(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// LoadSchedule reads a saved schedule and checks that every fault exists.
func LoadSchedule(path string) (Schedule, error) {
	var s Schedule
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s is not a vigil schedule: %v", path, err)
	}
	for i, st := range s.Steps {
		if _, ok := Lookup(st.Fault); !ok {
			return s, fmt.Errorf("%s: step %d names unknown fault %q", path, i, st.Fault)
		}
		if st.At < 0 || st.Hold < 0 {
			return s, fmt.Errorf("%s: step %d has a negative time", path, i)
		}
	}
	return s, nil
}

// Run executes the schedule from now on, until its steps are done or ctx
// ends; a fault in place when ctx ends is healed at once. Every fault is
// recorded when it heals, with its start and end; one that could not be
// injected is recorded with its error. Run returns when everything is healed.
func Run(ctx context.Context, env *Env, s Schedule, logf func(string, ...any)) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	start := time.Now()
	for _, st := range s.Steps {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(start.Add(st.At))):
		}
		runStep(ctx, env, st, logf)
	}
}

func runStep(ctx context.Context, env *Env, st Step, logf func(string, ...any)) {
	inj, _ := Lookup(st.Fault)
	// Until the fault is recorded, the history is complete only up to its
	// start (a live judge must not miss the fault that excuses what follows).
	tok := env.Rec.Begin()
	defer env.Rec.End(tok)
	f := history.Fault{ID: env.Rec.NextFaultID(), Name: st.Fault, Start: env.Rec.Now()}
	if env.Edge != nil {
		env.Edge(false)
	}
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	in, err := inj.Inject(ictx, env, st.Pick)
	cancel()
	if err != nil {
		f.End, f.Details = env.Rec.Now(), map[string]string{"error": err.Error()}
		env.Rec.Add(history.Record{Fault: &f})
		logf("fault %s not injected: %v", st.Fault, err)
		return
	}
	f.Targets, f.Details = in.Targets, in.Details
	if f.Details == nil {
		f.Details = map[string]string{}
	}
	logf("fault %s on %v for %s", st.Fault, in.Targets, st.Hold.Round(100*time.Millisecond))
	select {
	case <-ctx.Done():
	case <-time.After(st.Hold):
	}
	// Heal even when the run was interrupted: nothing may stay broken.
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := in.Heal(hctx); err != nil {
		f.Details["heal_error"] = err.Error()
		logf("fault %s: healing failed: %v", st.Fault, err)
	}
	f.End = env.Rec.Now()
	env.Rec.Add(history.Record{Fault: &f})
	if env.Edge != nil {
		env.Edge(true)
	}
}
