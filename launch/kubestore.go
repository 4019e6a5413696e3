package launch

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/external"
	"github.com/vigil-suite/vigil/fixtures/kubeapiserver"
)

// The stores kube-apiserver can keep its data in (--store): an etcd
// cluster vigil starts, kine, any etcd-API server started from --command,
// or one the user runs (--endpoints).
const (
	StoreEtcd      = "etcd"
	StoreKine      = "kine"
	StoreCommand   = "command"
	StoreEndpoints = "endpoints"
)

// endpointStore is a running etcd-API server under the API servers: vigil
// reaches it but owns no process, so the process faults cannot apply.
type endpointStore struct{ *external.Cluster }

var _ kubeapiserver.Store = endpointStore{}

func errNotOwned(name string) error {
	return fmt.Errorf("%s is a server vigil did not start (--store endpoints): it cannot kill, stop or pause it", name)
}

func (endpointStore) Kill(name string) error                        { return errNotOwned(name) }
func (endpointStore) StopMember(name string) error                  { return errNotOwned(name) }
func (endpointStore) StartMember(_ context.Context, n string) error { return errNotOwned(n) }
func (endpointStore) Pause(name string) error                       { return errNotOwned(name) }
func (endpointStore) Resume(name string) error                      { return errNotOwned(name) }

// storeSecurity is how vigil (sec: e, the environment filling in what is
// unset) and the API servers (tls) reach a store the user runs (--store
// endpoints): kube-apiserver takes a CA and a client certificate for
// etcd, and nothing else.
func storeSecurity(e EtcdSecurity) (sec fixtures.Security, tls kubeapiserver.EtcdTLS, err error) {
	sec = e.Resolved()
	tls, err = storeTLS(sec)
	return sec, tls, err
}

func storeTLS(sec fixtures.Security) (kubeapiserver.EtcdTLS, error) {
	abs := func(f string) string {
		if a, err := filepath.Abs(f); err == nil && f != "" {
			return a
		}
		return f
	}
	switch {
	case sec.User != "" || sec.Password != "":
		return kubeapiserver.EtcdTLS{}, Usagef("--user and --password: kube-apiserver has no etcd user and password (only --etcd-cafile, --etcd-certfile and --etcd-keyfile), " +
			"so it cannot run over a store with auth on; give vigil and the API servers a client certificate (--cert, --key) that the store maps to a user instead")
	case sec.InsecureSkipVerify:
		return kubeapiserver.EtcdTLS{}, Usagef("--insecure-skip-tls-verify (or ETCDCTL_INSECURE_SKIP_TLS_VERIFY): kube-apiserver always verifies the store's certificate; give --cacert")
	case sec.TLS() && sec.CACert == "":
		return kubeapiserver.EtcdTLS{}, Usagef("--cert and --key without --cacert: kube-apiserver needs the CA of the store's certificate; give --cacert")
	}
	return kubeapiserver.EtcdTLS{CAFile: abs(sec.CACert), CertFile: abs(sec.Cert), KeyFile: abs(sec.Key)}, nil
}

// storeFixture makes the store --store names under the API servers (nil
// for etcd, which kubeapiserver starts itself), not started. dir is the
// run's dir; the store's process, if any, goes under dir/members. sec
// reaches a store at endpoints.
func storeFixture(ctx context.Context, store, command, endpoints string, sec fixtures.Security, kineOpts KineOptions, dir string, net fixtures.Network) (kubeapiserver.Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	switch store {
	case StoreKine:
		return kineOpts.server(ctx, abs, net)
	case StoreCommand:
		return commandServer(command, abs, net)
	case StoreEndpoints:
		return endpointStore{external.New(external.Config{Endpoints: strings.Split(endpoints, ","), Security: sec})}, nil
	}
	return nil, nil
}

// processFaults lists the faults of names that need the store's (or a
// member's) process, which --store endpoints does not give vigil.
func processFaults(names []string) []string {
	var out []string
	for _, n := range names {
		// The API servers' own process faults stay: vigil starts them.
		if inj, ok := chaos.Lookup(n); ok && inj.Needs().Processes && !inj.Needs().APIServers {
			out = append(out, n)
		}
	}
	return out
}
