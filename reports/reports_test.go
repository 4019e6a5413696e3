package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

func sampleResult() Result {
	h := history.New(history.Meta{Seed: 9, Vigil: "0.0.test", Flags: map[string]string{"duration": "20s"}, Target: history.Target{Kind: "etcd", Fixture: "process", Members: 3}})
	h.Add(history.Record{Op: &history.Operation{ID: 1, Request: history.Request{Kind: history.OpPut, Key: "k"}, Response: &history.Response{Revision: 2}}})
	h.Add(history.Record{Op: &history.Operation{ID: 2, Request: history.Request{Kind: history.OpPut, Key: "k"}, Error: "timeout", Code: history.ErrUnknown}})
	h.Add(history.Record{Fault: &history.Fault{ID: 1, Name: "kill-leader"}})
	results := []check.Result{
		{Name: "kv/linearizable", Verdict: check.Pass},
		{Name: "watch/reliable", Verdict: check.Fail, Violations: []check.Violation{{
			Guarantee: errors.New("watch/reliable"), Message: "watch 7 missed PUT k at revision 12",
			Watch: 7, Revision: 12, Operations: []int64{55},
			Events: []history.EventAt{{Watch: 7, Response: 3, Event: history.Event{Type: history.EventPut, KV: history.KV{Key: "k", Value: "1.2", ModRevision: 11}}}},
		}}},
		{Name: "watch/liveness", Verdict: check.Fail, Should: true, Violations: []check.Violation{{Message: "watch 3 never reached revision 99"}}},
		{Name: "watch/bookmarkable", Verdict: check.Skipped, Reason: "no progress notifications"},
		{Name: "kv/other", Verdict: check.Unknown, Reason: "budget ran out"},
	}
	return Summarize(h, results, 2)
}

func TestSummarize(t *testing.T) {
	r := sampleResult()
	if r.Verdict != "fail" || r.Seed != 9 || r.Stats.Operations != 2 || r.Stats.FailedOperations != 1 ||
		r.Stats.OpsPerSecond != 1 || len(r.Stats.Faults) != 1 || r.Stats.Faults[0].Count != 1 {
		t.Fatalf("bad summary: %+v", r)
	}
	if ExitCode(r.Verdict) != 1 || ExitCode("pass") != 0 || ExitCode("unknown") != 2 || ExitCode(VerdictError) != 3 {
		t.Fatal("exit codes do not follow the README")
	}
}

// A failed SHOULD check is a warning: it neither fails the run nor the
// JUnit test case.
func TestShouldIsAWarning(t *testing.T) {
	only := []check.Result{{Name: "a", Verdict: check.Pass}, {Name: "watch/liveness", Verdict: check.Fail, Should: true}}
	if v := check.Overall(only); v != check.Pass {
		t.Fatalf("a failed SHOULD check made the run %s", v)
	}
	var b bytes.Buffer
	Table(&b, Summarize(history.New(history.Meta{}), only, 1))
	if !strings.Contains(b.String(), "WARN") {
		t.Fatalf("table does not show the warning:\n%s", b.String())
	}
}

