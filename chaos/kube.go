package chaos

import (
	"context"
	"fmt"
	"strings"

	"github.com/vigil-suite/vigil/history"
)

// APIServers is what a fixture offers when it runs kube-apiserver
// replicas over the etcd cluster (fixtures/kubeapiserver.Fixture). The
// fixture's Members stay the etcd members, so the etcd faults act on the
// layer below; the faults here act on the API servers. Their processes
// are killed, stopped and paused through Env.Processes, under the
// replicas' names.
type APIServers interface {
	// APIServerNames lists the replicas, e.g. kube-0, kube-1.
	APIServerNames() []string
	// APIServerEtcdLinks names the links that carry one replica's traffic
	// to etcd, one per etcd member, for Links.CutClient; empty when vigil
	// does not sit on them.
	APIServerEtcdLinks(replica string) []string
}

// pickAPIServer is the pick-th replica (mod their count), so a seeded
// pick replays.
func pickAPIServer(env *Env, pick uint32) (string, error) {
	names := env.APIServers.APIServerNames()
	if len(names) == 0 {
		return "", fmt.Errorf("no API server replica is running")
	}
	return names[int(pick)%len(names)], nil
}

// apiServerProcess is kill (SIGKILL, then start again), restart (SIGTERM,
// then start again) or pause (SIGSTOP, then SIGCONT) of one API server.
// On a two-replica run the other replica goes on serving; clients of the
// one hit see their connections and watches break (kill, restart) or
// stall (pause).
type apiServerProcess struct{ kind string }

func (f apiServerProcess) Name() string { return f.kind + "-apiserver" }

func (f apiServerProcess) Needs() Needs { return Needs{Processes: true, APIServers: true} }

func (f apiServerProcess) Describe() string {
	switch f.kind {
	case "kill":
		return "SIGKILL a kube-apiserver replica, start it again when healed (it rebuilds its watch cache from etcd)"
	case "restart":
		return "stop a kube-apiserver replica gracefully (SIGTERM: it ends its watches), start it again when healed"
	}
	return "freeze a kube-apiserver replica (SIGSTOP): its connections stay open and silent; SIGCONT when healed"
}

// restarts: a kill or restart of a replica starts it again when healed.
func (f apiServerProcess) restarts() string {
	if f.kind == "pause" {
		return ""
	}
	return history.RoleAPIServer
}

func (f apiServerProcess) Inject(ctx context.Context, env *Env, pick uint32) (Injected, error) {
	if err := f.Needs().Unmet(env); err != nil {
		return Injected{}, err
	}
	name, err := pickAPIServer(env, pick)
	if err != nil {
		return Injected{}, err
	}
	p := env.Processes
	in := Injected{Targets: []string{name}, Details: map[string]string{"layer": "apiserver"}}
	switch f.kind {
	case "kill":
		err = p.Kill(name)
		in.Heal = func(ctx context.Context) error { return p.StartMember(ctx, name) }
	case "restart":
		err = p.StopMember(name)
		in.Heal = func(ctx context.Context) error { return p.StartMember(ctx, name) }
	case "pause":
		err = p.Pause(name)
		in.Heal = func(context.Context) error { return p.Resume(name) }
	}
	if err != nil {
		return Injected{}, fmt.Errorf("%s %s: %w", f.kind, name, err)
	}
	return in, nil
}

// apiServerEtcdCut blackholes every link between one API server replica
// and the etcd members, both ways: the replica stays up and reachable,
// but its requests to etcd hang and its etcd watches (which feed its
// watch cache) stall until healed. The other replica's links are untouched.
type apiServerEtcdCut struct{}

func (apiServerEtcdCut) Name() string { return "apiserver-etcd-cut" }

func (apiServerEtcdCut) Needs() Needs { return Needs{Links: true, APIServers: true} }

func (apiServerEtcdCut) Describe() string {
	return "blackhole one kube-apiserver replica's links to every etcd member, both ways; the replica itself stays reachable"
}

func (f apiServerEtcdCut) Inject(ctx context.Context, env *Env, pick uint32) (Injected, error) {
	if err := f.Needs().Unmet(env); err != nil {
		return Injected{}, err
	}
	name, err := pickAPIServer(env, pick)
	if err != nil {
		return Injected{}, err
	}
	links := env.APIServers.APIServerEtcdLinks(name)
	if len(links) == 0 {
		return Injected{}, fmt.Errorf("the links of %s to etcd do not go through vigil's proxies (they are fronted only with --net proxy)", name)
	}
	in := Injected{Targets: []string{name}, Details: map[string]string{"layer": "apiserver", "links": strings.Join(links, ",")},
		Heal: func(context.Context) error { return env.Links.Heal() }}
	for _, l := range links {
		if err := env.Links.CutClient(l); err != nil {
			env.Links.Heal()
			return Injected{}, fmt.Errorf("cutting %s: %w", l, err)
		}
		in.Details["cut "+l] = "blackholed"
	}
	return in, nil
}

func init() {
	for _, kind := range []string{"kill", "restart", "pause"} {
		register(apiServerProcess{kind: kind})
	}
	register(apiServerEtcdCut{})
}
