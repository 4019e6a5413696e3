// Package checkers is the registry of vigil's checks: which checks judge a
// history, in report order. The checks themselves live in one package per
// family (linearizable, kv, watch, kube, availability), over the shared
// vocabulary of package check and the history facts of package facts.
package checkers

import (
	"github.com/vigil-suite/vigil/checkers/availability"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/kube"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/checkers/linearizable"
	"github.com/vigil-suite/vigil/checkers/watch"
	"github.com/vigil-suite/vigil/history"
)

// Etcd returns every check of an etcd history, in report order: the KV
// checks, then the watch checks (the SHOULD lines last), then availability.
func Etcd() []check.Check {
	var out []check.Check
	out = append(out, linearizable.Checks()...)
	out = append(out, kv.Checks()...)
	out = append(out, watch.Checks()...)
	return append(out, availability.Checks()...)
}

// Kube returns every check of a Kubernetes history, in report order.
func Kube() []check.Check {
	return append(kube.Checks(), availability.Checks()...)
}

// ForHistory returns the checks that judge h, prepared for it: the
// Kubernetes checks for a history of a Kubernetes target, sharing one
// model of h (kube.ChecksOf), every etcd check otherwise.
func ForHistory(h *history.History) []check.Check {
	if h.Meta.Target.Kind == "kube" {
		return append(kube.ChecksOf(h), availability.Checks()...)
	}
	return Etcd()
}

// Run runs every check of ForHistory(h), in order. Run reads no clock: a
// caller that wants each check's Elapsed loops over ForHistory itself and
// calls check.Run.
func Run(h *history.History, cfg check.Config) []check.Result {
	checks := ForHistory(h)
	out := make([]check.Result, 0, len(checks))
	for _, c := range checks {
		out = append(out, check.Run(c, h, cfg))
	}
	return out
}

// LimitationChecks names, for each documented limitation a target may
// declare (check.Limitations), the checks whose verdict it can turn into
// `limitation`.
func LimitationChecks() map[string][]string {
	return map[string][]string{history.LimitationNoVersions: {linearizable.Name, watch.NameIsCreate}}
}
