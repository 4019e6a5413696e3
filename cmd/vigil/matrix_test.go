package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/vigil-suite/vigil/matrix"
)

// A matrix of two real etcd runs: run part of it, resume it (the finished
// cell is kept), then run the same cells as the pods of an Indexed Job
// would, one process per cell in separate dirs, and merge them into one
// matrix.
func TestMatrixRunResumeMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real etcd clusters")
	}
	dir := t.TempDir()
	spec := filepath.Join(dir, "tiny.yaml")
	os.WriteFile(spec, []byte(`name: tiny
run: {duration: 6s, fault-interval: 2s, watchers: 4, clients: 4}
axes:
  faults: ["", kill-leader]
  members: [1, 2]
  seed: [7]
`), 0o644)
	out := filepath.Join(dir, "m")
	res := vigil(t, 5*time.Minute, "matrix", "run", spec, "--out", out, "--cells", "1")
	if res.code != 0 {
		t.Fatalf("first part: exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
	}
	m := readMatrix(t, filepath.Join(out, "matrix.json"))
	if m.Cells[1].Verdict != "pass" || m.Cells[0].Verdict != matrix.NotRun {
		t.Fatalf("after --cells 1: %s, %s; want not run, pass", m.Cells[0].Verdict, m.Cells[1].Verdict)
	}
	// Ctrl-C while cell 0 runs: the cell stops as a run does, stays
	// undone, and vigil leaves nothing running.
	cmd := exec.Command(vigilBin, "matrix", "run", spec, "--out", out, "--parallel", "1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	runLog := filepath.Join(out, "cells", matrix.CellDir(0), "vigil.log")
	for i := 0; i < 600; i++ {
		if b, _ := os.ReadFile(runLog); strings.Contains(string(b), "cluster up") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code := stopWith(t, cmd, syscall.SIGINT, 2*time.Minute); code != 3 {
		t.Errorf("interrupted: exit %d, want 3", code)
	}
	if c, err := matrix.ReadCell(filepath.Dir(runLog)); err != nil || c.Done() {
		t.Errorf("the interrupted cell 0 counts as done (%v)", err)
	}
	if left := processesUsing(out); len(left) > 0 {
		t.Errorf("still running after the interrupt:\n%s", strings.Join(left, "\n"))
	}

	res = vigil(t, 5*time.Minute, "matrix", "run", spec, "--out", out)
	if res.code != 3 || !strings.Contains(res.stderr, "kept from an earlier run") {
		t.Fatalf("resume: exit %d, want 3 (cells that could not run) with the finished cell kept\n%s%s", res.code, res.stdout, res.stderr)
	}
	m = readMatrix(t, filepath.Join(out, "matrix.json"))
	if m.Counts["pass"] != 2 || m.Counts["error"] != 2 {
		t.Fatalf("after resuming: %v, want 2 pass and 2 error (vigil run refuses --members 2)", m.Counts)
	}
	if c := m.Cells[2]; !strings.Contains(c.Reason, "--members 2") {
		t.Errorf("cell 2's reason does not say why it could not run: %q", c.Reason)
	}
	page, _ := os.ReadFile(filepath.Join(out, "matrix.html"))
	if n := strings.Count(string(page), `<td class="v `); n != 4 || !strings.Contains(string(page), "run/report.html") {
		t.Errorf("matrix.html shows %d cells, want 4 linking to their reports", n)
	}
	if res := vigil(t, time.Minute, "matrix", "run", filepath.Join("..", "..", "docs", "examples", "nightly.yaml"), "--out", out); res.code != 3 ||
		!strings.Contains(res.stderr, "holds another spec") {
		t.Errorf("another spec in the same dir: exit %d, want 3\n%s", res.code, res.stderr)
	}

	// Two pods, two result volumes, then one matrix.
	a, b := filepath.Join(dir, "pod-a"), filepath.Join(dir, "pod-b")
	t.Setenv("JOB_COMPLETION_INDEX", "0")
	if res := vigil(t, 5*time.Minute, "matrix", "cell", "--spec", spec, "--out", a); res.code != 0 {
		t.Fatalf("cell 0: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	t.Setenv("JOB_COMPLETION_INDEX", "")
	if res := vigil(t, 5*time.Minute, "matrix", "cell", "--spec", spec, "--out", b, "--index", "1"); res.code != 0 {
		t.Fatalf("cell 1: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	merged := filepath.Join(dir, "merged")
	res = vigil(t, time.Minute, "matrix", "merge", "--out", merged, a, b)
	if res.code != 0 {
		t.Fatalf("merge: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	m = readMatrix(t, filepath.Join(merged, "matrix.json"))
	for i, c := range m.Cells {
		ran := i < 2
		if ran && (c.Verdict != "pass" || !strings.HasPrefix(c.Dir, "../pod-")) || !ran && c.Verdict != matrix.NotRun {
			t.Errorf("merged cell %d: %s in %q", i, c.Verdict, c.Dir)
		}
	}
	if res := vigil(t, time.Minute, "matrix", "merge", "--out", merged, a, out); res.code != 3 || !strings.Contains(res.stderr, "ran twice") {
		t.Errorf("a cell in two dirs: exit %d, want 3 naming it\n%s", res.code, res.stderr)
	}
}

func readMatrix(t *testing.T, path string) *matrix.Matrix {
	t.Helper()
	m, err := matrix.ReadMatrix(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The objects of --emit kubernetes, for the example nightly spec, are
// accepted as they are by a real kube-apiserver's validation (server-side
// dry run, unknown fields refused).
func TestMatrixEmitKubernetes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	res := vigil(t, time.Minute, "matrix", "run", filepath.Join("..", "..", "docs", "examples", "nightly.yaml"), "--emit", "kubernetes")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	docs := strings.Split(res.stdout, "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("want a ConfigMap and a Job, got %d documents:\n%s", len(docs), res.stdout)
	}
	fx := startKubeServer(t)
	s := fx.Servers()
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(s.CAFile())
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	server := s.Replicas()[0].ClientURL
	for _, c := range []struct{ path, doc string }{
		{"/api/v1/namespaces/default/configmaps", docs[0]},
		{"/apis/batch/v1/namespaces/default/jobs", docs[1]},
	} {
		body, err := yaml.YAMLToJSON([]byte(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, server+c.path+"?dryRun=All&fieldValidation=Strict", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+s.Token())
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("POST %s (dry run): %s\n%s", c.path, resp.Status, answer)
			continue
		}
		var created struct {
			Kind string `json:"kind"`
			Spec struct {
				Completions    int    `json:"completions"`
				CompletionMode string `json:"completionMode"`
			} `json:"spec"`
		}
		json.Unmarshal(answer, &created)
		if created.Kind == "Job" && (created.Spec.Completions != 24 || created.Spec.CompletionMode != "Indexed") {
			t.Errorf("the Job as the server has it: %+v, want 24 Indexed completions", created.Spec)
		}
	}
}
