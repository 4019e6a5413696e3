package check

import "testing"

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
