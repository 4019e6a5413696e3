package vigiltest

import (
	"fmt"
	"strings"

	"github.com/onsi/gomega/types"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/suites"
)

// Pass matches a *suites.Outcome whose verdict is pass: every MUST check
// passed, was skipped or met a documented limitation.
//
//	Expect(vigiltest.RunEtcd(t, endpoints, opts)).To(vigiltest.Pass())
func Pass() types.GomegaMatcher { return verdictMatcher{} }

// FailCheck matches a *suites.Outcome in which the check named failed.
//
//	Expect(out).To(vigiltest.FailCheck("watch/reliable"))
func FailCheck(name string) types.GomegaMatcher { return failMatcher{name} }

type verdictMatcher struct{}

func (verdictMatcher) Match(actual any) (bool, error) {
	out, err := outcome(actual)
	if err != nil {
		return false, err
	}
	return check.Overall(out.Results) == check.Pass, nil
}

func (verdictMatcher) FailureMessage(actual any) string {
	out, _ := outcome(actual)
	var bad []string
	for _, r := range out.Results {
		if r.Verdict != check.Pass && r.Verdict != check.Skipped && r.Verdict != check.Documented && !r.Should {
			bad = append(bad, fmt.Sprintf("%s: %s", r.Name, firstLine(r)))
		}
	}
	return fmt.Sprintf("Expected the run to pass; its verdict is %s:\n  %s", check.Overall(out.Results), strings.Join(bad, "\n  "))
}

func (verdictMatcher) NegatedFailureMessage(any) string {
	return "Expected the run not to pass, but it passed"
}

type failMatcher struct{ name string }

func (m failMatcher) Match(actual any) (bool, error) {
	out, err := outcome(actual)
	if err != nil {
		return false, err
	}
	r, ok := result(out, m.name)
	if !ok {
		return false, fmt.Errorf("the run has no check %s", m.name)
	}
	return r.Verdict == check.Fail, nil
}

func (m failMatcher) FailureMessage(actual any) string {
	out, _ := outcome(actual)
	r, _ := result(out, m.name)
	return fmt.Sprintf("Expected %s to fail; it says %s %s", m.name, r.Verdict, r.Reason)
}

func (m failMatcher) NegatedFailureMessage(actual any) string {
	out, _ := outcome(actual)
	r, _ := result(out, m.name)
	return fmt.Sprintf("Expected %s not to fail; it failed: %s", m.name, firstLine(r))
}

func outcome(actual any) (*suites.Outcome, error) {
	out, ok := actual.(*suites.Outcome)
	if !ok || out == nil {
		return nil, fmt.Errorf("vigiltest matchers take the *suites.Outcome of RunEtcd or RunKube, not %T", actual)
	}
	return out, nil
}

func result(out *suites.Outcome, name string) (check.Result, bool) {
	for _, r := range out.Results {
		if r.Name == name {
			return r, true
		}
	}
	return check.Result{}, false
}

// firstLine is a check's reason, or its first violation.
func firstLine(r check.Result) string {
	if len(r.Violations) > 0 {
		return r.Violations[0].Message
	}
	return r.Reason
}
