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
		got, out := programExit(t, bin, c.version, 1, func(eps []string) []string {
			return []string{"-endpoint", strings.TrimPrefix(eps[0], "http://")}
		})
		if got != c.exit {
			t.Errorf("against %s: exit %d, want %d\n%s", c.version, got, c.exit, out)
		}
	}
}

// programExit runs a reproduction program against a fresh etcd of the
// release and size given (args turns its endpoints into the program's
// flags), and returns its exit code and output.
func programExit(t *testing.T, bin, version string, members int, args func(endpoints []string) []string) (int, []byte) {
	t.Helper()
	ctx := context.Background()
	eb, err := binaries.Etcd(ctx, binaries.Options{Version: version, Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	srv := etcdproc.New(etcdproc.Config{Binary: eb, Members: members, Dir: filepath.Join(t.TempDir(), version), Version: version})
	defer srv.Stop()
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := srv.Start(sctx); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, args(srv.Endpoints())...).CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out
	}
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	return 0, out
}

// A reduction whose first difference is the target declining a request is
// a refusal, not the difference sought; any other first difference counts.
func TestFirstDiffRefused(t *testing.T) {
	for _, c := range []struct {
		diff string
		want bool
	}{
		{`calls step 1: the target: Txn {} -> error InvalidArgument: etcdserver: unsupported operations in txn request; the reference: Txn {} -> {"succeeded":true}`, true},
		{`calls step 1: the target: DeleteRange {"key":"$/k1"} -> error Unimplemented: delete is not implemented by kine; the reference: DeleteRange {"key":"$/k1"} -> {}`, true},
		{`calls step 1: the target: Put {"key":"$/k5","lease":"lease#1"} -> {"header":{}}; the reference: Put {"key":"$/k5","lease":"lease#1"} -> error NotFound: etcdserver: requested lease not found`, false},
		// The reference's words do not make the target's answer a refusal.
		{`calls step 2: the target: Range {} -> {}; the reference: Range {} -> error Unimplemented: not supported`, false},
	} {
		r := conformance.Result{Diff: []string{c.diff}}
		if got := firstDiffRefused(r); got != c.want {
			t.Errorf("firstDiffRefused(%q) = %v, want %v", c.diff, got, c.want)
		}
	}
	if firstDiffRefused(conformance.Result{}) {
		t.Error("a result without differences counts as refused")
	}
}
