package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BuildReproduction builds the reproduction program src as a test sees a
// user build it: in a directory at the root of the module under test (a
// dot dir, which ./... leaves out), so the build uses the module's pinned
// requirements. It returns the binary; the directory goes when t ends.
func BuildReproduction(t testing.TB, name, src string) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull { // outside a module, GOMOD is /dev/null
		t.Fatalf("finding the module's root: GOMOD %q, %v", gomod, err)
	}
	root := filepath.Dir(gomod)
	dir, err := os.MkdirTemp(root, fmt.Sprintf(".repro-test-%d-", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "repro")
	build := exec.Command("go", "build", "-o", bin, "./"+filepath.Base(dir))
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: the reproduction does not build: %v\n%s\n%s", name, err, out, src)
	}
	return bin
}
