package conformance_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/suites/conformance"
	"github.com/vigil-suite/vigil/suites/conformance/kubeprobes"
	"github.com/vigil-suite/vigil/targets/kube"
)

// Every probe has the etcd profile; the kubernetes profile holds the
// Kubernetes API's probes and the etcd probes of what Kubernetes' storage
// layer relies on (docs/profiles.md), and names no probe that is gone.
func TestEveryProbeHasItsProfiles(t *testing.T) {
	names := map[string]bool{}
	for _, p := range conformance.EtcdProbes() {
		names[p.Name] = true
	}
	infos := kubeprobes.Infos([]kube.Resource{kube.ConfigMaps, kube.VigilObjects})
	for _, p := range infos {
		names[p.Name] = true
	}
	for name := range names {
		ps := conformance.ProfilesOf(name)
		if !slices.Contains(ps, check.ProfileEtcd) {
			t.Errorf("%s is not in the etcd profile: %v", name, ps)
		}
	}
	for _, p := range infos {
		if !slices.Contains(conformance.ProfilesOf(p.Name), check.ProfileKubernetes) {
			t.Errorf("the Kubernetes API's probe %s is outside the kubernetes profile", p.Name)
		}
	}
	for _, name := range conformance.KubernetesProbes() {
		if !names[name] {
			t.Errorf("the kubernetes profile names %s, which is no probe", name)
		}
		if conformance.KubernetesReason(name) == "" {
			t.Errorf("%s is in the kubernetes profile without a reason", name)
		}
	}
	must := []string{
		"kv/range-header-revision", "kv/range-old-revision-value", "kv/range-limit-more-count", "kv/range-count-only",
		"kv/range-keys-only", "kv/range-end-exclusive", "kv/future-revision-range", "revision/create-header",
		"txn/header-revision", "txn/else-branch", "txn/compare-mod-revision-equal", "txn/compare-mod-revision-stale",
		"txn/compare-missing-key-version", "txn/compare-version-equal", "kv/version-counts-writes",
		"compaction/read-below", "compaction/watch-below", "compaction/watch-at", "watch/compacted-start-cancel",
		"watch/from-past", "watch/prev-kv-put", "watch/prev-kv-delete", "watch/is-create", "watch/delete-event",
		"watch/single-key", "watch/progress-request", "watch/progress-then-no-older-event", "watch/progress-notify-option",
		"lease/grant",
	}
	for _, name := range must {
		if !slices.Contains(conformance.ProfilesOf(name), check.ProfileKubernetes) {
			t.Errorf("%s must be in the kubernetes profile", name)
		}
	}
	// Kubernetes sets no filter, sorts nothing, never deletes at mod 0.
	for _, name := range []string{"watch/filter-noput", "watch/filter-noput-storage", "kv/range-sort-value",
		"revision/guarded-delete-nothing", "kv/range-serializable", "lease/revoke-deletes-keys", "watch/fragment"} {
		if !names[name] || slices.Contains(conformance.ProfilesOf(name), check.ProfileKubernetes) {
			t.Errorf("%s must be a probe outside the kubernetes profile", name)
		}
	}
}

