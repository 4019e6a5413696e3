package suites

import (
	"context"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/reports"
	"github.com/vigil-suite/vigil/targets/kube"
	"github.com/vigil-suite/vigil/workload"
)

// Over a real kube-apiserver, a short run sends every verb × option the
// workload can send and each is answered, on ConfigMaps (strategic merge
// patches) and on vigil's custom resource (the status subresource); apply
// conflicts, finalizer marks and delete-collections show in the answers.
// It asserts coverage, not the checks' verdicts (the checks judge the new
// verbs separately).
func TestKubeVerbsCovered(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fx := startKube(t, ctx, 1, 1, true)
	for _, res := range []kube.Resource{kube.ConfigMaps, kube.VigilObjects} {
		t.Run(res.String(), func(t *testing.T) {
			g := NewWithT(t)
			wl := workload.DefaultKubeConfig()
			wl.Duration = 12 * time.Second
			out, err := RunKube(ctx, fx, KubeConfig{Common: Common{Out: t.TempDir(), Seed: 5, Vigil: "test", Checks: check.DefaultConfig(), Logf: t.Logf},
				Workload: wl, Servers: kubeServers(fx), Etcd: fx.Endpoints(), Resource: res})
			g.Expect(err).NotTo(HaveOccurred())
			h := out.History
			f := reports.CountKube(h)
			g.Expect(h.Meta.KubeForms).NotTo(BeEmpty())
			g.Expect(f.NeverSent).To(BeEmpty(), "every verb × option the workload can send was sent")
			for _, r := range f.Verbs {
				g.Expect(r.Answered).To(BeNumerically(">", 0), "%s: sent %d, none answered", r.Production, r.Sent)
				g.Expect(r.Refused).To(BeZero(), "%s refused", r.Production)
			}
			wantStatus := res.Group != ""
			g.Expect(slices.Contains(h.Meta.KubeForms, "patch.subresource=status")).To(Equal(wantStatus))
			g.Expect(slices.Contains(h.Meta.KubeForms, "patch.type=strategic")).To(Equal(!wantStatus))

			var applyConflicts, marked, collected int
			for _, o := range h.KubeOps {
				switch {
				case o.Request.PatchType == history.PatchApply && o.Status != nil && slices.Contains(o.Status.Causes, "FieldManagerConflict"):
					applyConflicts++
				case o.Request.Verb == history.KubeDelete && o.Response != nil && o.Response.Object != nil && o.Response.Object.DeletionTimestamp != "":
					marked++
				case o.Request.Verb == history.KubeDeleteCollection && !o.Request.DryRun && o.Response != nil:
					collected += len(o.Response.Items)
				}
			}
			g.Expect(applyConflicts).To(BeNumerically(">", 0), "apply conflicts (409, FieldManagerConflict)")
			g.Expect(marked).To(BeNumerically(">", 0), "deletes of objects with a finalizer mark them")
			g.Expect(collected).To(BeNumerically(">", 0), "delete-collections answer what they deleted")

			// The cleanup released every finalizer: nothing holds the namespace.
			srv := kubeServers(fx)[0]
			srv.Namespace, srv.Resource = h.Meta.Flags["namespace"], res
			c, err := kube.New(srv)
			g.Expect(err).NotTo(HaveOccurred())
			defer c.Close()
			resp, err := c.Do(ctx, history.KubeRequest{Verb: history.KubeList})
			g.Expect(err).NotTo(HaveOccurred())
			for _, o := range resp.Items {
				g.Expect(o.Finalizers).To(BeEmpty(), "%s still holds a finalizer after the run", o.Name)
			}
		})
	}
}
