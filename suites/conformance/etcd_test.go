package conformance

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
)

// startEtcd starts a 1-member etcd of version for a test.
func startEtcd(t *testing.T, version string) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real etcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: version, Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	c := etcdproc.New(etcdproc.Config{Binary: bin, Members: 1, Dir: t.TempDir(), Version: version})
	t.Cleanup(func() { c.Stop() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return c.Endpoints()
}

// Every probe passes on every etcd release vigil supports: the probes'
// expectations are etcd's behaviour, version differences written in them.
func TestEtcdProbesPassOnEtcd(t *testing.T) {
	for _, v := range etcdVersionsUnderTest() {
		t.Run(v, func(t *testing.T) {
			eps := startEtcd(t, v)
			begin := time.Now()
			res, err := RunEtcdProbes(context.Background(), EtcdConfig{Endpoints: eps}, EtcdProbes())
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if r.Verdict != Pass {
					t.Errorf("%s: %s %s%s", r.Name, r.Verdict, r.Reason, r.Failure)
				}
			}
			checkDamageDeclared(t, res)
			t.Logf("%s: %d probes in %s", v, len(res), time.Since(begin).Round(time.Millisecond))
		})
	}
}

// etcdVersionsUnderTest: the default and v3.5.17 always;
// VIGIL_CONFORM_VERSIONS widens it (the README's matrix).
func etcdVersionsUnderTest() []string {
	if v := os.Getenv("VIGIL_CONFORM_VERSIONS"); v != "" {
		return splitComma(v)
	}
	return []string{binaries.DefaultEtcdVersion, "v3.5.17"}
}

// A probe that fails because another client wrote meanwhile is reported
// as an error naming the cause, not as a failure of the behaviour.
func TestAnotherWriterIsNotBlamedOnTheProbe(t *testing.T) {
	eps := startEtcd(t, binaries.DefaultEtcdVersion)
	meddler := EtcdProbe{Info{"test/meddled", "a put's revision is not base+1", nil}, func(p *P) {
		p.Expect(p.Put("first", "1")).To(Equal(p.Rev(1)))
		other, err := clientv3.New(clientv3.Config{Endpoints: eps, Logger: zap.NewNop()})
		p.Expect(err).NotTo(HaveOccurred())
		defer other.Close()
		_, err = other.Put(p.Ctx, "/elsewhere", "x") // not through the recorded client
		p.Expect(err).NotTo(HaveOccurred())
		p.Expect(p.Put("a", "1")).To(Equal(p.Rev(2)))
	}}
	res, err := RunEtcdProbes(context.Background(), EtcdConfig{Endpoints: eps}, []EtcdProbe{meddler})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Verdict != Error || !strings.Contains(res[0].Reason, `another client wrote "/elsewhere"`) {
		t.Fatalf("want an error naming the other write, got %s %s %s", res[0].Verdict, res[0].Reason, res[0].Failure)
	}
}

// checkDamageDeclared requires that the probes declared damaging (they run
// last) are exactly those whose requests compact, revoke a lease or exceed
// 1 MiB, as their run on etcd shows.
func checkDamageDeclared(t *testing.T, res []Result) {
	t.Helper()
	declared := map[string]string{}
	for _, p := range EtcdProbes() {
		declared[p.Name] = p.Damage()
	}
	for _, r := range res {
		if got := damageOf(r.repro.steps); got != declared[r.Name] {
			t.Errorf("%s sends what %q, but is declared %q (the damaging table in damage.go)", r.Name, got, declared[r.Name])
		}
	}
}
