package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/availability"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/launch"
	"github.com/vigil-suite/vigil/reports"
)

// crashCommand is the --command line of a single etcd member that
// testdata/crash.sh makes die as how says (SEGV:3, panic:30), when an
// argument holds only ("-": always).
func crashCommand(t *testing.T, how, only, bin string) string {
	t.Helper()
	script, err := filepath.Abs("testdata/crash.sh")
	if err != nil {
		t.Fatal(err)
	}
	return script + " " + how + " " + only + " " + bin + " --data-dir {data_dir} --listen-client-urls http://127.0.0.1:{client_port}" +
		" --advertise-client-urls http://127.0.0.1:{client_port} --listen-peer-urls http://127.0.0.1:0"
}

// A server that dies mid-run fails the run with a finding of its own,
// said on the progress line as it happens: a real etcd member sent
// SIGSEGV from outside (the Go runtime dumps its goroutines and exits 2),
// and a real etcd of a failpoint build made to panic at a backend commit.
// No fault of the (empty) schedule would start it again, so the workload
// stops there rather than wait for answers that cannot come.
func TestServerDeathFailsTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd")
	}
	ctx := context.Background()
	etcd, err := binaries.Etcd(ctx, binaries.Options{Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	fp, err := binaries.Etcd(ctx, binaries.Options{Failpoints: true, Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, how, bin string
		crash          string // the crash's first line begins so (etcd v3.7 adds the panic it raises again)
		// frame is in its quoted frames. A signal sent from outside stops
		// whichever goroutine runs at that instant, so only a frame's
		// file is sure; a panic's own frames are.
		frame string
	}{
		{name: "SIGSEGV", how: "SEGV:3", bin: etcd, crash: "SIGSEGV: segmentation violation", frame: ".go:"},
		{name: "panic", how: "panic:30", bin: fp, crash: "panic: failpoint panic: vigil", frame: "gofail"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			res := vigil(t, 3*time.Minute, "run", "--fixture", "command", "--command", crashCommand(t, c.how, "-", c.bin),
				"--duration", "20s", "--seed", "5", "--out", out)
			assertNothingLeft(t, out)
			if res.code != exitFail {
				t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
			}
			for _, want := range []string{"] server-0 (pid ", " without vigil stopping it: " + c.crash,
				"its log: members/server-0/log", "no fault of the schedule starts server-0 again: the workload stops here"} {
				if !strings.Contains(res.stderr, want) {
					t.Errorf("the progress lacks %q:\n%s", want, res.stderr)
				}
			}
			for _, want := range []string{"run/server-exit [liveness]: 1 violation(s) like", ", and vigil did not stop it: " + c.crash,
				"       | " + c.crash, c.frame, "no fault of the schedule starts it again: the workload stopped there"} {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("the verdict lacks %q:\n%s", want, res.stdout)
				}
			}
			r := readResult(t, filepath.Join(out, "result.json"))
			if verdicts(r)[availability.NameServerExit] != "fail" || r.DurationS > 15 || r.StoppedEarly == "" {
				t.Errorf("run/server-exit %s; the workload ran %.1fs of 20s, stopped early: %q", verdicts(r)[availability.NameServerExit], r.DurationS, r.StoppedEarly)
			}
			i := slices.IndexFunc(r.Findings, func(f reports.Finding) bool { return f.Check == availability.NameServerExit })
			if i < 0 {
				t.Fatalf("no run/server-exit finding: %+v", r.Findings)
			}
			w := r.Findings[i].Witness
			if len(w.Log) == 0 || !strings.HasPrefix(w.Log[0], c.crash) || w.Span == nil || len(w.Operations) == 0 {
				t.Errorf("witness: log %q, span %v, in flight %v", w.Log, w.Span, w.Operations)
			}
			h, err := history.Load(history.InDir(out))
			if err != nil {
				t.Fatal(err)
			}
			if len(h.ServerExits) != 1 || !slices.Equal(h.Meta.Processes, []string{"server-0"}) {
				t.Fatalf("exits %+v of processes %v", h.ServerExits, h.Meta.Processes)
			}
			x := h.ServerExits[0]
			if x.Process != "server-0" || x.Code != 2 || x.Crash == nil || !strings.HasPrefix(x.Crash.Message, c.crash) || x.Expected != "" ||
				x.LogFile != "members/server-0/log" {
				t.Errorf("exit record %+v", x)
			}
		})
	}
}

// Certify names the death too: a server that dies in the etcd API run
// (and only there: crash.sh looks for the phase's dir in its arguments)
// is not ready, its etcd-run/run/server-exit requirement failing with the
// exit and the crash quoted, and a repro that runs the phase again.
func TestCertifyServerDeath(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	etcd, err := binaries.Etcd(context.Background(), binaries.Options{Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	out, res := shortCertify(t, "--command", crashCommand(t, "SEGV:3", "2-etcd-run", etcd))
	if res.code != exitFail {
		t.Fatalf("exit %d, want 1 (not ready)\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	c := readCertificate(t, out)
	var req *launch.Requirement
	for i, r := range c.Requirements {
		if r.Name == "etcd-run/"+availability.NameServerExit {
			req = &c.Requirements[i]
		}
		if r.Verdict == "fail" && r.Phase != "etcd-run" {
			t.Errorf("%s fails outside the phase the server died in: %s", r.Name, r.Witness)
		}
	}
	if req == nil || req.Verdict != "fail" {
		t.Fatalf("etcd-run/run/server-exit: %+v", req)
	}
	for _, want := range []string{"server-0 exited with code 2 at t=", "SIGSEGV: segmentation violation", "goroutine "} {
		if !strings.Contains(req.Witness, want) {
			t.Errorf("the witness lacks %q:\n%s", want, req.Witness)
		}
	}
	if !strings.Contains(req.Repro, "vigil run --fixture command --command") || !strings.Contains(req.Repro, "--seed 3") {
		t.Errorf("repro %q", req.Repro)
	}
	if !strings.Contains(res.stdout, "etcd-run/run/server-exit") {
		t.Errorf("the verdict does not name the requirement:\n%s", res.stdout)
	}
}

func readCertificate(t *testing.T, out string) launch.Certificate {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, launch.CertifyJSON))
	if err != nil {
		t.Fatal(err)
	}
	var c launch.Certificate
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}
