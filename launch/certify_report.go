package launch

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// The certificate's files in --out.
const (
	CertifyJSON = "certify.json"
	CertifyHTML = "certify.html"
)

// Certificate is certify.json: the verdict, every requirement and the
// phases that judged them.
type Certificate struct {
	Format       int               `json:"format"`
	Profile      string            `json:"profile"`
	Limitations  []string          `json:"limitations,omitempty"` // declared in the etcd API phases
	Server       string            `json:"server"`
	Ready        bool              `json:"ready"`
	Verdict      string            `json:"verdict"` // ready, not ready, inconclusive, setup error
	Exit         int               `json:"exit"`
	Reason       string            `json:"reason"`
	Requirements []Requirement     `json:"requirements"`
	Phases       []Phase           `json:"phases"`
	Vigil        string            `json:"vigil,omitempty"`
	Seed         int64             `json:"seed"`
	Flags        map[string]string `json:"flags,omitempty"`
	DurationS    float64           `json:"duration_s"`
}

func (c *Certificate) write(dir string) error {
	if c.Requirements == nil {
		c.Requirements = []Requirement{}
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, CertifyJSON), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := c.writeJUnit(dir); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, CertifyHTML))
	if err != nil {
		return err
	}
	defer f.Close()
	return certifyPage.Execute(f, c)
}

// counts are the requirements per verdict.
func (c *Certificate) counts() map[string]int {
	n := map[string]int{}
	for _, r := range c.Requirements {
		n[r.Verdict]++
	}
	return n
}

// summary prints the phases, each failure and the verdict.
func (c *Certificate) summary(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nPHASE\tPASS\tFAIL\tUNSUPPORTED\tUNKNOWN\tNOTE")
	for _, p := range c.Phases {
		n := map[string]int{}
		for _, r := range p.Requirements {
			n[r.Verdict]++
		}
		note := p.Error
		if note == "" && len(p.LeftOut) > 0 {
			note = fmt.Sprintf("%d faults left out (certify.json says why)", len(p.LeftOut))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\n", p.Key, n[ReqPass], n[ReqFail], n[ReqUnsupported], n[ReqUnknown], firstLine(note))
	}
	tw.Flush()
	for _, r := range c.Requirements {
		if r.Verdict == ReqFail {
			fmt.Fprintf(w, "FAIL %s: %s\n  repro: %s\n", r.Name, firstLine(r.Witness), r.Repro)
		}
	}
	fmt.Fprintf(w, "verdict: %s (%s) in %.0fs\n", strings.ToUpper(c.Verdict), c.Reason, c.DurationS)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

type certSuites struct {
	XMLName xml.Name    `xml:"testsuites"`
	Suites  []certSuite `xml:"testsuite"`
}

type certSuite struct {
	Name     string     `xml:"name,attr"`
	Tests    int        `xml:"tests,attr"`
	Failures int        `xml:"failures,attr"`
	Skipped  int        `xml:"skipped,attr"`
	Cases    []certCase `xml:"testcase"`
}

type certCase struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Failure   *certMsg `xml:"failure,omitempty"`
	Skipped   *certMsg `xml:"skipped,omitempty"`
	Output    string   `xml:"system-out,omitempty"`
}

type certMsg struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes one testcase per requirement, one suite per phase;
// unsupported and unknown are skipped, with why.
func (c *Certificate) writeJUnit(dir string) error {
	var all certSuites
	for _, p := range c.Phases {
		s := certSuite{Name: "certify." + p.Key}
		for _, r := range p.Requirements {
			tc := certCase{Name: r.Name, Classname: "certify." + p.Key, Output: r.Evidence + "\nrepro: " + r.Repro}
			switch r.Verdict {
			case ReqFail:
				tc.Failure = &certMsg{Message: firstLine(r.Witness), Text: r.Witness}
				s.Failures++
			case ReqUnsupported, ReqUnknown:
				tc.Skipped = &certMsg{Message: r.Verdict + ": " + firstLine(r.Evidence)}
				s.Skipped++
			}
			s.Cases = append(s.Cases, tc)
		}
		if p.Error != "" {
			// A phase that did not complete is a failed case of its own.
			s.Cases = append(s.Cases, certCase{Name: p.Key + "/complete", Classname: "certify." + p.Key,
				Failure: &certMsg{Message: firstLine(p.Error), Text: p.Error}})
			s.Failures++
		}
		s.Tests = len(s.Cases)
		all.Suites = append(all.Suites, s)
	}
	b, err := xml.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "junit.xml"), append([]byte(xml.Header), append(b, '\n')...), 0o644)
}

