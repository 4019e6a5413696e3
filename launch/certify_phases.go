package launch

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/reports"
	"github.com/vigil-suite/vigil/suites/conformance"
	"github.com/vigil-suite/vigil/suites/conformance/kubeprobes"
)

// Requirement verdicts: what certify says of each probe and check.
const (
	ReqPass        = "pass"
	ReqFail        = "fail"
	ReqUnsupported = "unsupported"
	ReqUnknown     = "unknown"
)

// Requirement is one probe or check of a phase, as certify judges it.
type Requirement struct {
	// Name is "<phase>/<probe or check>", e.g. "etcd-probes/kv/range-prefix".
	Name    string `json:"name"`
	Phase   string `json:"phase"`
	Kind    string `json:"kind"` // probe or check
	Title   string `json:"title,omitempty"`
	Verdict string `json:"verdict"`
	// Evidence is what was asked and answered: a check's evidence, or a
	// probe's transcript summary.
	Evidence string `json:"evidence"`
	// Witness is the smallest proof of a failure (the probe's failed
	// expectation and first differences, the check's violation with the
	// fewest records).
	Witness string `json:"witness,omitempty"`
	Repro   string `json:"repro"`
	// Report is the phase's report, relative to the certificate.
	Report string `json:"report,omitempty"`
	// CoveredBy are the probes that judged the guarantee of a check the
	// run gave no chance to (coverSkipped).
	CoveredBy []string `json:"covered_by,omitempty"`

	skipped bool // a check the run gave nothing to judge
}

// Phase is one phase's outcome.
type Phase struct {
	Key   string `json:"key"`
	Title string `json:"title"`
	Dir   string `json:"dir,omitempty"` // relative to the certificate
	Exit  int    `json:"exit"`
	// SetupFailed: the phase could not run (its servers did not start);
	// Error says why.
	SetupFailed  bool              `json:"setup_failed,omitempty"`
	Error        string            `json:"error,omitempty"`
	Faults       []string          `json:"faults,omitempty"`
	LeftOut      map[string]string `json:"faults_left_out,omitempty"`
	Note         string            `json:"note,omitempty"`
	Requirements []Requirement     `json:"requirements"`
}

// CertifyPhases is how many phases a complete certify runs.
const CertifyPhases = 4

