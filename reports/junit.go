package reports

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vigil-suite/vigil/checkers/check"
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
	var cases []JUnitCase
	for _, c := range r.Checks {
		tc := JUnitCase{Name: c.Name, Class: "vigil." + r.Target.Kind, Seconds: c.Elapsed.Seconds()}
		switch {
		case c.Should && c.Verdict == check.Fail:
			// A SHOULD line: a warning, not a failed test.
			tc.Out = "WARNING: " + violationText(c)
		case c.Verdict == check.Fail:
			tc.Failure, tc.Detail = failureMessage(c, r.Findings), violationText(c)
		case c.Verdict == check.Unknown:
			tc.Error = "unknown: " + c.Reason
		case c.Verdict == check.Skipped:
			tc.Skipped = c.Reason
		case c.Verdict == check.Documented:
			tc.Skipped = "documented limitation: " + c.Reason
		}
		cases = append(cases, tc)
	}
	return WriteJUnitCases(filepath.Join(dir, "junit.xml"), "vigil "+r.Target.Kind, r.DurationS, cases)
}

// failureMessage is a failed check's one line in a CI system's list: how
// many violations in how many findings, and the smallest witness of its
// worst finding.
func failureMessage(c check.Result, findings []Finding) string {
	msg := fmt.Sprintf("%d violation(s) in %d finding(s)", len(c.Violations), findingsOf(findings, c.Name))
	for _, f := range findings {
		if f.Check == c.Name {
			return msg + ": " + f.Witness.Message
		}
	}
	return msg
}

// JUnitCase is one testcase: it passed unless Failure, Error or Skipped
// (the message) is set; Detail is the failure's or error's body.
type JUnitCase struct {
	Name, Class string
	Seconds     float64
	Failure     string
	Error       string
	Skipped     string
	Detail      string
	Out         string
}

// WriteJUnitCases writes one test suite of cases to path, counting its
// failures, errors and skips: the format every CI system reads, for the
// runs, the conformance probes and the known-bug matrix alike.
func WriteJUnitCases(path, suite string, seconds float64, cases []JUnitCase) error {
	s := junitSuite{Name: suite, Time: seconds, Tests: len(cases)}
	for _, c := range cases {
		tc := junitCase{Name: c.Name, Classname: c.Class, Time: c.Seconds, SystemOut: c.Out}
		switch {
		case c.Failure != "":
			s.Failures++
			tc.Failure = &junitMessage{Message: c.Failure, Body: c.Detail}
		case c.Error != "":
			s.Errors++
			tc.Error = &junitMessage{Message: c.Error, Body: c.Detail}
		case c.Skipped != "":
			s.Skipped++
			tc.Skipped = &junitMessage{Message: c.Skipped}
		}
		s.Cases = append(s.Cases, tc)
	}
	b, err := xml.MarshalIndent(junitSuites{Suites: []junitSuite{s}}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...), 0o644)
}

func violationText(c check.Result) string {
	var b strings.Builder
	for _, v := range c.Violations {
		writeViolation(&b, v, "")
	}
	return b.String()
}
