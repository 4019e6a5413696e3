package conformance

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

// The reproduction of a probe is a Go program that builds in a module of
// its own and, run against a real etcd, sends the probe's requests again
// and gets the same kind of answers (here: a watch with the NoDelete
// filter, which exercises keys, revisions and the watch stream).
func TestReproductionBuildsAndReplays(t *testing.T) {
	eps := startEtcd(t, "v3.6.16")
	var probes []EtcdProbe
	for _, p := range EtcdProbes() {
		if p.Name == "watch/filter-nodelete" || p.Name == "lease/revoke-delete-events" || p.Name == "kv/range-old-revision-header" {
			probes = append(probes, p)
		}
	}
	res, err := RunEtcdProbes(context.Background(), EtcdConfig{Endpoints: eps}, probes)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		src := r.Reproduction()
		if !strings.Contains(src, r.Name) || !strings.Contains(src, "package main") {
			t.Fatalf("%s: no program:\n%s", r.Name, src)
		}
		bin := BuildReproduction(t, r.Name, src)
		out, err := exec.Command(bin, "-endpoint", strings.TrimPrefix(eps[0], "http://")).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: the reproduction failed: %v\n%s", r.Name, err, out)
		}
		text := string(out)
		if strings.Contains(text, "-> error") {
			t.Errorf("%s: a replayed request failed:\n%s", r.Name, text)
		}
		switch r.Name {
		case "watch/filter-nodelete":
			if !strings.Contains(text, `"created":true`) || strings.Count(text, `"events":[`) < 2 {
				t.Errorf("the replayed watch did not deliver its events:\n%s", text)
			}
		case "lease/revoke-delete-events":
			if !strings.Contains(text, `"type":"DELETE"`) {
				t.Errorf("revoking the replayed lease sent no DELETE events:\n%s", text)
			}
		}
		t.Logf("%s reproduction:\n%s", r.Name, text)
	}
}
