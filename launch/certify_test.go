package launch

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/binaries"
)

func req(name, verdict string) Requirement { return Requirement{Name: name, Verdict: verdict} }

func fourPhases(reqs ...Requirement) []Phase {
	ps := []Phase{{Key: "etcd-probes"}, {Key: "etcd-run"}, {Key: "kube-probes"}, {Key: "kube-run"}}
	for i, r := range reqs {
		ps[i%4].Requirements = append(ps[i%4].Requirements, r)
	}
	return ps
}

// Every verdict path of Decide, from phase results alone.
func TestCertifyDecide(t *testing.T) {
	for _, tc := range []struct {
		name    string
		phases  []Phase
		verdict string
		exit    int
	}{
		{"all pass", fourPhases(req("a", ReqPass), req("b", ReqPass), req("c", ReqPass), req("d", ReqPass)), "ready", ExitPass},
		{"one fails", fourPhases(req("a", ReqPass), req("b", ReqFail), req("c", ReqPass), req("d", ReqUnknown)), "not ready", ExitFail},
		{"a failure outweighs a later phase that did not run",
			append(fourPhases(req("a", ReqFail))[:2], Phase{Key: "kube-probes", SetupFailed: true, Error: "kube-apiserver never ready"}), "not ready", ExitFail},
		{"unknown", fourPhases(req("a", ReqPass), req("b", ReqUnknown), req("c", ReqPass), req("d", ReqPass)), "inconclusive", ExitUnknown},
		{"unsupported", fourPhases(req("a", ReqUnsupported), req("b", ReqPass), req("c", ReqPass), req("d", ReqPass)), "inconclusive", ExitUnknown},
		{"a later phase could not start",
			append(fourPhases(req("a", ReqPass), req("b", ReqPass))[:3], Phase{Key: "kube-run", SetupFailed: true, Error: "x"}), "inconclusive", ExitUnknown},
		{"phases missing", fourPhases(req("a", ReqPass))[:2], "inconclusive", ExitUnknown},
		{"nothing judged", fourPhases(), "inconclusive", ExitUnknown},
		{"the server never came up", []Phase{{Key: "etcd-probes", SetupFailed: true, Error: "no such file"}}, "setup error", ExitSetup},
		{"no phase", nil, "setup error", ExitSetup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, code, reason := Decide(tc.phases)
			if v != tc.verdict || code != tc.exit || reason == "" {
				t.Fatalf("Decide = %q %d (%s), want %q %d", v, code, reason, tc.verdict, tc.exit)
			}
		})
	}
}

func TestCertifyUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*CertifyOptions)
		want string
	}{
		{func(*CertifyOptions) {}, "give one of --command"},
		{func(*CertifyOptions) {}, "or --fixture kine"},
		{func(o *CertifyOptions) { o.Command, o.Endpoints = "x {client_port}", "127.0.0.1:2379" }, "give one of --command"},
		{func(o *CertifyOptions) { o.Command = "/bin/server --port 2379" }, "{client_port}"},
		{func(o *CertifyOptions) { o.Endpoints, o.Duration = "127.0.0.1:2379", time.Second }, "--duration"},
		{func(o *CertifyOptions) { o.Endpoints, o.Reference = "127.0.0.1:2379", "v3.5.0" }, "--reference"},
		{func(o *CertifyOptions) { o.Fixture = "process" }, "--fixture \"process\": certify starts kine"},
		{func(o *CertifyOptions) { o.Fixture, o.Command = "kine", "x {client_port}" }, "--fixture kine starts kine itself"},
		{func(o *CertifyOptions) { o.Fixture, o.Endpoints = "kine", "127.0.0.1:2379" }, "--fixture kine starts kine itself"},
		{func(o *CertifyOptions) { o.Fixture, o.Kine.Backend = "kine", "oracle" }, "--kine-backend \"oracle\""},
		{func(o *CertifyOptions) {
			o.Endpoints, o.Kine.Backend, o.Given = "127.0.0.1:2379", "postgres", map[string]string{"kine-backend": "postgres"}
		}, "go with --fixture kine"},
		{func(o *CertifyOptions) { o.Fixture, o.Limitations = "kine", []string{"no-such"} }, "--limitation \"no-such\""},
		{func(o *CertifyOptions) { o.Command, o.Security.CACert = "x {client_port}", "ca.pem" }, "go with --endpoints"},
	} {
		o := DefaultCertifyOptions()
		tc.mod(&o)
		o.Out = t.TempDir()
		code, err := Certify(context.Background(), o)
		var ue *UsageError
		if code != ExitSetup || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Certify = %d, %v; want a usage error naming %q", code, err, tc.want)
		}
	}
}

