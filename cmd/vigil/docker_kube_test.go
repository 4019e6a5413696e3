package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/internal/longtest"
)

// --target kube --fixture docker: etcd and an API server in containers,
// an API server killed and started again; every check passes and nothing
// is left in docker.
func TestDockerKubeRun(t *testing.T) {
	longtest.Skip(t)
	needDocker(t)
	out := filepath.Join(t.TempDir(), "run")
	res := vigil(t, 6*time.Minute, "run", "--target", "kube", "--fixture", "docker", "--members", "1", "--duration", "25s",
		"--seed", "12", "--out", out, "--faults", "kill-apiserver,apiserver-etcd-cut", "--fault-interval", "5s")
	if left := dockerLeftovers(t, out); len(left) > 0 {
		t.Errorf("the run left in docker: %v", left)
	}
	if res.code != 0 {
		t.Fatalf("vigil run --target kube --fixture docker exit %d, want 0\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	r := readResult(t, filepath.Join(out, "result.json"))
	if r.Verdict != "pass" || r.Target.Kind != "kube" || r.Target.Fixture != "docker" {
		t.Fatalf("verdict %s, target %+v; want pass, kube in docker", r.Verdict, r.Target)
	}
	h, err := history.Load(history.InDir(out))
	if err != nil {
		t.Fatal(err)
	}
	injected := map[string]int{}
	for _, f := range h.Faults {
		if e := f.Details["error"] + f.Details["heal_error"]; e != "" {
			t.Errorf("fault %s: %s", f.Name, e)
			continue
		}
		injected[f.Name]++
	}
	if injected["kill-apiserver"] == 0 || injected["apiserver-etcd-cut"] == 0 {
		t.Errorf("faults injected: %v; want kill-apiserver and apiserver-etcd-cut", injected)
	}
	if len(h.KubeOps) < 100 {
		t.Errorf("only %d Kubernetes operations recorded", len(h.KubeOps))
	}
}
