package suites

import (
	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/fixtures"
)

// setKubeEnv gives the chaos schedule what a Kubernetes fixture offers
// beyond the etcd members under it: the API server replicas, for the
// *-apiserver faults.
func setKubeEnv(env *chaos.Env, fx fixtures.Fixture) {
	if a, ok := fx.(chaos.APIServers); ok {
		env.APIServers = a
	}
}