var certifyPage = template.Must(template.New("certify").Funcs(template.FuncMap{
	"counts": func(c *Certificate) map[string]int { return c.counts() },
	"isRun":  func(p Phase) bool { return strings.HasSuffix(p.Key, "-run") },
}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>vigil certify: {{.Verdict}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:80em}
table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:.3em .5em;vertical-align:top;text-align:left}
.pass{color:#060}.fail{color:#b00;font-weight:bold}.unsupported,.unknown{color:#a60}
pre{white-space:pre-wrap;background:#f6f6f6;padding:.5em;margin:.2em 0}
.verdict{font-size:1.6em}
</style></head><body>
<h1>Can Kubernetes run on this store?</h1>
<p>{{.Server}}</p>
<p class="verdict {{if .Ready}}pass{{else}}fail{{end}}">{{.Verdict}}</p>
<p>{{.Reason}} (profile {{.Profile}}{{if .Limitations}}, limitations declared: {{range .Limitations}}{{.}} {{end}}{{end}}, seed {{.Seed}}, {{printf "%.0f" .DurationS}} s)</p>
{{with counts .}}<p>{{index . "pass"}} pass, {{index . "fail"}} fail, {{index . "unsupported"}} unsupported, {{index . "unknown"}} unknown</p>{{end}}
<h2>Phases</h2>
<table><tr><th>phase</th><th>exit</th><th>report</th><th>notes</th></tr>
{{range .Phases}}<tr><td>{{.Title}}</td><td>{{.Exit}}</td>
<td>{{if .Dir}}{{if isRun .}}<a href="{{.Dir}}/report.html">{{.Dir}}/report.html</a>{{else}}<a href="{{.Dir}}/result.json">{{.Dir}}/result.json</a>{{end}}{{end}}</td>
<td>{{.Error}}{{.Note}}{{if .Faults}}<br>faults: {{range .Faults}}{{.}} {{end}}{{end}}{{range $f, $why := .LeftOut}}<br>left out: {{$f}}: {{$why}}{{end}}</td></tr>
{{end}}</table>
{{$fails := false}}{{range .Requirements}}{{if eq .Verdict "fail"}}{{$fails = true}}{{end}}{{end}}
{{if $fails}}<h2>Failures</h2>
{{range .Requirements}}{{if eq .Verdict "fail"}}<h3 class="fail">{{.Name}}</h3>{{if .Title}}<p>{{.Title}}</p>{{end}}
<p>smallest witness:</p><pre>{{.Witness}}</pre><p>reproduce:</p><pre>{{.Repro}}</pre><p>evidence: {{.Evidence}} — <a href="{{.Report}}">{{.Report}}</a></p>
{{end}}{{end}}{{end}}
<h2>Requirements</h2>
{{range .Phases}}<h3>{{.Title}}</h3>
<table><tr><th>requirement</th><th>verdict</th><th>evidence</th></tr>
{{range .Requirements}}<tr><td>{{.Name}}</td><td class="{{.Verdict}}">{{.Verdict}}</td><td>{{.Evidence}}{{if .Witness}}<pre>{{.Witness}}</pre>{{end}}</td></tr>
{{end}}</table>{{end}}
</body></html>
`))
