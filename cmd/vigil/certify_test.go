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
	"github.com/vigil-suite/vigil/launch"
)

// etcdCommand is the --command line of a single etcd member.
func etcdCommand(bin string) string {
	return bin + " --data-dir {data_dir} --listen-client-urls http://127.0.0.1:{client_port}" +
		" --advertise-client-urls http://127.0.0.1:{client_port} --listen-peer-urls http://127.0.0.1:0"
}

// A setup error from the command line: a server that cannot start.
func TestCertifyCLISetupError(t *testing.T) {
	out := filepath.Join(t.TempDir(), "certify")
	res := vigil(t, time.Minute, "certify", "--command", "/nonexistent/etcd --port {client_port}", "--out", out, "--reference", "none")
	if res.code != exitSetup || !strings.Contains(res.stdout, "SETUP ERROR") {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, exitSetup, res.stdout, res.stderr)
	}
	res = vigil(t, time.Minute, "certify")
	if res.code != exitSetup || !strings.Contains(res.stderr, "give one of --command") {
		t.Fatalf("no server: exit %d\n%s", res.code, res.stderr)
	}
}

// One real certify of etcd v3.6.16 started with --command, with short
// phases (8 s runs, no reference: about 2 minutes); `make certify` runs
// the full one.
func TestCertifyEtcdEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	ctx := context.Background()
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: binaries.DefaultEtcdVersion, Progress: os.Stderr})
	if err != nil {
		t.Skipf("etcd cannot be built here: %v", err)
	}
	if _, err := binaries.KubeAPIServer(ctx, binaries.KubeOptions{Progress: os.Stderr}); err != nil {
		t.Skipf("kube-apiserver cannot be built here: %v", err)
	}
	out := filepath.Join(t.TempDir(), "certify")
	res := vigil(t, 10*time.Minute, "certify", "--command", etcdCommand(bin), "--out", out,
		"--duration", "8s", "--fault-interval", "2s", "--seed", "3", "--reference", "none")
	assertNothingLeft(t, out)
	if res.code != exitPass {
		t.Fatalf("exit %d, want 0 (ready)\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"[1/5] etcd API probes", "[2/5] etcd API run with faults (8s)", "[4/5] Kubernetes run", "about"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("no %q in the progress", want)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, launch.CertifyJSON))
	if err != nil {
		t.Fatal(err)
	}
	var c launch.Certificate
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	phases := map[string]int{}
	for _, r := range c.Requirements {
		phases[r.Phase]++
		if r.Verdict != "pass" || r.Evidence == "" || !strings.HasPrefix(r.Repro, "vigil ") {
			t.Errorf("requirement %+v", r)
		}
	}
	if !c.Ready || c.Profile != "kubernetes" || len(c.Phases) != launch.CertifyPhases {
		t.Fatalf("certificate: ready %v, profile %q, %d phases", c.Ready, c.Profile, len(c.Phases))
	}
	// 47 probes of the profile; every Kubernetes probe (90); the checks.
	if phases["etcd-probes"] != 47 || phases["kube-probes"] != 90 || phases["etcd-run"] < 10 || phases["kube-run"] < 3 {
		t.Errorf("requirements per phase: %v", phases)
	}
	for _, f := range []string{launch.CertifyHTML, "junit.xml", "2-etcd-run/report.html", "4-kube-run/report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}
