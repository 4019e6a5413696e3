package launch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/suites/conformance"
)

// vigil reduce on a real run's finding. testdata/v3.6.16-divergence holds
// what a default 30 s run against 3 members of etcd v3.6.16 (seed 11)
// recorded of its first finding: members that parted at revision 86, put
// down to a txn (delete k014, then a range at a future revision) that
// failed on the member asked while the two others applied its delete
// (etcd issue 18667), with the requests and member reads the finding
// cites. Reduce replays them on fresh 3-member clusters, keeps a put of
// k014 and the txn, and writes a program that exits 1 on v3.6.16 and 0
// on v3.7.3.
func TestReduceARunsDivergenceToAProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real etcd clusters")
	}
	dir := t.TempDir()
	for _, f := range []string{"history.jsonl", "result.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "v3.6.16-divergence", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, err := Reduce(context.Background(), ReduceOptions{Dir: dir, Budget: 60})
	if err != nil || code != ExitPass {
		t.Fatalf("exit %d, %v", code, err)
	}
	src, err := os.ReadFile(filepath.Join(dir, "repro-1.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "k014") {
		t.Errorf("the program does not write k014:\n%s", src)
	}
	bin := conformance.BuildReproduction(t, "divergence", string(src))
	for _, c := range []struct {
		version string
		exit    int
	}{{"v3.6.16", 1}, {"v3.7.3", 0}} {
		got, out := programExit(t, bin, c.version, 3, func(eps []string) []string {
			return []string{"-endpoints", strings.Join(eps, ",")}
		})
		if got != c.exit {
			t.Errorf("against %s: exit %d, want %d\n%s", c.version, got, c.exit, out)
		}
	}
}
