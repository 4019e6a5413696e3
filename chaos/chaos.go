// Package chaos holds vigil's fault injectors and the seeded schedule that
// runs them. Every fault records itself in the history as an interval
// (name, targets, start, end), so checkers and reports can put a violation
// next to its cause; requests a fault sends itself (compactions) are
// recorded like any client's.
package chaos

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/history"
)

// Processes is what a fixture offers when it owns the members' processes
// (the process fixture does; an external one does not).
type Processes interface {
	Kill(name string) error
	StopMember(name string) error
	StartMember(ctx context.Context, name string) error
	Pause(name string) error
	Resume(name string) error
}

// Env is what injectors act on.
type Env struct {
	Fixture fixtures.Fixture
	// Processes is nil when the fixture cannot kill or pause members.
	Processes Processes
	// Links is nil when vigil does not sit on the cluster's links.
	Links Links
	// Failpoints is nil when the fixture offers no failpoints.
	Failpoints Failpoints
	// Membership is nil when the fixture cannot change the membership.
	Membership Membership
	// APIServers is nil when no kube-apiserver replicas run over the
	// cluster (see kube.go).
	APIServers APIServers
	// Database is nil when the system keeps no data in a database server
	// vigil runs (see database.go).
	Database Database
	// Do sends a request as chaos's own client, recorded in the history.
	Do func(ctx context.Context, req history.Request) (*history.Response, error)
	// DoOn sends a request to one member by name (Status, HashKV,
	// Defragment answer from that member alone), recorded in the history;
	// nil where the run offers none.
	DoOn func(ctx context.Context, member string, req history.Request) (*history.Response, error)
	Rec  *history.Recorder
	// Edge, if set, is told the instant a fault is about to be injected
	// (healed false) and the instant it has healed, so that the workload
	// sends requests racing both (its fault-start and fault-heal
	// patterns). It must return at once.
	Edge func(healed bool)
}

// Failpoints is what a fixture offers when its members run a gofail build
// of etcd (vigil run --failpoints).
type Failpoints interface {
	// FailpointNames lists the build's failpoints; empty when the members
	// run without failpoints.
	FailpointNames() []string
	// FailpointAddr is host:port of the member's gofail HTTP endpoint.
	FailpointAddr(member string) string
	// Exited is closed once the member's current process has exited.
	Exited(member string) <-chan struct{}
}

// Membership is what a fixture offers when it can take a member out of
// the cluster and bring it back as a new member.
type Membership interface {
	// RemoveMember removes the member from the membership, stops it and
	// wipes its data.
	RemoveMember(ctx context.Context, name string) error
	// AddMember adds it back as a new member on an empty data dir and
	// returns once it serves.
	AddMember(ctx context.Context, name string) error
}

// Needs says what an injector requires to run.
type Needs struct {
	Members    int    // at least this many members
	Processes  bool   // a fixture that owns the member processes
	Links      bool   // vigil's network on the links (proxies)
	Peers      bool   // links between members (kine, one process, has none)
	Failpoints bool   // members running a gofail build
	Failpoint  string // this failpoint in that build (implies Failpoints)
	Membership bool   // a fixture that can remove and add members
	APIServers bool   // kube-apiserver replicas over the cluster (--target kube)
	Docker     bool   // members in containers on vigil's Docker network (--fixture docker)
	Database   bool   // a database server under the system (--fixture kine over postgres or mysql)
	Defragment bool   // a store that takes Maintenance.Defragment (kine refuses it)
}

