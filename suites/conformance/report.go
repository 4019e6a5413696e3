package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/reports"
)

// Report is a whole conformance run, as result.json holds it.
type Report struct {
	Format int `json:"format"`
	// Target and Reference describe the servers ("etcd v3.6.16 at ...").
	Target string `json:"target"`
	// Family is the API: "etcd" or "kube".
	Family    string `json:"family"`
	Reference string `json:"reference,omitempty"`
	// Profile is what the target was held to (etcd: the whole API;
	// kubernetes: what Kubernetes relies on); a probe outside it is
	// reported but fails nothing.
	Profile string `json:"profile"`
	// Limitations are the documented departures declared for the target,
	// by name, with where it states them.
	Limitations map[string]string `json:"limitations,omitempty"`
	Results     []Result          `json:"results"`
	// Counts per verdict, of every probe; OutsideCounts, per verdict, of
	// the probes outside the profile among them.
	Counts        map[Verdict]int `json:"counts"`
	OutsideCounts map[Verdict]int `json:"outside_profile_counts,omitempty"`
}

// NewReport counts the verdicts. The profile is the etcd profile unless
// the results were marked for another (ApplyProfile) and the caller sets
// Profile.
func NewReport(target, reference string, results []Result) Report {
	r := Report{Format: 1, Target: target, Family: "etcd", Reference: reference, Profile: check.ProfileEtcd, Results: results,
		Counts: map[Verdict]int{}}
	for _, x := range results {
		r.Counts[x.Verdict]++
		if x.OutsideProfile {
			if r.OutsideCounts == nil {
				r.OutsideCounts = map[Verdict]int{}
			}
			r.OutsideCounts[x.Verdict]++
		}
		if x.family != "" {
			r.Family = x.family
		}
	}
	return r
}

// Failed reports whether any probe of the profile failed, differed or
// errored.
func (r Report) Failed() bool {
	for _, x := range r.Results {
		if x.Verdict.Failed() && !x.OutsideProfile {
			return true
		}
	}
	return false
}

// CompareWithReference marks Differs every probe that passed on both
// servers but whose normalized transcripts differ; one that differs only
// in the fields a limitation masks is Documented with its reason.
func CompareWithReference(target, reference []Result, lims ...Limitation) []Result {
	ref := map[string]Result{}
	for _, r := range reference {
		ref[r.Name] = r
	}
	var mask []string
	for _, l := range lims {
		mask = append(mask, l.Mask...)
	}
	out := make([]Result, len(target))
	for i, r := range target {
		out[i] = r
		w, ok := ref[r.Name]
		if ok && w.Verdict == Pass {
			// The reference's answers are what a reproduction expects.
			out[i].ref, out[i].mask = w.repro, mask
		}
		if !ok || r.Verdict != Pass || w.Verdict != Pass {
			continue
		}
		d := diff(r.Transcript, w.Transcript)
		if len(d) == 0 {
			continue
		}
		out[i].Verdict, out[i].Diff = Differs, d
		for _, l := range lims {
			if len(l.Mask) > 0 && len(diff(masked(r.Transcript, l.Mask), masked(w.Transcript, l.Mask))) == 0 {
				out[i].Verdict, out[i].Reason = Documented, l.Reason
				break
			}
		}
	}
	return out
}

