package main

// End-to-end tests of the vigil binary against real etcd processes, as a
// user runs it: exit codes, files written, nothing left running.

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/reports"
)

var vigilBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "vigil-cli-test")
	if err != nil {
		panic(err)
	}
	vigilBin = filepath.Join(dir, "vigil")
	if out, err := exec.Command("go", "build", "-o", vigilBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building vigil: %v\n%s", err, out)
		os.Exit(1)
	}
	flag.Parse()
	if !testing.Short() {
		prebuild()
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// prebuild builds the etcd and kube-apiserver the tests' vigil runs use,
// once, before any test: the tests run vigil with deadlines, and on a fresh
// machine the first kube-apiserver build alone takes minutes. A build that
// fails is reported here; the tests that need it then fail or skip with
// their own reason.
func prebuild() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if _, err := binaries.Etcd(ctx, binaries.Options{Progress: os.Stderr}); err != nil {
		fmt.Fprintf(os.Stderr, "prebuilding etcd for the CLI tests: %v\n", err)
	}
	if _, err := binaries.KubeAPIServer(ctx, binaries.KubeOptions{Progress: os.Stderr}); err != nil {
		fmt.Fprintf(os.Stderr, "prebuilding kube-apiserver for the CLI tests: %v\n", err)
	}
	if _, err := binaries.Kine(ctx, binaries.KineOptions{Progress: os.Stderr}); err != nil {
		fmt.Fprintf(os.Stderr, "prebuilding kine for the CLI tests: %v\n", err)
	}
}

type result struct {
	code           int
	stdout, stderr string
}

func vigil(t *testing.T, timeout time.Duration, args ...string) result {
	t.Helper()
	cmd := exec.Command(vigilBin, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(timeout):
		cmd.Process.Signal(syscall.SIGTERM)
		<-done
		t.Fatalf("vigil %v did not finish within %s\nstderr:\n%s", args, timeout, se.String())
	}
	return result{cmd.ProcessState.ExitCode(), so.String(), se.String()}
}

// stopWith sends sig to cmd, a vigil the test started, and returns its
// exit code once it has exited; the test fails if that takes over within.
func stopWith(t *testing.T, cmd *exec.Cmd, sig os.Signal, within time.Duration) int {
	t.Helper()
	cmd.Process.Signal(sig)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-time.After(within):
		cmd.Process.Kill()
		<-waited
		t.Fatalf("vigil did not exit within %s of %s", within, sig)
	}
	return cmd.ProcessState.ExitCode()
}

// processesUsing lists the pids whose command line mentions dir: the etcd
// members of a run have their data dirs under the run's output dir.
func processesUsing(dir string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(dir)) {
			continue
		}
		found = append(found, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
	}
	return found
}

