package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/fixtures/kubeapiserver"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/reports"
)

// vigil run --target kube refuses what it cannot do, with exit 3 and a
// message naming the flag, before it builds or starts anything; a server
// that is not there fails fast, by name, and leaves a result.json saying why.
func TestKubeRunFlagErrors(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\ncurrent-context: none\n"), 0o600)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown target", []string{"--target", "k8s"}, "want etcd or kube"},
		{"three replicas", []string{"--target", "kube", "--apiservers", "3"}, "--apiservers 3: want 1 or 2"},
		{"external without a server", []string{"--target", "kube", "--fixture", "external"}, "needs --server URL"},
		{"server without a CA", []string{"--target", "kube", "--server", "https://127.0.0.1:6443", "--token", "t"}, "--ca-file"},
		{"server that is no URL", []string{"--target", "kube", "--server", "127.0.0.1:6443"}, "want a URL"},
		{"etcd endpoints", []string{"--target", "kube", "--endpoints", "127.0.0.1:2379"}, "--endpoints names etcd members"},
		{"token for our own servers", []string{"--target", "kube", "--token", "t"}, "for --fixture external"},
		{"server and kubeconfig", []string{"--target", "kube", "--server", "https://a:1", "--insecure-skip-tls-verify", "--kubeconfig", kc}, "--server excludes --kubeconfig"},
		{"kubeconfig without the context", []string{"--target", "kube", "--kubeconfig", kc}, "context was not found for specified context: none"},
		{"missing kubeconfig", []string{"--target", "kube", "--kubeconfig", "/nonexistent/kubeconfig"}, "/nonexistent/kubeconfig"},
		{"etcd sabotage", []string{"--target", "kube", "--sabotage", "drop-event"}, "not a mode of --target kube"},
		{"fixture options on an external server", []string{"--target", "kube", "--server", "https://a:1", "--insecure-skip-tls-verify", "--watch-cache=false"}, "not with --fixture external"},
		{"docker with a proxy fault", []string{"--target", "kube", "--fixture", "docker", "--faults", "latency"}, "needs vigil's TCP proxy"},
		{"unreachable server", []string{"--target", "kube", "--server", "https://127.0.0.1:1", "--insecure-skip-tls-verify"}, "127.0.0.1:1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			out := filepath.Join(t.TempDir(), "out")
			res := vigil(t, time.Minute, append(append([]string{"run"}, c.args...), "--out", out)...)
			if res.code != 3 {
				t.Fatalf("exit %d, want 3\n%s%s", res.code, res.stdout, res.stderr)
			}
			if !strings.Contains(res.stderr, c.want) {
				t.Fatalf("message does not mention %q:\n%s", c.want, res.stderr)
			}
			if c.name == "unreachable server" {
				if time.Since(start) > 20*time.Second {
					t.Fatalf("took %s to give up on an unreachable server", time.Since(start))
				}
				r, err := reports.ReadJSON(filepath.Join(out, "result.json"))
				if err != nil || r.Verdict != reports.VerdictError || r.Target.Kind != "kube" || !strings.Contains(r.Reason, "127.0.0.1:1") {
					t.Fatalf("result.json should give the reason: %+v %v", r, err)
				}
			}
		})
	}
}