// Table prints one line per probe, then each failure with its evidence.
func (r Report) Table(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROBE\tVERDICT\tWHAT")
	for _, x := range r.Results {
		what := ""
		switch x.Verdict {
		case Fail, Differs, Error:
			what = x.Title
		case Unsupported, Skipped, Documented:
			what = x.Reason
		}
		if x.OutsideProfile && x.Verdict.Failed() {
			what = outsideNote(r.Profile) + what
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", x.Name, strings.ToUpper(string(x.Verdict)), what)
	}
	tw.Flush()
	for _, x := range r.Results {
		if !x.Verdict.Failed() {
			continue
		}
		note := ""
		if x.OutsideProfile {
			note = " " + strings.TrimSuffix(outsideNote(r.Profile), ": ")
		}
		fmt.Fprintf(w, "\n%s %s: %s%s\n", strings.ToUpper(string(x.Verdict)), x.Name, x.Title, note)
		if x.Failure != "" {
			fmt.Fprintf(w, "  expected vs got:\n%s\n", indent(x.Failure, "    "))
		}
		if x.Reason != "" {
			fmt.Fprintf(w, "  %s\n", x.Reason)
		}
		if x.Broke != nil {
			fmt.Fprintf(w, "  %s\n", x.Broke)
		}
		for _, d := range x.Diff {
			fmt.Fprintf(w, "  differs from the reference: %s\n", d)
		}
		fmt.Fprintln(w, "  requests and answers:")
		for _, s := range x.Transcript {
			fmt.Fprintf(w, "    %s\n", s.String())
		}
		flag := ""
		if r.Family != "etcd" {
			flag = "--target " + r.Family + " "
		}
		switch {
		case x.ReproFile != "":
			fmt.Fprintf(w, "  reproduce: %s; a standalone Go program: %s\n", x.Again, x.ReproFile)
		case x.Again != "":
			fmt.Fprintf(w, "  reproduce: %s\n", x.Again)
		default:
			fmt.Fprintf(w, "  reproduce: vigil conform %s--only %s; a standalone Go program: vigil conform %s--repro %s\n", flag, x.Name, flag, x.Name)
		}
	}
	var unsupported []string
	for _, x := range r.Results {
		if x.Verdict == Unsupported {
			unsupported = append(unsupported, x.Name)
		}
	}
	if len(unsupported) > 0 {
		fmt.Fprintf(w, "\nunsupported by the target: %s\n", strings.Join(unsupported, ", "))
	}
	for _, x := range r.Results {
		if x.Broke != nil {
			fmt.Fprintf(w, "\nprobe %s left the server unable to %s; %s\n", x.Name, x.Broke.unable(), x.Broke.outcome())
		}
	}
	lim := ""
	if n := r.Counts[Documented]; n > 0 {
		lim = fmt.Sprintf(", %d documented limitation", n)
	}
	fmt.Fprintf(w, "\n%d probes: %d pass, %d fail, %d differ, %d unsupported%s, %d skipped, %d error\n", len(r.Results),
		r.Counts[Pass], r.Counts[Fail], r.Counts[Differs], r.Counts[Unsupported], lim, r.Counts[Skipped], r.Counts[Error])
	r.footer(w)
}

// outsideNote marks a failure outside the profile, in the table.
func outsideNote(profile string) string {
	return "(outside the profile " + profile + ": reported, fails nothing) "
}

// footer says what the target was held to: the profile, how many probes
// fell outside it and how they failed, and each declared limitation.
func (r Report) footer(w io.Writer) {
	outside := 0
	for _, n := range r.OutsideCounts {
		outside += n
	}
	line := "profile " + r.Profile
	if r.Profile == check.ProfileEtcd {
		line += ": every probe counts"
	} else {
		failed := r.OutsideCounts[Fail] + r.OutsideCounts[Differs] + r.OutsideCounts[Error]
		line += fmt.Sprintf(": %d probes in it; %d outside it, of which %d failed, differed or erred (reported, failing nothing)",
			len(r.Results)-outside, outside, failed)
	}
	fmt.Fprintln(w, line)
	for _, name := range slices.Sorted(maps.Keys(r.Limitations)) {
		fmt.Fprintf(w, "declared limitation %s: %s\n", name, r.Limitations[name])
	}
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pre)
}

// Write saves result.json and junit.xml (one testcase per probe) in dir.
func (r Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "result.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	var cases []reports.JUnitCase
	var total time.Duration
	for _, x := range r.Results {
		total += x.Duration
		c := reports.JUnitCase{Name: x.Name, Class: "conform." + strings.SplitN(x.Name, "/", 2)[0], Seconds: x.Duration.Seconds()}
		switch x.Verdict {
		case Fail, Differs:
			c.Failure, c.Detail = x.Title, x.Failure+strings.Join(x.Diff, "\n")
			if x.Broke != nil {
				c.Detail += "\n" + x.Broke.String()
			}
		case Error:
			c.Error, c.Detail = x.Title, x.Failure+x.Reason
		case Unsupported, Skipped, Documented:
			c.Skipped = string(x.Verdict) + ": " + x.Reason
		}
		if x.OutsideProfile && (c.Failure != "" || c.Error != "") {
			// Reported, but a CI system must not count it against the target.
			c.Out = strings.ToUpper(string(x.Verdict)) + ", outside the profile " + r.Profile + ": " + c.Failure + c.Error + "\n" + c.Detail
			c.Failure, c.Error, c.Detail = "", "", ""
		}
		c.Props = map[string]string{"profiles": strings.Join(x.Profiles, ",")}
		cases = append(cases, c)
	}
	props := map[string]string{"target": r.Target, "family": r.Family, "reference": r.Reference, "profile": r.Profile}
	for name, why := range r.Limitations {
		props["limitation."+name] = why
	}
	return reports.WriteJUnitCases(filepath.Join(dir, "junit.xml"), "vigil conform "+r.Target, total.Seconds(), cases, props)
}

// EtcdProbesFor lists the etcd probes that isolate a chaos-run check, for
// the hint a failed run prints (kubeprobes.ProbesFor lists the Kubernetes
// ones).
func EtcdProbesFor(check string) []string {
	var out []string
	for _, p := range EtcdProbes() {
		if slices.Contains(p.Checks, check) {
			out = append(out, p.Name)
		}
	}
	return out
}
