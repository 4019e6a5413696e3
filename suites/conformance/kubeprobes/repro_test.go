package kubeprobes

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/suites/conformance"
)

// A Kubernetes probe's reproduction is a Go program that builds and, run
// against a real kube-apiserver, replays the probe in a namespace of its
// own: the conditional writes go through with the resourceVersions it
// learned, the watch delivers the same events.
func TestKubeReproductionBuildsAndReplays(t *testing.T) {
	cfg := startKube(t, true)
	cfg.Only = []string{"kube-write/delete-precondition-rv@configmaps", "kube-watch/label-selector@configmaps", "kube-list/paging@vigilobjects",
		"kube-apply/conflict@configmaps", "kube-write/generate-name@configmaps"}
	res, err := Run(context.Background(), cfg, Probes())
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 5 {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		bin := conformance.BuildReproduction(t, r.Name, r.Reproduction())
		run := exec.Command(bin, "-server", cfg.Server.Server, "-token", cfg.Server.Token, "-ca-file", cfg.Server.CAFile)
		out, err := run.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: the reproduction failed: %v\n%s", r.Name, err, out)
		}
		text := string(out)
		want := map[string][]string{
			// The stale precondition is refused and the fresh one (learned
			// from this server's update) accepted.
			"kube-write/delete-precondition-rv@configmaps": {"-> HTTP 409", "DELETE /api/v1/namespaces/vigil-repro-", "-> HTTP 200 {\"kind\":\"Status\""},
			"kube-watch/label-selector@configmaps":         {`"type":"ADDED"`, `"type":"DELETED"`, `"type":"MODIFIED"`},
			"kube-list/paging@vigilobjects":                {`"remainingItemCount":3`, `"remainingItemCount":1`},
			// Sent as an apply (its content type), refused naming the field.
			"kube-apply/conflict@configmaps": {"-> HTTP 201", "-> HTTP 409", `"reason":"FieldManagerConflict"`},
		}[r.Name]
		// The get of the generated name reads this server's name.
		if strings.Contains(r.Name, "generate-name") && strings.Contains(text, "-> HTTP 404") {
			t.Errorf("%s: the replay did not learn the generated name:\n%s", r.Name, text)
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: the replay lacks %q:\n%s", r.Name, w, text)
			}
		}
		if strings.Contains(text, "no answer") || strings.Contains(text, "nothing within") {
			t.Errorf("%s: the replay lost a step:\n%s", r.Name, text)
		}
	}
}

// The status subresource's probes run on the custom resource only:
// ConfigMaps have no status subresource, and a probe skipped there would
// leave certify's requirement unknown.
func TestStatusProbesOnlyOnTheCustomResource(t *testing.T) {
	names := map[string]bool{}
	for _, i := range Infos(nil) {
		names[i.Name] = true
	}
	if !names["kube-status/status-write@vigilobjects"] || names["kube-status/status-write@configmaps"] || !names["kube-patch/merge@configmaps"] {
		t.Errorf("probes: %v", names)
	}
}
