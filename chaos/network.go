package chaos

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/vigil-suite/vigil/chaos/proxy"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/history"
)

// partition cuts peer links so that members fall into groups. Each kind
// builds its groups from the member list rotated by the seeded pick, so a
// replay cuts the same links.
type partition struct {
	name, describe string
	members        int
	// cuts returns the directed links to cut, given the members (rotated)
	// and the leader's name.
	cuts func(ms []string, leader string) [][2]string
	// needsLeader: the cut depends on who leads.
	needsLeader bool
	// healAfter, if > 0: healing waits (at most healWait) until the
	// cluster has moved this many revisions past the cut, so that the
	// cut-off member is far behind when it comes back.
	healAfter int64
}

// healWait bounds how long a healAfter partition waits to heal.
const healWait = 20 * time.Second

func (p partition) Name() string     { return p.name }
func (p partition) Describe() string { return p.describe }
func (p partition) Needs() Needs     { return Needs{Links: true, Peers: true, Members: p.members} }

func (p partition) Inject(ctx context.Context, env *Env, pick uint32) (Injected, error) {
	if err := p.Needs().Unmet(env); err != nil {
		return Injected{}, err
	}
	ms := rotated(env.Fixture.Members(), pick)
	leader := ""
	if p.needsLeader {
		l, err := env.Fixture.Leader(ctx)
		if err != nil {
			return Injected{}, fmt.Errorf("finding the leader: %w", err)
		}
		leader = l.Name
	}
	cuts := p.cuts(ms, leader)
	in := Injected{Details: map[string]string{}, Heal: func(context.Context) error { return env.Links.Heal() }}
	hit := map[string]bool{}
	for _, c := range cuts {
		if err := env.Links.CutPeer(c[0], c[1]); err != nil {
			env.Links.Heal()
			return Injected{}, err
		}
		hit[c[0]], hit[c[1]] = true, true
		in.Details["cut "+c[0]+"->"+c[1]] = "blackholed"
	}
	for _, m := range ms {
		if hit[m] {
			in.Targets = append(in.Targets, m)
		}
	}
	if p.healAfter > 0 {
		// Count revisions on the members still in touch with each other:
		// the cut-off one (in the most cuts) no longer moves.
		n := map[string]int{}
		for _, c := range cuts {
			n[c[0]]++
			n[c[1]]++
		}
		cutOff := ms[0]
		for _, m := range ms {
			if n[m] > n[cutOff] {
				cutOff = m
			}
		}
		ask := without(ms, cutOff)
		// Counted from the cut, not from the heal: the hold's writes count.
		target := storeRevision(ctx, env, ask) + p.healAfter
		if target == p.healAfter {
			target = math.MaxInt64 // no revision known at the cut: hold the full healWait
		}
		in.Details["heals after"] = fmt.Sprintf("revision %d on %v", target, ask)
		in.Heal = func(ctx context.Context) error {
			waitRevisions(ctx, env, target, ask)
			return env.Links.Heal()
		}
	}
	return in, nil
}

// storeRevision is the store revision as the members in ask report it
// (through the run's recorded per-member client, else its recorded
// client); 0 when none answers.
func storeRevision(ctx context.Context, env *Env, ask []string) int64 {
	best := int64(0)
	status := func(do func(context.Context) (*history.Response, error)) {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if resp, err := do(sctx); err == nil {
			best = max(best, resp.Revision)
		}
	}
	switch {
	case env.DoOn != nil:
		for _, m := range ask {
			status(func(ctx context.Context) (*history.Response, error) {
				return env.DoOn(ctx, m, history.Request{Kind: history.OpStatus})
			})
		}
	case env.Do != nil:
		status(func(ctx context.Context) (*history.Response, error) {
			return env.Do(ctx, history.Request{Kind: history.OpStatus})
		})
	}
	return best
}

