package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/fixtures/pki"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/internal/redact"
)

// vigil's own 3-member cluster with TLS on client and peer links, client
// certificates required and auth on: vigil reaches it with --cacert,
// --cert, --key, --user and --password (or etcdctl's environment
// variables, as <out>/tls/etcdctl.env exports them) and the run passes;
// the wrong CA or the wrong password is a setup error (exit 3) that names
// what to check, and no password is written to the run's files.
func TestTLSAndAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real etcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: binaries.DefaultEtcdVersion})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cluster := etcdproc.New(etcdproc.Config{Binary: bin, Members: 3, Dir: filepath.Join(dir, "cluster"), TLS: true, Auth: true})
	t.Cleanup(func() { cluster.Stop() })
	if err := cluster.Start(ctx); err != nil {
		t.Fatal(err)
	}
	sec := cluster.Security()
	stranger, err := pki.Generate(filepath.Join(dir, "other-ca"), nil)
	if err != nil {
		t.Fatal(err)
	}
	env := readEnvFile(t, filepath.Join(dir, "cluster", "tls", etcdproc.EnvFile))
	if env["ETCDCTL_PASSWORD"] != sec.Password || env["ETCDCTL_CACERT"] != sec.CACert || env["ETCDCTL_USER"] != "root" {
		t.Fatalf("%s does not say how to reach the cluster: %v", etcdproc.EnvFile, env)
	}
	certs := []string{"--cacert", sec.CACert, "--cert", sec.Cert, "--key", sec.Key}

	endpoint := strings.TrimPrefix(cluster.Endpoints()[0], "https://")
	t.Run("right CA and password", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "run")
		res := vigil(t, 5*time.Minute, append(certs, "run", "--endpoints", strings.Join(cluster.Endpoints(), ","), "--user", "root",
			"--password", sec.Password, "--duration", "5s", "--out", out)...)
		if res.code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
		}
		r := readResult(t, filepath.Join(out, "result.json"))
		if r.Flags["password"] != redact.Mark {
			t.Errorf("result.json keeps the password: %v", r.Flags)
		}
	})
	t.Run("conformance probes", func(t *testing.T) {
		res := vigil(t, 5*time.Minute, append(certs, "conform", "--endpoints", endpoint, "--user", "root", "--password", sec.Password,
			"--reference", "none", "--only", "watch/", "--out", filepath.Join(t.TempDir(), "conform"))...)
		if res.code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
		}
	})
	// kube-apiserver over the cluster (--store endpoints): it reaches etcd
	// with the CA and the client certificate (whose name, root, etcd's
	// auth takes for the user), and the Kubernetes run passes. With
	// --user it is refused: kube-apiserver has no etcd password.
	t.Run("kube-apiserver over it", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "run")
		res := vigil(t, 6*time.Minute, append(certs, "run", "--target", "kube", "--store", "endpoints", "--endpoints", endpoint,
			"--duration", "5s", "--out", out)...)
		if res.code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
		}
		log, _ := os.ReadFile(filepath.Join(out, "apiservers", "kube-0", "kube-apiserver.log"))
		if !strings.Contains(string(log), "--etcd-cafile="+sec.CACert) {
			t.Errorf("kube-apiserver was not given the CA of the store's certificate:\n%.600s", log)
		}
		// The Kubernetes probes through it: the probes' compactions reach
		// the store over TLS too.
		conformOut := filepath.Join(t.TempDir(), "conform")
		res = vigil(t, 6*time.Minute, append(certs, "conform", "--target", "kube", "--store", "endpoints", "--endpoints", endpoint,
			"--reference", "none", "--only", "kube-list/", "--out", conformOut)...)
		if res.code != 0 {
			t.Fatalf("conform through kube-apiserver over the TLS store: exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
		}
		var rep struct {
			Counts map[string]int `json:"counts"`
		}
		if b, err := os.ReadFile(filepath.Join(conformOut, "result.json")); err != nil || json.Unmarshal(b, &rep) != nil || rep.Counts["pass"] == 0 {
			t.Errorf("no Kubernetes probe passed through kube-apiserver over the TLS store: %v %v", rep.Counts, err)
		}
		res = vigil(t, time.Minute, append(certs, "run", "--target", "kube", "--store", "endpoints", "--endpoints", endpoint,
			"--user", "root", "--password", sec.Password, "--duration", "5s", "--out", filepath.Join(t.TempDir(), "run"))...)
		if res.code != 3 || !strings.Contains(res.stderr, "kube-apiserver has no etcd user and password") {
			t.Fatalf("with --user: exit %d, want 3 and why\n%s%s", res.code, res.stdout, res.stderr)
		}
	})
	t.Run("etcdctl's environment variables", func(t *testing.T) {
		for k, v := range env {
			t.Setenv(k, v)
		}
		t.Setenv("ETCDCTL_PASSWORD", "")
		t.Setenv("ETCDCTL_USER", "root:"+sec.Password)
		res := vigil(t, 5*time.Minute, "run", "--endpoints", env["ETCDCTL_ENDPOINTS"], "--duration", "3s", "--out", filepath.Join(t.TempDir(), "run"))
		if res.code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
		}
	})
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"wrong CA", []string{"--cacert", stranger.CA, "--cert", sec.Cert, "--key", sec.Key, "--user", "root", "--password", sec.Password}, "check --cacert"},
		{"wrong password", append(certs, "--user", "root", "--password", "nope"), "check --user and --password"},
		{"no client certificate", []string{"--cacert", sec.CACert, "--user", "root", "--password", sec.Password}, "give --cert and --key"},
		{"plain http to a TLS port", []string{"--endpoints", "http://" + endpoint}, "speaks TLS: give it as https://"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "--endpoints", endpoint, "--duration", "3s", "--out", filepath.Join(t.TempDir(), "run")}, c.args...)
			res := vigil(t, 2*time.Minute, args...)
			if res.code != 3 || !strings.Contains(res.stderr, c.want) {
				t.Fatalf("exit %d, want 3 and %q\n%s%s", res.code, c.want, res.stdout, res.stderr)
			}
		})
	}
}

