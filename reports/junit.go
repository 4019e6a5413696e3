package reports

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vigil-suite/vigil/checkers"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     float64     `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes junit.xml into dir: one testcase per check, so a CI
// system shows each guarantee as its own test. Unknown verdicts are errors
// (the check could not decide), skipped ones are skipped.
func WriteJUnit(dir string, r Result) error {
	s := junitSuite{Name: "vigil " + r.Target.Kind, Time: r.DurationS}
	for _, c := range r.Checks {
		tc := junitCase{Name: c.Name, Classname: "vigil." + r.Target.Kind, Time: c.Elapsed.Seconds()}
		switch {
		case c.Should && c.Verdict == checkers.Fail:
			// A SHOULD line: a warning, not a failed test.
			tc.SystemOut = "WARNING: " + violationText(c)
		case c.Verdict == checkers.Fail:
			s.Failures++
			tc.Failure = &junitMessage{Message: fmt.Sprintf("%d violation(s)", len(c.Violations)), Body: violationText(c)}
		case c.Verdict == checkers.Unknown:
			s.Errors++
			tc.Error = &junitMessage{Message: "unknown: " + c.Reason}
		case c.Verdict == checkers.Skipped:
			s.Skipped++
			tc.Skipped = &junitMessage{Message: c.Reason}
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Tests = len(s.Cases)
	b, err := xml.MarshalIndent(junitSuites{Suites: []junitSuite{s}}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "junit.xml"), append([]byte(xml.Header), append(b, '\n')...), 0o644)
}

func violationText(c checkers.Result) string {
	var b strings.Builder
	for _, v := range c.Violations {
		writeViolation(&b, v, "")
	}
	return b.String()
}
