package launch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/vigil-suite/vigil/fixtures/kine"
	"github.com/vigil-suite/vigil/reports"
	"github.com/vigil-suite/vigil/suites/conformance"
	"github.com/vigil-suite/vigil/suites/conformance/kubeprobes"
)

// addProbes names, in each finding, the conformance probes that isolate
// its checks (those of its own parts, not of the violations resting on
// it; each probe once): one deterministic behaviour each, where the run's
// violation sits in a randomized history.
func addProbes(r *reports.Result) {
	for i := range r.Findings {
		var probes []string
		f := &r.Findings[i]
		for _, part := range append([]reports.Part{f.Part}, f.Also...) {
			check := part.Check
			for _, p := range append(conformance.EtcdProbesFor(check), kubeprobes.ProbesFor(check)...) {
				if !slices.Contains(probes, p) {
					probes = append(probes, p)
				}
			}
		}
		r.Findings[i].Probes = probes
	}
}

// conformFirst runs the etcd probes against a run's cluster before its
// workload (Options.Conform); false when a probe failed. The workload
// then stays above the revisions the probes made.
func (o *Options) conformFirst(ctx context.Context, endpoints []string) (bool, error) {
	res, err := conformance.RunEtcdProbes(ctx, conformance.EtcdConfig{Endpoints: endpoints[:1], Security: o.security}, conformance.EtcdProbes())
	if err != nil {
		return false, err
	}
	// The run's profile and limitations hold for its probes too.
	lims := o.limitations
	if lims == nil && o.Fixture == "kine" {
		lims = kine.Documented()
	}
	res = conformance.ApplyProfile(conformance.ApplyLimitations(res, conformance.LimitationsFor(lims)), o.Profile)
	rep := conformance.NewReport("the run's cluster", "", res)
	rep.Profile, rep.Limitations = o.Profile, lims
	dir := filepath.Join(o.Out, "conform")
	if err := rep.Write(dir); err != nil {
		return false, err
	}
	if rep.Failed() {
		rep.Table(os.Stdout)
		fmt.Printf("conformance probes failed (results in %s); the workload was not run\n", dir)
		return false, nil
	}
	// The probes compacted the store; the run starts above all they did.
	head, err := conformance.HeadRevision(ctx, endpoints[0], o.security)
	if err != nil {
		return false, err
	}
	o.Workload.MinRevision = head + 1
	fmt.Fprintf(os.Stderr, "conformance: %d probes pass (results in %s); the workload stays above revision %d\n", len(res), dir, head)
	return true, nil
}
