package main

import (
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/fixtures/kine"
	"github.com/vigil-suite/vigil/launch"
)

// The flag groups vigil run and vigil conform share.

func defineKine(fs *flag.FlagSet, k *launch.KineOptions) {
	fs.StringVar(&k.Version, "kine-version", k.Version, "--fixture kine: kine release to build from the Go module proxy")
	fs.StringVar(&k.Binary, "kine-binary", "", "--fixture kine: use this kine binary instead of building one")
	fs.StringVar(&k.Backend, "kine-backend", k.Backend, "--fixture kine: where kine keeps its data: "+strings.Join(kine.Backends(), ", ")+" (a server vigil starts on loopback, installed from Debian's packages on first use)")
}

// defineKubeServer defines the flags that name a Kubernetes API server
// the user runs; note ends the help of those that name it (what naming a
// server means for the command).
func defineKubeServer(fs *flag.FlagSet, k *launch.KubeServer, note string) {
	fs.StringVar(&k.URL, "server", "", "--target kube: URL of a Kubernetes API server you run"+note)
	fs.StringVar(&k.Token, "token", "", "--target kube: bearer token for --server")
	fs.StringVar(&k.CAFile, "ca-file", "", "--target kube: PEM file of the CA that signed --server's certificate")
	fs.BoolVar(&k.Insecure, "insecure-skip-tls-verify", false, "do not verify the server's certificate (--target kube --server, or etcd --endpoints over TLS)")
	fs.StringVar(&k.Kubeconfig, "kubeconfig", "", "--target kube: read server and credentials from this kubeconfig (several: ':'-separated, "+
		"as $KUBECONFIG), as kubectl does: client certificates, tokens, exec credential plugins"+note)
	fs.StringVar(&k.Context, "context", "", "--target kube: the kubeconfig context to use instead of the current one; "+
		"alone, from $KUBECONFIG or ~/.kube/config"+note)
	fs.BoolVar(&k.InCluster, "in-cluster", false, "--target kube: the API server of the pod vigil runs in, with its service account"+note)
}

// defineEtcdSecurity defines the flags that reach an etcd cluster over
// TLS or with auth, named as etcdctl names them (--insecure-skip-tls-verify
// is defineKubeServer's, shared).
func defineEtcdSecurity(fs *flag.FlagSet, e *launch.EtcdSecurity) {
	fs.StringVar(&e.CACert, "cacert", "", "--endpoints: PEM file of the CA that signed the members' certificates (TLS); env ETCDCTL_CACERT")
	fs.StringVar(&e.Cert, "cert", "", "--endpoints: PEM file of vigil's client certificate, for members that ask for one; env ETCDCTL_CERT")
	fs.StringVar(&e.Key, "key", "", "--endpoints: PEM file of the key of --cert; env ETCDCTL_KEY")
	fs.StringVar(&e.User, "user", "", "--endpoints: etcd user (name, or name:password) when auth is on; env ETCDCTL_USER")
	fs.StringVar(&e.Password, "password", "", "--endpoints: the password of --user; env ETCDCTL_PASSWORD")
}

// given is the flags set on the command line, with their values.
func given(fs *flag.FlagSet) map[string]string {
	set := map[string]string{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = f.Value.String() })
	return set
}
