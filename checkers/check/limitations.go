package check

import (
	"slices"

	"github.com/vigil-suite/vigil/history"
)

// LimitationDoc is one documented departure from etcd that an implementer
// may declare for their server (`--limitation NAME`): what it excuses,
// and nothing else, and what the implementer must be able to point to.
// Declared, it is recorded in the history (history.Meta.Limitations) and
// shown in every report.
type LimitationDoc struct {
	Name string
	// Summary is the departure in one line, as the reports quote it.
	Summary string
	// Excuses says exactly which verdicts it turns into `limitation`, and
	// on what evidence.
	Excuses string
	// PointTo is what the implementer must cite: where their own
	// documentation or code states the departure.
	PointTo string
	// The checks and probes it can excuse are named where they are
	// defined: checkers.LimitationChecks, the conformance probes' own
	// table.
}

// Limitations lists every limitation a run or a conform may declare.
func Limitations() []LimitationDoc {
	return []LimitationDoc{{
		Name:    history.LimitationNoVersions,
		Summary: "the server keeps no per-key version: every version it returns is 0",
		Excuses: "kv/linearizable does not compare a returned version of 0; watch/is-create is `limitation` when version 0 " +
			"is all that disagrees; the probes kv/version-counts-writes, kv/range-keys-only and watch/is-create are " +
			"`limitation` when every key-value in their transcript has version 0; a probe that passed but differs from " +
			"the reference only in `version` fields is `limitation`, not `differs`. A version other than 0 that is wrong, " +
			"or any other field, still fails.",
		PointTo: "the place in your documentation or code that says versions are not kept (kine: pkg/server/compact.go). " +
			"Kubernetes' compaction compares the version of compact_rev_key, so a store that keeps no versions must " +
			"still count that key's writes (kine special-cases it); no probe checks that yet.",
	}, {
		Name:    history.LimitationNoSizeLimit,
		Summary: "the server accepts requests of any size, where etcd refuses those over its limit (1.5 MiB by default)",
		Excuses: "the probe kv/oversized-request is `limitation` when its oversized put was accepted (answered without an " +
			"error); refused with another error than etcd's, it still fails. No check of a run meets it.",
		PointTo: "the place in your documentation that states the largest request the server takes, or that it sets none.",
	}}
}

// LimitationNamed is the limitation of that name.
func LimitationNamed(name string) (LimitationDoc, bool) {
	i := slices.IndexFunc(Limitations(), func(l LimitationDoc) bool { return l.Name == name })
	if i < 0 {
		return LimitationDoc{}, false
	}
	return Limitations()[i], true
}

// LimitationNames lists the names a run may declare.
func LimitationNames() []string {
	var out []string
	for _, l := range Limitations() {
		out = append(out, l.Name)
	}
	return out
}

// DeclaredReason is what the reports say of a limitation the user
// declared on the command line (kine's own are quoted from kine).
func DeclaredReason(l LimitationDoc) string {
	return "declared with --limitation " + l.Name + ": " + l.Summary
}