func (n Needs) String() string {
	var parts []string
	if n.Processes {
		parts = append(parts, "process fixture")
	}
	if n.Links {
		parts = append(parts, "vigil's network on the links")
	}
	if n.Peers && n.Members <= 1 {
		parts = append(parts, "peer links")
	}
	if n.Failpoint != "" {
		parts = append(parts, "failpoint build with "+n.Failpoint)
	} else if n.Failpoints {
		parts = append(parts, "failpoint build")
	}
	if n.Membership {
		parts = append(parts, "membership changes")
	}
	if n.APIServers {
		parts = append(parts, "API servers (--target kube)")
	}
	if n.Docker {
		parts = append(parts, "--fixture docker")
	}
	if n.Database {
		parts = append(parts, "database server (--fixture kine --kine-backend postgres|mysql)")
	}
	if n.Members > 1 {
		parts = append(parts, fmt.Sprintf("members >= %d", n.Members))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// Unmet returns why env cannot run an injector with these needs, or nil.
func (n Needs) Unmet(env *Env) error {
	if n.Processes && env.Processes == nil {
		return fmt.Errorf("needs the process fixture (this fixture does not own the members' processes)")
	}
	if n.Links && env.Links == nil {
		return fmt.Errorf("needs vigil's network on the cluster's links (the process fixture sets it up when a network fault is asked for)")
	}
	if n.Failpoints || n.Failpoint != "" {
		var names []string
		if env.Failpoints != nil {
			names = env.Failpoints.FailpointNames()
		}
		if len(names) == 0 {
			return fmt.Errorf("needs a failpoint build: vigil run --failpoints")
		}
		if n.Failpoint != "" && !slices.Contains(names, n.Failpoint) {
			return fmt.Errorf("needs failpoint %s, which this etcd build does not have", n.Failpoint)
		}
	}
	if n.Membership && env.Membership == nil {
		return fmt.Errorf("needs a fixture that can remove and add members (the process fixture)")
	}
	if _, docker := env.Links.(*DockerNet); n.Docker && !docker {
		return fmt.Errorf("needs the members' Docker network (vigil run --fixture docker)")
	}
	if n.APIServers && (env.APIServers == nil || len(env.APIServers.APIServerNames()) == 0) {
		return fmt.Errorf("needs kube-apiserver replicas run by vigil (vigil run --target kube with the process fixture)")
	}
	if n.Peers && !hasPeers(env.Fixture.Members()) {
		return fmt.Errorf("needs links between members; this system has none (kine is one process)")
	}
	if n.Database && (env.Database == nil || env.Database.DatabaseName() == "") {
		return fmt.Errorf("needs a database server vigil runs under the system (vigil run --fixture kine --kine-backend postgres or mysql)")
	}
	if m := len(env.Fixture.Members()); m < n.Members {
		return fmt.Errorf("needs at least %d members, the cluster has %d", n.Members, m)
	}
	return nil
}

func hasPeers(ms []fixtures.Member) bool {
	for _, m := range ms {
		if m.PeerURL != "" {
			return true
		}
	}
	return false
}

// Injected is a fault in place: whom it hit, and how to undo it.
type Injected struct {
	Targets []string
	Details map[string]string
	// Heal undoes the fault; called once, with a context that outlives an
	// interrupted run so that nothing stays broken.
	Heal func(ctx context.Context) error
}

// Injector is one kind of fault.
type Injector interface {
	Name() string
	Needs() Needs
	// Describe is one line for `vigil faults`.
	Describe() string
	// Inject applies the fault; pick is the schedule's seeded choice among
	// eligible members, so a replay hits the same one where it can.
	Inject(ctx context.Context, env *Env, pick uint32) (Injected, error)
}

var registry = map[string]Injector{}

func register(i Injector) { registry[i.Name()] = i }

// All lists every injector, by name.
func All() []Injector {
	out := make([]Injector, 0, len(registry))
	for _, i := range registry {
		out = append(out, i)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name() < out[b].Name() })
	return out
}

// Lookup finds an injector by name. Failpoint faults also take
// parameters in the name (see parseFailpoint): an aim, a sleep duration,
// and any failpoint the build has, not only those listed.
func Lookup(name string) (Injector, bool) {
	if i, ok := registry[name]; ok {
		return i, ok
	}
	if f, ok := parseFailpoint(name); ok {
		return f, true
	}
	return nil, false
}

// UnknownFault is ParseList's error for a name no injector has.
type UnknownFault struct{ Name string }

func (e *UnknownFault) Error() string {
	return fmt.Sprintf("unknown fault %q (vigil faults lists them all)", e.Name)
}

// Names lists every injector's name.
func Names() []string {
	var out []string
	for _, i := range All() {
		out = append(out, i.Name())
	}
	return out
}

// ParseList checks a comma-separated list of fault names.
func ParseList(list string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if _, ok := Lookup(n); !ok {
			return nil, &UnknownFault{Name: n}
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no fault named")
	}
	return names, nil
}
