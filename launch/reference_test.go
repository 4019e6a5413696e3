package launch

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/fixtures/binaries"
)

func TestSameLineNearestFirst(t *testing.T) {
	got := sameLine("v3.4.23")[:4]
	want := []string{"v3.4.24", "v3.4.22", "v3.4.25", "v3.4.21"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("sameLine = %v, want %v", got, want)
	}
	if sameLine("v3.4") != nil || sameLine("main") != nil {
		t.Fatal("a version that is no release has no line")
	}
}

// A reported release the proxy does not serve falls back to the nearest
// of its line that builds, and says so.
func TestReferenceFallsBackToNearestOfLine(t *testing.T) {
	builds := map[string]bool{"v3.4.25": true, "v3.4.21": true}
	var tried []string
	buildEtcd = func(_ context.Context, o binaries.Options) (string, error) {
		tried = append(tried, o.Version)
		if builds[o.Version] {
			return "/bin/etcd-" + o.Version, nil
		}
		return "", errors.New("not on the module proxy")
	}
	cachedEtcd = func(binaries.Options) (string, bool, error) { return "", false, nil }
	defer func() { buildEtcd, cachedEtcd = binaries.Etcd, binaries.Cached }()

	bin, used, note, err := referenceEtcd(context.Background(), "v3.4.23")
	if err != nil || used != "v3.4.25" || bin != "/bin/etcd-v3.4.25" {
		t.Fatalf("referenceEtcd = %q %q %v, want v3.4.25 (tried %v)", bin, used, err, tried)
	}
	if !strings.Contains(note, "reports etcd v3.4.23") || !strings.Contains(note, "v3.4.25") {
		t.Fatalf("note %q does not say what stood in for what", note)
	}
	// The exact release is taken when it builds; a cached neighbour
	// before any build attempt.
	if _, used, note, _ := referenceEtcd(context.Background(), "v3.4.21"); used != "v3.4.21" || note != "" {
		t.Fatalf("exact release: used %q note %q", used, note)
	}
	cachedEtcd = func(o binaries.Options) (string, bool, error) {
		return "/cache/" + o.Version, o.Version == "v3.4.22", nil
	}
	tried = nil
	if bin, used, _, _ := referenceEtcd(context.Background(), "v3.4.23"); used != "v3.4.22" || bin != "/cache/v3.4.22" || len(tried) != 1 {
		t.Fatalf("cached neighbour: %q %q, tried %v", bin, used, tried)
	}
	builds = map[string]bool{}
	if _, _, _, err := referenceEtcd(context.Background(), "v3.5.99"); err == nil {
		t.Fatal("no release of the line builds: want an error")
	}
}
