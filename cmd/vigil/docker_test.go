package main

// vigil run --fixture docker end to end: a chaos run in containers that
// must pass every check and leave nothing in the engine, a killed run that
// `vigil cleanup` clears by label, and the errors a user sees when docker
// mode cannot run.

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	"github.com/vigil-suite/vigil/fixtures/containers"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/internal/longtest"
	"github.com/vigil-suite/vigil/matrix"
)

func needDocker(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs vigil against etcd in Docker")
	}
	if err := containers.Available(context.Background()); err != nil {
		t.Skipf("skipped, not passed: %v", err)
	}
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("skipped, not passed: no docker command to look for leftovers with")
	}
}

// dockerLeftovers lists the containers and networks labelled with the
// run's output dir, as `docker ps -a` and `docker network ls` show them.
func dockerLeftovers(t *testing.T, out string) []string {
	t.Helper()
	abs, _ := filepath.Abs(out)
	var found []string
	for _, c := range [][]string{
		{"docker", "ps", "-a", "--filter", "label=vigil.out=" + abs, "--format", "container {{.Names}} {{.Status}}"},
		{"docker", "network", "ls", "--filter", "label=vigil.out=" + abs, "--format", "network {{.Name}}"},
	} {
		b, err := exec.Command(c[0], c[1:]...).Output()
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l != "" {
				found = append(found, l)
			}
		}
	}
	return found
}

