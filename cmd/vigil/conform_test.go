package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// vigil conform as a user runs it: the lists, the flag errors (exit 3,
// naming the flag), and one short run per target that writes its table,
// result.json and junit.xml, leaving no process behind.
func TestConformCLI(t *testing.T) {
	t.Run("lists", func(t *testing.T) {
		etcd := vigil(t, time.Minute, "conform", "--list")
		kube := vigil(t, time.Minute, "conform", "--target", "kube", "--list")
		if etcd.code != 0 || kube.code != 0 {
			t.Fatalf("exit %d / %d\n%s%s", etcd.code, kube.code, etcd.stderr, kube.stderr)
		}
		if n := strings.Count(etcd.stdout, "\n"); n < 80 {
			t.Errorf("%d etcd probes listed", n)
		}
		if n := strings.Count(kube.stdout, "@"); n < 50 {
			t.Errorf("%d Kubernetes probes listed", n)
		}
		if !strings.Contains(kube.stdout, "kube-watch/from-rv@vigilobjects") {
			t.Errorf("the custom resource's probes are not listed:\n%s", kube.stdout)
		}
	})
	t.Run("flag errors", func(t *testing.T) {
		for _, c := range []struct{ args []string }{
			{[]string{"--target", "kube", "--endpoints", "127.0.0.1:2379"}},
			{[]string{"--token", "x"}},
			{[]string{"--target", "kube", "--resource", "pods"}},
			{[]string{"--target", "kube", "--context", "x"}},
			{[]string{"--target", "kube", "--only", "kube-nope/"}},
			{[]string{"--target", "zookeeper"}},
		} {
			res := vigil(t, time.Minute, append([]string{"conform"}, c.args...)...)
			flag := strings.TrimPrefix(c.args[len(c.args)-2], "--")
			if res.code != 3 || !strings.Contains(res.stderr, flag) {
				t.Errorf("vigil conform %v: exit %d, want 3 with a message naming %s:\n%s", c.args, res.code, flag, res.stderr)
			}
		}
	})
	for _, c := range []struct {
		target, only string
		want         int
	}{
		{"etcd", "kv/put-prev-kv,watch/", 25},
		{"kube", "kube-list/paging@,kube-watch/from-rv@configmaps", 3},
	} {
		t.Run(c.target, func(t *testing.T) {
			if testing.Short() {
				t.Skip("starts real servers")
			}
			out := filepath.Join(t.TempDir(), "out")
			res := vigil(t, 5*time.Minute, "conform", "--target", c.target, "--only", c.only, "--out", out)
			if res.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
			}
			if !strings.Contains(res.stdout, "PROBE") || !strings.Contains(res.stdout, " pass, 0 fail, 0 differ") {
				t.Errorf("no verdict table:\n%s", res.stdout)
			}
			junit, err := os.ReadFile(filepath.Join(out, "junit.xml"))
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(junit), "<testcase"); n < c.want {
				t.Errorf("junit.xml has %d testcases, want at least %d", n, c.want)
			}
			if _, err := os.Stat(filepath.Join(out, "result.json")); err != nil {
				t.Error(err)
			}
			assertNothingLeft(t, out)
		})
	}
}
