// Package kubeprobes holds vigil's deterministic conformance probes of the
// Kubernetes API: each behaviour (of get, list, write or watch, as the
// API's documented contract states it) is probed on every resource of the
// run, ConfigMaps and vigil's custom resource by default, in a namespace of
// its own, over plain HTTPS and JSON. The probes run on the framework of
// package conformance: Run returns conformance.Results (verdicts,
// normalized transcripts that compare with a reference server's, and a
// standalone reproduction, a Go program that needs only the standard
// library), which conformance.NewReport reports as it does the etcd
// probes'.
//
// The probes run from `vigil conform --target kube` and from another
// module's `go test` (RunTest), each probe a subtest.
package kubeprobes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/suites/conformance"
	"github.com/vigil-suite/vigil/targets/kube"
)

// Probe is one behaviour of the Kubernetes API. Every behaviour is
// probed on each resource of the run (ConfigMaps and a custom resource by
// default; a CustomOnly one on custom resources only), each its own probe
// named "<family>/<behaviour>@<resource>".
type Probe struct {
	conformance.Info
	// Run is the scenario; it may branch on k.Custom where built-in and
	// custom resources legitimately differ.
	Run func(k *K)
	// CustomOnly probes run on custom resources only (the status
	// subresource, which ConfigMaps do not have).
	CustomOnly bool
}

// on reports whether the probe runs on resource r.
func (p Probe) on(r kube.Resource) bool { return !p.CustomOnly || r.Group != "" }

// Config says where the Kubernetes probes go.
type Config struct {
	// Server is how to reach the API server; its Namespace and Resource
	// are ignored (every probe makes a namespace of its own).
	Server kube.Config
	// Resources to probe; default ConfigMaps and kube.VigilObjects (whose
	// CustomResourceDefinition the run creates unless it exists).
	Resources []kube.Resource
	// Only runs the probes with these names, or with these prefixes when
	// they end in "/" (a family) or "@" (a behaviour on every resource);
	// empty: all.
	Only []string
	// Timeout bounds one probe; default 20 s.
	Timeout time.Duration
	// Compact, if set, compacts the server's storage at revision rev, or
	// at its current revision when rev is 0 (vigil does it through etcd,
	// with conformance.EtcdCompactor, when it started the server, whose
	// resourceVersions are etcd's revisions). Probes of expiry (410 Gone) need it and are skipped
	// without it.
	Compact func(ctx context.Context, rev int64) error
	// Wrap, if set, wraps every probe's HTTP transport (tests corrupt the
	// server's answers with it).
	Wrap func(http.RoundTripper) http.RoundTripper
}

// probeName is the probe's name on one resource.
func probeName(name string, r kube.Resource) string { return name + "@" + r.Plural }

// Infos lists the probes a run over these resources has (the
// default resources if none), each behaviour once per resource.
func Infos(resources []kube.Resource) []conformance.Info {
	if len(resources) == 0 {
		resources = defaultResources
	}
	var out []conformance.Info
	for _, p := range Probes() {
		for _, r := range resources {
			if !p.on(r) {
				continue
			}
			info := p.Info
			info.Name = probeName(p.Name, r)
			out = append(out, info)
		}
	}
	return out
}

var defaultResources = []kube.Resource{kube.ConfigMaps, kube.VigilObjects}

