package chaos

import (
	"context"
	"fmt"

	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/history"
)

// aim says which member a fault hits.
type aim string

const (
	aimLeader   aim = "leader"
	aimFollower aim = "follower"
	aimRandom   aim = "random"
)

// choose resolves an aim to a member: the current leader, or the pick-th of
// the eligible members (mod their count), so a seeded pick replays.
func choose(ctx context.Context, env *Env, a aim, pick uint32) (fixtures.Member, error) {
	members := env.Fixture.Members()
	if a == aimRandom {
		return members[int(pick)%len(members)], nil
	}
	leader, err := env.Fixture.Leader(ctx)
	if err != nil {
		return fixtures.Member{}, fmt.Errorf("finding the leader: %w", err)
	}
	if a == aimLeader {
		return leader, nil
	}
	var followers []fixtures.Member
	for _, m := range members {
		if m.Name != leader.Name {
			followers = append(followers, m)
		}
	}
	if len(followers) == 0 {
		return fixtures.Member{}, fmt.Errorf("no follower: the cluster has one member")
	}
	return followers[int(pick)%len(followers)], nil
}

func minMembers(a aim) int {
	if a == aimFollower {
		return 2
	}
	return 1
}

// processFault is kill (SIGKILL, then start again), restart (SIGTERM, then
// start again) or pause (SIGSTOP, then SIGCONT) of one member.
type processFault struct {
	kind string // kill, restart, pause
	aim  aim
}

func (f processFault) Name() string { return f.kind + "-" + string(f.aim) }

func (f processFault) Needs() Needs { return Needs{Processes: true, Members: minMembers(f.aim)} }

func (f processFault) Describe() string {
	who := map[aim]string{aimLeader: "the leader", aimFollower: "a follower", aimRandom: "a random member"}[f.aim]
	switch f.kind {
	case "kill":
		return fmt.Sprintf("SIGKILL %s, start it again on its data dir when healed", who)
	case "restart":
		return fmt.Sprintf("stop %s cleanly (SIGTERM), start it again when healed", who)
	}
	return fmt.Sprintf("freeze %s (SIGSTOP), SIGCONT when healed", who)
}

func (f processFault) Inject(ctx context.Context, env *Env, pick uint32) (Injected, error) {
	if err := f.Needs().Unmet(env); err != nil {
		return Injected{}, err
	}
	m, err := choose(ctx, env, f.aim, pick)
	if err != nil {
		return Injected{}, err
	}
	p := env.Processes
	in := Injected{Targets: []string{m.Name}, Details: map[string]string{"aim": string(f.aim)}}
	switch f.kind {
	case "kill":
		err = p.Kill(m.Name)
		in.Heal = func(ctx context.Context) error { return p.StartMember(ctx, m.Name) }
	case "restart":
		err = p.StopMember(m.Name)
		in.Heal = func(ctx context.Context) error { return p.StartMember(ctx, m.Name) }
	case "pause":
		err = p.Pause(m.Name)
		in.Heal = func(context.Context) error { return p.Resume(m.Name) }
	}
	if err != nil {
		return Injected{}, fmt.Errorf("%s %s: %w", f.kind, m.Name, err)
	}
	return in, nil
}

// restarts: a kill or restart starts its target again when healed, also
// one that had died (killing or stopping it then does nothing).
func (f processFault) restarts() string {
	if f.kind == "pause" {
		return ""
	}
	return history.RoleMember
}

func init() {
	for _, kind := range []string{"kill", "restart", "pause"} {
		for _, a := range []aim{aimLeader, aimFollower, aimRandom} {
			register(processFault{kind: kind, aim: a})
		}
	}
}