func assertNothingLeft(t *testing.T, dir string) {
	t.Helper()
	if left := processesUsing(dir); len(left) > 0 {
		for _, p := range left {
			var pid int
			fmt.Sscanf(p, "%d:", &pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("processes of the run are still running:\n%s", strings.Join(left, "\n"))
	}
}

func readResult(t *testing.T, path string) reports.Result {
	t.Helper()
	r, err := reports.ReadJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func verdicts(r reports.Result) map[string]string {
	m := map[string]string{}
	for _, c := range r.Checks {
		m[c.Name] = string(c.Verdict)
	}
	return m
}

// A healthy run passes, and re-checking it offline gives the same verdicts;
// with one watch event removed by hand, the re-check fails and names the
// watch and the missing revision.
func TestRunThenCheck(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	res := vigil(t, 5*time.Minute, "run", "--duration", "8s", "--seed", "11", "--out", out)
	assertNothingLeft(t, out)
	if res.code != 0 {
		t.Fatalf("vigil run exit %d, want 0\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	for _, f := range []string{"result.json", "junit.xml", history.FileFor(history.DefaultFormat), "members/m0/etcd.log"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("run did not write %s: %v", f, err)
		}
	}
	if !strings.Contains(res.stdout, "watch/reliable") || !strings.Contains(res.stdout, "verdict: PASS") {
		t.Errorf("no verdict table on stdout:\n%s", res.stdout)
	}
	if !strings.Contains(res.stderr, "ops") || !strings.Contains(res.stderr, "slowest watcher lag") {
		t.Errorf("no live progress on stderr:\n%s", res.stderr)
	}
	run := readResult(t, filepath.Join(out, "result.json"))
	if run.Verdict != "pass" || run.Seed != 11 || run.Stats.Operations < 500 || run.Stats.WatchEvents < 1000 {
		t.Fatalf("unexpected result: verdict %s seed %d stats %+v", run.Verdict, run.Seed, run.Stats)
	}
	if run.Format != reports.ResultFormat || run.Vigil != version || run.Flags["duration"] != "8s" {
		t.Errorf("result.json: format %d vigil %q flags %v", run.Format, run.Vigil, run.Flags)
	}
	if _, err := os.Stat(filepath.Join(out, "members", "m0", "data")); !os.IsNotExist(err) {
		t.Errorf("a passing run kept its members' data dirs: %v", err)
	}

	chk := vigil(t, 2*time.Minute, "check", out, "--check-timeout", "1m", "--max-unavailable", "30s") // flags after the argument too
	if chk.code != 0 {
		t.Fatalf("vigil check exit %d, want 0\n%s%s", chk.code, chk.stdout, chk.stderr)
	}
	again := readResult(t, filepath.Join(out, "check", "result.json"))
	if fmt.Sprint(verdicts(again)) != fmt.Sprint(verdicts(run)) {
		t.Fatalf("re-check verdicts differ:\nrun   %v\ncheck %v", verdicts(run), verdicts(again))
	}

	// Remove one event from the middle of a watch that saw many.
	bad := filepath.Join(t.TempDir(), "bad")
	os.MkdirAll(bad, 0o755)
	watch, rev := removeOneEvent(t, history.InDir(out), filepath.Join(bad, history.FileName))
	broken := vigil(t, 2*time.Minute, "check", bad)
	if broken.code != 1 {
		t.Fatalf("check of a history missing an event: exit %d, want 1\n%s%s", broken.code, broken.stdout, broken.stderr)
	}
	if !strings.Contains(broken.stdout, "watch/reliable") ||
		!strings.Contains(broken.stdout, fmt.Sprintf("watch %d", watch)) ||
		!strings.Contains(broken.stdout, fmt.Sprintf("revision %d", rev)) {
		t.Fatalf("the report does not name watch %d and revision %d:\n%s", watch, rev, broken.stdout)
	}
}

// removeOneEvent copies a history, dropping the single event of a response
// in the middle of the busiest watch. It returns the watch id and revision.
func removeOneEvent(t *testing.T, from, to string) (int64, int64) {
	t.Helper()
	h, err := history.Load(from)
	if err != nil {
		t.Fatal(err)
	}
	var best *history.WatchStream
	for _, w := range h.Watches {
		if best == nil || len(w.Responses) > len(best.Responses) {
			best = w
		}
	}
	for i := len(best.Responses) / 2; i < len(best.Responses)-1; i++ {
		r := &best.Responses[i]
		if len(r.Events) == 1 {
			rev := r.Events[0].Revision()
			r.Events = nil
			if err := history.Save(to, h); err != nil {
				t.Fatal(err)
			}
			return best.ID, rev
		}
	}
	t.Fatal("no response with a single event in the busiest watch")
	return 0, 0
}

// Ctrl-C, kill -TERM, a hang-up or SIGQUIT in the middle of a run stops
// it cleanly: no etcd process remains, the history and a result saying
// "interrupted" are there. (A closed stdout: TestClosedStdoutLeavesNothing.)
func TestInterruptLeavesNothingRunning(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			cmd := exec.Command(vigilBin, "run", "--duration", "60s", "--out", out)
			stderr, _ := cmd.StderrPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Wait for the workload to be under way.
			sc := bufio.NewScanner(stderr)
			progress := 0
			for sc.Scan() && progress < 2 {
				if strings.Contains(sc.Text(), "ops ") {
					progress++
				}
			}
			if len(processesUsing(out)) == 0 {
				t.Fatal("no etcd process found while the run was going")
			}
			cmd.Process.Signal(sig)
			go func() {
				for sc.Scan() {
				}
			}()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatal("vigil did not exit within 60s of the signal")
			}
			assertNothingLeft(t, out)
			if code := cmd.ProcessState.ExitCode(); code != 3 {
				t.Errorf("exit code %d after %s, want 3", code, sig)
			}
			r := readResult(t, filepath.Join(out, "result.json"))
			if r.Verdict != reports.VerdictError || !strings.Contains(r.Reason, "interrupted") {
				t.Errorf("result after %s: verdict %q reason %q", sig, r.Verdict, r.Reason)
			}
			if _, err := history.Load(history.InDir(out)); err != nil {
				t.Errorf("the partial history does not load: %v", err)
			}
		})
	}
}

