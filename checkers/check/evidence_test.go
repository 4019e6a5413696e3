package check

import (
	"errors"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/history"
)

// The one verdict rule, case by case: "rule - situation - verdict".
func TestApply(t *testing.T) {
	guarantee := errors.New("x/check: a guarantee")
	c := Check{Name: "x/check", Guarantee: guarantee}
	pass := Result{Name: c.Name, Verdict: Pass, Violations: []Violation{}}
	skipped := Result{Name: c.Name, Verdict: Skipped, Reason: "nothing to judge", Violations: []Violation{}}
	failed := Result{Name: c.Name, Verdict: Fail, Violations: []Violation{{Guarantee: guarantee, Message: "broke"}}}
	cases := []struct {
		name   string
		r      Result
		e      Evidence
		want   Verdict
		reason string // a substring of the reason
		added  bool   // a violation of the rule's own was added
	}{
		{"not asked - a pass - skipped with why", pass, Evidence{Request: "progress request", Why: "no watch asked"}, Skipped, "no watch asked", false},
		{"not asked - no why given - skipped naming the request", pass, Evidence{Request: "progress request"}, Skipped, "sent no progress request", false},
		{"not asked - violations anyway - fail stands", failed, Evidence{Request: "watch"}, Fail, "", false},
		{"asked, none answered, owed - a pass - fail", pass, Evidence{Request: "progress request", Answer: "progress notification", Asked: 500, Owed: 480, Ignored: 480, Unanswered: []int64{1, 2}, Records: RecordCalls}, Fail, "", true},
		{"asked, none answered, owed - skipped - fail", skipped, Evidence{Request: "progress request", Asked: 5, Owed: 5}, Fail, "", true},
		{"asked, none answered, none owed - a pass - unknown", pass, Evidence{Request: "watch", Answer: "event", Asked: 3}, Unknown, "none was owed", false},
		{"asked, none answered, none owed - skipped - unknown", skipped, Evidence{Request: "watch", Answer: "event", Asked: 3}, Unknown, "answered none", false},
		{"answered - a pass - pass", pass, Evidence{Request: "watch", Asked: 3, Answered: 1, Owed: 3, Ignored: 2}, Pass, "", false},
		{"answered - judged nothing - unknown, not skipped", skipped, Evidence{Request: "watch", Asked: 3, Answered: 3}, Unknown, "run longer", false},
		{"answered - violations - fail stands", failed, Evidence{Request: "watch", Asked: 3, Answered: 3}, Fail, "", false},
		{"legacy - judged nothing - skipped stands", skipped, Evidence{Request: "progress request", Legacy: true}, Skipped, "nothing to judge", false},
		{"documented limitation - asked, none answered - stands", Result{Verdict: Documented, Reason: "no versions"}, Evidence{Request: "watch", Asked: 2, Owed: 2}, Documented, "no versions", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(tc.r.Violations)
			got := Apply(c, tc.r, tc.e)
			if got.Verdict != tc.want {
				t.Fatalf("verdict %s (%s), want %s", got.Verdict, got.Reason, tc.want)
			}
			if !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("reason %q lacks %q", got.Reason, tc.reason)
			}
			if got.Evidence == nil || got.Evidence.Asked != tc.e.Asked {
				t.Errorf("evidence not attached: %+v", got.Evidence)
			}
			if added := len(got.Violations) - before; (added == 1) != tc.added {
				t.Fatalf("%d violations added, want added=%v", added, tc.added)
			}
			if tc.added {
				v := got.Violations[len(got.Violations)-1]
				if !errors.Is(v, guarantee) {
					t.Errorf("the rule's violation does not wrap the check's guarantee")
				}
				if len(tc.e.Unanswered) > 0 && len(v.Calls) != len(tc.e.Unanswered) {
					t.Errorf("the violation cites calls %v, want the unanswered %v", v.Calls, tc.e.Unanswered)
				}
			}
		})
	}
}

// A check without a declared evidence keeps its verdict; with one, Run
// applies the rule.
func TestRunAppliesEvidence(t *testing.T) {
	c := Check{Name: "x/check", Run: func(*history.History, Config) Result { return Result{Verdict: Pass} },
		Evidence: func(*history.History) Evidence { return Evidence{Request: "watch"} }}
	if r := Run(c, history.New(history.Meta{}), DefaultConfig()); r.Verdict != Skipped || r.Evidence == nil {
		t.Fatalf("verdict %s evidence %v, want skipped with evidence", r.Verdict, r.Evidence)
	}
}

// TestApplyRefusal: a check that says skipped because the target refused
// what it needs keeps its verdict and reason when its evidence counts the
// requests as refused and none answered; refusals do not excuse owed
// requests the target left unanswered, and a skip without refusals is
// still unknown once the run asked.
func TestApplyRefusal(t *testing.T) {
	c := Check{Name: "x/y", Guarantee: Guarantee("x/y", "z")}
	skip := func() Result { return Skip("x/y", "the server does not support it: 422 \"forbidden\"", nil) }
	for _, tc := range []struct {
		name string
		e    Evidence
		want Verdict
	}{
		{"all refused", Evidence{Asked: 3, Refused: 3}, Skipped},
		{"refused and an owed one ignored", Evidence{Asked: 3, Refused: 2, Owed: 1, Ignored: 1}, Fail},
		{"asked, none answered, none refused", Evidence{Asked: 3}, Unknown},
	} {
		r := Apply(c, skip(), tc.e)
		if r.Verdict != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, r.Verdict, r.Reason, tc.want)
		}
		if tc.want == Skipped && r.Reason != skip().Reason {
			t.Errorf("%s: reason %q, want the check's", tc.name, r.Reason)
		}
	}
}
