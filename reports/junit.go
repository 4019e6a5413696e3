package reports

import (
	"encoding/xml"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/vigil-suite/vigil/checkers/check"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string           `xml:"name,attr"`
	Tests      int              `xml:"tests,attr"`
	Failures   int              `xml:"failures,attr"`
	Errors     int              `xml:"errors,attr"`
	Skipped    int              `xml:"skipped,attr"`
	Time       junitTime        `xml:"time,attr"`
	Properties *junitProperties `xml:"properties,omitempty"`
	Cases      []junitCase      `xml:"testcase"`
}

type junitProperties struct {
	Props []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// junitTime is seconds written as a plain decimal: a float64 attribute
// would come out as 1.5e-05, which CI tools that read xs:decimal refuse.
type junitTime float64

func (t junitTime) MarshalXMLAttr(name xml.Name) (xml.Attr, error) {
	return xml.Attr{Name: name, Value: strconv.FormatFloat(float64(t), 'f', 3, 64)}, nil
}

type junitCase struct {
	Name       string           `xml:"name,attr"`
	Classname  string           `xml:"classname,attr"`
	Time       junitTime        `xml:"time,attr"`
	Properties *junitProperties `xml:"properties,omitempty"`
	Failure    *junitMessage    `xml:"failure,omitempty"`
	Error      *junitMessage    `xml:"error,omitempty"`
	Skipped    *junitMessage    `xml:"skipped,omitempty"`
	SystemOut  string           `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes junit.xml into dir: a testcase "setup" (failed when
// the run could not start, with the reason), one testcase per check, so a
// CI system shows each guarantee as its own test, and a testcase "run"
// that errs when the run was interrupted. Unknown verdicts are errors (the
// check could not decide), skipped ones are skipped. The suite's
// properties give the seed, vigil's version, the target and the flags.
func WriteJUnit(dir string, r Result) error {
	setup := JUnitCase{Name: "setup", Class: "vigil." + r.Target.Kind}
	if r.SetupFailed {
		setup.Failure, setup.Detail = "the run could not start: "+r.Reason, r.Reason
	}
	cases := []JUnitCase{setup}
	for _, c := range r.Checks {
		tc := JUnitCase{Name: c.Name, Class: "vigil." + r.Target.Kind, Seconds: c.Elapsed.Seconds(),
			Props: evidenceProps(c.Evidence)}
		if len(c.Profiles) > 0 {
			if tc.Props == nil {
				tc.Props = map[string]string{}
			}
			tc.Props["profiles"] = strings.Join(c.Profiles, ",")
		}
		switch {
		case c.OutsideProfile && (c.Verdict == check.Fail || c.Verdict == check.Unknown):
			// Reported, but outside what the run held the target to.
			tc.Out = strings.ToUpper(string(c.Verdict)) + ", outside the profile " + r.Profile + ": " + c.Reason + ViolationsText(c)
		case c.Should && c.Verdict == check.Fail:
			// A SHOULD line: a warning, not a failed test.
			tc.Out = "WARNING: " + ViolationsText(c)
		case c.Verdict == check.Fail:
			tc.Failure, tc.Detail = failureMessage(c, r.Findings), ViolationsText(c)
		case c.Verdict == check.Unknown:
			tc.Error = "unknown: " + c.Reason
		case c.Verdict == check.Skipped:
			tc.Skipped = c.Reason
		case c.Verdict == check.Documented:
			tc.Skipped = "documented limitation: " + c.Reason
		}
		cases = append(cases, tc)
	}
	if r.Verdict == VerdictError && !r.SetupFailed {
		cases = append(cases, JUnitCase{Name: "run", Class: "vigil." + r.Target.Kind, Seconds: r.DurationS,
			Error: r.Reason})
	}
	props := map[string]string{"seed": strconv.FormatInt(r.Seed, 10), "vigil.version": r.Vigil,
		"target.kind": r.Target.Kind, "target.fixture": r.Target.Fixture, "target.version": r.Target.Version,
		"verdict": r.Verdict}
	for k, v := range r.Flags {
		props["flag."+k] = v
	}
	if r.Profile != "" {
		props["profile"] = r.Profile
	}
	for name, why := range r.Limitations {
		props["limitation."+name] = why
	}
	return WriteJUnitCases(filepath.Join(dir, "junit.xml"), "vigil "+r.Target.Kind, r.DurationS, cases, props)
}

// failureMessage is a failed check's one line in a CI system's list: how
// many violations in how many findings, and the smallest witness of its
// worst finding (and whose finding that is, when another check leads it).
func failureMessage(c check.Result, findings []Finding) string {
	msg := fmt.Sprintf("%d violation(s) in %d finding(s)", len(c.Violations), findingsOf(findings, c.Name))
	for _, f := range findings {
		p, ok := f.PartOf(c.Name)
		if !ok {
			continue
		}
		switch {
		case f.Check == c.Name:
		case slices.ContainsFunc(f.RestingOnIt, func(r Part) bool { return r.Check == c.Name }) &&
			!slices.ContainsFunc(f.Also, func(r Part) bool { return r.Check == c.Name }):
			msg += fmt.Sprintf(" (resting on %s's finding)", f.Check)
		default:
			msg += fmt.Sprintf(" (one cause with %s)", f.Check)
		}
		return msg + ": " + p.Witness.Message
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
	// Props are the testcase's properties (a check's evidence).
	Props map[string]string
}

// evidenceProps are a check's evidence as testcase properties.
func evidenceProps(e *check.Evidence) map[string]string {
	if e == nil {
		return nil
	}
	return map[string]string{"evidence.request": e.Request, "evidence.answer": e.Answer,
		"evidence.asked": strconv.Itoa(e.Asked), "evidence.answered": strconv.Itoa(e.Answered),
		"evidence.ignored": strconv.Itoa(e.Ignored), "evidence.owed": strconv.Itoa(e.Owed),
		"evidence.refused": strconv.Itoa(e.Refused)}
}

// properties lists props sorted by name, leaving out empty values; nil
// when none is left.
func properties(props map[string]string) *junitProperties {
	var out *junitProperties
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if props[k] != "" {
			if out == nil {
				out = &junitProperties{}
			}
			out.Props = append(out.Props, junitProperty{Name: k, Value: props[k]})
		}
	}
	return out
}

// WriteJUnitCases writes one test suite of cases to path, counting its
// failures, errors and skips, with props as its properties (empty values
// left out): the format every CI system reads, for the runs, the
// conformance probes and the known-bug matrix alike.
func WriteJUnitCases(path, suite string, seconds float64, cases []JUnitCase, props map[string]string) error {
	s := junitSuite{Name: suite, Time: junitTime(seconds), Tests: len(cases), Properties: properties(props)}
	for _, c := range cases {
		tc := junitCase{Name: c.Name, Classname: c.Class, Time: junitTime(c.Seconds), SystemOut: c.Out,
			Properties: properties(c.Props)}
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

// ViolationsText renders a check's violations with the records that prove
// them, one after the other, as the verdict table does.
func ViolationsText(c check.Result) string {
	var b strings.Builder
	for _, v := range c.Violations {
		writeViolation(&b, v, "")
	}
	return b.String()
}