// A failure outside the profile is reported, marked, and fails nothing;
// inside it, or in the etcd profile, it fails the conform.
func TestConformFailureOutsideTheProfile(t *testing.T) {
	results := []conformance.Result{
		{Info: conformance.Info{Name: "kv/range-header-revision"}, Verdict: conformance.Pass},
		{Info: conformance.Info{Name: "watch/filter-noput", Title: "a watch with the NoPut filter receives PUT events"}, Verdict: conformance.Fail},
	}
	rep := conformance.NewReport("t", "", conformance.ApplyProfile(results, check.ProfileKubernetes))
	rep.Profile = check.ProfileKubernetes
	if rep.Failed() {
		t.Fatal("a failure outside the kubernetes profile failed the conform")
	}
	if !rep.Results[1].OutsideProfile || rep.Results[0].OutsideProfile || rep.OutsideCounts[conformance.Fail] != 1 {
		t.Fatalf("not marked: %+v", rep.Results)
	}
	var b strings.Builder
	rep.Table(&b)
	for _, want := range []string{"FAIL", "(outside the profile kubernetes: reported, fails nothing)",
		"profile kubernetes: 1 probes in it; 1 outside it, of which 1 failed"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	dir := t.TempDir()
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	inEtcd := conformance.NewReport("t", "", conformance.ApplyProfile(results, check.ProfileEtcd))
	if !inEtcd.Failed() {
		t.Fatal("in the etcd profile the failure must fail the conform")
	}
	results[0].Verdict = conformance.Fail
	if !conformance.NewReport("t", "", conformance.ApplyProfile(results, check.ProfileKubernetes)).Failed() {
		t.Fatal("a failure inside the kubernetes profile must fail the conform")
	}
}

// A declared limitation excuses exactly the probes and failures it names.
func TestDeclaredLimitationExcusesOnlyWhatItNames(t *testing.T) {
	zeroVersion := conformance.Step{Call: "Range", Answer: []byte(`{"kvs":[{"key":"$/a","mod_revision":"base+1"}]}`)}
	badVersion := conformance.Step{Call: "Range", Answer: []byte(`{"kvs":[{"key":"$/a","mod_revision":"base+1","version":"2"}]}`)}
	accepted := conformance.Step{Call: "Put", Answer: []byte(`{"header":{}}`)}
	refusedWrongly := conformance.Step{Call: "Put", Error: "Unknown: disk full"}
	fail := func(name string, steps ...conformance.Step) conformance.Result {
		return conformance.Result{Info: conformance.Info{Name: name}, Verdict: conformance.Fail, Transcript: steps}
	}
	results := []conformance.Result{
		fail("kv/version-counts-writes", zeroVersion),
		fail("kv/version-counts-writes", badVersion),
		fail("kv/oversized-request", accepted),
		fail("kv/oversized-request", refusedWrongly),
		fail("kv/range-prefix", zeroVersion), // version 0 is no excuse for another probe
	}
	declare := func(name string) map[string]string {
		l, _ := check.LimitationNamed(name)
		return map[string]string{name: check.DeclaredReason(l)}
	}
	verdicts := func(lims map[string]string) []conformance.Verdict {
		var out []conformance.Verdict
		for _, r := range conformance.ApplyLimitations(results, conformance.LimitationsFor(lims)) {
			out = append(out, r.Verdict)
		}
		return out
	}
	F, L := conformance.Fail, conformance.Documented
	for _, c := range []struct {
		lims map[string]string
		want []conformance.Verdict
	}{
		{nil, []conformance.Verdict{F, F, F, F, F}},
		{declare(history.LimitationNoVersions), []conformance.Verdict{L, F, F, F, F}},
		{declare(history.LimitationNoSizeLimit), []conformance.Verdict{F, F, L, F, F}},
	} {
		if got := verdicts(c.lims); !slices.Equal(got, c.want) {
			t.Errorf("declared %v: %v, want %v", c.lims, got, c.want)
		}
	}
	// Every limitation of the list reaches some probe it excuses.
	for _, l := range check.Limitations() {
		if lims := conformance.LimitationsFor(map[string]string{l.Name: "x"}); len(lims) != 1 || len(lims[0].Probes) == 0 {
			t.Errorf("%s: no probe it excuses (%v)", l.Name, lims)
		}
	}
}

// docs/profiles.md names every probe of the kubernetes profile and every
// limitation, so the doc and the tagging cannot drift apart unseen.
func TestProfilesDocNamesEveryProbeAndLimitation(t *testing.T) {
	b, err := os.ReadFile("../../docs/profiles.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, name := range conformance.KubernetesProbes() {
		if !strings.Contains(doc, "`"+name+"`") {
			t.Errorf("docs/profiles.md does not name %s, a probe of the kubernetes profile", name)
		}
	}
	for _, l := range check.Limitations() {
		if !strings.Contains(doc, "| `"+l.Name+"` |") {
			t.Errorf("docs/profiles.md does not list the limitation %s", l.Name)
		}
	}
}