// readEnvFile reads the export lines of an etcdctl.env.
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			t.Fatalf("%s: %q is not an export", path, line)
		}
		env[k] = strings.Trim(v, "'")
	}
	return env
}

// vigil run --tls --auth: the whole run, faults included, over TLS with
// auth on (as root, partitions through network namespaces; else the
// client-link faults of the proxies) passes, and its history names https
// endpoints. With peer-link faults on the proxies it is refused: they
// cannot tell which member opened a TLS connection.
func TestRunOwnClusterOverTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real etcd")
	}
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"run", "--tls", "--auth", "--members", "3", "--duration", "15s", "--fault-interval", "3s", "--out", out, "--seed", "3"}
	if os.Geteuid() == 0 {
		args = append(args, "--net", "netns", "--faults", "isolate-leader,kill-follower,restart-leader,member-replace")
	} else {
		args = append(args, "--faults", "watch-drop,client-reset,kill-leader,member-replace")
	}
	res := vigil(t, 8*time.Minute, args...)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
	}
	h, err := history.Load(history.InDir(out))
	if err != nil {
		t.Fatal(err)
	}
	if eps := h.Meta.Target.Endpoints; len(eps) != 3 || !strings.HasPrefix(eps[0], "https://") {
		t.Errorf("the history's endpoints are not TLS: %v", eps)
	}
	injected := 0
	for _, f := range h.Faults {
		if e := f.Details["error"] + f.Details["heal_error"]; e != "" {
			t.Errorf("fault %s: %s", f.Name, e)
		}
		injected++
	}
	if injected < 3 {
		t.Errorf("%d faults injected, want at least 3\n%s", injected, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "tls", etcdproc.EnvFile)); err != nil {
		t.Error(err)
	}

	res = vigil(t, time.Minute, "run", "--tls", "--faults", "latency", "--duration", "20s", "--out", filepath.Join(t.TempDir(), "run"))
	if res.code != 3 || !strings.Contains(res.stderr, "need --net netns") {
		t.Errorf("peer-link faults over TLS on the proxies: exit %d, want 3 naming --net netns\n%s", res.code, res.stderr)
	}
}