// --compress writes the history gzipped, which vigil check reads;
// --keep-data keeps the members' data dirs of a passing run.
func TestCompressAndKeepData(t *testing.T) {
	if testing.Short() {
		t.Skip("runs vigil against real etcd")
	}
	out := filepath.Join(t.TempDir(), "run")
	res := vigil(t, 5*time.Minute, "run", "--duration", "3s", "--members", "1", "--compress", "--keep-data", "--out", out)
	if res.code != 0 {
		t.Fatalf("vigil run exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, history.FileName)); !os.IsNotExist(err) {
		t.Errorf("the plain history is still there: %v", err)
	}
	for _, f := range []string{history.FileName + ".gz", "members/m0/data"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if chk := vigil(t, 2*time.Minute, "check", out); chk.code != 0 || !strings.Contains(chk.stdout, "verdict: PASS") {
		t.Errorf("vigil check of the compressed run: exit %d\n%s%s", chk.code, chk.stdout, chk.stderr)
	}
}

// `vigil run | head -1`: the reader is gone before vigil prints its
// table. vigil still stops everything it started and writes its files.
func TestClosedStdoutLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs vigil against real etcd")
	}
	out := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(vigilBin, "run", "--duration", "3s", "--out", out)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r.Close()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatal("vigil did not exit within 3 minutes")
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Errorf("vigil was killed by %s", ws.Signal())
	}
	assertNothingLeft(t, out)
	readResult(t, filepath.Join(out, "result.json"))
	if _, err := history.Load(history.InDir(out)); err != nil {
		t.Errorf("the history does not load: %v", err)
	}
}

// SIGKILL of vigil cannot be handled; the members die with it (parent-death
// signal).
func TestKilledVigilTakesMembersAlong(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(vigilBin, "run", "--duration", "60s", "--out", out)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "ops ") {
	}
	go func() {
		for sc.Scan() {
		}
	}()
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for len(processesUsing(out)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	assertNothingLeft(t, out)
	// The run's registry entry outlived it; cleanup clears it.
	res := vigil(t, time.Minute, "cleanup")
	if res.code != 0 || !strings.Contains(res.stdout, "interrupted run(s) cleared") {
		t.Fatalf("vigil cleanup: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if strings.Contains(vigil(t, time.Minute, "cleanup").stdout, out) {
		t.Fatal("a second cleanup still finds the killed run")
	}
	if _, err := history.Load(history.InDir(out)); err != nil {
		t.Errorf("the history of a killed run does not load: %v", err)
	}
}

// Members that survive their vigil (here: started by hand, as a stand-in
// for a parent-death signal that did not fire) are found by pid file and
// killed by `vigil cleanup DIR`.
func TestCleanupKillsSurvivors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	member := filepath.Join(out, "members", "m0")
	os.MkdirAll(filepath.Join(member, "data"), 0o755)
	// A process whose command line names the member's data dir, like etcd's.
	// (sh stays as the process that names it; "; :" keeps it from exec'ing sleep.)
	sleeper := exec.Command("sh", "-c", "sleep 300; :", filepath.Join(member, "data"))
	sleeper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sleeper.Start(); err != nil {
		t.Skip("no sleep binary:", err)
	}
	defer sleeper.Process.Kill()
	done := make(chan struct{})
	go func() { sleeper.Wait(); close(done) }()
	os.WriteFile(filepath.Join(member, "pid"), []byte(fmt.Sprintf("%d\n", sleeper.Process.Pid)), 0o644)
	res := vigil(t, time.Minute, "cleanup", out)
	if res.code != 0 || !strings.Contains(res.stdout, fmt.Sprintf("pid %d", sleeper.Process.Pid)) {
		t.Fatalf("cleanup did not report killing pid %d: exit %d\n%s%s", sleeper.Process.Pid, res.code, res.stdout, res.stderr)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the survivor is still running after cleanup")
	}
}

