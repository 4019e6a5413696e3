// Package availability holds the checks of the system staying up:
// run/availability, whether it kept answering its clients and answered
// again soon after faults healed, and run/server-exit, whether its
// processes ran until vigil stopped them.
package availability

import (
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// Names of the checks of this package, as reports and result.json spell them.
const (
	Name           = "run/availability"
	NameServerExit = "run/server-exit"
)

// Guarantees, one sentinel per check; a Violation wraps the one it breaks.
var (
	Err = check.Guarantee(Name, "the system answered the clients' requests, every outage ended "+
		"within the bound after the faults around it healed, and the run's final write succeeded")
	ErrServerExit = check.Guarantee(NameServerExit, "every process of the system that vigil started ran until vigil "+
		"stopped it (a fault, or the run's end): none exited by itself, crashed or was killed by anything else")
)

// Checks returns run/availability and run/server-exit.
func Checks() []check.Check {
	return []check.Check{
		{Name: Name, Guarantee: Err, Profiles: check.ForKubernetes, Severity: check.Liveness, Run: Check, Evidence: evidence},
		{Name: NameServerExit, Guarantee: ErrServerExit, Profiles: check.ForKubernetes, Severity: check.Liveness,
			Run: CheckServerExits, Evidence: exitEvidence},
	}
}

// evidence: every call on the system under test, answered when a response
// or a definite error came back (facts.Calls).
func evidence(h *history.History) check.Evidence {
	e := check.Evidence{Request: "call", Answer: "answer"}
	for _, c := range facts.Calls(h) {
		e.Asked++
		if c.Ok {
			e.Answered++
		}
	}
	if e.Asked == 0 {
		e.Why = "the history has no call"
	}
	return e
}
