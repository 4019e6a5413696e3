package main

import (
	"net/url"
	"path/filepath"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/targets/kube"
)

// kubeServer holds the flags that name a Kubernetes API server the user
// runs, for vigil run and vigil conform alike.
type kubeServer struct {
	server, token, caFile, kubeconfig, context string
	insecure, inCluster                        bool
}

// define adds the flags; note ends the --server and --kubeconfig help
// (what naming a server means for the command).
func (k *kubeServer) define(fs *flag.FlagSet, note string) {
	fs.StringVar(&k.server, "server", "", "--target kube: URL of a Kubernetes API server you run"+note)
	fs.StringVar(&k.token, "token", "", "--target kube: bearer token for --server")
	fs.StringVar(&k.caFile, "ca-file", "", "--target kube: PEM file of the CA that signed --server's certificate")
	fs.BoolVar(&k.insecure, "insecure-skip-tls-verify", false, "do not verify the server's certificate (--target kube --server, or etcd --endpoints over TLS)")
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", "--target kube: read server and credentials from this kubeconfig (several: ':'-separated, "+
		"as $KUBECONFIG), as kubectl does: client certificates, tokens, exec credential plugins"+note)
	fs.StringVar(&k.context, "context", "", "--target kube: the kubeconfig context to use instead of the current one; "+
		"alone, from $KUBECONFIG or ~/.kube/config"+note)
	fs.BoolVar(&k.inCluster, "in-cluster", false, "--target kube: the API server of the pod vigil runs in, with its service account"+note)
}

// named reports whether a server was named (by URL or kubeconfig).
func (k *kubeServer) named() bool {
	return k.server != "" || k.kubeconfig != "" || k.context != "" || k.inCluster
}

// credentials reports whether --token, --ca-file or --insecure-skip-tls-verify was given.
func (k *kubeServer) credentials() bool { return k.token != "" || k.caFile != "" || k.insecure }

// config checks the flags and returns the named server's configuration,
// or nil when none was named.
func (k *kubeServer) config() (*kube.Config, error) {
	switch {
	case k.server != "" && (k.kubeconfig != "" || k.context != "" || k.inCluster):
		return nil, usageError("--server excludes --kubeconfig, --context and --in-cluster")
	case k.inCluster && (k.kubeconfig != "" || k.context != ""):
		return nil, usageError("--in-cluster excludes --kubeconfig and --context")
	case k.caFile != "" && k.insecure:
		return nil, usageError("--ca-file and --insecure-skip-tls-verify exclude each other")
	case k.server != "":
		if u, err := url.Parse(k.server); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, usageError("--server %q: want a URL such as https://host:6443", k.server)
		}
		if !strings.HasPrefix(k.server, "http://") && k.caFile == "" && !k.insecure {
			return nil, usageError("--server needs --ca-file FILE (the CA of its certificate) or --insecure-skip-tls-verify")
		}
		return &kube.Config{Server: k.server, Token: k.token, CAFile: k.caFile, Insecure: k.insecure}, nil
	case k.kubeconfig != "" || k.context != "" || k.inCluster:
		cfg, err := kube.Kubeconfig{Paths: filepath.SplitList(k.kubeconfig), Context: k.context, InCluster: k.inCluster}.Load()
		if err != nil {
			return nil, usageError("kubeconfig: %v", err)
		}
		return &cfg, nil
	}
	return nil, nil
}
