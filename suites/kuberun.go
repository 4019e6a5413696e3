package suites

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
	etcdtarget "github.com/vigil-suite/vigil/targets/etcd"
	"github.com/vigil-suite/vigil/targets/kube"
	"github.com/vigil-suite/vigil/targets/sabotage"
	"github.com/vigil-suite/vigil/workload"
)

// KubeConfig is one run of the Kubernetes list/watch/update scenario.
type KubeConfig struct {
	Common
	Workload workload.KubeConfig
	// Servers are the API server replicas (URL, credentials, CA); the
	// namespace is filled in by RunKube.
	Servers []kube.Config
	// Etcd lists the client endpoints of the etcd under the API servers,
	// when vigil runs it: forced compactions and the oracle watch need it.
	// Empty for a server vigil only connects to.
	Etcd []string
	// EtcdSecurity reaches that etcd, when it is one the user runs
	// (--store endpoints) over TLS.
	EtcdSecurity fixtures.Security
	// EtcdPrefix is the API servers' --etcd-prefix; default /registry.
	EtcdPrefix string
	// Resource is the collection the workload works on; default
	// kube.ConfigMaps. A custom resource's definition is created first.
	Resource kube.Resource
	// DeleteNamespace deletes the run's namespace at the end (a server
	// vigil does not own; a fixture of vigil's own is thrown away whole).
	DeleteNamespace bool
	// Wrap, if set, wraps every Kubernetes client before it is recorded.
	Wrap workload.KubeWrapper
	// Dial, if set, opens the clients; by default client i talks to
	// Servers[i modulo their number].
	Dial workload.KubeDialer
}

// KubeNamespace is the namespace a run works in: fresh per run, so runs
// against one server never mix, and named after the seed to be found.
func KubeNamespace(seed int64, clock *history.Clock) string {
	return fmt.Sprintf("vigil-%d-%04x", seed, uint16(clock.Base().UnixNano()>>10))
}

// RunKube drives the Kubernetes workload against the API servers of a
// started fixture, records the history into cfg.Out, and checks it. The
// caller owns the fixture. The first step is the run's own namespace.
func RunKube(ctx context.Context, fx fixtures.Fixture, cfg KubeConfig) (*Outcome, error) {
	if len(cfg.Servers) == 0 {
		return nil, fmt.Errorf("%w: no Kubernetes API server to talk to", fixtures.ErrSetup)
	}
	return run(ctx, fx, cfg.Common, sabotage.TargetKube, cfg.Workload.Duration, cfg.Workload.CompactEvery, &kubeScenario{cfg: cfg, fx: fx})
}

// kubeScenario is the Kubernetes side of a run.
type kubeScenario struct {
	cfg      KubeConfig
	fx       fixtures.Fixture
	etcdKeys string // the API servers' etcd keys of the run's objects
	wl       *workload.KubeWorkload
}

