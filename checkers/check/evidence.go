package check

import (
	"fmt"
	"strings"

	"github.com/vigil-suite/vigil/history"
)

// Evidence is what a check needs from a run — requests of one kind and
// the answers of one kind it judges — and how the run fared: how often it
// asked, how often the target answered, and how often a request that was
// owed an answer got none. Every check declares it, and one rule (Apply)
// turns it into the verdict's floor, so that a pass always says what was
// asked and what was answered.
type Evidence struct {
	// Request and Answer name the kinds, in words: "progress request",
	// "progress notification".
	Request string `json:"request"`
	Answer  string `json:"answer"`
	// Asked counts the requests the run sent; Answered those the target
	// answered with the answer kind; Refused those it declined as
	// unsupported; Ignored those owed an answer that got none.
	Asked    int `json:"asked"`
	Answered int `json:"answered"`
	Ignored  int `json:"ignored"`
	Refused  int `json:"refused,omitempty"`
	// Owed counts the requests the API owes an answer to, here: sent while
	// nothing excused silence (no fault around them, vigil did not close
	// what they asked about, the stream lived long enough for the answer).
	// Owed requests that all go unanswered are a violation, not an excuse.
	Owed int `json:"owed,omitempty"`
	// Why says why the run did not ask (Asked is 0), in words.
	Why string `json:"why,omitempty"`
	// Unanswered are ids of owed requests that went unanswered, the first
	// few, as the records of the violation; Records says what they are.
	Unanswered []int64    `json:"unanswered,omitempty"`
	Records    RecordKind `json:"records,omitempty"`
	// Example describes the first unanswered owed request in words, with
	// what made it owed, for the violation.
	Example string `json:"example,omitempty"`
	// Legacy: the history's format does not record this request kind
	// (format 1 sent progress requests unrecorded), so Asked is a lower
	// bound and the rule does not apply.
	Legacy bool `json:"legacy,omitempty"`
}

// RecordKind names the kind of record an id in Evidence.Unanswered is.
type RecordKind string

const (
	RecordCalls       RecordKind = "calls"
	RecordWatches     RecordKind = "watches"
	RecordOperations  RecordKind = "operations"
	RecordKubeWatches RecordKind = "kube_watches"
	RecordKubeOps     RecordKind = "kube_operations"
)

// MaxUnanswered caps the ids Evidence keeps in Unanswered.
const MaxUnanswered = 10

// NoteUnanswered counts one owed request that got no answer.
func (e *Evidence) NoteUnanswered(id int64) {
	e.Ignored++
	if len(e.Unanswered) < MaxUnanswered {
		e.Unanswered = append(e.Unanswered, id)
	}
}

// String is the evidence in one line, for tables and JUnit.
func (e Evidence) String() string {
	s := fmt.Sprintf("%s: asked %d, answered %d", e.Request, e.Asked, e.Answered)
	if e.Refused > 0 {
		s += fmt.Sprintf(", refused %d", e.Refused)
	}
	if e.Owed > 0 || e.Ignored > 0 {
		s += fmt.Sprintf(", ignored %d of %d owed", e.Ignored, e.Owed)
	}
	return s
}

func plural(word string, n int) string {
	if n == 1 || word == "" {
		return word
	}
	if strings.HasSuffix(word, "s") || strings.HasSuffix(word, "ch") {
		return word + "es"
	}
	return word + "s"
}

// Apply is the one verdict rule of every check, given what its evidence
// says:
//   - nothing asked: skipped, saying why the run did not ask (a check that
//     found violations anyway keeps them);
//   - asked, none answered: fail when some request was owed an answer
//     (the target ignored what the API makes it answer), unknown
//     otherwise;
//   - answered: the check's own verdict, except that a check that judged
//     nothing though the target answered is unknown, not skipped (the run
//     was too short or unlucky to gather what the check judges).
//
// A refusal the target declared (the check's own skipped or limitation
// verdict naming it, with requests counted as Refused and none answered)
// stands. Legacy evidence (an older history that did
// not record the requests) leaves the verdict as the check gave it.
func Apply(c Check, r Result, e Evidence) Result {
	r.Evidence = &e
	if e.Legacy || r.Verdict == Documented {
		return r
	}
	switch {
	case e.Asked == 0:
		if r.Verdict == Pass || r.Verdict == Unknown {
			r.Verdict, r.Reason = Skipped, e.Why
			if r.Reason == "" {
				r.Reason = "the run sent no " + e.Request
			}
		}
	case e.Answered == 0 && e.Owed > 0:
		r.Verdict, r.Reason = Fail, ""
		v := Violation{
			Guarantee: c.Guarantee,
			Message: fmt.Sprintf("the run sent %d %s (%d of them owed an answer) and the target answered none with a %s",
				e.Asked, plural(e.Request, e.Asked), e.Owed, e.Answer),
			Want: fmt.Sprintf("a %s to some of %d owed %s", e.Answer, e.Owed, plural(e.Request, e.Owed)),
			Got:  "none",
		}
		if e.Example != "" {
			v.Message += "; the first: " + e.Example
		}
		v.cite(e.Records, e.Unanswered)
		r.Violations = append(r.Violations, v)
		if r.Figures == nil {
			r.Figures = map[string]float64{}
		}
		r.Figures["violations"]++
	case e.Answered == 0 && e.Refused > 0 && r.Verdict == Skipped:
		// The target declined what the check needs, and the check's
		// reason says so in the target's words: the refusal stands.
	case e.Answered == 0:
		if r.Verdict != Fail {
			r.Verdict = Unknown
			r.Reason = fmt.Sprintf("the run sent %d %s and the target answered none with a %s; none was owed an answer, so this says nothing",
				e.Asked, plural(e.Request, e.Asked), e.Answer)
		}
	case r.Verdict == Skipped:
		r.Verdict = Unknown
		r.Reason = fmt.Sprintf("the target answered %d of %d %s, but the run gathered nothing this check judges (%s): run longer or with another seed",
			e.Answered, e.Asked, plural(e.Request, e.Asked), r.Reason)
	}
	return r
}

// Evidencer computes a check's evidence from a history. It is pure, like
// the check.
type Evidencer func(h *history.History) Evidence

// cite puts ids of records of kind k where a violation keeps that kind.
func (v *Violation) cite(k RecordKind, ids []int64) {
	switch k {
	case RecordCalls:
		v.Calls = append(v.Calls, ids...)
	case RecordWatches, RecordKubeWatches:
		v.Watches = append(v.Watches, ids...)
	case RecordOperations, RecordKubeOps:
		v.Operations = append(v.Operations, ids...)
	}
}
