package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// defragFault defragments one member's backend: etcd rewrites its bbolt
// file and holds the member's writes while it does, a path that crashes
// and restarts have broken before (etcd #14685). The Defragment request
// goes into the history like any client's.
type defragFault struct{ aim aim }

func (f defragFault) Name() string { return "defrag-" + string(f.aim) }
func (f defragFault) Needs() Needs { return Needs{Members: minMembers(f.aim), Defragment: true} }
func (f defragFault) Describe() string {
	who := map[aim]string{aimLeader: "the leader", aimFollower: "a follower", aimRandom: "a random member"}[f.aim]
	return fmt.Sprintf("defragment %s's backend once (a recorded Maintenance.Defragment)", who)
}

func (f defragFault) Inject(ctx context.Context, env *Env, pick uint32) (Injected, error) {
	if env.DoOn == nil {
		return Injected{}, fmt.Errorf("%s needs a client on each member", f.Name())
	}
	m, err := choose(ctx, env, f.aim, pick)
	if err != nil {
		return Injected{}, err
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	in := Injected{Targets: []string{m.Name}, Details: map[string]string{"member": m.Name}}
	if _, err := env.DoOn(dctx, m.Name, history.Request{Kind: history.OpDefrag}); err != nil {
		in.Details["error"] = err.Error()
	}
	in.Details["took"] = time.Since(start).Round(time.Millisecond).String()
	in.Heal = func(context.Context) error { return nil }
	return in, nil
}

func init() {
	for _, a := range []aim{aimLeader, aimFollower, aimRandom} {
		register(defragFault{aim: a})
	}
}
