package conformance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The reproduction of a probe is a Go program that builds in a module of
// its own and, run against a real etcd, sends the probe's requests again
// and gets the same kind of answers (here: a watch with the NoDelete
// filter, which exercises keys, revisions and the watch stream).
func TestReproductionBuildsAndReplays(t *testing.T) {
	eps := startEtcd(t, "v3.6.16")
	var probes []EtcdProbe
	for _, p := range EtcdProbes() {
		if p.Name == "watch/filter-nodelete" || p.Name == "lease/revoke-delete-events" || p.Name == "kv/range-old-revision-header" {
			probes = append(probes, p)
		}
	}
	res, err := RunEtcdProbes(context.Background(), EtcdConfig{Endpoints: eps}, probes)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		src := r.Reproduction()
		if !strings.Contains(src, r.Name) || !strings.Contains(src, "package main") {
			t.Fatalf("%s: no program:\n%s", r.Name, src)
		}
		bin := buildRepro(t, i, r.Name, src)
		out, err := exec.Command(bin, "-endpoint", strings.TrimPrefix(eps[0], "http://")).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: the reproduction failed: %v\n%s", r.Name, err, out)
		}
		text := string(out)
		if strings.Contains(text, "-> error") {
			t.Errorf("%s: a replayed request failed:\n%s", r.Name, text)
		}
		switch r.Name {
		case "watch/filter-nodelete":
			if !strings.Contains(text, `"created":true`) || strings.Count(text, `"events":[`) < 2 {
				t.Errorf("the replayed watch did not deliver its events:\n%s", text)
			}
		case "lease/revoke-delete-events":
			if !strings.Contains(text, `"type":"DELETE"`) {
				t.Errorf("revoking the replayed lease sent no DELETE events:\n%s", text)
			}
		}
		t.Logf("%s reproduction:\n%s", r.Name, text)
	}
}

// buildRepro builds a reproduction program in a module directory inside
// this one (a dot dir, which ./... leaves out), so the build uses this
// repository's pinned requirements; it returns the binary.
func buildRepro(t *testing.T, i int, name, src string) string {
	t.Helper()
	wd, _ := os.Getwd()
	dir := filepath.Join(wd, "..", "..", fmt.Sprintf(".repro-test-%d-%d", os.Getpid(), i))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "repro")
	build := exec.Command("go", "build", "-o", bin, "./"+filepath.Base(dir))
	build.Dir = filepath.Dir(dir)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: the reproduction does not build: %v\n%s\n%s", name, err, out, src)
	}
	return bin
}