// vigil run --target kube end to end, as a user runs it: with the API
// servers vigil starts (and nothing of them left afterwards), against a
// server it does not own named by a kubeconfig, and interrupted midway.
func TestKubeRunEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	if _, ok, _ := binaries.KubeCached(binaries.KubeOptions{}); !ok {
		// Build it once here, not inside a vigil run with a deadline.
		if _, err := binaries.KubeAPIServer(context.Background(), binaries.KubeOptions{Progress: os.Stderr}); err != nil {
			t.Skipf("kube-apiserver %s cannot be built here: %v", binaries.DefaultKubeVersion, err)
		}
	}

	t.Run("process", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "run")
		res := vigil(t, 5*time.Minute, "run", "--target", "kube", "--members", "1", "--duration", "8s", "--seed", "21", "--out", out)
		assertNothingLeft(t, out)
		if res.code != 0 {
			t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
		}
		for _, f := range []string{"result.json", "junit.xml", history.FileFor(history.DefaultFormat), "apiservers/kube-0/kube-apiserver.log", "members/m0/etcd.log"} {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Errorf("run did not write %s: %v", f, err)
			}
		}
		if !strings.Contains(res.stderr, "410s") {
			t.Errorf("no progress on stderr:\n%s", res.stderr)
		}
		if !strings.Contains(res.stdout, "kube calls:") || !strings.Contains(res.stdout, "relists") {
			t.Errorf("no figures under the verdict table:\n%s", res.stdout)
		}
		r := readResult(t, filepath.Join(out, "result.json"))
		if r.Verdict != "pass" || r.Target.Kind != "kube" || r.Target.Fixture != "process" || r.Target.Version != binaries.DefaultKubeVersion {
			t.Fatalf("unexpected result: %s %+v", r.Verdict, r.Target)
		}
	})

	t.Run("external kubeconfig", func(t *testing.T) {
		fx := startKubeServer(t)
		out := filepath.Join(t.TempDir(), "run")
		res := vigil(t, 3*time.Minute, "run", "--target", "kube", "--kubeconfig", fx.Servers().Kubeconfig(), "--duration", "6s", "--out", out)
		if res.code != 0 {
			t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
		}
		r := readResult(t, filepath.Join(out, "result.json"))
		if r.Verdict != "pass" || r.Target.Fixture != "external" || r.Target.Version != binaries.DefaultKubeVersion {
			t.Fatalf("unexpected result: %s %+v", r.Verdict, r.Target)
		}
		h, err := history.Load(history.InDir(out))
		if err != nil {
			t.Fatal(err)
		}
		if len(h.KubeOps) < 200 || len(h.Operations) != 0 || len(h.Watches) != 0 {
			t.Fatalf("an external server's run has %d kube calls (want many) and %d etcd calls, %d etcd watches (want none)",
				len(h.KubeOps), len(h.Operations), len(h.Watches))
		}
	})

	t.Run("interrupted", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "run")
		cmd := exec.Command(vigilBin, "run", "--target", "kube", "--members", "1", "--duration", "60s", "--out", out)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Once the workload writes its history, let it run a moment.
		deadline := time.Now().Add(3 * time.Minute)
		for time.Now().Before(deadline) {
			if st, err := os.Stat(history.InDir(out)); err == nil && st.Size() > 2000 { // compressed: ~30 KB of records
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		time.Sleep(2 * time.Second)
		if code := stopWith(t, cmd, syscall.SIGINT, 2*time.Minute); code != 3 {
			t.Fatalf("exit %d after SIGINT, want 3", code)
		}
		assertNothingLeft(t, out)
		if r := readResult(t, filepath.Join(out, "result.json")); r.Verdict != reports.VerdictError || !strings.Contains(r.Reason, "interrupted") {
			t.Fatalf("result after SIGINT: %s %q", r.Verdict, r.Reason)
		}
	})
}

// startKubeServer starts one kube-apiserver over one etcd member, for the
// tests of a Kubernetes API server vigil only connects to; it is stopped
// after the test.
func startKubeServer(t *testing.T) *kubeapiserver.Fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	etcdBin, err := binaries.Etcd(ctx, binaries.Options{Version: binaries.DefaultEtcdVersion})
	if err != nil {
		t.Fatal(err)
	}
	kubeBin, err := binaries.KubeAPIServer(ctx, binaries.KubeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fx := kubeapiserver.NewFixture(kubeapiserver.FixtureConfig{Dir: t.TempDir(),
		Etcd:       etcdproc.Config{Binary: etcdBin, Members: 1, Version: binaries.DefaultEtcdVersion},
		APIServers: kubeapiserver.Config{Binary: kubeBin, Replicas: 1}})
	t.Cleanup(func() { fx.Stop() })
	if err := fx.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return fx
}
