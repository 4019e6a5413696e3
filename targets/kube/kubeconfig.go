package kube

import (
	"fmt"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Kubeconfig names the Kubernetes API server and credentials the way
// kubectl finds them, with client-go's own loading rules.
type Kubeconfig struct {
	// Paths are kubeconfig files, merged in order as $KUBECONFIG lists
	// them; empty: $KUBECONFIG, then ~/.kube/config.
	Paths []string
	// Context replaces the files' current context.
	Context string
	// InCluster uses the service account of the pod vigil runs in.
	InCluster bool
}

// Load returns the server's configuration: its URL, and client-go's
// rest.Config, from which New builds the transport (TLS, client
// certificates, bearer tokens, exec credential plugins).
func (k Kubeconfig) Load() (Config, error) {
	var rc *rest.Config
	var err error
	if k.InCluster {
		if rc, err = rest.InClusterConfig(); err != nil {
			return Config{}, fmt.Errorf("in-cluster configuration: %w", err)
		}
	} else {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		switch len(k.Paths) {
		case 0:
		case 1:
			rules.ExplicitPath = k.Paths[0]
		default:
			rules.Precedence = k.Paths
		}
		cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: k.Context})
		if rc, err = cc.ClientConfig(); err != nil {
			return Config{}, err
		}
	}
	return FromRest(rc), nil
}

// FromRest is the server a client-go rest.Config names: its TLS and
// authentication (exec plugins included) stay client-go's.
func FromRest(rc *rest.Config) Config {
	server := rc.Host
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	return Config{Server: strings.TrimSuffix(server, "/"), Rest: rc}
}
