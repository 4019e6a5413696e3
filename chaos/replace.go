package chaos

import (
	"context"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// memberReplace takes a member out of the cluster and brings it back as a
// new member on an empty data dir, as an operator replaces a member whose
// disk died: the membership shrinks while the fault holds, then grows
// again with a new member ID under the old name and address.
type memberReplace struct{}

func (memberReplace) Name() string { return "member-replace" }

// Three members at least: removing one of two leaves a cluster that loses
// its quorum as soon as the new member is added and before it starts.
func (memberReplace) Needs() Needs { return Needs{Processes: true, Membership: true, Members: 3} }

func (memberReplace) Describe() string {
	return "remove a random member from the membership, stop it and wipe its data; when healed, add it back as a new member (same name and URLs, new ID) and wait until it serves"
}

func (f memberReplace) Inject(ctx context.Context, env *Env, pick uint32) (Injected, error) {
	if err := f.Needs().Unmet(env); err != nil {
		return Injected{}, err
	}
	m, err := choose(ctx, env, aimRandom, pick)
	if err != nil {
		return Injected{}, err
	}
	if err := env.Membership.RemoveMember(ctx, m.Name); err != nil {
		// Half done (out of the membership, or stopped and wiped) must not
		// stay so: bring it back. AddMember refuses at once where nothing
		// was taken out (the member still runs on its data).
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		env.Membership.AddMember(uctx, m.Name)
		cancel()
		return Injected{}, err
	}
	return Injected{
		Targets: []string{m.Name},
		Details: map[string]string{"aim": string(aimRandom)},
		Heal:    func(ctx context.Context) error { return env.Membership.AddMember(ctx, m.Name) },
	}, nil
}

// restarts: the member comes back as a new one when healed.
func (memberReplace) restarts() string { return history.RoleMember }

func init() { register(memberReplace{}) }
