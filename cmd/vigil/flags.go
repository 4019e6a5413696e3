package main

import (
	"strconv"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures/kine"
	"github.com/vigil-suite/vigil/launch"
)

// The flag groups vigil run and vigil conform share.

func defineKine(fs *flag.FlagSet, k *launch.KineOptions) {
	fs.StringVar(&k.Version, "kine-version", k.Version, "--fixture kine: kine release to build from the Go module proxy")
	fs.StringVar(&k.Binary, "kine-binary", "", "--fixture kine: use this kine binary instead of building one")
	fs.StringVar(&k.Backend, "kine-backend", k.Backend, "--fixture kine: where kine keeps its data: "+strings.Join(kine.Backends(), ", ")+" (a server vigil starts on loopback, installed from Debian's packages on first use)")
}

// defineServerFlags defines the flags that reach a server the user runs:
// a Kubernetes API server (k) and etcd members over TLS or with auth (e),
// the latter named as etcdctl names them. --insecure-skip-tls-verify
// serves both. note ends the help of the flags that name a Kubernetes
// server (what naming one means for the command).
func defineServerFlags(fs *flag.FlagSet, k *launch.KubeServer, e *launch.EtcdSecurity, note string) {
	fs.StringVar(&k.URL, "server", "", "--target kube: URL of a Kubernetes API server you run"+note)
	fs.StringVar(&k.Token, "token", "", "--target kube: bearer token for --server")
	fs.StringVar(&k.CAFile, "ca-file", "", "--target kube: PEM file of the CA that signed --server's certificate")
	fs.Var(boolsFlag{&k.Insecure, &e.InsecureSkipVerify}, "insecure-skip-tls-verify", "do not verify the server's certificate (--target kube --server, or etcd --endpoints over TLS)")
	fs.Lookup("insecure-skip-tls-verify").NoOptDefVal = "true"
	fs.StringVar(&k.Kubeconfig, "kubeconfig", "", "--target kube: read server and credentials from this kubeconfig (several: ':'-separated, "+
		"as $KUBECONFIG), as kubectl does: client certificates, tokens, exec credential plugins"+note)
	fs.StringVar(&k.Context, "context", "", "--target kube: the kubeconfig context to use instead of the current one; "+
		"alone, from $KUBECONFIG or ~/.kube/config"+note)
	fs.BoolVar(&k.InCluster, "in-cluster", false, "--target kube: the API server of the pod vigil runs in, with its service account"+note)
	defineEtcdSecurity(fs, e)
}

// defineEtcdSecurity defines the flags that reach etcd members the user
// runs over TLS or with auth, named as etcdctl names them.
func defineEtcdSecurity(fs *flag.FlagSet, e *launch.EtcdSecurity) {
	fs.StringVar(&e.CACert, "cacert", "", "--endpoints: PEM file of the CA that signed the members' certificates (TLS); env ETCDCTL_CACERT")
	fs.StringVar(&e.Cert, "cert", "", "--endpoints: PEM file of vigil's client certificate, for members that ask for one; env ETCDCTL_CERT")
	fs.StringVar(&e.Key, "key", "", "--endpoints: PEM file of the key of --cert; env ETCDCTL_KEY")
	fs.StringVar(&e.User, "user", "", "--endpoints: etcd user (name, or name:password) when auth is on; env ETCDCTL_USER")
	fs.StringVar(&e.Password, "password", "", "--endpoints: the password of --user; env ETCDCTL_PASSWORD")
}

// defineHeldTo defines --profile and --limitation: what the target is held
// to, and the documented departures declared for it.
func defineHeldTo(fs *flag.FlagSet, profile *string, lims *[]string, unit string) {
	fs.StringVar(profile, "profile", *profile, "what the server is held to: "+strings.Join(check.ProfileNames(), " or ")+
		" (etcd: the whole etcd API; kubernetes: the calls and guarantees Kubernetes relies on, see docs/profiles.md); "+
		unit+" outside the profile are reported but do not fail")
	fs.Var((*listFlag)(lims), "limitation", "a documented departure declared for your server (repeatable, or comma-separated): "+
		strings.Join(check.LimitationNames(), ", ")+", kine (every one kine documents) or none; each excuses only what "+
		"docs/profiles.md lists and is shown in every report (default: kine's with --fixture kine, else none)")
}

// listFlag is a repeatable flag whose values add up; the caller splits
// comma-separated ones.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Type() string   { return "names" }
func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// boolsFlag is a boolean flag that sets several options at once.
type boolsFlag []*bool

func (b boolsFlag) String() string { return strconv.FormatBool(*b[0]) }
func (b boolsFlag) Type() string   { return "bool" }
func (b boolsFlag) Set(s string) error {
	v, err := strconv.ParseBool(s)
	for _, p := range b {
		*p = v
	}
	return err
}

// given is the flags set on the command line, with their values.
func given(fs *flag.FlagSet) map[string]string {
	set := map[string]string{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = f.Value.String() })
	return set
}
