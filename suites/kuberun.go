package suites

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/kubeapiserver"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
	etcdtarget "github.com/vigil-suite/vigil/targets/etcd"
	"github.com/vigil-suite/vigil/targets/kube"
	"github.com/vigil-suite/vigil/targets/sabotage"
)

// KubeConfig is one run of the Kubernetes list/watch/update scenario.
type KubeConfig struct {
	Out      string // output dir; history.jsonl goes there as the run goes
	Seed     int64
	Vigil    string
	Flags    map[string]string
	Workload KubeWorkloadConfig
	Checks   check.Config
	// Servers are the API server replicas (URL, credentials, CA); the
	// namespace is filled in by RunKube.
	Servers []kube.Config
	// Etcd lists the client endpoints of the etcd under the API servers,
	// when vigil runs it: forced compactions and the oracle watch need it.
	// Empty for a server vigil only connects to.
	Etcd []string
	// EtcdPrefix is the API servers' --etcd-prefix; default /registry.
	EtcdPrefix string
	// Resource is the collection the workload works on; default
	// kube.ConfigMaps. A custom resource's definition is created first.
	Resource kube.Resource
	// DeleteNamespace deletes the run's namespace at the end (a server
	// vigil does not own; a fixture of vigil's own is thrown away whole).
	DeleteNamespace bool
	// Wrap, if set, wraps every Kubernetes client before it is recorded.
	Wrap KubeWrapper
	// Sabotage, if set, names a Kubernetes sabotage mode
	// (targets/sabotage): RunKube builds the run's Saboteur and wraps
	// every client with it (inside Wrap, if both are set).
	Sabotage string
	// Schedule, Links and Logf as in Config.
	Schedule chaos.Schedule
	Links    chaos.Links
	Logf     func(string, ...any)
	// Progress receives a live line every ProgressEvery; nil for none.
	Progress      io.Writer
	ProgressEvery time.Duration
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
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	clock := history.NewClock()
	if cfg.Workload.Namespace == "" {
		cfg.Workload.Namespace = KubeNamespace(cfg.Seed, clock)
	}
	if err := cfg.Workload.Validate(); err != nil {
		return nil, err
	}
	if err := sabotageFits(cfg.Sabotage, sabotage.TargetKube, cfg.Workload.Duration, cfg.Workload.CompactEvery); err != nil {
		return nil, err
	}
	if cfg.EtcdPrefix == "" {
		cfg.EtcdPrefix = "/registry"
	}
	if cfg.Resource == (kube.Resource{}) {
		cfg.Resource = kube.ConfigMaps
	}
	ns := cfg.Workload.Namespace
	servers := make([]kube.Config, len(cfg.Servers))
	for i, s := range cfg.Servers {
		s.Namespace, s.Resource = ns, cfg.Resource
		if s.UserAgent == "" {
			s.UserAgent = "vigil/" + cfg.Vigil
		}
		servers[i] = s
	}
	setup, err := kube.New(servers[0])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", fixtures.ErrSetup, err)
	}
	defer setup.Close()
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
		return nil, fmt.Errorf("%w: %v", fixtures.ErrSetup, err)
	}
	if cfg.DeleteNamespace {
		defer func() {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			setup.DeleteNamespace(dctx, ns)
			cancel()
		}()
	}

	w, err := history.Create(filepath.Join(cfg.Out, history.FileName))
	if err != nil {
		return nil, err
	}
	flags := map[string]string{"namespace": ns, "resource": cfg.Resource.String()}
	for k, v := range cfg.Flags {
		flags[k] = v
	}
	etcdKeys := cfg.Resource.EtcdPrefix(cfg.EtcdPrefix, ns)
	supports := []string{}
	for _, f := range kube.Supports() {
		supports = append(supports, string(f))
	}
	// The prefix is the API servers' etcd key prefix of the namespace's
	// objects: the oracle watch (if any) watches it.
	rec := history.NewRecorder(history.Meta{Vigil: cfg.Vigil, Target: fx.Describe(), Seed: cfg.Seed,
		Started: clock.Base(), Prefix: etcdKeys, Flags: flags, Supports: supports}, clock, w)

	dial := func(i int) (kube.API, error) { return kube.New(servers[i%len(servers)]) }
	wl := NewKubeWorkload(cfg.Workload, dial, len(servers), rec, cfg.Seed)
	wl.EtcdPrefix, wl.Wrap = etcdKeys, cfg.Wrap
	if cfg.Sabotage != "" {
		sab, err := sabotage.New(sabotage.Config{Mode: cfg.Sabotage, Seed: cfg.Seed, Recorder: rec, Duration: cfg.Workload.Duration})
		if err != nil {
			w.Close()
			return nil, err
		}
		outer := cfg.Wrap
		wl.Wrap = func(c kube.API, id int) kube.API {
			c = sab.WrapKube(c, id)
			if outer != nil {
				c = outer(c, id)
			}
			return c
		}
	}
	if len(cfg.Etcd) > 0 {
		var n atomic.Int64
		wl.Etcd = func() (targets.Client, error) {
			// Spread over the members, the first dial on the last one.
			c, err := etcdtarget.Dial(cfg.Etcd[int(n.Add(1)-1+int64(len(cfg.Etcd)-1))%len(cfg.Etcd)], 5*time.Second, fixtures.Security{})
			if err != nil {
				return nil, err
			}
			return oracleValues{c}, nil
		}
	}
	if len(cfg.Schedule.Steps) > 0 {
		// The store under the API servers: kine's database server is a
		// target of the database faults.
		var store any
		if s, ok := fx.(interface{ Store() kubeapiserver.Store }); ok {
			store = s.Store()
		}
		env := chaosEnv(fx, store, rec, cfg.Links)
		setKubeEnv(env, fx)
		if wl.Etcd != nil {
			// chaos's own etcd client, for the compactions a fault sends.
			cc, err := wl.etcdClient()
			if err != nil {
				w.Close()
				return nil, err
			}
			defer cc.Close()
			env.Do = cc.Do
		}
		wl.During = func(ctx context.Context) { chaos.Run(ctx, env, cfg.Schedule, cfg.Logf) }
	}
	return runAndCheck(ctx, wl.Run, startKubeProgress(cfg, wl.Stats, clock), clock, w, rec, cfg.Checks)
}

// startKubeProgress prints a live line now and then.
func startKubeProgress(cfg KubeConfig, s *KubeStats, clock *history.Clock) func() {
	return progressTicker(cfg.Progress, cfg.ProgressEvery, clock, s.Ops.Load, func(now time.Duration, ops int64, rate float64) string {
		return fmt.Sprintf("[%5.1fs] calls %d (%.0f/s)  errors %d  conflicts %d  watch events %d  bookmarks %d  410s %d  relists %d  RV %d",
			now.Seconds(), ops, rate, s.FailedOps.Load(), s.Conflicts.Load(), s.Events.Load(), s.Bookmarks.Load(),
			s.Expired.Load(), s.Relists.Load(), s.HeadRV.Load())
	})
}
