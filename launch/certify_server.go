package launch

import (
	"slices"
	"strings"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/fixtures/kine"
	"github.com/vigil-suite/vigil/internal/redact"
)

// certified is the server certify holds to what Kubernetes needs, as
// each phase hands it to vigil conform and vigil run: started from a
// command line, run by the user, or kine (with its database) started by
// vigil. Every phase gets a fresh one from the server vigil starts.
type certified interface {
	// conform points o, of target etcd or kube, at the server.
	conform(o *ConformOptions)
	// run points o, of target etcd or kube, at the server.
	run(o *Options)
	// flags are the same on vigil's command line, for the repros.
	flags(target string) string
	// faults are those of all that apply to the server, and those left
	// out with why.
	faults(all []string) (use []string, left map[string]string)
	// String names the server in the certificate.
	String() string
}

// certifiedServer is the server of the options (check has made sure
// there is exactly one).
func (c *CertifyOptions) certifiedServer() certified {
	switch {
	case c.Fixture == "kine":
		return kineCertified{c.Kine}
	case c.Command != "":
		return commandCertified(c.Command)
	}
	return endpointsCertified{c.Endpoints, c.Security}
}

// commandCertified is a server vigil starts from --command: every fault
// applies.
type commandCertified string

func (s commandCertified) conform(o *ConformOptions) {
	o.Command = string(s)
	if o.Target == "kube" {
		o.Store = StoreCommand
	} else {
		o.Fixture = "command"
	}
}

func (s commandCertified) run(o *Options) {
	o.Command, o.Members = string(s), 1
	if o.Target == "kube" {
		o.Kube.Store = StoreCommand
	} else {
		o.Fixture = "command"
	}
}

// flags name the server with its credentials redacted: a repro is
// printed and written into the certificate.
func (s commandCertified) flags(target string) string {
	line := quote(redact.Line(string(s)))
	if target == "kube" {
		return "--target kube --store command --command " + line
	}
	return "--fixture command --command " + line
}

func (commandCertified) faults(all []string) ([]string, map[string]string) { return all, nil }

func (s commandCertified) String() string {
	return "the server of --command " + redact.Line(string(s))
}

// endpointsCertified is a server the user runs: vigil owns neither its
// process nor a proxy in front of it. sec reaches it over TLS or with
// auth; the kube-apiserver vigil starts over it takes only a CA and a
// client certificate (storeTLS), and its phases say so when that is not
// enough.
type endpointsCertified struct {
	endpoint string
	sec      EtcdSecurity
}

func (s endpointsCertified) conform(o *ConformOptions) {
	o.Endpoints, o.Security = s.endpoint, s.sec
	if o.Target == "kube" {
		o.Store = StoreEndpoints
	}
}

func (s endpointsCertified) run(o *Options) {
	o.Endpoints, o.Security = s.endpoint, s.sec
	if o.Target == "kube" {
		o.Kube.Store, o.Members = StoreEndpoints, 1
	}
}

// flags name the server as vigil's command line does; a password is
// left to ETCDCTL_PASSWORD, never written into a repro.
func (s endpointsCertified) flags(target string) string {
	f := "--endpoints " + s.endpoint
	if target == "kube" {
		f = "--target kube --store endpoints " + f
	}
	for _, v := range []struct{ flag, value string }{{"cacert", s.sec.CACert}, {"cert", s.sec.Cert}, {"key", s.sec.Key}} {
		if v.value != "" {
			f += " --" + v.flag + " " + quote(v.value)
		}
	}
	if user, _, _ := strings.Cut(s.sec.User, ":"); user != "" {
		f += " --user " + quote(user)
	}
	if s.sec.InsecureSkipVerify {
		f += " --insecure-skip-tls-verify"
	}
	return f
}

func (endpointsCertified) faults(all []string) (use []string, left map[string]string) {
	left = map[string]string{}
	for _, f := range all {
		switch {
		case f == "compact-storm" || f == "restart-apiserver":
			use = append(use, f)
		case len(processFaults([]string{f})) > 0:
			left[f] = "needs the server's process, which vigil did not start (--endpoints)"
		default:
			left[f] = "needs vigil's proxy in front of the server, which only a server vigil starts has"
		}
	}
	return use, left
}

func (s endpointsCertified) String() string { return "the server at " + s.endpoint }

// kineCertified is kine, over its backend's database, started by vigil
// as --fixture kine (etcd API) and --store kine (under kube-apiserver)
// start it.
type kineCertified struct{ KineOptions }

func (s kineCertified) conform(o *ConformOptions) {
	o.Kine = s.KineOptions
	if o.Target == "kube" {
		o.Store = StoreKine
	} else {
		o.Fixture = "kine"
	}
}

func (s kineCertified) run(o *Options) {
	o.Kine, o.Members = s.KineOptions, 1
	if o.Target == "kube" {
		o.Kube.Store = StoreKine
	} else {
		o.Fixture = "kine"
	}
}

func (s kineCertified) flags(target string) string {
	f := "--fixture kine"
	if target == "kube" {
		f = "--target kube --store kine"
	}
	f += " --kine-backend " + s.Backend
	if s.Binary != "" {
		return f + " --kine-binary " + quote(s.Binary)
	}
	return f + " --kine-version " + s.Version
}

// certifyDatabaseFaults are the faults of the database server under
// kine, which certify adds to both runs with faults.
var certifyDatabaseFaults = []string{"kill-database", "restart-database", "pause-database"}

// faults keeps what applies to kine (chaos.AppliesToKine) with its
// database's faults added; the API servers' faults apply too, vigil
// starting them over kine.
func (s kineCertified) faults(all []string) (use []string, left map[string]string) {
	left = map[string]string{}
	for _, f := range append(slices.Clone(all), certifyDatabaseFaults...) {
		inj, ok := chaos.Lookup(f)
		if !ok {
			left[f] = "no such fault"
			continue
		}
		why := chaos.AppliesToKine(inj)
		switch n := inj.Needs(); {
		case n.APIServers:
			use = append(use, f)
		case n.Database && s.Backend == kine.BackendSQLite:
			left[f] = "kine over SQLite keeps its data in its own process, with no database server to fault (it applies " + strings.TrimPrefix(why, "yes, ") + ")"
		case strings.HasPrefix(why, "yes"):
			use = append(use, f)
		default:
			left[f] = "does not apply to kine: " + strings.TrimPrefix(why, "no: ")
		}
	}
	if len(left) == 0 {
		left = nil
	}
	return use, left
}

func (s kineCertified) String() string {
	v := "kine " + s.Version
	if s.Binary != "" {
		v = "kine " + s.Binary
	}
	return v + " over " + s.Backend + ", started by vigil with its database for each phase (--fixture kine --kine-backend " + s.Backend + ")"
}
