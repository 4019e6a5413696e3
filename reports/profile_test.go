package reports

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// profileRun is a run held to profile whose only failure is a check of
// the etcd profile alone (watch/atomic: Kubernetes writes one key per
// txn), beside a passing check of the kubernetes profile.
func profileRun(profile string, limits map[string]string) Result {
	h := history.New(history.Meta{Seed: 4, Profile: profile, Limitations: limits, Target: history.Target{Kind: "etcd", Fixture: "process"}})
	results := []check.Result{
		{Name: "watch/reliable", Verdict: check.Pass, Profiles: check.ForKubernetes},
		{Name: "watch/atomic", Verdict: check.Fail, Profiles: check.EtcdOnly, Violations: []check.Violation{{
			Message: "revision 12 split over responses 3 and 4 of watch 2", Watch: 2, Revision: 12}}},
	}
	return Summarize(h, results, 1)
}

// A failure outside the profile is reported, marked, but decides neither
// the verdict nor the exit code; in the etcd profile it fails the run.
func TestFailureOutsideTheProfile(t *testing.T) {
	r := profileRun(check.ProfileKubernetes, nil)
	if r.Verdict != string(check.Pass) || ExitCode(r.Verdict) != 0 {
		t.Fatalf("verdict %s (exit %d), want pass: watch/atomic is outside the kubernetes profile", r.Verdict, ExitCode(r.Verdict))
	}
	if !r.Checks[1].OutsideProfile || r.Checks[0].OutsideProfile || r.Checks[1].Verdict != check.Fail {
		t.Fatalf("checks not marked as the profile says: %+v", r.Checks)
	}
	var b bytes.Buffer
	Table(&b, r)
	for _, want := range []string{"FAIL", "(outside the profile kubernetes)", "profile kubernetes: 1 checks decide the verdict; 1 outside it are reported only (watch/atomic fail)",
		"outside the profile: reported only", "verdict: PASS"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	dir := t.TempDir()
	if err := WriteJSON(dir, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnit(dir, r); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "result.json"))
	var back struct {
		Profile string `json:"profile"`
		Checks  []struct {
			Name     string   `json:"name"`
			Profiles []string `json:"profiles"`
			Outside  bool     `json:"outside_profile"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(raw, &back); err != nil || back.Profile != "kubernetes" || len(back.Checks[0].Profiles) != 2 || !back.Checks[1].Outside {
		t.Fatalf("result.json does not record the profile and each check's: %v %s", err, raw)
	}
	junit, _ := os.ReadFile(filepath.Join(dir, "junit.xml"))
	if !strings.Contains(string(junit), `failures="0"`) || !strings.Contains(string(junit), `name="profile" value="kubernetes"`) ||
		!strings.Contains(string(junit), "FAIL, outside the profile kubernetes") {
		t.Fatalf("junit.xml counts the failure outside the profile, or lacks the profile:\n%s", junit)
	}

	if r := profileRun(check.ProfileEtcd, nil); r.Verdict != string(check.Fail) || ExitCode(r.Verdict) != 1 || r.Checks[1].OutsideProfile {
		t.Fatalf("etcd profile: verdict %s, want fail", r.Verdict)
	}
	if r := profileRun("", nil); r.Verdict != string(check.Fail) || r.Profile != check.ProfileEtcd {
		t.Fatalf("a history with no profile is held to etcd's: %s %q", r.Verdict, r.Profile)
	}
}

// A declared limitation is shown in the table's footer, report.html,
// result.json and junit.xml's properties.
func TestDeclaredLimitationsShown(t *testing.T) {
	limits := map[string]string{history.LimitationNoVersions: "declared with --limitation no-versions: every version is 0"}
	r := profileRun(check.ProfileEtcd, limits)
	var b bytes.Buffer
	Table(&b, r)
	if !strings.Contains(b.String(), "declared limitation no-versions: declared with --limitation no-versions") {
		t.Errorf("table lacks the limitation:\n%s", b.String())
	}
	dir := t.TempDir()
	h, err := history.Load(savedRun) // a real run: the page's plots need its calls
	if err != nil {
		t.Fatal(err)
	}
	for _, write := range []func() error{func() error { return WriteJSON(dir, r) }, func() error { return WriteJUnit(dir, r) },
		func() error { return WritePage(dir, h, r) }} {
		if err := write(); err != nil {
			t.Fatal(err)
		}
	}
	for file, want := range map[string]string{"result.json": `"no-versions": "declared with --limitation no-versions`,
		"junit.xml": `name="limitation.no-versions"`, PageFile: "<code>no-versions</code>: declared with --limitation"} {
		b, _ := os.ReadFile(filepath.Join(dir, file))
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q", file, want)
		}
	}
}
