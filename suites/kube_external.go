package suites

import (
	"context"
	"fmt"
	"net/url"

	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets/kube"
)

// ExternalKube is a Kubernetes API server someone else runs, as a fixture:
// vigil only connects to it (no process faults, no etcd oracle). Start
// checks that it answers.
func ExternalKube(cfg kube.Config) fixtures.Fixture { return &externalKube{cfg: cfg} }

type externalKube struct {
	cfg     kube.Config
	version string
}

func (e *externalKube) Start(ctx context.Context) error {
	cfg := e.cfg
	cfg.Namespace = "default" // any: Start only asks /readyz and /version
	c, err := kube.New(cfg)
	if err != nil {
		return fmt.Errorf("%w: %v", fixtures.ErrSetup, err)
	}
	defer c.Close()
	if err := c.Ping(ctx); err != nil {
		return fmt.Errorf("%w: %v", fixtures.ErrSetup, err)
	}
	e.version, _ = c.Version(ctx)
	return nil
}

func (e *externalKube) Stop() error { return nil }

func (e *externalKube) Members() []fixtures.Member {
	u, _ := url.Parse(e.cfg.Server)
	return []fixtures.Member{{Name: u.Host, ClientURL: e.cfg.Server}}
}

func (e *externalKube) Endpoints() []string { return []string{e.cfg.Server} }

func (e *externalKube) Leader(context.Context) (fixtures.Member, error) {
	return fixtures.Member{}, fmt.Errorf("an external Kubernetes API server has no leader vigil can see")
}

func (e *externalKube) Describe() history.Target {
	return history.Target{Kind: "kube", Fixture: "external", Version: e.version, Members: 1, Endpoints: e.Endpoints()}
}