// The default chaos faults in docker: every check passes, every fault was
// injected and healed, and the run's containers and network are gone.
func TestDockerRun(t *testing.T) {
	needDocker(t)
	out := filepath.Join(t.TempDir(), "run")
	res := vigil(t, 5*time.Minute, "run", "--fixture", "docker", "--duration", "30s", "--seed", "11", "--out", out,
		"--faults", "kill-leader,pause-follower,isolate-follower", "--fault-interval", "6s")
	if left := dockerLeftovers(t, out); len(left) > 0 {
		t.Errorf("the run left in docker: %v", left)
	}
	if res.code != 0 {
		t.Fatalf("vigil run --fixture docker exit %d, want 0\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	r := readResult(t, filepath.Join(out, "result.json"))
	if r.Verdict != "pass" || r.Target.Fixture != "docker" {
		t.Fatalf("verdict %s, fixture %q; want pass in docker", r.Verdict, r.Target.Fixture)
	}
	for _, c := range r.Checks {
		// run/server-exit watches the processes vigil runs itself; in
		// docker it has none to watch, and says so.
		if c.Verdict != "pass" && !(c.Name == "run/server-exit" && c.Verdict == "skipped") {
			t.Errorf("check %s: %s", c.Name, c.Verdict)
		}
	}
	h, err := history.Load(history.InDir(out))
	if err != nil {
		t.Fatal(err)
	}
	injected := map[string]int{}
	for _, f := range h.Faults {
		if e := f.Details["error"]; e != "" {
			t.Errorf("fault %s not injected: %s", f.Name, e)
			continue
		}
		if e := f.Details["heal_error"]; e != "" {
			t.Errorf("fault %s not healed: %s", f.Name, e)
		}
		injected[f.Name]++
	}
	for _, name := range []string{"kill-leader", "pause-follower", "isolate-follower"} {
		if injected[name] == 0 {
			t.Errorf("%s was never injected (faults: %v)", name, injected)
		}
	}
	for _, m := range []string{"m0", "m1", "m2"} {
		if st, err := os.Stat(filepath.Join(out, "members", m, "etcd.log")); err != nil || st.Size() == 0 {
			t.Errorf("member log of %s not copied: %v", m, err)
		}
	}
	t.Logf("%d operations, %d watch events, faults %v", r.Stats.Operations, r.Stats.WatchEvents, injected)
}

// startDockerRun starts a docker run of a minute and returns once its
// cluster is up.
func startDockerRun(t *testing.T, out string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(vigilBin, append([]string{"run", "--fixture", "docker", "--duration", "60s", "--seed", "5", "--out", out}, args...)...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	up := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		seen := false
		for sc.Scan() {
			if !seen && strings.Contains(sc.Text(), "cluster up") {
				seen = true
				up <- true
			}
		}
		if !seen {
			up <- false
		}
	}()
	select {
	case ok := <-up:
		if !ok {
			cmd.Wait()
			t.Fatal("vigil exited before the cluster was up")
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the cluster did not come up")
	}
	return cmd
}

// Ctrl-C, a hang-up, SIGQUIT or a reader that goes away (`vigil run 2>&1 |
// head`) during a docker run, at a seeded moment: it heals, stops,
// removes its containers and network, and says the run was interrupted.
func TestDockerInterrupt(t *testing.T) {
	longtest.Skip(t)
	needDocker(t)
	rng := rand.New(rand.NewPCG(2026, 25))
	for _, how := range []string{"SIGINT", "SIGHUP", "SIGQUIT", "closed-pipe"} {
		delay := time.Duration(1000+rng.IntN(4000)) * time.Millisecond
		t.Run(fmt.Sprintf("%s-after-%s", how, delay), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			cmd := exec.Command(vigilBin, "run", "--fixture", "docker", "--duration", "60s", "--seed", "5", "--out", out,
				"--faults", "pause-follower,kill-leader", "--fault-interval", "2s")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdout, cmd.Stderr = w, w
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			sc := bufio.NewScanner(r)
			for sc.Scan() && !strings.Contains(sc.Text(), "cluster up") {
			}
			go func() {
				for sc.Scan() {
				}
			}()
			time.Sleep(delay) // into the faults
			switch how {
			case "SIGINT":
				cmd.Process.Signal(syscall.SIGINT)
			case "SIGHUP":
				cmd.Process.Signal(syscall.SIGHUP)
			case "SIGQUIT":
				cmd.Process.Signal(syscall.SIGQUIT)
			case "closed-pipe":
				r.Close() // vigil's next progress line meets a closed pipe
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(90 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("vigil did not exit within 90s of %s", how)
			}
			r.Close()
			if code := cmd.ProcessState.ExitCode(); code != 3 {
				t.Errorf("exit %d after %s, want 3", code, how)
			}
			if left := dockerLeftovers(t, out); len(left) > 0 {
				t.Fatalf("an interrupted run left in docker: %v", left)
			}
			res := readResult(t, filepath.Join(out, "result.json"))
			if res.Verdict != "error" || !strings.Contains(res.Reason, "interrupted") {
				t.Errorf("result.json: verdict %s, reason %q", res.Verdict, res.Reason)
			}
		})
	}
}

// A SIGKILLed docker run leaves its containers; `vigil cleanup` finds them
// by label and removes them.
func TestDockerKilledRunCleanup(t *testing.T) {
	needDocker(t)
	out := filepath.Join(t.TempDir(), "run")
	cmd := startDockerRun(t, out, "--members", "1")
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if left := dockerLeftovers(t, out); len(left) != 2 {
		t.Fatalf("a SIGKILLed run should leave its container and network, found %v", left)
	}
	res := vigil(t, time.Minute, "cleanup")
	if res.code != 0 {
		t.Fatalf("vigil cleanup exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if left := dockerLeftovers(t, out); len(left) > 0 {
		t.Fatalf("after vigil cleanup, still there: %v\ncleanup said:\n%s", left, res.stdout)
	}
	if !strings.Contains(res.stdout, "removed docker container") {
		t.Errorf("cleanup did not say what it removed:\n%s", res.stdout)
	}
}

// Faults that need vigil's proxy are refused before anything starts.
func TestDockerRefusesProxyFaults(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	res := vigil(t, time.Minute, "run", "--fixture", "docker", "--faults", "kill-leader,latency", "--out", out)
	if res.code != 3 || !strings.Contains(res.stderr, "latency") || !strings.Contains(res.stderr, "proxy") {
		t.Fatalf("exit %d, want 3 naming latency and the proxy\n%s", res.code, res.stderr)
	}
}

// Without an engine, docker mode exits 3 and says so. The engine is hidden
// in a mount namespace of the test's own (root only): the socket's
// directory is covered, and HOME has no docker context.
func TestDockerNoEngine(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped, not passed: hiding the Docker socket needs root (unshare -m)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("skipped, not passed: no unshare")
	}
	out := filepath.Join(t.TempDir(), "run")
	home := t.TempDir()
	script := `mount -t tmpfs none /run && mount -t tmpfs none /var/run 2>/dev/null; exec "$@"`
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
		vigilBin, "run", "--fixture", "docker", "--duration", "5s", "--out", out)
	cmd.Env = append(os.Environ(), "HOME="+home, "DOCKER_HOST=unix:///run/no-docker.sock", "XDG_RUNTIME_DIR="+home)
	b, _ := cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	if code != 3 || !strings.Contains(string(b), "no Docker engine reachable") {
		t.Fatalf("exit %d, want 3 saying no Docker engine is reachable:\n%s", code, b)
	}
	r := readResult(t, filepath.Join(out, "result.json"))
	if r.Verdict != "error" || !strings.Contains(r.Reason, "no Docker engine") {
		t.Errorf("result.json: verdict %s, reason %q", r.Verdict, r.Reason)
	}
}

// The Dockerfile builds vigil's image from the static binary alone, and
// the image runs: it says its version, and refuses an unreachable
// endpoint with a setup error (exit 3), writing its result to /runs.
func TestImage(t *testing.T) {
	longtest.Skip(t)
	needDocker(t)
	ctxDir := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(ctxDir, "vigil"), ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("static build: %v\n%s", err, out)
	}
	df, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), df, 0o644)
	tag := fmt.Sprintf("vigil-test/image:%d", os.Getpid())
	if out, err := exec.Command("docker", "build", "-q", "-t", tag, ctxDir).CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	defer exec.Command("docker", "rmi", "-f", tag).Run()
	out, err := exec.Command("docker", "run", "--rm", tag, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "vigil "+version) {
		t.Fatalf("vigil version in the image: %v\n%s", err, out)
	}
	runs := t.TempDir()
	cmd := exec.Command("docker", "run", "--rm", "--network", "none", "-v", runs+":/runs", tag,
		"run", "--endpoints", "127.0.0.1:1", "--duration", "2s", "--out", "/runs/x")
	out, _ = cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 3 || !strings.Contains(string(out), "127.0.0.1:1") {
		t.Fatalf("an unreachable endpoint: exit %d, want 3\n%s", code, out)
	}
	if r := readResult(t, filepath.Join(runs, "x", "result.json")); !r.SetupFailed {
		t.Errorf("result.json does not say the setup failed: %+v", r)
	}
	t.Run("matrix pod", func(t *testing.T) { testMatrixImage(t, tag) })
}

