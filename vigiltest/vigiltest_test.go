package vigiltest_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/suites"
	"github.com/vigil-suite/vigil/vigiltest"
)

// A sabotaged run of the example fails exactly the subtest of the check
// that owns the sabotaged guarantee: duplicate-event, watch/unique. The
// example runs in a child process of this test binary, so that its
// failure is observed rather than inherited.
func TestSabotageFailsOnlyTheOwningSubtest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real etcd")
	}
	if os.Getenv("VIGIL_EXAMPLE_SABOTAGE") != "" {
		t.Skip("inside the child run")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOwnServer$", "-test.v", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), "VIGIL_EXAMPLE_SABOTAGE=duplicate-event")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the sabotaged example passed:\n%s", out)
	}
	var failed, passed []string
	for _, m := range regexp.MustCompile(`--- (FAIL|PASS|SKIP): TestOwnServer/(\S+)`).FindAllStringSubmatch(string(out), -1) {
		if m[1] == "FAIL" {
			failed = append(failed, m[2])
		} else {
			passed = append(passed, m[2])
		}
	}
	if !slices.Equal(failed, []string{"watch/unique"}) || len(passed) < 10 {
		t.Fatalf("failed subtests %v (want only watch/unique), %d others:\n%s", failed, len(passed), out)
	}
}

func TestMatchers(t *testing.T) {
	g := NewWithT(t)
	ok := &suites.Outcome{Results: []check.Result{{Name: "watch/unique", Verdict: check.Pass},
		{Name: "watch/liveness", Verdict: check.Fail, Should: true}, {Name: "watch/bookmarkable", Verdict: check.Skipped}}}
	bad := &suites.Outcome{Results: []check.Result{{Name: "watch/unique", Verdict: check.Fail,
		Violations: []check.Violation{{Message: "watch 3 delivered PUT a at revision 7 twice"}}}}}
	g.Expect(ok).To(vigiltest.Pass())
	g.Expect(bad).NotTo(vigiltest.Pass())
	g.Expect(bad).To(vigiltest.FailCheck("watch/unique"))
	g.Expect(ok).NotTo(vigiltest.FailCheck("watch/unique"))
	g.Expect(vigiltest.Pass().FailureMessage(bad)).To(ContainSubstring("watch 3 delivered PUT a at revision 7 twice"))
	_, err := vigiltest.FailCheck("watch/nope").Match(ok)
	g.Expect(err).To(MatchError(ContainSubstring("no check watch/nope")))
	_, err = vigiltest.Pass().Match("a string")
	g.Expect(err).To(MatchError(ContainSubstring("*suites.Outcome")))
}
