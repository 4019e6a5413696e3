package reports

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

func TestSignature(t *testing.T) {
	same := [][2]string{
		{`client 3's range 17 on k001 reported header revision 40, but operation 12 (client 4, put(k002) @41) had returned header revision 41 before it was called (at 1.5s, returned at 1.2s)`,
			`client 9's range 2207 on k013 reported header revision 1800, but operation 2190 (client 1, put(k009) @1802) had returned header revision 1802 before it was called (at 40.05s, returned at 39.9s)`},
		{`member 8e9e05c52164694d returned "v1" for k1`, `member 91bc3c398fb3c146 returned "7.360" for k12`},
		{`keys k1, k2, k3 were lost`, `keys k4, k7 were lost`},
	}
	for _, p := range same {
		if a, b := Signature(p[0]), Signature(p[1]); a != b {
			t.Errorf("one cause, two signatures:\n  %s\n  %s", a, b)
		}
	}
	differ := [][2]string{
		{`client 3's serializable range 17 of k1 on member a reported header revision 40, below 41 it reported before`,
			`client 3's serializable range 17 of k1 returned "v1", older than its own put 12 acknowledged "v2"`},
		{`watch 1 missed the PUT of k1 at revision 5`, `watch 1 missed the DELETE of k1 at revision 5`},
		{`watch 1 delivered the deadbeef event`, `watch 1 delivered the added event`},
	}
	for _, p := range differ {
		if a, b := Signature(p[0]), Signature(p[1]); a == b {
			t.Errorf("two causes, one signature %q", a)
		}
	}
}

// TestOneCauseIsOneFinding: more than a hundred violations of one shape
// are one finding with the smallest of them as its witness; another shape
// in the same check is another finding; a data finding is listed before
// an order one and a SHOULD warning last.
func TestOneCauseIsOneFinding(t *testing.T) {
	var mono []check.Violation
	for i := range 140 {
		ops := []int64{int64(1000 + i), int64(2000 + i)}
		if i == 77 {
			ops = ops[:1]
		}
		mono = append(mono, check.Violation{Operations: ops, Message: fmt.Sprintf(
			"client %d's range %d on k%03d reported header revision %d, but operation %d had returned header revision %d before it was called",
			i%7, 2000+i, i%16, 300+i, 1000+i, 310+i)})
	}
	mono = append(mono, check.Violation{Operations: []int64{5, 6}, Message: "no acknowledged write created revisions 40..41 (between operation 5 at revision 39 and operation 6 at revision 42)"})
	results := []check.Result{
		{Name: "watch/liveness", Verdict: check.Fail, Should: true, Severity: check.Liveness, Violations: []check.Violation{{Message: "watch 3 never reached revision 99"}}},
		{Name: "kv/revision-monotonic", Verdict: check.Fail, Severity: check.Order, Violations: mono},
		{Name: "kv/linearizable", Verdict: check.Fail, Severity: check.Data, Violations: []check.Violation{{Message: "operation 4 cannot be placed"}}},
		{Name: "watch/reliable", Verdict: check.Pass, Severity: check.Data},
	}
	fs := Findings(nil, results)
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%s x%d", f.Check, f.Violations))
	}
	want := []string{"kv/linearizable x1", "kv/revision-monotonic x140", "kv/revision-monotonic x1", "watch/liveness x1"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("findings %v, want %v", got, want)
	}
	if w := fs[1].Witness; len(w.Operations) != 1 || w.Operations[0] != 1077 {
		t.Errorf("witness %v, want the violation with one record (operation 1077)", w.Operations)
	}

	var b bytes.Buffer
	Table(&b, Summarize(history.New(history.Meta{}), results, 1))
	out := b.String()
	for _, s := range []string{"4 finding(s) (143 violation(s)), worst first", "141 violation(s) in 2 finding(s)",
		"2. kv/revision-monotonic [order]: 140 violation(s) like", "[liveness, SHOULD: a warning]", "operations: 1077"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
}