// Run runs every probe on every resource, one after another,
// and returns one result each. Probes assume nothing else writes in the
// namespaces they make.
func Run(ctx context.Context, cfg Config, probes []Probe) ([]conformance.Result, error) {
	if cfg.Server.Server == "" {
		return nil, errors.New("kubeprobes: no Kubernetes API server to probe")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 20 * time.Second
	}
	if len(cfg.Resources) == 0 {
		cfg.Resources = defaultResources
	}
	run := fmt.Sprintf("vc-%x", time.Now().UnixNano()%0xffffffff)
	setup := cfg.Server
	setup.Namespace = "default"
	admin, err := kube.New(setup)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	pctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := admin.Ping(pctx); err != nil {
		return nil, err
	}
	var out []conformance.Result
	for _, r := range cfg.Resources {
		want := false
		for _, p := range probes {
			want = want || p.on(r) && conformance.Selected(probeName(p.Name, r), cfg.Only)
		}
		if !want {
			continue
		}
		if r.Group != "" {
			rc := setup
			rc.Resource = r
			c, err := kube.New(rc)
			if err != nil {
				return nil, err
			}
			err = c.EnsureCRD(pctx)
			c.Close()
			if err != nil {
				return nil, err
			}
		}
		for i, p := range probes {
			name := probeName(p.Name, r)
			if !p.on(r) || !conformance.Selected(name, cfg.Only) {
				continue
			}
			ns := fmt.Sprintf("%s-%s-%d", run, strings.ToLower(r.Kind), i)
			out = append(out, runProbe(ctx, cfg, admin, p, r, ns))
		}
	}
	return out, nil
}

func runProbe(ctx context.Context, cfg Config, admin *kube.Client, pr Probe, r kube.Resource, ns string) (res conformance.Result) {
	res = conformance.Result{Info: pr.Info}
	res.Name = probeName(pr.Name, r)
	begin := time.Now()
	defer func() { res.Duration = time.Since(begin) }()
	pctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if err := admin.EnsureNamespace(pctx, ns); err != nil {
		res.Verdict, res.Reason = conformance.Error, "cannot make the probe's namespace: "+err.Error()
		return res
	}
	defer func() {
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer dcancel()
		_ = admin.DeleteNamespace(dctx, ns)
	}()
	sc := cfg.Server
	sc.Namespace, sc.Resource = ns, r
	c, err := kube.New(sc)
	if err != nil {
		res.Verdict, res.Reason = conformance.Error, err.Error()
		return res
	}
	defer c.Close()
	c.WrapTransport(func(rt http.RoundTripper) http.RoundTripper { return contentTyped{rt} })
	if cfg.Wrap != nil {
		c.WrapTransport(cfg.Wrap)
	}
	k := &K{Ctx: pctx, NS: ns, Res: r, Custom: r.Group != "", cfg: cfg, c: c, rec: &recorder{}}
	k.Gomega = gomega.NewGomega(func(msg string, _ ...int) { conformance.FailProbe(msg) })
	res.Verdict, res.Reason, res.Failure = conformance.RunGuarded(func() { pr.Run(k) })
	if res.Verdict == conformance.Fail && pctx.Err() != nil && ctx.Err() == nil {
		res.Failure = fmt.Sprintf("the probe ran out of its %v: %s", cfg.Timeout, res.Failure)
	}
	steps := k.rec.snapshot()
	if res.Verdict == conformance.Fail && notServed(steps) {
		res.Verdict, res.Reason = conformance.Unsupported, "the server does not serve a request of the probe (404 on the resource's path or 405)"
	}
	res.SetReproduction("kube", (&reproData{steps: steps, ns: ns}).reproduction)
	n := newNormalizer(ns, steps)
	branched := false
	for _, s := range steps {
		if s.branch && !branched && len(res.Transcript) > 0 {
			res.Transcript[len(res.Transcript)-1].Unstable = true
		}
		st := n.step(s)
		branched = branched || s.branch
		st.Unstable = st.Unstable || branched
		res.Transcript = append(res.Transcript, st)
	}
	return res
}

// notServed reports a 405, or a 404 whose Status is not about an object
// (a server that does not serve the path answers 404 with no details).
func notServed(steps []rawStep) bool {
	for _, s := range steps {
		if s.code == http.StatusMethodNotAllowed {
			return true
		}
		if s.code == http.StatusNotFound {
			var st struct {
				Details *struct {
					Name string `json:"name"`
				} `json:"details"`
			}
			if json.Unmarshal(s.answer, &st) != nil || st.Details == nil || st.Details.Name == "" {
				return true
			}
		}
	}
	return false
}
