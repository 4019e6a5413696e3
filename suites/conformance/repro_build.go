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
	return buildRepro(t, name, "main.go", src, "build")
}

// BuildReproductionTest builds a reproduction written as a test file
// (Result.ReproductionTest) as `go test -c` does; the binary runs its test.
func BuildReproductionTest(t testing.TB, name, src string) string {
	t.Helper()
	return buildRepro(t, name, "repro_test.go", src, "test", "-c")
}

// buildReproTests builds test files from ReproductionTest into one test
// binary, as a user keeping several as regression tests would.
func buildReproTests(t testing.TB, srcs []string) string {
	t.Helper()
	files := map[string]string{}
	for i, src := range srcs {
		files[fmt.Sprintf("repro%03d_test.go", i)] = src
	}
	return buildIn(t, "several reproductions", files, "test", "-c")
}

func buildRepro(t testing.TB, name, file, src string, goArgs ...string) string {
	t.Helper()
	return buildIn(t, name, map[string]string{file: src}, goArgs...)
}

func buildIn(t testing.TB, name string, files map[string]string, goArgs ...string) string {
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
	for file, src := range files {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "repro")
	build := exec.Command("go", append(goArgs, "-o", bin, "./"+filepath.Base(dir))...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: the reproduction does not build: %v\n%s", name, err, out)
	}
	return bin
}
