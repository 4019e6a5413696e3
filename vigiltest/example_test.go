package vigiltest_test

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/fixtures/kubeapiserver"
	"github.com/vigil-suite/vigil/targets/kube"
	"github.com/vigil-suite/vigil/vigiltest"
)

// TestOwnServer is how a project that implements the etcd v3 API gates
// its server on vigil: start the server, run vigil against it, and get one
// subtest per check (`go test -run TestOwnServer -v` lists them). Here the
// server is etcd itself, built from the Go module proxy.
//
// VIGIL_EXAMPLE_SABOTAGE=MODE injects a sabotage mode into the run, which
// the test of this package uses to show that only the owning check's
// subtest fails.
func TestOwnServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real etcd")
	}
	endpoints := startServer(t)

	out := vigiltest.RunEtcd(t, endpoints, vigiltest.Options{
		Duration: 10 * time.Second,
		Sabotage: os.Getenv("VIGIL_EXAMPLE_SABOTAGE"),
	})

	if os.Getenv("VIGIL_EXAMPLE_SABOTAGE") == "" {
		NewWithT(t).Expect(out).To(vigiltest.Pass())
	}
}

// startServer starts the server under test and stops it after the test.
func startServer(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: binaries.DefaultEtcdVersion})
	if err != nil {
		t.Fatal(err)
	}
	fx := etcdproc.New(etcdproc.Config{Binary: bin, Members: 1, Dir: t.TempDir(), Version: binaries.DefaultEtcdVersion})
	t.Cleanup(func() { fx.Stop() })
	if err := fx.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return fx.Endpoints()
}

// TestOwnKubeServer is the same gate for a server of the Kubernetes API:
// here a kube-apiserver over etcd, both built from the Go module proxy.
func TestOwnKubeServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	etcdBin, err := binaries.Etcd(ctx, binaries.Options{Version: binaries.DefaultEtcdVersion})
	if err != nil {
		t.Fatal(err)
	}
	kubeBin, err := binaries.KubeAPIServer(ctx, binaries.KubeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fx := kubeapiserver.NewFixture(kubeapiserver.FixtureConfig{Dir: t.TempDir(),
		Etcd:       etcdproc.Config{Binary: etcdBin, Members: 1, Version: binaries.DefaultEtcdVersion},
		APIServers: kubeapiserver.Config{Binary: kubeBin, Replicas: 1}})
	t.Cleanup(func() { fx.Stop() })
	if err := fx.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// A project would have a client-go rest.Config for its server.
	s := fx.Servers()
	rc := &rest.Config{Host: s.Replicas()[0].ClientURL, BearerToken: s.Token(),
		TLSClientConfig: rest.TLSClientConfig{CAFile: s.CAFile()}}
	server := kube.FromRest(rc)

	out := vigiltest.RunKube(t, server, vigiltest.Options{Duration: 10 * time.Second})

	NewWithT(t).Expect(out).To(vigiltest.Pass())
}
