package reports

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/history"
)

// A Kubernetes run's coverage: each verb and option sent, answered and
// refused, and what the workload could send and never did.
func TestKubeVerbsCoverage(t *testing.T) {
	g := NewWithT(t)
	h := &history.History{Meta: history.Meta{KubeForms: []string{"patch", "patch.type=strategic", "patch.type=apply", "get.subresource=status"}}}
	h.KubeOps = []history.KubeOperation{
		{ID: 1, Request: history.KubeRequest{Verb: history.KubePatch, PatchType: history.PatchApply, Object: &history.Object{Name: "o"}},
			Status: &history.KubeStatus{Code: 409, Causes: []string{"FieldManagerConflict"}}},
		{ID: 2, Request: history.KubeRequest{Verb: history.KubePatch, PatchType: history.PatchStrategic, Object: &history.Object{Name: "o"}},
			Status: &history.KubeStatus{Code: 415}},
		{ID: 3, Request: history.KubeRequest{Verb: history.KubePatch, PatchType: history.PatchApply, Force: true, Object: &history.Object{Name: "o"}},
			Error: "timeout"},
	}
	h.KubeWatches = []*history.KubeWatchStream{{KubeWatch: history.KubeWatch{ID: 1, Request: history.KubeWatchRequest{FieldSelector: "metadata.name=o"}},
		End: &history.KubeWatchEnd{Watch: 1, Reason: history.EndServer}}}
	f := CountKube(h)
	rows := map[string]ProductionCount{}
	for _, r := range f.Verbs {
		rows[r.Production] = r
	}
	g.Expect(rows["patch"]).To(Equal(ProductionCount{Production: "patch", Sent: 3, Answered: 1, Refused: 1}))
	g.Expect(rows["patch.type=apply"]).To(Equal(ProductionCount{Production: "patch.type=apply", Sent: 2, Answered: 1}))
	g.Expect(rows["patch.type=strategic"].Refused).To(Equal(1))
	g.Expect(rows["watch.selector=field"]).To(Equal(ProductionCount{Production: "watch.selector=field", Sent: 1, Answered: 1}))
	g.Expect(f.NeverSent).To(Equal([]string{"get.subresource=status"}))
	g.Expect(f.Verbs[0].Production).To(Equal("get.subresource=status"), "by verb: get before watch and patch")

	var b strings.Builder
	writeKubeVerbs(&b, f.Verbs, f.NeverSent)
	g.Expect(b.String()).To(ContainSubstring("  patch: all 3/1 (1 refused), force 1/0, type=apply 2/1, type=strategic 1/0 (1 refused)\n"))
	g.Expect(b.String()).To(ContainSubstring("never sent: get.subresource=status\n"))
}