func TestSetupErrorsExit3(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unreachable endpoint", []string{"run", "--endpoints", "127.0.0.1:1"}, "127.0.0.1:1"},
		{"bad member count", []string{"run", "--members", "4"}, "--members 4"},
		{"unknown flag", []string{"run", "--bogus"}, "bogus"},
		{"bad version", []string{"run", "--etcd-version", "latest"}, "latest"},
		{"missing binary", []string{"run", "--etcd-binary", "/nonexistent/etcd"}, "/nonexistent/etcd"},
		{"check of nothing", []string{"check", "/nonexistent/run"}, "does not exist"},
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"bad kube-apiserver version", []string{"build", "kube-apiserver", "1.36"}, "v1.Y.Z"},
		{"unknown build", []string{"build", "frobnicate"}, "kube-apiserver"},
		{"unknown profile", []string{"conform", "--profile", "k8s"}, `--profile "k8s": want one of etcd, kubernetes`},
		{"unknown profile of a run", []string{"run", "--profile", "k8s"}, "want one of etcd, kubernetes"},
		{"unknown limitation", []string{"run", "--limitation", "no-versions", "--limitation", "no-hashes"},
			`--limitation "no-hashes": want one of no-versions, no-size-limit`},
		{"unknown limitation of a conform", []string{"conform", "--limitations", "kine,bogus"}, "want one of no-versions"},
		{"--command with an open quote", []string{"run", "--fixture", "command", "--command", "/bin/sh -c 'exec server --port {client_port} postgres://u:" + secret + "@h/db"},
			"reached EOF without closing quote `'` at column 12"},
		{"--command with a pipeline", []string{"conform", "--fixture", "command", "--command", "server --port {client_port} | tee log"}, "needs a shell"},
		{"--command of a program not on PATH", []string{"certify", "--command", "vigil-no-such-server --port {client_port}"},
			`program "vigil-no-such-server" is not on PATH`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			args := append(c.args, "--out", filepath.Join(t.TempDir(), "out"))
			if c.args[0] != "run" {
				args = c.args
			}
			res := vigil(t, time.Minute, args...)
			if res.code != 3 {
				t.Fatalf("exit %d, want 3\n%s%s", res.code, res.stdout, res.stderr)
			}
			if !strings.Contains(res.stderr, c.want) {
				t.Fatalf("message does not mention %q:\n%s", c.want, res.stderr)
			}
			if strings.Contains(res.stdout+res.stderr, secret) {
				t.Errorf("the message shows the secret:\n%s", res.stderr)
			}
			if c.args[0] == "run" {
				if _, err := os.Stat(filepath.Join(args[len(args)-1], "members")); err == nil {
					t.Error("a server was started")
				}
			}
			if c.name == "unreachable endpoint" && time.Since(start) > 20*time.Second {
				t.Fatalf("took %s to give up on an unreachable endpoint", time.Since(start))
			}
		})
	}
}

func TestCheckCorruptHistory(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, history.FileName), []byte(`{"meta":{"format":1,"vigil":"x","target":{"kind":"etcd","fixture":"process"},"seed":1,"started":"2026-01-01T00:00:00Z","prefix":"/p/"}}`+"\n{oops\n"), 0o644)
	res := vigil(t, time.Minute, "check", dir)
	if res.code != 3 || !strings.Contains(res.stderr, "line 2") {
		t.Fatalf("exit %d, want 3 naming line 2:\n%s", res.code, res.stderr)
	}
}

func TestSabotageList(t *testing.T) {
	res := vigil(t, time.Minute, "sabotage", "list")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	modes := 0
	for _, l := range lines {
		if f := strings.Fields(l); len(f) >= 3 && (strings.HasPrefix(f[1], "kv/") || strings.HasPrefix(f[1], "watch/") ||
			strings.HasPrefix(f[1], "kube/")) && (f[2] == "etcd" || f[2] == "kube") {
			modes++
		}
	}
	if modes < 18 {
		t.Fatalf("%d modes with the check they must trip and their target, want 18:\n%s", modes, res.stdout)
	}
	bad := vigil(t, time.Minute, "run", "--sabotage", "frobnicate", "--out", filepath.Join(t.TempDir(), "x"))
	if bad.code != 3 || !strings.Contains(bad.stderr, "drop-event") {
		t.Fatalf("an unknown mode must be a usage error listing the modes: exit %d\n%s", bad.code, bad.stderr)
	}
}

// TestSelftestCommand: vigil selftest on the saved corpus run (gzipped, as
// it is kept) reports each kind and passes; a mistyped kind and a failing
// history are setup errors that say what to do.
func TestSelftestCommand(t *testing.T) {
	corpus := filepath.Join("..", "..", "checkers", "testdata", "etcd-v3.6.16-faults.jsonl.gz")
	res := vigil(t, 2*time.Minute, "selftest", corpus, "--per-kind", "2", "--only", "drop-event,read-older-value")
	if res.code != 0 || !strings.Contains(res.stdout, "drop-event") || !strings.Contains(res.stdout, "read-older-value") ||
		strings.Contains(res.stdout, "swap-events") || !strings.Contains(res.stdout, "every corruption was caught") {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	bad := vigil(t, time.Minute, "selftest", corpus, "--only", "drop-evnt")
	if bad.code != 3 || !strings.Contains(bad.stderr, "drop-event") {
		t.Fatalf("a mistyped kind: exit %d, want 3 listing the kinds\n%s", bad.code, bad.stderr)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, history.FileName), []byte(`{"meta":{"format":1,"vigil":"x","target":{"kind":"etcd","fixture":"process"},"seed":1,"started":"2026-01-01T00:00:00Z","prefix":"/p/"}}`+"\n"), 0o644)
	empty := vigil(t, time.Minute, "selftest", dir)
	if empty.code != 3 || !strings.Contains(empty.stderr, "nothing to corrupt") {
		t.Fatalf("an empty history proves nothing: exit %d, want 3\n%s%s", empty.code, empty.stdout, empty.stderr)
	}
}
