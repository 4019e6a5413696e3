package main

import (
	"os"
	"strconv"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/fixtures"
)

// etcdSecurity holds the flags that reach an etcd cluster over TLS or
// with etcd's authentication, named as etcdctl names them; unset, each
// falls back to etcdctl's environment variable (ETCDCTL_CACERT, ...).
// --insecure-skip-tls-verify is shared with the Kubernetes target.
type etcdSecurity struct {
	caCert, cert, key, user, password string
}

func (e *etcdSecurity) define(fs *flag.FlagSet) {
	fs.StringVar(&e.caCert, "cacert", "", "--endpoints: PEM file of the CA that signed the members' certificates (TLS); env ETCDCTL_CACERT")
	fs.StringVar(&e.cert, "cert", "", "--endpoints: PEM file of vigil's client certificate, for members that ask for one; env ETCDCTL_CERT")
	fs.StringVar(&e.key, "key", "", "--endpoints: PEM file of the key of --cert; env ETCDCTL_KEY")
	fs.StringVar(&e.user, "user", "", "--endpoints: etcd user (name, or name:password) when auth is on; env ETCDCTL_USER")
	fs.StringVar(&e.password, "password", "", "--endpoints: the password of --user; env ETCDCTL_PASSWORD")
}

// security is the flags (or their environment variables) as the
// fixtures take them.
func (e *etcdSecurity) security(insecure bool) fixtures.Security {
	or := func(v, env string) string {
		if v == "" {
			return os.Getenv(env)
		}
		return v
	}
	if !insecure {
		insecure, _ = strconv.ParseBool(os.Getenv("ETCDCTL_INSECURE_SKIP_TLS_VERIFY"))
	}
	return fixtures.Security{CACert: or(e.caCert, "ETCDCTL_CACERT"), Cert: or(e.cert, "ETCDCTL_CERT"),
		Key: or(e.key, "ETCDCTL_KEY"), InsecureSkipVerify: insecure, User: or(e.user, "ETCDCTL_USER"),
		Password: or(e.password, "ETCDCTL_PASSWORD")}
}

// given reports whether any of the flags was set on the command line.
func (e *etcdSecurity) given() bool {
	return e.caCert != "" || e.cert != "" || e.key != "" || e.user != "" || e.password != ""
}

// redacted is the flags as the history and result.json keep them: a
// password or token given on the command line is not written down.
func redacted(set map[string]string) map[string]string {
	out := make(map[string]string, len(set))
	for k, v := range set {
		switch name, _, withPassword := strings.Cut(v, ":"); {
		case k == "password" || k == "token":
			v = "(redacted)"
		case k == "user" && withPassword:
			v = name + ":(redacted)"
		}
		out[k] = v
	}
	return out
}
