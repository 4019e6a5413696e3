package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// PageFile is the run's report for people: report.html, one
// self-contained page (styles and plots inline, nothing fetched).
const PageFile = "report.html"

var pageTmpl = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>vigil run {{.Verdict}}: {{.Target}}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 1000px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: .2em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: .6em 0; } th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f5f5f5; } td.fig { font-size: 12px; color: #555; }
.v { font-weight: 700; padding: 1px 8px; border-radius: 3px; }
.pass { background: #c8e6c9; } .fail { background: #ef9a9a; } .warn { background: #ffe082; }
.unknown { background: #fff59d; } .skipped, .unsupported, .limitation { background: #e0e0e0; } .error { background: #ffcc80; }
pre { background: #f7f7f7; padding: .8em; overflow-x: auto; font-size: 12px; }
code { background: #f3f3f3; padding: 0 3px; } svg { max-width: 100%; height: auto; }
</style></head><body>
<h1>vigil run: <span class="v {{.VerdictClass}}">{{.Verdict}}</span></h1>
<p>{{.Target}} · seed {{.Seed}} · {{.Duration}} of workload · vigil {{.Vigil}}{{if .Started}} · started {{.Started}}{{end}}</p>
{{if .Reason}}<p><b>{{.Reason}}</b></p>{{end}}
{{if .Cut}}<p><b>The history file was cut short ({{.Cut}}); this page shows its records before the cut.</b></p>{{end}}
<p>{{.Stats}}</p>
<p>Reproduce it: <code>{{.Repro}}</code></p>
<p>Held to the <b>{{.Profile}}</b> profile{{if .Outside}}; outside it, reported only: {{range $i, $c := .Outside}}{{if $i}}, {{end}}<code>{{$c}}</code>{{end}}{{end}}.</p>
{{if .Limitations}}<p>Declared limitations:</p><ul>{{range .Limitations}}<li><code>{{.Name}}</code>: {{.Value}}</li>{{end}}</ul>{{end}}
{{if .Flags}}<details><summary>flags of the run</summary><table>{{range .Flags}}<tr><td><code>--{{.Name}}</code></td><td><code>{{.Value}}</code></td></tr>{{end}}</table></details>{{end}}

{{if .Forms}}<details><summary>request forms: {{.FormsSummary}}</summary>
<table><tr><th>form</th><th>sent</th><th>answered</th><th>refused</th><th>refused before the run, in the target's words</th></tr>
{{range .Forms}}<tr><td><code>{{.Form}}</code></td><td>{{.Sent}}</td><td>{{.Answered}}</td><td>{{.Refused}}</td><td class="fig">{{.RefusedBefore}}</td></tr>
{{end}}</table></details>{{end}}
{{if .Patterns}}<details><summary>placement and timing patterns: {{.PatternsSummary}}</summary>
<table><tr><th>pattern</th><th>sent</th><th>answered</th></tr>
{{range .Patterns}}<tr><td><code>{{.Pattern}}</code></td><td>{{.Sent}}</td><td>{{.Answered}}</td></tr>
{{end}}</table></details>{{end}}

{{if .KubeVerbs}}<details><summary>Kubernetes verbs × options: {{.KubeVerbsSummary}}</summary>
{{if .NeverSent}}<p>Never sent: {{range $i, $p := .NeverSent}}{{if $i}}, {{end}}<code>{{$p}}</code>{{end}}</p>{{end}}
<table><tr><th>verb.option=class</th><th>sent</th><th>answered</th><th>refused (415, 405)</th></tr>
{{range .KubeVerbs}}<tr><td><code>{{.Production}}</code></td><td>{{.Sent}}</td><td>{{.Answered}}</td><td>{{.Refused}}</td></tr>
{{end}}</table></details>{{end}}

{{if .Productions}}<details><summary>grammar productions: {{.ProductionsSummary}}</summary>
{{if .NeverDrawn}}<p>Never drawn: {{range $i, $p := .NeverDrawn}}{{if $i}}, {{end}}<code>{{$p}}</code>{{end}}</p>{{end}}
<table><tr><th>production</th><th>sent</th><th>answered</th><th>refused</th><th>refused before the run, in the target's words</th></tr>
{{range .Productions}}<tr><td><code>{{.Production}}</code></td><td>{{.Sent}}</td><td>{{.Answered}}</td><td>{{.Refused}}</td><td class="fig">{{.RefusedBefore}}</td></tr>
{{end}}</table></details>{{end}}

<h2>Checks</h2>
<table><tr><th>check</th><th>verdict</th><th>evidence: asked, answered</th><th>detail</th></tr>
{{range .Checks}}<tr><td><code>{{.Name}}</code></td><td><span class="v {{.Class}}">{{.Word}}</span></td><td class="fig">{{.Evidence}}</td><td class="fig">{{.Detail}}</td></tr>
{{end}}</table>

{{if .Findings}}<h2 id="findings">Findings</h2>
{{range .Findings}}<p id="finding-{{.N}}"><b>{{.N}}. <code>{{.Check}}</code></b>{{if .Also}}, one cause with {{range $i, $c := .Also}}{{if $i}}, {{end}}<code>{{$c}}</code>{{end}}{{end}}{{if .Resting}}; resting on it: {{range $i, $c := .Resting}}{{if $i}}, {{end}}<code>{{$c}}</code>{{end}}{{end}}{{if .At}} · at <a href="#plots">{{.At}}</a> in the run (marked <i>finding {{.N}}</i> on the plots){{end}}</p>
{{end}}<pre>{{.FindingsText}}</pre>{{end}}

<h2 id="plots">Timeline</h2>
<p>The x axis of every plot is the run's time, cut into buckets of {{.Bucket}}: each plot shows per bucket what the calls or events
in it did (latency and lag as p50 and p99, read from a log-scale histogram to within 6 %, and the slowest, exact; throughput as calls
per second), so that the page keeps its size however long the run. Shaded: the faults, each named at its start where there is room (all {{.FaultCount}} are listed below).{{if .Findings}}
Red dashed: the findings' smallest witnesses, at their first record.{{end}}</p>
{{range .Plots}}<figure>{{.}}</figure>
{{end}}{{if .Faults}}<details><summary>the {{.FaultCount}} fault(s)</summary><table><tr><th>fault</th><th>targets</th><th>from (s)</th><th>to (s)</th></tr>
{{range .Faults}}<tr><td><code>{{.Name}}</code></td><td>{{.Targets}}</td><td>{{.From}}</td><td>{{.To}}</td></tr>
{{end}}</table></details>{{end}}
<h2>Files</h2>
<ul>{{range .Files}}<li><a href="{{.Href}}">{{.Href}}</a>: {{.What}}</li>{{end}}</ul>
</body></html>
`))

type pageCheck struct{ Name, Class, Word, Evidence, Detail string }
type pageFinding struct {
	N     int
	Check string
	// Also and Resting name the other checks of the finding: those whose
	// violations share its records, and those resting on a watch it
	// convicts.
	Also, Resting []string
	At            string
}
type pageFile struct{ Href, What string }
type pageFault struct{ Name, Targets, From, To string }
type pageFlag struct{ Name, Value string }

// WritePage writes report.html for the run in dir from its history and
// result: the verdict, how to reproduce it, the checks, the findings with
// their records, and the plots over time with the faults shaded.
func WritePage(dir string, h *history.History, r Result) error {
	d := NewDigest()
	d.Add(h, nil)
	d.noteWitnesses(h, r.Findings[:min(len(r.Findings), maxShownFindings)])
	return WritePageDigest(dir, d, r)
}

// WritePageDigest writes report.html for the run in dir from its digest
// and result (WritePage). A finding of r is marked on the plots when d
// saw its witness (Digest.Add found it in a segment).
func WritePageDigest(dir string, d *Digest, r Result) error {
	d.init()
	var markers []Marker
	var findings []pageFinding
	for i, f := range r.Findings {
		if i == maxShownFindings {
			break
		}
		pf := pageFinding{N: i + 1, Check: f.Check}
		for _, p := range f.Also {
			if p.Check != f.Check && !slices.Contains(pf.Also, p.Check) {
				pf.Also = append(pf.Also, p.Check)
			}
		}
		for _, p := range f.RestingOnIt {
			if !slices.Contains(pf.Resting, p.Check) {
				pf.Resting = append(pf.Resting, p.Check)
			}
		}
		if at, ok := d.witness[witnessKey(f.Witness)]; ok {
			pf.At = fmt.Sprintf("%.1f s", at.Seconds())
			markers = append(markers, Marker{At: at, Label: fmt.Sprintf("finding %d", i+1)})
		}
		findings = append(findings, pf)
	}
	b := bands{faults: d.faults, markers: markers}
	drawn, err := d.timelinePlots(b)
	if err != nil {
		return err
	}
	var plots []template.HTML
	for _, p := range drawn {
		svg, err := svgOf(p)
		if err != nil {
			return err
		}
		plots = append(plots, template.HTML(svg)) // gonum's SVG output, not user input
	}
	var text bytes.Buffer
	writeFindings(&text, r)
	var checks []pageCheck
	var outside []string
	for _, c := range r.Checks {
		word := verdictWord(c)
		detail := figures(c.Figures)
		if c.Reason != "" {
			detail = c.Reason + " " + detail
		}
		if c.OutsideProfile {
			detail = "(outside the profile " + r.Profile + ") " + detail
			outside = append(outside, c.Name)
		}
		checks = append(checks, pageCheck{Name: c.Name, Class: strings.ToLower(word), Word: word,
			Evidence: evidenceText(c), Detail: detail})
	}
	var lims []pageFlag
	for _, k := range slices.Sorted(maps.Keys(r.Limitations)) {
		lims = append(lims, pageFlag{k, r.Limitations[k]})
	}
	profile := r.Profile
	if profile == "" {
		profile = check.ProfileEtcd
	}
	var flags []pageFlag
	for _, k := range slices.Sorted(maps.Keys(r.Flags)) {
		flags = append(flags, pageFlag{k, r.Flags[k]})
	}
	target := r.Target.Kind
	if r.Target.Version != "" {
		target += " " + r.Target.Version
	}
	if r.Target.Fixture != "" {
		target += fmt.Sprintf(" (%s fixture, %d member(s))", r.Target.Fixture, max(r.Target.Members, 1))
	}
	started := ""
	if !d.meta.Started.IsZero() {
		started = d.meta.Started.UTC().Format(time.RFC3339)
	}
	stats := fmt.Sprintf("%d operations (%d failed), %d watches, %d watch events", r.Stats.Operations, r.Stats.FailedOperations,
		r.Stats.Watches, r.Stats.WatchEvents)
	if r.Stats.Kube != nil {
		stats = r.Stats.Kube.String()
	}
	if r.Segments > 0 {
		stats += fmt.Sprintf("; judged in %d segments, each by every check as it ended", r.Segments)
	}
	var files []pageFile
	for _, f := range []pageFile{
		{"result.json", "every check's verdict, figures and violations (up to the checkers' cap)"},
		{"history.jsonl.zst", "the recorded history every check read, zstd-compressed (vigil check re-judges it; zstdcat shows it)"},
		{"history.jsonl", "the recorded history every check read (vigil check re-judges it)"},
		{"history.jsonl.gz", "the recorded history, gzipped"},
		{"linearizability.html", "the linearizability view: the operations of the search window on a timeline, one row per client"},
		{"schedule.json", "the fault schedule, to replay with --schedule"},
		{"junit.xml", "the checks as JUnit test cases"},
	} {
		if _, err := os.Stat(filepath.Join(dir, f.Href)); err == nil {
			files = append(files, f)
		}
	}
	forms := r.Stats.Forms
	if forms == nil && r.Stats.Kube == nil {
		forms = d.countForms() // a result.json written before forms were counted
	}
	patterns := r.Stats.Patterns
	if patterns == nil && r.Stats.Kube == nil {
		patterns = d.countPatterns()
	}
	prods, never := r.Stats.Productions, r.Stats.NeverDrawn
	if prods == nil && r.Stats.Kube == nil {
		prods, never = d.countProductions()
	}
	var kubeVerbs []ProductionCount
	var neverSent []string
	if r.Stats.Kube != nil {
		kubeVerbs, neverSent = r.Stats.Kube.Verbs, r.Stats.Kube.NeverSent
		if kubeVerbs == nil {
			kubeVerbs, neverSent = d.kubeCoverage() // a result.json written before they were counted
		}
	}
	var out bytes.Buffer
	err = pageTmpl.Execute(&out, map[string]any{
		"Verdict": strings.ToUpper(r.Verdict), "VerdictClass": strings.ToLower(r.Verdict), "Reason": r.Reason,
		"Target": target, "Seed": r.Seed, "Duration": fmt.Sprintf("%.0f s", r.DurationS), "Vigil": r.Vigil, "Started": started,
		"Stats": stats, "Repro": reproCommand(dir, r), "Flags": flags, "Checks": checks, "Findings": findings,
		"FindingsText": text.String(), "Plots": plots, "Files": files, "Bucket": d.timeline().width.String(),
		"Faults": faultRows(d.faults), "FaultCount": len(d.faults), "Cut": d.cut,
		"Forms": forms, "FormsSummary": formsSummary(forms),
		"Patterns": patterns, "PatternsSummary": patternsSummary(patterns),
		"KubeVerbs": kubeVerbs, "NeverSent": neverSent, "KubeVerbsSummary": kubeVerbsSummary(kubeVerbs, neverSent),
		"Productions": prods, "NeverDrawn": never, "ProductionsSummary": productionsSummary(prods, never),
		"Profile": profile, "Outside": outside, "Limitations": lims,
	})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, PageFile), out.Bytes(), 0o644)
}

// formsSummary says in a few words how many forms were sent and refused.
func formsSummary(forms []FormCount) string {
	sent, before, during := 0, 0, 0
	for _, f := range forms {
		if f.Sent > 0 {
			sent++
		}
		if f.RefusedBefore != "" {
			before++
		}
		if f.Refused > 0 {
			during++
		}
	}
	return fmt.Sprintf("%d sent, %d refused before the run, %d refused during it", sent, before, during)
}

// reproCommand is the vigil run command line that replays the run: its
// flags, the seed, and the saved fault schedule instead of --faults.
func reproCommand(dir string, r Result) string {
	_, err := os.Stat(filepath.Join(dir, "schedule.json"))
	schedule := err == nil
	parts := []string{"vigil run"}
	for _, k := range slices.Sorted(maps.Keys(r.Flags)) {
		switch {
		case k == "out" || k == "seed" || k == "password" || k == "token":
			continue
		case k == "namespace":
			continue // a Kubernetes run's own namespace, recorded with its flags; a replay makes a new one
		case schedule && (k == "faults" || k == "fault-interval" || k == "schedule"):
			continue
		}
		parts = append(parts, "--"+k+"="+shellQuote(r.Flags[k]))
	}
	parts = append(parts, fmt.Sprintf("--seed=%d", r.Seed))
	if schedule {
		parts = append(parts, "--schedule="+shellQuote(filepath.Join(dir, "schedule.json")))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:,=@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// witnessTime is when a violation's span begins (an outage, a server's
// exit), else the time of its first record.
func witnessTime(h *history.History, v check.Violation) (time.Duration, bool) {
	if v.Span != nil {
		return v.Span.From, true
	}
	var times []time.Duration
	for _, id := range v.Operations {
		for i := range h.Operations {
			if h.Operations[i].ID == id {
				times = append(times, h.Operations[i].Call)
				break
			}
		}
		for i := range h.KubeOps {
			if h.KubeOps[i].ID == id {
				times = append(times, h.KubeOps[i].Call)
				break
			}
		}
	}
	for _, e := range v.Events {
		if w := h.WatchByID(e.Watch); w != nil && e.Response >= 0 && e.Response < len(w.Responses) {
			times = append(times, w.Responses[e.Response].Time)
		}
	}
	for _, e := range v.KubeEvents {
		times = append(times, e.Event.Time)
	}
	if len(times) == 0 {
		return 0, false
	}
	return slices.Min(times), true
}

// maxFaultRows bounds the fault table, as the plots are bounded: a day of
// faults every 15 s would be 5,760 rows.
const maxFaultRows = 500

// faultRows lists the faults for the table under the plots, where those
// too close together to be named on the plots are named; past
// maxFaultRows, a last row says how many more the history holds.
func faultRows(faults []history.Fault) []pageFault {
	var rows []pageFault
	for i, f := range faults {
		if i == maxFaultRows {
			rows = append(rows, pageFault{Name: fmt.Sprintf("and %d more (the history's fault records)", len(faults)-i)})
			break
		}
		rows = append(rows, pageFault{Name: f.Name, Targets: strings.Join(f.Targets, ", "),
			From: fmt.Sprintf("%.1f", f.Start.Seconds()), To: fmt.Sprintf("%.1f", f.End.Seconds())})
	}
	return rows
}

// kubeVerbsSummary says in a few words how many verbs and options a
// Kubernetes run sent.
func kubeVerbsSummary(rows []ProductionCount, never []string) string {
	sent, refused := 0, 0
	for _, r := range rows {
		if r.Sent > 0 {
			sent++
		}
		if r.Refused > 0 {
			refused++
		}
	}
	return fmt.Sprintf("%d sent, %d never sent, %d refused", sent, len(never), refused)
}
