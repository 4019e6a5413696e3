package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/history"
)

// A server that dies mid-run and never comes back fails the run, saying
// since when it was unavailable: the run against a single etcd member
// started by hand, killed 4 s into a 10 s workload, exits 1 with
// run/availability failed, where it used to read green.
func TestDeadServerFailsTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real etcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := binaries.Etcd(ctx, binaries.Options{Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	c := etcdproc.New(etcdproc.Config{Binary: bin, Members: 1, Dir: t.TempDir()})
	t.Cleanup(func() { c.Stop() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(4*time.Second, func() { c.Kill("m0") })
	out := filepath.Join(t.TempDir(), "out")
	res := vigil(t, 4*time.Minute, "run", "--endpoints", strings.TrimPrefix(c.Endpoints()[0], "http://"),
		"--duration", "10s", "--watch-bound", "2s", "--out", out)
	if res.code != 1 {
		t.Fatalf("exit %d, want 1 (fail)\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "run/availability") || !strings.Contains(res.stdout, "unavailable since t=") {
		t.Errorf("the verdict does not say the server became unavailable:\n%s", res.stdout)
	}
	if _, err := os.Stat(history.InDir(out)); err != nil {
		t.Errorf("the failed run kept no history: %v", err)
	}
}
