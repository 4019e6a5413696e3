// Package conformance holds vigil's deterministic conformance probes of the
// etcd v3 API, and the framework every family of probes shares (verdicts,
// results, transcripts and their normalization, reports, limitations,
// reproductions); the Kubernetes API's probes are in package kubeprobes,
// on the same framework. Each probe is one behaviour of the API, a handful
// of requests on a key prefix (or namespace) of its own, with exact
// expectations written as gomega assertions. Every request and answer a
// probe makes is kept in its transcript, normalized (revisions relative to
// the probe's own start, ids and times masked), so that a run against the
// target can be compared with a run against a reference server, and so
// that a failure comes with a standalone reproduction.
//
// The probes run from `vigil conform` and from another module's `go test`
// (RunEtcd, kubeprobes.RunTest), each probe a subtest.
package conformance

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/onsi/gomega/format"
	"google.golang.org/grpc/status"
)

// A failed expectation on a gRPC error would print the error's whole
// internal structure (pages of protobuf descriptors); its code and
// message are what a reader needs.
func init() {
	format.RegisterCustomFormatter(func(v any) (string, bool) {
		err, ok := v.(error)
		if !ok {
			return "", false
		}
		if _, isStatus := status.FromError(err); !isStatus {
			return "", false
		}
		return err.Error(), true
	})
}

// Verdict is what a probe concluded about the target.
type Verdict string

const (
	// Pass: every expectation held.
	Pass Verdict = "pass"
	// Fail: an expectation did not hold; Failure says which.
	Fail Verdict = "fail"
	// Unsupported: the target refused a request of the probe as
	// unimplemented (gRPC Unimplemented or an error saying "not
	// supported", "unsupported" or "not implemented"; HTTP 404/405 on a
	// known path).
	Unsupported Verdict = "unsupported"
	// Skipped: the probe does not apply here (Reason says why: a version
	// that lacks the feature, a --only filter, a setup that cannot be made).
	Skipped Verdict = "skipped"
	// Differs: every expectation held, but the normalized transcript is not
	// the reference server's (Diff lists where).
	Differs Verdict = "differs"
	// Error: the probe could not be run (the target stopped answering).
	Error Verdict = "error"
	// Documented: the probe failed exactly as the target's own
	// documentation or code says it will (Reason quotes it and says
	// where); see Limitation and ApplyLimitations.
	Documented Verdict = "limitation"
)

// Failed reports whether the verdict fails a conformance run.
func (v Verdict) Failed() bool { return v == Fail || v == Differs || v == Error }

// Info describes a probe: the same for the etcd and the Kubernetes probes.
type Info struct {
	// Name is "<area>/<behaviour>", e.g. "watch/filter-nodelete"; unique.
	Name string `json:"name"`
	// Title is the one sentence a maintainer would accept as a bug title
	// when the probe fails, e.g. "a watch with the NoDelete filter
	// receives DELETE events".
	Title string `json:"title"`
	// Checks names the chaos-run checks (checkers' names, e.g.
	// "watch/filter") whose guarantee this probe isolates, so a failed
	// chaos run can point at it.
	Checks []string `json:"checks,omitempty"`
}

// Step is one request and its answer, as the transcript keeps them.
type Step struct {
	// Call names the API call: "Range", "Put", "Txn", "Watch.Send",
	// "Watch.Recv", "LeaseGrant", ... for etcd; the HTTP method and a
	// path template ("GET /api/v1/namespaces/{ns}/configmaps") for
	// Kubernetes.
	Call string `json:"call"`
	// Request and Answer are normalized JSON (see Normalize*).
	Request json.RawMessage `json:"request,omitempty"`
	Answer  json.RawMessage `json:"answer,omitempty"`
	// Error is the normalized error: a gRPC code and etcd's error text,
	// or an HTTP status and reason.
	Error string `json:"error,omitempty"`
	// Unstable marks a step whose answer legitimately varies from run to
	// run (timing): it is shown but not compared with the reference.
	Unstable bool `json:"unstable,omitempty"`
}

