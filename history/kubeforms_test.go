package history

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestKubeForms(t *testing.T) {
	cases := []struct {
		req  KubeRequest
		want []string
	}{
		{KubeRequest{Verb: KubeCreate, Object: &Object{GenerateName: "g-", Finalizers: []string{"x/y"}}, DryRun: true},
			[]string{"create", "create.name=generate", "create.finalizers", "create.dryRun"}},
		{KubeRequest{Verb: KubeUpdate, Object: &Object{Name: "o", ResourceVersion: "5"}, Subresource: SubresourceStatus},
			[]string{"update", "update.rv=conditional", "update.subresource=status"}},
		{KubeRequest{Verb: KubeUpdate, Object: &Object{Name: "o"}}, []string{"update", "update.rv=unconditional"}},
		{KubeRequest{Verb: KubePatch, PatchType: PatchApply, Force: true, Object: &Object{Name: "o"}},
			[]string{"patch", "patch.type=apply", "patch.force"}},
		{KubeRequest{Verb: KubePatch, PatchType: PatchMerge, Object: &Object{Name: "o", ResourceVersion: "3", UID: "u"},
			Patch: `{"metadata":{"finalizers":null}}`},
			[]string{"patch", "patch.type=merge", "patch.precondition=rv", "patch.precondition=uid", "patch.finalizers"}},
		{KubeRequest{Verb: KubeDelete, PreconditionRV: "3"}, []string{"delete", "delete.precondition=rv"}},
		{KubeRequest{Verb: KubeDeleteCollection, LabelSelector: "a=b", FieldSelector: "metadata.name=o", DryRun: true},
			[]string{"deletecollection", "deletecollection.selector=label", "deletecollection.selector=field", "deletecollection.dryRun"}},
		{KubeRequest{Verb: KubeList, FieldSelector: "metadata.name=o"}, []string{"list", "list.selector=field"}},
		{KubeRequest{Verb: KubeGet, Subresource: SubresourceStatus}, []string{"get", "get.subresource=status"}},
	}
	for _, c := range cases {
		NewWithT(t).Expect(KubeForms(c.req)).To(Equal(c.want))
	}
	g := NewWithT(t)
	g.Expect(KubeWatchForms(KubeWatchRequest{FieldSelector: "metadata.name=o"})).To(Equal([]string{"watch", "watch.selector=field"}))
	g.Expect(KubeWatchForms(KubeWatchRequest{LabelSelector: "a=b"})).To(Equal([]string{"watch"}))
	g.Expect(KubeRefused(&KubeStatus{Code: 415})).To(BeTrue())
	g.Expect(KubeRefused(&KubeStatus{Code: 409})).To(BeFalse())
	g.Expect(KubeRefused(nil)).To(BeFalse())
}
