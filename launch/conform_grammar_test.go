package launch

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/suites/conformance"
)

// The differential mode between two releases that answer a keys-only
// range differently: etcd v3.6.16 returns the lease of a key it lists
// keys-only, v3.7.3 does not. Sequences drawn from the grammar meet it,
// reduction keeps three requests (a lease grant, a put to it, a keys-only
// range), and the program written from them exits 1 against v3.6.16 and
// 0 against v3.7.3.
func TestGrammarDifferentialReducesToAProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real etcd servers")
	}
	ctx := context.Background()
	o := DefaultConformOptions()
	o.EtcdVersion, o.Reference, o.Grammar, o.GrammarLength, o.Seed = "v3.6.16", "v3.7.3", 2, 80, 7
	o.Out = t.TempDir()
	code, rep, err := conform(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if code != ExitFail || rep == nil {
		t.Fatalf("exit %d, want %d", code, ExitFail)
	}
	var reduced []conformance.Result
	for _, r := range rep.Results {
		if strings.HasSuffix(r.Name, "/reduced") {
			reduced = append(reduced, r)
		}
	}
	if len(reduced) == 0 {
		t.Fatal("no grammar sequence was reduced")
	}
	r := reduced[0]
	if r.Verdict != conformance.Differs || r.ReproFile == "" || len(r.Transcript) > 6 {
		t.Fatalf("%s: %s, %d steps, program %q", r.Name, r.Verdict, len(r.Transcript), r.ReproFile)
	}
	src, err := os.ReadFile(r.ReproFile)
	if err != nil {
		t.Fatal(err)
	}
	bin := conformance.BuildReproduction(t, r.Name, string(src))
	for _, c := range []struct {
		version string
		exit    int
	}{{"v3.6.16", 1}, {"v3.7.3", 0}} {
		eb, err := binaries.Etcd(ctx, binaries.Options{Version: c.version, Progress: os.Stderr})
		if err != nil {
			t.Fatal(err)
		}
		srv := etcdproc.New(etcdproc.Config{Binary: eb, Members: 1, Dir: filepath.Join(t.TempDir(), c.version), Version: c.version})
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		err = srv.Start(sctx)
		cancel()
		if err != nil {
			srv.Stop()
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "-endpoint", strings.TrimPrefix(srv.Endpoints()[0], "http://")).CombinedOutput()
		srv.Stop()
		got := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			got = ee.ExitCode()
		}
		if got != c.exit {
			t.Errorf("against %s: exit %d, want %d\n%s", c.version, got, c.exit, out)
		}
	}
}