// Result is one probe's outcome.
type Result struct {
	Info
	Verdict Verdict `json:"verdict"`
	// Reason says why a probe was skipped or unsupported.
	Reason string `json:"reason,omitempty"`
	// Failure is the failed expectation, as gomega worded it.
	Failure string `json:"failure,omitempty"`
	// Diff lists the differences from the reference transcript.
	Diff []string `json:"diff,omitempty"`
	// Again, for a probe that no name alone runs (a grammar sequence),
	// is the command that runs it again; ReproFile the reproduction
	// program written for it, if one was.
	Again      string        `json:"again,omitempty"`
	ReproFile  string        `json:"repro_file,omitempty"`
	Transcript []Step        `json:"transcript,omitempty"`
	Duration   time.Duration `json:"duration_ns"`
	// Profiles are the profiles the probe belongs to (ProfilesOf);
	// OutsideProfile marks a probe outside the conform's profile: its
	// verdict is shown but fails nothing (ApplyProfile).
	Profiles       []string `json:"profiles,omitempty"`
	OutsideProfile bool     `json:"outside_profile,omitempty"`

	// Broke says that the server stopped serving after this probe, and
	// what vigil did about it (see RunEtcdProbes).
	Broke *Breakage `json:"broke_server,omitempty"`

	setupFailed bool                // the probe could not start: the server did not serve
	repro       *reproData          // the raw run of an etcd probe, for Reproduction
	ref         *reproData          // the reference server's run of it: the expected answers
	mask        []string            // answer fields a limitation leaves meaningless
	family      string              // the API, when not etcd's (see SetReproduction)
	program     func(Result) string // the reproduction of a probe of another family
}

// SetReproduction marks r as the result of a probe of another API than
// etcd's, family ("kube"), whose Reproduction is program(r). A probe
// family outside this package (package kubeprobes) attaches with it the
// standalone program that replays its run; NewReport takes the report's
// family from it.
func (r *Result) SetReproduction(family string, program func(Result) string) {
	r.family, r.program = family, program
}

// probeSkip and probeFail are the panics SkipProbe and FailProbe end a
// scenario with; RunGuarded recovers them.
type probeSkip struct{ reason string }
type probeFail struct{ msg string }

// SkipProbe ends the probe scenario running under RunGuarded as Skipped,
// with the reason. It does not return.
func SkipProbe(reason string) { panic(probeSkip{reason}) }

// FailProbe ends the probe scenario running under RunGuarded as Fail,
// with msg (the failed expectation). It does not return; it is the fail
// handler of a probe's gomega assertions:
//
//	g := gomega.NewGomega(func(msg string, _ ...int) { conformance.FailProbe(msg) })
func FailProbe(msg string) { panic(probeFail{msg}) }

// RunGuarded runs a probe's scenario and turns how it ended into a
// verdict: Pass if it returned, Skipped with the reason if it called
// SkipProbe, Fail with the message if it called FailProbe (as its
// assertions do), Error with the stack on any other panic. Every probe
// family runs its scenarios through it.
func RunGuarded(run func()) (v Verdict, reason, failure string) {
	defer func() {
		switch x := recover().(type) {
		case nil:
			v = Pass
		case probeSkip:
			v, reason = Skipped, x.reason
		case probeFail:
			v, failure = Fail, x.msg
		default:
			v, failure = Error, fmt.Sprintf("probe panicked: %v\n%s", x, debug.Stack())
		}
	}()
	run()
	return
}

// Selected reports whether the probe name is among only, a --only list
// (see Matches); an empty list selects every probe.
func Selected(name string, only []string) bool {
	if len(only) == 0 {
		return true
	}
	return slices.ContainsFunc(only, func(o string) bool { return Matches(name, o) })
}

// Matches reports whether the --only entry o names probe name: the name
// itself, or a prefix ending in "/" (an area or family) or "@" (a
// Kubernetes behaviour on every resource).
func Matches(name, o string) bool {
	return o == name || (strings.HasSuffix(o, "/") || strings.HasSuffix(o, "@")) && strings.HasPrefix(name, o)
}
