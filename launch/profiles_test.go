package launch

import (
	"errors"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/workload"
)

func TestProfileAndLimitationFlags(t *testing.T) {
	usage := func(err error, want string) {
		t.Helper()
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
			t.Errorf("%v, want a usage error with %q", err, want)
		}
	}
	_, err := resolved(t, func(o *Options) { o.Profile = "k8s" })
	usage(err, `--profile "k8s": want one of etcd, kubernetes`)
	_, err = resolved(t, func(o *Options) { o.Limitations = []string{"no-versions,no-hash"} })
	usage(err, `--limitation "no-hash": want one of no-versions, no-size-limit (or kine`)
	_, err = resolved(t, func(o *Options) { o.Limitations = []string{"none", "no-versions"} })
	usage(err, "goes alone")
	_, err = resolved(t, func(o *Options) { o.Target = "kube"; o.Limitations = []string{"no-versions"} })
	usage(err, "goes with --target etcd")
	c := DefaultConformOptions()
	c.Profile = "k8s"
	_, _, _, err = c.check()
	usage(err, "want one of etcd, kubernetes")

	// The kubernetes profile sends what Kubernetes sends.
	o, err := resolved(t, func(o *Options) { o.Profile = check.ProfileKubernetes })
	if err != nil || o.Workload.Shape != workload.ShapeKubeLike || !o.Workload.NoEventFilters {
		t.Errorf("kubernetes profile: %v, shape %q, no event filters %v", err, o.Workload.Shape, o.Workload.NoEventFilters)
	}
	o, _ = resolved(t, func(o *Options) { o.Profile = check.ProfileKubernetes; o.Workload.Shape = workload.ShapeChurn }, "workload")
	if o.Workload.Shape != workload.ShapeChurn {
		t.Errorf("--workload given: the profile replaced it with %q", o.Workload.Shape)
	}
	o, _ = resolved(t, func(*Options) {})
	if o.Profile != check.ProfileEtcd || o.limitations != nil || o.Workload.NoEventFilters {
		t.Errorf("defaults: profile %q, limitations %v", o.Profile, o.limitations)
	}

	// Names, kine's set and none; repeated or comma-separated.
	lims, err := resolveLimitations([]string{"no-size-limit", "kine"})
	if err != nil || len(lims) != 2 || !strings.Contains(lims[history.LimitationNoVersions], "kine does not track key versions") ||
		!strings.Contains(lims[history.LimitationNoSizeLimit], "declared with --limitation no-size-limit") {
		t.Errorf("resolveLimitations: %v %v", lims, err)
	}
	if lims, err := resolveLimitations([]string{"none"}); err != nil || lims == nil || len(lims) != 0 {
		t.Errorf("none: %v %v, want an empty declaration (not the fixture's)", lims, err)
	}
	c = DefaultConformOptions()
	c.Fixture = "kine"
	if d, _ := c.declared(); d[history.LimitationNoVersions] == "" {
		t.Errorf("--fixture kine declares kine's own by default: %v", d)
	}
	c.Limitations = []string{"none"}
	if d, _ := c.declared(); len(d) != 0 {
		t.Errorf("--limitation none with kine: %v", d)
	}
}
