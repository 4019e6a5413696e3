package conformance_test

import (
	"testing"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	"github.com/vigil-suite/vigil/suites/conformance"
)

// A project gates its own etcd-API server on the probes like this; here
// the server is a real etcd that vigil builds and starts.
func TestRunEtcdAsACIGate(t *testing.T) {
	endpoints := conformance.StartServerUnderTest(t, binaries.DefaultEtcdVersion)
	conformance.RunEtcd(t, conformance.EtcdConfig{Endpoints: endpoints})
}