// Decide turns the phases into the verdict: setup error when the first
// phase could not reach the server; not ready when any requirement
// fails; inconclusive when none fails but a phase did not run or a
// requirement is unsupported or unknown; ready otherwise.
func Decide(phases []Phase) (verdict string, exit int, reason string) {
	if len(phases) == 0 || phases[0].SetupFailed {
		why := "nothing ran"
		if len(phases) > 0 {
			why = phases[0].Error
		}
		return "setup error", ExitSetup, "the first phase could not run (the server, or the reference, could not be started or reached): " + why
	}
	var failed, open []string
	n := 0
	for _, p := range phases {
		if p.SetupFailed || p.Error != "" {
			open = append(open, fmt.Sprintf("phase %q did not complete: %s", p.Title, p.Error))
		}
		for _, r := range p.Requirements {
			n++
			switch r.Verdict {
			case ReqFail:
				failed = append(failed, r.Name)
			case ReqUnsupported, ReqUnknown:
				open = append(open, r.Name+" "+r.Verdict)
			}
		}
	}
	switch {
	case len(failed) > 0:
		return "not ready", ExitFail, fmt.Sprintf("%d of %d requirements fail: %s", len(failed), n, short(failed))
	case len(phases) < CertifyPhases:
		return "inconclusive", ExitUnknown, fmt.Sprintf("only %d of %d phases ran", len(phases), CertifyPhases)
	case n == 0:
		return "inconclusive", ExitUnknown, "no requirement was judged"
	case len(open) > 0:
		return "inconclusive", ExitUnknown, fmt.Sprintf("no requirement fails, but %d are open: %s", len(open), short(open))
	}
	return "ready", ExitPass, fmt.Sprintf("all %d requirements pass", n)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func short(list []string) string {
	if len(list) > 5 {
		return strings.Join(list[:5], ", ") + fmt.Sprintf(" and %d more", len(list)-5)
	}
	return strings.Join(list, ", ")
}

// quote is s as one shell word.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// limitations are the --limitation values of the etcd API phases: those
// declared. None declared is said as none for kine, whose fixture would
// otherwise declare kine's own: certify declares none unless told.
func (c *CertifyOptions) limitations() []string {
	if len(c.Limitations) == 0 && c.Fixture == "kine" {
		return []string{LimitationNone}
	}
	return c.Limitations
}

// limitationFlags are the --limitation flags of a repro in target's phases.
func (c *CertifyOptions) limitationFlags(target string) string {
	if target != "etcd" || len(c.limitations()) == 0 {
		return ""
	}
	return " --limitation " + strings.Join(c.limitations(), ",")
}

// probePhase runs the probes of target (etcd: the kubernetes profile's;
// kube: through a kube-apiserver over the server), each with its
// reference unless Reference is none.
func (c *CertifyOptions) probePhase(ctx context.Context, title, target string) Phase {
	key, dir := "etcd-probes", "1-etcd-probes"
	if target == "kube" {
		key, dir = "kube-probes", "3-kube-probes"
	}
	ph := Phase{Key: key, Title: title, Dir: dir}
	o := DefaultConformOptions()
	o.Target, o.Profile, o.Reference, o.KubeVersion = target, check.ProfileKubernetes, c.Reference, c.KubeVersion
	o.Out, o.Given = filepath.Join(c.Out, dir), map[string]string{}
	if target == "etcd" {
		o.Limitations = c.limitations()
	}
	srv := c.certifiedServer()
	srv.conform(&o)
	code, rep, err := conform(ctx, o)
	ph.Exit = code
	if err != nil {
		ph.Error, ph.SetupFailed = err.Error(), rep == nil
		return ph
	}
	if rep.Reference != "" {
		ph.Note = "reference: " + rep.Reference
	}
	repro := "vigil conform " + srv.flags(target) + c.limitationFlags(target) + " --profile kubernetes --repro "
	for _, r := range rep.Results {
		if r.OutsideProfile {
			continue
		}
		q := Requirement{Name: key + "/" + r.Name, Phase: key, Kind: "probe", Title: r.Title,
			Verdict: probeVerdict(r.Verdict), Evidence: transcriptSummary(r), Repro: repro + r.Name,
			Report: filepath.Join(dir, "result.json")}
		if q.Verdict != ReqPass {
			q.Witness = probeWitness(r)
		}
		ph.Requirements = append(ph.Requirements, q)
	}
	return ph
}

func probeVerdict(v conformance.Verdict) string {
	switch v {
	case conformance.Pass, conformance.Documented:
		return ReqPass
	case conformance.Fail, conformance.Differs:
		return ReqFail
	case conformance.Unsupported:
		return ReqUnsupported
	}
	return ReqUnknown // skipped, error
}

// transcriptSummary is a probe's transcript in one line: its calls, and
// how many were refused.
func transcriptSummary(r conformance.Result) string {
	count := map[string]int{}
	errs := 0
	for _, s := range r.Transcript {
		count[s.Call]++
		if s.Error != "" {
			errs++
		}
	}
	calls := make([]string, 0, len(count))
	for k, n := range count {
		calls = append(calls, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(calls)
	s := fmt.Sprintf("%d calls (%s), %d answered with an error", len(r.Transcript), strings.Join(calls, ", "), errs)
	if r.Reason != "" {
		s += "; " + r.Reason
	}
	return s
}

func probeWitness(r conformance.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", r.Verdict, r.Title)
	if r.Failure != "" {
		fmt.Fprintf(&b, "\n%s", r.Failure)
	}
	if r.Reason != "" {
		fmt.Fprintf(&b, "\n%s", r.Reason)
	}
	for i, d := range r.Diff {
		if i == 5 {
			fmt.Fprintf(&b, "\n… %d more differences", len(r.Diff)-5)
			break
		}
		fmt.Fprintf(&b, "\n%s", d)
	}
	return b.String()
}

// runPhase runs the kubernetes profile's workload on target with faults.
func (c *CertifyOptions) runPhase(ctx context.Context, title, target string) Phase {
	key, dir := "etcd-run", "2-etcd-run"
	if target == "kube" {
		key, dir = "kube-run", "4-kube-run"
	}
	ph := Phase{Key: key, Title: title, Dir: dir}
	o := DefaultOptions()
	o.Target, o.Profile, o.Seed, o.Vigil = target, check.ProfileKubernetes, c.Seed, c.Vigil
	o.Out, o.FaultInterval = filepath.Join(c.Out, dir), c.FaultInterval
	o.Workload.Duration = c.Duration
	if target == "etcd" {
		o.Limitations = c.limitations()
	} else {
		o.Kube.Version = c.KubeVersion
	}
	o.Given = map[string]string{"profile": o.Profile, "seed": fmt.Sprint(c.Seed), "duration": c.Duration.String()}
	srv := c.certifiedServer()
	srv.run(&o)
	ph.Faults, ph.LeftOut = c.certifyFaults(target)
	o.Faults = strings.Join(ph.Faults, ",")
	for _, f := range sortedKeys(ph.LeftOut) {
		logf("certify: fault %s left out: %s", f, ph.LeftOut[f])
	}
	code, err := Run(ctx, &o)
	ph.Exit = code
	r, rerr := readResult(o.Out)
	switch {
	case err != nil:
		ph.Error, ph.SetupFailed = err.Error(), true
		return ph
	case rerr != nil:
		ph.Error, ph.SetupFailed = rerr.Error(), true
		return ph
	case r.SetupFailed || r.Verdict == "error":
		ph.Error, ph.SetupFailed = r.Reason, r.SetupFailed
		return ph
	}
	repro := fmt.Sprintf("vigil run %s%s --profile kubernetes --seed %d --duration %s --schedule %s",
		srv.flags(target), c.limitationFlags(target), c.Seed, c.Duration, filepath.Join(o.Out, chaos.ScheduleFile))
	for _, x := range r.Checks {
		if x.OutsideProfile {
			continue
		}
		q := Requirement{Name: key + "/" + x.Name, Phase: key, Kind: "check", Verdict: checkVerdict(x),
			Evidence: checkEvidence(x), Repro: repro, Report: filepath.Join(dir, "report.html")}
		if x.Verdict == check.Fail {
			q.Witness = smallestWitness(x) + restsOnExit(r.Findings, x.Name)
		}
		q.skipped = x.Verdict == check.Skipped
		ph.Requirements = append(ph.Requirements, q)
	}
	return ph
}

// checkVerdict maps a check's verdict. A SHOULD check's failure is a
// warning in the run and stays one here: it passes, with the warning in
// its evidence and witness.
func checkVerdict(x check.Result) string {
	switch x.Verdict {
	case check.Pass, check.Documented:
		return ReqPass
	case check.Fail:
		if x.Should {
			return ReqPass
		}
		return ReqFail
	}
	return ReqUnknown // unknown; skipped, unless its probes judge it (coverSkipped)
}

// coverSkipped judges each check a run gave no chance to (skipped: a
// continue token never expired, no watch ran to its timeout) by the
// probes that isolate its guarantee, when the probe phases ran them: it
// passes when every one of them passed, and stays unknown otherwise.
func coverSkipped(phases []Phase) {
	probes := map[string]string{} // probe name -> verdict
	for _, p := range phases {
		for _, r := range p.Requirements {
			if r.Kind == "probe" {
				probes[strings.TrimPrefix(r.Name, p.Key+"/")] = r.Verdict
			}
		}
	}
	for i := range phases {
		for j := range phases[i].Requirements {
			r := &phases[i].Requirements[j]
			if !r.skipped {
				continue
			}
			name := strings.TrimPrefix(r.Name, phases[i].Key+"/")
			var by []string
			ok := true
			for _, pattern := range append(conformance.EtcdProbesFor(name), kubeprobes.ProbesFor(name)...) {
				for probe, v := range probes {
					if conformance.Matches(probe, pattern) {
						by = append(by, probe)
						ok = ok && v == ReqPass
					}
				}
			}
			sort.Strings(by)
			if len(by) > 0 && ok {
				r.Verdict, r.CoveredBy = ReqPass, by
				r.Evidence += "; not exercised by this run, judged by its probes instead: " + strings.Join(by, ", ") + " (pass)"
			}
		}
	}
}

func checkEvidence(x check.Result) string {
	var parts []string
	if x.Verdict == check.Fail && x.Should {
		parts = append(parts, fmt.Sprintf("warning (SHOULD): %d violations", len(x.Violations)))
	}
	if x.Evidence != nil {
		parts = append(parts, x.Evidence.String())
	}
	if x.Judged > 0 {
		parts = append(parts, fmt.Sprintf("%d observations judged", x.Judged))
	}
	if x.Reason != "" {
		parts = append(parts, x.Reason)
	}
	return strings.Join(parts, "; ")
}

// smallestWitness is the violation with the fewest records: the
// shortest story of the failure.
func smallestWitness(x check.Result) string {
	if len(x.Violations) == 0 {
		return x.Reason
	}
	size := func(v check.Violation) int { return len(v.Operations) + len(v.Events) + len(v.KubeEvents) }
	best := x.Violations[0]
	for _, v := range x.Violations[1:] {
		if size(v) < size(best) {
			best = v
		}
	}
	s := best.Message
	if best.Want != "" || best.Got != "" {
		s += fmt.Sprintf("\nwant %s, got %s", best.Want, best.Got)
	}
	if len(best.Log) > 0 {
		s += "\nlog:\n" + strings.Join(best.Log, "\n")
	}
	s += fmt.Sprintf("\nrecords: operations %v, %d watch events, %d Kubernetes events (of %d violations)",
		best.Operations, len(best.Events), len(best.KubeEvents), len(x.Violations))
	return s
}

// restsOnExit names the server exits that violations of check rest on
// (reports.Findings puts them under the exit's finding): a requirement
// failing for the time a server was dead says so.
func restsOnExit(findings []reports.Finding, check string) string {
	var exits []string
	for _, f := range findings {
		for _, p := range f.RestingOnIt {
			if p.Check == check && p.RestsOnExit != "" && !slices.Contains(exits, p.RestsOnExit) {
				exits = append(exits, p.RestsOnExit)
			}
		}
	}
	if len(exits) == 0 {
		return ""
	}
	return "\nresting on the server's death (run/server-exit): " + strings.Join(exits, "; ")
}