// waitRevisions waits until the store revision the members in ask report
// has reached target, at most healWait; it gives up quietly when they do
// not answer (the history tells).
func waitRevisions(ctx context.Context, env *Env, target int64, ask []string) {
	ctx, cancel := context.WithTimeout(ctx, healWait)
	defer cancel()
	for ctx.Err() == nil && storeRevision(ctx, env, ask) < target {
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func rotated(members []fixtures.Member, pick uint32) []string {
	n := len(members)
	out := make([]string, n)
	for i := range members {
		out[i] = members[(i+int(pick))%n].Name
	}
	return out
}

// between cuts every link between groups a and b, both ways.
func between(a, b []string) [][2]string {
	var cuts [][2]string
	for _, x := range a {
		for _, y := range b {
			cuts = append(cuts, [2]string{x, y}, [2]string{y, x})
		}
	}
	return cuts
}

func without(ms []string, drop string) []string {
	var out []string
	for _, m := range ms {
		if m != drop {
			out = append(out, m)
		}
	}
	return out
}

// linkFault degrades or cuts the links of one member (a random one, by the
// seeded pick).
type linkFault struct {
	name, describe, kind string
	rule                 proxy.Rule
	cut, reset           bool
	downOnly             bool // only what the member sends back
}

func (f linkFault) Name() string     { return f.name }
func (f linkFault) Describe() string { return f.describe }
func (f linkFault) Needs() Needs     { return Needs{Links: true, Peers: f.kind == "peer"} }

func (f linkFault) Inject(ctx context.Context, env *Env, pick uint32) (Injected, error) {
	if err := f.Needs().Unmet(env); err != nil {
		return Injected{}, err
	}
	m := rotated(env.Fixture.Members(), pick)[0]
	var err error
	switch {
	case f.cut:
		err = env.Links.CutClient(m)
	default:
		if f.reset {
			err = env.Links.ResetAll(m, f.kind)
		}
		dirs := []proxy.Direction{proxy.Up, proxy.Down}
		if f.downOnly {
			dirs = dirs[1:]
		}
		if err == nil && f.rule != (proxy.Rule{}) {
			err = env.Links.Degrade(m, f.kind, dirs, f.rule)
		}
	}
	if err != nil {
		env.Links.Heal()
		return Injected{}, err
	}
	return Injected{Targets: []string{m}, Details: map[string]string{"link": f.kind},
		Heal: func(context.Context) error { return env.Links.Heal() }}, nil
}

func init() {
	isolate := func(name string, a aim) partition {
		return partition{name: name, members: 3, needsLeader: true,
			describe: fmt.Sprintf("cut every peer link of %s, both ways", map[aim]string{aimLeader: "the leader", aimFollower: "a follower"}[a]),
			cuts: func(ms []string, leader string) [][2]string {
				target := leader
				if a == aimFollower {
					target = without(ms, leader)[0]
				}
				return between([]string{target}, without(ms, target))
			}}
	}
	register(isolate("isolate-leader", aimLeader))
	register(isolate("isolate-follower", aimFollower))
	untilSnapshot := isolate("isolate-follower-until-snapshot", aimFollower)
	untilSnapshot.healAfter = 500
	untilSnapshot.describe = "cut every peer link of a follower, both ways, and heal only once the cluster has moved 500 revisions on (at most 20 s): with a small --snapshot-count and --snapshot-catchup-entries the leader must then send it a snapshot"
	register(untilSnapshot)
	register(partition{name: "split-minority", members: 3,
		describe: "split the members into a minority and a majority that cannot reach each other",
		cuts: func(ms []string, _ string) [][2]string {
			k := (len(ms) - 1) / 2
			return between(ms[:k], ms[k:])
		}})
	register(partition{name: "ring", members: 5,
		describe: "majorities ring: each member reaches only its two neighbours, so every member sees a different majority",
		cuts: func(ms []string, _ string) [][2]string {
			var cuts [][2]string
			n := len(ms)
			for i := range ms {
				for j := range ms {
					if d := (j - i + n) % n; d != 0 && d != 1 && d != n-1 {
						cuts = append(cuts, [2]string{ms[i], ms[j]})
					}
				}
			}
			return cuts
		}})
	register(partition{name: "bridge", members: 3,
		describe: "two halves that cannot reach each other, and one member in the middle that reaches both",
		cuts: func(ms []string, _ string) [][2]string {
			mid := len(ms) / 2
			return between(ms[:mid], ms[mid+1:])
		}})
	register(partition{name: "one-way", members: 3, needsLeader: true,
		describe: "asymmetric cut: what the leader sends to one follower is lost; the follower still reaches the leader",
		cuts: func(ms []string, leader string) [][2]string {
			return [][2]string{{leader, without(ms, leader)[0]}}
		}})
	register(linkFault{name: "client-cut", cut: true, kind: "client",
		describe: "blackhole the client link of a member: requests through it time out, others go on"})
	register(linkFault{name: "latency", kind: "peer", rule: proxy.Rule{Latency: 50 * time.Millisecond, Jitter: 50 * time.Millisecond},
		describe: "add 50–100 ms to every peer link of a member, both ways"})
	register(linkFault{name: "client-latency", kind: "client", rule: proxy.Rule{Latency: 50 * time.Millisecond, Jitter: 50 * time.Millisecond},
		describe: "add 50–100 ms to the client link of a member"})
	register(linkFault{name: "reset", kind: "peer", reset: true, rule: proxy.Rule{ResetProbability: 0.02},
		describe: "reset every peer connection of a member, then 2% of its chunks"})
	register(linkFault{name: "client-reset", kind: "client", reset: true, rule: proxy.Rule{ResetProbability: 0.02},
		describe: "reset the client connections of a member, then 2% of its chunks"})
	register(linkFault{name: "watch-drop", kind: "client", reset: true,
		describe: "drop every watch stream (and connection) through a member's client link; clients must resume their watches"})
	register(linkFault{name: "watch-starve", kind: "client", rule: proxy.Rule{Block: true}, downOnly: true,
		describe: "hold everything a member sends its clients (events, progress notifications) while requests still reach it"})
	register(linkFault{name: "bandwidth", kind: "peer", rule: proxy.Rule{BytesPerSecond: 32 << 10},
		describe: "limit every peer link of a member to 32 KiB/s"})
}
