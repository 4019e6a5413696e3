package launch

import (
	"net/url"
	"path/filepath"
	"strings"

	"github.com/vigil-suite/vigil/targets/kube"
)

// KubeServer names a Kubernetes API server the user runs, by URL and
// credentials or by kubeconfig, for runs and conformance probes alike.
type KubeServer struct {
	URL, Token, CAFile, Kubeconfig, Context string
	Insecure, InCluster                     bool
}

// named reports whether a server was named (by URL or kubeconfig).
func (k KubeServer) named() bool {
	return k.URL != "" || k.Kubeconfig != "" || k.Context != "" || k.InCluster
}

// credentials reports whether a token, a CA or insecure was given.
func (k KubeServer) credentials() bool { return k.Token != "" || k.CAFile != "" || k.Insecure }

// config checks the options and returns the named server's
// configuration, or nil when none was named.
func (k KubeServer) config() (*kube.Config, error) {
	switch {
	case k.URL != "" && (k.Kubeconfig != "" || k.Context != "" || k.InCluster):
		return nil, Usagef("--server excludes --kubeconfig, --context and --in-cluster")
	case k.InCluster && (k.Kubeconfig != "" || k.Context != ""):
		return nil, Usagef("--in-cluster excludes --kubeconfig and --context")
	case k.CAFile != "" && k.Insecure:
		return nil, Usagef("--ca-file and --insecure-skip-tls-verify exclude each other")
	case k.URL != "":
		if u, err := url.Parse(k.URL); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, Usagef("--server %q: want a URL such as https://host:6443", k.URL)
		}
		if !strings.HasPrefix(k.URL, "http://") && k.CAFile == "" && !k.Insecure {
			return nil, Usagef("--server needs --ca-file FILE (the CA of its certificate) or --insecure-skip-tls-verify")
		}
		return &kube.Config{Server: k.URL, Token: k.Token, CAFile: k.CAFile, Insecure: k.Insecure}, nil
	case k.Kubeconfig != "" || k.Context != "" || k.InCluster:
		cfg, err := kube.Kubeconfig{Paths: filepath.SplitList(k.Kubeconfig), Context: k.Context, InCluster: k.InCluster}.Load()
		if err != nil {
			return nil, Usagef("kubeconfig: %v", err)
		}
		return &cfg, nil
	}
	return nil, nil
}