// A server that cannot be started or reached is a setup error (exit 3),
// with a certificate that says why; nothing else runs.
func TestCertifySetupErrors(t *testing.T) {
	for name, mod := range map[string]func(*CertifyOptions){
		"unreachable endpoint": func(o *CertifyOptions) { o.Endpoints = "127.0.0.1:1" },
		"bad command":          func(o *CertifyOptions) { o.Command = "/nonexistent/etcd --port {client_port} --dir {data_dir}" },
	} {
		t.Run(name, func(t *testing.T) {
			o := DefaultCertifyOptions()
			mod(&o)
			o.Out, o.Reference = t.TempDir(), "none"
			code, err := Certify(context.Background(), o)
			if code != ExitSetup || err == nil {
				t.Fatalf("Certify = %d, %v; want a setup error", code, err)
			}
			b, rerr := os.ReadFile(filepath.Join(o.Out, CertifyJSON))
			if rerr != nil {
				t.Fatal(rerr)
			}
			var c Certificate
			if err := json.Unmarshal(b, &c); err != nil || c.Ready || c.Verdict != "setup error" || c.Exit != ExitSetup || len(c.Phases) != 1 {
				t.Fatalf("certificate %+v (%v)", c, err)
			}
			for _, f := range []string{CertifyHTML, "junit.xml"} {
				if _, err := os.Stat(filepath.Join(o.Out, f)); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// Against --endpoints only the faults a client can inject stay, and
// certify says why the others were left out.
func TestCertifyFaultsForEndpoints(t *testing.T) {
	o := DefaultCertifyOptions()
	o.Endpoints = "127.0.0.1:2379"
	use, left := o.certifyFaults("etcd")
	if strings.Join(use, ",") != "compact-storm" || !strings.Contains(left["kill-leader"], "did not start") || !strings.Contains(left["watch-drop"], "proxy") {
		t.Fatalf("etcd: use %v, left %v", use, left)
	}
	use, _ = o.certifyFaults("kube")
	if strings.Join(use, ",") != "compact-storm,restart-apiserver" {
		t.Fatalf("kube: use %v", use)
	}
	o.Endpoints, o.Command = "", "etcd {client_port}"
	if use, left := o.certifyFaults("kube"); len(use) != len(certifyKubeFaults) || len(left) != 0 {
		t.Fatalf("command: use %v, left %v", use, left)
	}
}

// A server run over TLS with auth: every phase is handed the security,
// and the repros name it without the password. kube-apiserver takes a CA
// and a client certificate only: a user, or skipping verification, keeps
// the Kubernetes phases from running, saying why.
func TestCertifyEndpointsOverTLS(t *testing.T) {
	o := DefaultCertifyOptions()
	o.Endpoints = "127.0.0.1:2379"
	o.Security = EtcdSecurity{CACert: "ca.pem", Cert: "c.pem", Key: "k.pem", User: "root:secret"}
	srv := o.certifiedServer()
	for _, target := range []string{"etcd", "kube"} {
		co := ConformOptions{Target: target}
		srv.conform(&co)
		ro := Options{Target: target}
		srv.run(&ro)
		if co.Security != o.Security || ro.Security != o.Security || co.Endpoints != o.Endpoints || ro.Endpoints != o.Endpoints {
			t.Errorf("%s: the phases are not handed the server's security: conform %+v, run %+v", target, co.Security, ro.Security)
		}
		f := srv.flags(target)
		if !strings.Contains(f, "--cacert 'ca.pem' --cert 'c.pem' --key 'k.pem' --user 'root'") || strings.Contains(f, "secret") {
			t.Errorf("%s repro flags %q", target, f)
		}
	}
	for _, tc := range []struct {
		sec  fixtures.Security
		want string
	}{
		{fixtures.Security{CACert: "ca.pem", User: "root"}, "kube-apiserver has no etcd user and password"},
		{fixtures.Security{InsecureSkipVerify: true}, "always verifies"},
		{fixtures.Security{Cert: "c.pem", Key: "k.pem"}, "needs the CA"},
	} {
		if _, err := storeTLS(tc.sec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("storeTLS(%+v) = %v, want %q", tc.sec, err, tc.want)
		}
	}
	tls, err := storeTLS(fixtures.Security{CACert: "ca.pem", Cert: "c.pem", Key: "k.pem"})
	if err != nil || !filepath.IsAbs(tls.CAFile) || !filepath.IsAbs(tls.CertFile) || !filepath.IsAbs(tls.KeyFile) {
		t.Errorf("storeTLS = %+v, %v; want absolute paths", tls, err)
	}
	if tls, err := storeTLS(fixtures.Security{}); err != nil || tls.CAFile != "" || tls.CertFile != "" {
		t.Errorf("storeTLS of plain gRPC = %+v, %v; want none", tls, err)
	}
}

// A --command with a credential: each phase is handed the line as
// written (the server needs it), while the certificate's server and
// every repro show it redacted.
func TestCertifyCommandRedacted(t *testing.T) {
	o := DefaultCertifyOptions()
	o.Command = "/bin/sh -c 'exec etcd --listen {client_port}' x postgres://u:SECRET@h/db"
	srv := o.certifiedServer()
	for _, target := range []string{"etcd", "kube"} {
		co, ro := ConformOptions{Target: target}, Options{Target: target}
		srv.conform(&co)
		srv.run(&ro)
		if co.Command != o.Command || ro.Command != o.Command {
			t.Errorf("%s: the phases are handed %q and %q", target, co.Command, ro.Command)
		}
		if f := srv.flags(target); strings.Contains(f, "SECRET") || !strings.Contains(f, "postgres://u:REDACTED@h/db") {
			t.Errorf("%s repro flags %q", target, f)
		}
	}
	if s := srv.String(); strings.Contains(s, "SECRET") {
		t.Errorf("server %q", s)
	}
}

// --store command and --store endpoints under kube-apiserver: what
// Resolve accepts and refuses (certify's phases 3 and 4 rest on them).
func TestCertifyKubeStoreOptions(t *testing.T) {
	for _, tc := range []struct {
		store, command, endpoints, faults, want string
	}{
		{StoreCommand, "/usr/local/bin/etcd --port {client_port}", "", "kill-leader,watch-drop", ""},
		{StoreEndpoints, "", "127.0.0.1:2379", "compact-storm,restart-apiserver", ""},
		{StoreEndpoints, "", "127.0.0.1:2379", "kill-leader,compact-storm", "kill-leader need the store's process"},
		{StoreEndpoints, "", "", "", "--store endpoints needs --endpoints"},
		{StoreCommand, "", "", "", "--store command and --command go together"},
		{StoreEtcd, "", "127.0.0.1:2379", "", "--store endpoints"},
		{"fdb", "", "", "", "--store \"fdb\""},
	} {
		o := DefaultOptions()
		o.Target, o.Kube.Store, o.Command, o.Endpoints, o.Faults = "kube", tc.store, tc.command, tc.endpoints, tc.faults
		o.Given["store"] = tc.store
		err := o.Resolve()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: got %v, want %q", tc, err, tc.want)
		case tc.want == "" && o.Members != 1:
			t.Errorf("%+v: members %d, want 1", tc, o.Members)
		}
	}
}

// A check the run gave no chance to is judged by its probes: pass when
// they all passed, unknown when one did not or none ran.
func TestCertifyCoverSkipped(t *testing.T) {
	phases := []Phase{
		{Key: "kube-probes", Requirements: []Requirement{
			{Name: "kube-probes/kube-list/continue-expired@configmaps", Kind: "probe", Verdict: ReqPass},
			{Name: "kube-probes/kube-list/continue-expired@vigilobjects", Kind: "probe", Verdict: ReqPass},
			{Name: "kube-probes/kube-watch/timeout@configmaps", Kind: "probe", Verdict: ReqPass},
			{Name: "kube-probes/kube-watch/timeout@vigilobjects", Kind: "probe", Verdict: ReqFail},
		}},
		{Key: "kube-run", Requirements: []Requirement{
			{Name: "kube-run/kube/continue-expired", Kind: "check", Verdict: ReqUnknown, skipped: true},
			{Name: "kube-run/kube/watch-timeout", Kind: "check", Verdict: ReqUnknown, skipped: true},
			{Name: "kube-run/kube/bookmarks", Kind: "check", Verdict: ReqUnknown},
		}},
	}
	coverSkipped(phases)
	got := phases[1].Requirements
	if got[0].Verdict != ReqPass || len(got[0].CoveredBy) != 2 || !strings.Contains(got[0].Evidence, "judged by its probes") {
		t.Errorf("continue-expired: %+v", got[0])
	}
	if got[1].Verdict != ReqUnknown || got[2].Verdict != ReqUnknown {
		t.Errorf("a failed probe or a check that was not skipped stays unknown: %+v", got[1:])
	}
}

// --fixture kine: each phase gets kine over the backend from the options
// conform and run take for --fixture kine and --store kine, with the
// faults that apply to kine (its database's over a database server), no
// limitation unless one is declared, and repros that say the same.
func TestCertifyKineServer(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		c := DefaultCertifyOptions()
		c.Fixture, c.Kine.Backend = "kine", backend
		if err := c.check(); err != nil {
			t.Fatalf("%s: %v", backend, err)
		}
		srv := c.certifiedServer()
		for _, target := range []string{"etcd", "kube"} {
			co := DefaultConformOptions()
			co.Target = target
			srv.conform(&co)
			ro := DefaultOptions()
			ro.Target = target
			srv.run(&ro)
			if co.Kine.Backend != backend || ro.Kine.Backend != backend || ro.Members != 1 {
				t.Errorf("%s %s: conform %+v, run %+v", backend, target, co.Kine, ro.Kine)
			}
			if target == "etcd" && (co.Fixture != "kine" || ro.Fixture != "kine") || target == "kube" && (co.Store != StoreKine || ro.Kube.Store != StoreKine) {
				t.Errorf("%s %s: conform fixture %q store %q, run fixture %q store %q", backend, target, co.Fixture, co.Store, ro.Fixture, ro.Kube.Store)
			}
			// What conform and run check of these options passes.
			co.Limitations, co.Given = c.limitations(), map[string]string{}
			if target == "kube" {
				co.Limitations = nil
			}
			if _, _, _, err := co.check(); err != nil {
				t.Errorf("%s %s: conform: %v", backend, target, err)
			}
			use, _ := c.certifyFaults(target)
			ro.Faults, ro.Profile = strings.Join(use, ","), "kubernetes"
			if target == "etcd" {
				ro.Limitations = c.limitations()
			}
			if err := ro.Resolve(); err != nil {
				t.Errorf("%s %s: run: %v", backend, target, err)
			}
		}
		use, left := c.certifyFaults("kube")
		db := slices.Contains(use, "kill-database") && slices.Contains(use, "pause-database") && slices.Contains(use, "restart-database")
		switch {
		case !slices.Contains(use, "restart-apiserver") || !slices.Contains(use, "kill-leader") || !slices.Contains(use, "watch-drop"):
			t.Errorf("%s: kube faults %v", backend, use)
		case backend == "sqlite" && (db || !strings.Contains(left["kill-database"], "SQLite")):
			t.Errorf("sqlite: use %v, left %v", use, left)
		case backend == "postgres" && (!db || len(left) != 0):
			t.Errorf("postgres: use %v, left %v", use, left)
		}
		if got := srv.flags("kube"); got != "--target kube --store kine --kine-backend "+backend+" --kine-version "+binaries.DefaultKineVersion {
			t.Errorf("flags %q", got)
		}
		if !strings.Contains(c.server(), "kine "+binaries.DefaultKineVersion+" over "+backend) {
			t.Errorf("server %q", c.server())
		}
	}
	c := DefaultCertifyOptions()
	c.Fixture = "kine"
	if got := c.limitationFlags("etcd"); got != " --limitation none" {
		t.Errorf("no limitation declared: %q", got)
	}
	c.Limitations = []string{"no-versions"}
	if got := c.limitationFlags("etcd") + c.limitationFlags("kube"); got != " --limitation no-versions" {
		t.Errorf("no-versions: %q", got)
	}
}