func (s *kubeScenario) prepare(ctx context.Context, clock *history.Clock) (history.Meta, func(), error) {
	cfg := &s.cfg
	if cfg.Workload.Namespace == "" {
		cfg.Workload.Namespace = KubeNamespace(cfg.Seed, clock)
	}
	cfg.Workload.Segment = cfg.Segment
	if err := cfg.Workload.Validate(); err != nil {
		return history.Meta{}, nil, err
	}
	if cfg.EtcdPrefix == "" {
		cfg.EtcdPrefix = "/registry"
	}
	if cfg.Resource == (kube.Resource{}) {
		cfg.Resource = kube.ConfigMaps
	}
	cfg.Workload.Resource = cfg.Resource
	ns := cfg.Workload.Namespace
	cfg.Servers = slices.Clone(cfg.Servers) // the caller's stay as they were
	for i, sv := range cfg.Servers {
		sv.Namespace, sv.Resource = ns, cfg.Resource
		if sv.UserAgent == "" {
			sv.UserAgent = "vigil/" + cfg.Vigil
		}
		cfg.Servers[i] = sv
	}
	if cfg.Dial == nil {
		servers := cfg.Servers
		cfg.Dial = func(i int) (kube.API, error) { return kube.New(servers[i%len(servers)]) }
	}
	setup, err := kube.New(cfg.Servers[0])
	if err != nil {
		return history.Meta{}, nil, fmt.Errorf("%w: %v", fixtures.ErrSetup, err)
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = setup.Ping(sctx)
	if err == nil {
		err = setup.EnsureNamespace(sctx, ns)
	}
	if err == nil && cfg.Resource.Group != "" {
		err = setup.EnsureCRD(sctx)
	}
	cancel()
	if err != nil {
		setup.Close()
		return history.Meta{}, nil, fmt.Errorf("%w: %v", fixtures.ErrSetup, err)
	}
	undo := func() {
		// Objects still holding vigil's finalizer (a cycle cut short by
		// the end of the run or a fault) would keep the namespace from
		// going away: release them first.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		setup.ReleaseFinalizers(fctx)
		cancel()
		if cfg.DeleteNamespace {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			setup.DeleteNamespace(dctx, ns)
			cancel()
		}
		setup.Close()
	}
	supports := []string{}
	for _, f := range kube.Supports() {
		supports = append(supports, string(f))
	}
	// The prefix is the API servers' etcd key prefix of the namespace's
	// objects: the oracle watch (if any) watches it.
	s.etcdKeys = cfg.Resource.EtcdPrefix(cfg.EtcdPrefix, ns)
	flags := map[string]string{"namespace": ns, "resource": cfg.Resource.String()}
	return history.Meta{Prefix: s.etcdKeys, Flags: flags, Supports: supports, KubeForms: cfg.Workload.KubeForms()}, undo, nil
}

func (s *kubeScenario) workload(ctx context.Context, rec *history.Recorder, sab *sabotage.Saboteur, env *chaos.Env,
	during func(context.Context)) (func(context.Context) error, func(), error) {
	cfg := s.cfg
	s.wl = workload.NewKube(cfg.Workload, cfg.Dial, len(cfg.Servers), rec, cfg.Seed)
	s.wl.EtcdPrefix, s.wl.Wrap = s.etcdKeys, cfg.Wrap
	if sab != nil {
		outer := cfg.Wrap
		s.wl.Wrap = func(c kube.API, id int) kube.API {
			c = sab.WrapKube(c, id)
			if outer != nil {
				c = outer(c, id)
			}
			return c
		}
	}
	if len(cfg.Etcd) > 0 {
		var n atomic.Int64
		s.wl.Etcd = func() (targets.Client, error) {
			// Spread over the members, the first dial on the last one.
			c, err := etcdtarget.Dial(cfg.Etcd[int(n.Add(1)-1+int64(len(cfg.Etcd)-1))%len(cfg.Etcd)], 5*time.Second, cfg.EtcdSecurity)
			if err != nil {
				return nil, err
			}
			return workload.OracleValues{Client: c}, nil
		}
	}
	if env == nil {
		return s.wl.Run, func() {}, nil
	}
	setKubeEnv(env, s.fx)
	s.wl.During = during
	if s.wl.Etcd == nil {
		return s.wl.Run, func() {}, nil
	}
	// chaos's own etcd client, for the compactions a fault sends.
	cc, err := s.wl.EtcdClient()
	if err != nil {
		return nil, nil, err
	}
	env.Do = cc.Do
	return s.wl.Run, func() { cc.Close() }, nil
}

func (s *kubeScenario) progress(clock *history.Clock, extra func() string) func() {
	st := s.wl.Stats
	return progressTicker(s.cfg.Progress, s.cfg.ProgressEvery, clock, st.Ops.Load, func(now time.Duration, ops int64, rate float64) string {
		return fmt.Sprintf("[%5.1fs] calls %d (%.0f/s)  errors %d  conflicts %d  watch events %d  bookmarks %d  410s %d  relists %d  RV %d",
			now.Seconds(), ops, rate, st.FailedOps.Load(), st.Conflicts.Load(), st.Events.Load(), st.Bookmarks.Load(),
			st.Expired.Load(), st.Relists.Load(), st.HeadRV.Load())
	}, extra)
}
