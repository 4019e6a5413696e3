package launch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/fixtures/kubeapiserver"
	"github.com/vigil-suite/vigil/suites/conformance"
	"github.com/vigil-suite/vigil/suites/conformance/kubeprobes"
	"github.com/vigil-suite/vigil/targets/kube"
)

// kubeServers is the Kubernetes target (a kube-apiserver vigil starts if
// none is named) and, unless the reference is none, how to start the
// reference kube-apiserver, with the same watch-cache setting.
func (o *ConformOptions) kubeServers(ctx context.Context, res []kube.Resource, external *kube.Config, only []string) (probed, func() (probed, error), error) {
	probesAt := func(cfg kubeprobes.Config) func(context.Context) ([]conformance.Result, error) {
		return func(ctx context.Context) ([]conformance.Result, error) {
			return kubeprobes.Run(ctx, cfg, kubeprobes.Probes())
		}
	}
	cache := map[bool]string{true: "on", false: "off"}[o.WatchCache]
	start := func(version, dir string, store string) (probed, error) {
		fx, err := o.kubeServer(ctx, version, filepath.Join(o.Out, dir), store)
		if err != nil {
			return probed{}, err
		}
		s := fx.Servers()
		srv := kube.Config{Server: s.URLs()[0], Token: s.Token(), CAFile: s.CAFile()}
		sec, _ := o.storeSecurity(store)
		under := "etcd " + o.EtcdVersion
		switch store {
		case StoreKine:
			under = "kine " + o.Kine.Version + " over " + o.Kine.Backend
			if o.Kine.Binary != "" {
				under = "kine (" + o.Kine.Binary + ") over " + o.Kine.Backend
			}
		case StoreCommand:
			under = "the server of --command"
		case StoreEndpoints:
			under = "the server at " + o.Endpoints
		}
		return probed{name: fmt.Sprintf("kube-apiserver %s (watch cache %s) over %s, started by vigil", version, cache, under),
			run:  probesAt(kubeprobes.Config{Server: srv, Compact: conformance.EtcdCompactor(fx.Endpoints(), sec), Resources: res, Only: only}),
			stop: func() { fx.Stop() }}, nil
	}
	var target probed
	if external != nil {
		target = probed{name: "Kubernetes API server at " + external.Server,
			run: probesAt(kubeprobes.Config{Server: *external, Resources: res, Only: only})}
	} else {
		var err error
		if target, err = start(o.KubeVersion, "target", o.Store); err != nil {
			return probed{}, nil, err
		}
	}
	if o.Reference == "none" {
		return target, nil, nil
	}
	return target, func() (probed, error) {
		v := o.Reference
		if v == "default" {
			v = binaries.DefaultKubeVersion
		}
		ref, err := start(v, "reference", StoreEtcd)
		if err != nil {
			return probed{}, fmt.Errorf("starting the reference kube-apiserver %s (--reference none skips it): %w", v, err)
		}
		return ref, nil
	}, nil
}

// storeSecurity is how vigil and the API servers reach store: what
// check found for a store the user runs, none for one vigil starts.
func (o *ConformOptions) storeSecurity(store string) (fixtures.Security, kubeapiserver.EtcdTLS) {
	if store != StoreEndpoints {
		return fixtures.Security{}, kubeapiserver.EtcdTLS{}
	}
	return o.storeSec, o.storeTLS
}

// kubeServer builds (if needed) and starts a 1-member etcd with one
// kube-apiserver over it in dir.
func (o *ConformOptions) kubeServer(ctx context.Context, kubeVersion, dir, store string) (*kubeapiserver.Fixture, error) {
	etcdBin, err := binaries.Etcd(ctx, binaries.Options{Version: o.EtcdVersion, Progress: os.Stderr})
	if err != nil {
		return nil, err
	}
	kubeBin, err := binaries.KubeAPIServer(ctx, binaries.KubeOptions{Version: kubeVersion, Progress: os.Stderr})
	if err != nil {
		return nil, err
	}
	sec, tls := o.storeSecurity(store)
	st, err := storeFixture(ctx, store, o.Command, o.Endpoints, sec, o.Kine, dir, nil)
	if err != nil {
		return nil, err
	}
	fx := kubeapiserver.NewFixture(kubeapiserver.FixtureConfig{Dir: dir, Store: st,
		Etcd:       etcdproc.Config{Binary: etcdBin, Members: 1, Version: o.EtcdVersion},
		APIServers: kubeapiserver.Config{Binary: kubeBin, Version: kubeVersion, DisableWatchCache: !o.WatchCache, EtcdTLS: tls}})
	fmt.Fprintf(os.Stderr, "starting the store (%s) and kube-apiserver %s in %s\n", store, kubeVersion, dir)
	return fx, startFixture(ctx, fx, 3*time.Minute)
}
