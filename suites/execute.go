package suites

import (
	"context"
	"time"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/fixtures"
)

// Setup is how one run brings its system under test up, for either
// target: the network vigil puts on the links, then the fixture.
type Setup struct {
	// Net is vigil's network on the links: "netns" (a namespace per
	// member), "proxy" (TCP proxies in front of every listener) or ""
	// (none: clients and peers talk to the members directly).
	Net  string
	Seed int64 // the proxies' random choices
	// StartTimeout bounds the fixture's Start.
	StartTimeout time.Duration
	// Fixture makes the system under test on net (nil without one). A
	// fixture with a network of its own (Docker's) returns its links too.
	Fixture func(ctx context.Context, net fixtures.Network) (fixtures.Fixture, chaos.Links, error)
}

// Scenario drives a started system under test and judges it: the etcd
// workload (RunEtcd), the Kubernetes one (RunKube), or either after a
// step of the caller's own.
type Scenario func(ctx context.Context, fx fixtures.Fixture, links chaos.Links) (*Outcome, error)

// Execute is one run, whatever its target: it sets up the network and
// the fixture, starts it, runs the scenario, and stops everything it made
// (on a panic too) before it returns. Every error it returns means the
// run could not be made; the scenario's own outcome says what it found.
func Execute(ctx context.Context, s Setup, run Scenario) (*Outcome, error) {
	var net fixtures.Network
	var links chaos.Links
	switch s.Net {
	case "netns":
		nn, err := chaos.NewNetnsNet()
		if err != nil {
			return nil, err
		}
		defer nn.Close()
		net, links = nn, nn
	case "proxy":
		pn := chaos.NewProxyNet(s.Seed)
		defer pn.Close()
		net, links = pn, pn
	}
	fx, own, err := s.Fixture(ctx, net)
	if err != nil {
		return nil, err
	}
	defer fx.Stop()
	if own != nil {
		links = own
	}
	// A panic must not leave the system running.
	defer func() {
		if r := recover(); r != nil {
			fx.Stop()
			panic(r)
		}
	}()
	sctx, cancel := context.WithTimeout(ctx, s.StartTimeout)
	err = fx.Start(sctx)
	cancel()
	if err != nil {
		return nil, err
	}
	out, err := run(ctx, fx, links)
	// Stopped before the caller writes its reports, so that the members'
	// logs are complete and a passing run's data dirs can go.
	fx.Stop()
	return out, err
}