// The matrix image (Dockerfile.matrix over the image just built) runs a
// cell as a pod of the Indexed Job would: the spec mounted, the index in
// JOB_COMPLETION_INDEX, no network, the result on the results volume.
func testMatrixImage(t *testing.T, base string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: binaries.DefaultEtcdVersion})
	if err != nil {
		t.Fatal(err)
	}
	ctxDir := t.TempDir()
	bins := filepath.Join(ctxDir, "bin")
	os.MkdirAll(bins, 0o755)
	if out, err := exec.Command("cp", "-r", filepath.Dir(bin), bins).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	df, err := os.ReadFile("../../Dockerfile.matrix")
	if err != nil {
		t.Fatal(err)
	}
	df = []byte(strings.Replace(string(df), "FROM vigil:latest", "FROM "+base, 1))
	os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), df, 0o644)
	tag := base + "-matrix"
	if out, err := exec.Command("docker", "build", "-q", "-t", tag, ctxDir).CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	defer exec.Command("docker", "rmi", "-f", tag).Run()
	specDir, results := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(specDir, "matrix.yaml"), []byte("name: pod\nrun: {members: 1, duration: 5s, watchers: 3, etcd-version: "+
		binaries.DefaultEtcdVersion+"}\naxes: {seed: [3, 4]}\n"), 0o644)
	out, err := exec.Command("docker", "run", "--rm", "--network", "none", "-e", "JOB_COMPLETION_INDEX=1",
		"-v", specDir+":/etc/vigil:ro", "-v", results+":/results", tag,
		"matrix", "cell", "--spec", "/etc/vigil/matrix.yaml", "--out", "/results").CombinedOutput()
	if err != nil {
		t.Fatalf("the cell in the container: %v\n%s", err, out)
	}
	c, err := matrix.ReadCell(filepath.Join(results, "cells", matrix.CellDir(1)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != "pass" || c.Label != "seed=4" {
		t.Errorf("cell 1 in the container: %s (%s), want pass (seed=4)\n%s", c.Verdict, c.Label, out)
	}
}