func TestTableShowsEvidence(t *testing.T) {
	var b bytes.Buffer
	Table(&b, sampleResult())
	out := b.String()
	for _, want := range []string{"watch/reliable", "FAIL", "watch 7 missed PUT k at revision 12", "operations: 55",
		"watch 7 response 3: PUT k rev=11", "SKIPPED", "no progress notifications", "UNKNOWN", "budget ran out",
		"verdict: FAIL (seed 9)", "kill-leader x1"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestJUnit(t *testing.T) {
	dir := t.TempDir()
	if err := WriteJUnit(dir, sampleResult()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "junit.xml"))
	var doc junitSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("junit.xml does not parse: %v\n%s", err, b)
	}
	s := doc.Suites[0]
	if s.Tests != 6 || s.Failures != 1 || s.Errors != 1 || s.Skipped != 1 {
		t.Fatalf("counts: tests %d failures %d errors %d skipped %d", s.Tests, s.Failures, s.Errors, s.Skipped)
	}
	if s.Cases[0].Name != "setup" || s.Cases[0].Failure != nil {
		t.Fatalf("the first testcase is a passed setup: %+v", s.Cases[0])
	}
	if s.Cases[2].Failure == nil || !strings.Contains(s.Cases[2].Failure.Body, "revision 12") {
		t.Fatalf("the failure does not carry the violation: %+v", s.Cases[2])
	}
	if m := s.Cases[2].Failure.Message; m != "1 violation(s) in 1 finding(s): watch 7 missed PUT k at revision 12" {
		t.Errorf("failure message %q, want the count and the witness", m)
	}
	if s.Cases[3].Failure != nil || !strings.Contains(s.Cases[3].SystemOut, "WARNING") {
		t.Fatalf("a SHOULD failure must be a warning: %+v", s.Cases[3])
	}
	for _, want := range []string{`<property name="seed" value="9"></property>`, `<property name="flag.duration" value="20s"></property>`,
		`<property name="vigil.version" value="0.0.test"></property>`, `time="0.000"`, `time="2.000"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("junit.xml lacks %s:\n%s", want, b)
		}
	}
	if regexp.MustCompile(`time="[^"]*e`).Match(b) {
		t.Errorf("a time is not a plain decimal:\n%s", b)
	}
}

// A run that could not start is a failed setup testcase with the reason,
// not a suite of zero tests; an interrupted run is an erring "run".
func TestJUnitSetupAndInterrupt(t *testing.T) {
	for _, c := range []struct {
		r            Result
		name, reason string
	}{
		{Result{Verdict: VerdictError, Reason: "no cluster at 127.0.0.1:1", SetupFailed: true, Target: history.Target{Kind: "etcd"}},
			"setup", "no cluster at 127.0.0.1:1"},
		{Result{Verdict: VerdictError, Reason: "interrupted before the workload finished", Target: history.Target{Kind: "etcd"}},
			"run", "interrupted"},
	} {
		dir := t.TempDir()
		if err := WriteJUnit(dir, c.r); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "junit.xml"))
		var doc junitSuites
		if err := xml.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		s := doc.Suites[0]
		if s.Failures+s.Errors != 1 {
			t.Fatalf("%s: failures %d errors %d, want one:\n%s", c.name, s.Failures, s.Errors, b)
		}
		for _, tc := range s.Cases {
			msg := tc.Failure
			if msg == nil {
				msg = tc.Error
			}
			if msg != nil && (tc.Name != c.name || !strings.Contains(msg.Message, c.reason)) {
				t.Errorf("%s: testcase %s says %q", c.name, tc.Name, msg.Message)
			}
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r := sampleResult()
	if err := WriteJSON(dir, r); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSON(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Verdict != r.Verdict || len(got.Checks) != len(r.Checks) || got.Checks[1].Violations[0].Revision != 12 ||
		got.Checks[1].Violations[0].Guarantee == nil || got.Checks[1].Violations[0].Guarantee.Error() != "watch/reliable" {
		t.Fatalf("result.json lost data: %+v", got)
	}
}

// TestTableSaysMostlyExcused: a pass that rests on excuses says so in its
// detail; one that judged more than it excused does not.
func TestTableSaysMostlyExcused(t *testing.T) {
	results := []check.Result{
		{Name: "watch/prev-kv", Verdict: check.Pass, Judged: 2, Excused: map[string]int{"compacted": 31, "undetermined": 0}},
		{Name: "watch/is-create", Verdict: check.Pass, Judged: 90, Excused: map[string]int{"undetermined": 10}},
	}
	var b bytes.Buffer
	Table(&b, Summarize(history.New(history.Meta{}), results, 1))
	out := b.String()
	if !strings.Contains(out, "MOSTLY EXCUSED: 31 excused (compacted=31), 2 judged") {
		t.Errorf("the mostly excused pass is not flagged:\n%s", out)
	}
	if strings.Count(out, "MOSTLY EXCUSED") != 1 {
		t.Errorf("only watch/prev-kv is mostly excused:\n%s", out)
	}
}

// TestJUnitValidates: the junit.xml of a failed run, of a run that could
// not start and of an interrupted one validate against the JUnit schema CI
// tools read (testdata/junit.xsd), checked by xmllint (libxml2-utils;
// .ci/run installs it). Without xmllint the test skips, except in CI.
func TestJUnitValidates(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("xmllint is missing: apt-get install libxml2-utils")
		}
		t.Skip("xmllint is not installed (apt-get install libxml2-utils)")
	}
	for name, r := range map[string]Result{
		"failed":      sampleResult(),
		"setup":       {Verdict: VerdictError, Reason: "no cluster", SetupFailed: true, Target: history.Target{Kind: "etcd"}},
		"interrupted": {Verdict: VerdictError, Reason: "interrupted", DurationS: 1e-7, Target: history.Target{Kind: "kube"}},
	} {
		dir := t.TempDir()
		if err := WriteJUnit(dir, r); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(xmllint, "--noout", "--schema", "testdata/junit.xsd", filepath.Join(dir, "junit.xml")).CombinedOutput()
		if err != nil {
			t.Errorf("%s: junit.xml does not validate: %v\n%s", name, err, out)
		}
	}
	// The schema itself refuses what CI tools refuse.
	bad := filepath.Join(t.TempDir(), "bad.xml")
	os.WriteFile(bad, []byte(`<testsuites><testsuite name="x" tests="1" time="1e-05"><testcase name="a"/></testsuite></testsuites>`), 0o644)
	if exec.Command(xmllint, "--noout", "--schema", "testdata/junit.xsd", bad).Run() == nil {
		t.Error("the schema accepts a time with an exponent")
	}
}
