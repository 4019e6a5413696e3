// Package availability holds run/availability: whether the system under
// test kept answering its clients, and answered again soon after faults
// healed.
package availability

import "github.com/vigil-suite/vigil/checkers/check"

// Names of the checks of this package, as reports and result.json spell them.
const (
	Name = "run/availability"
)

// Guarantees, one sentinel per check; a Violation wraps the one it breaks.
var (
	Err = check.Guarantee(Name, "the system answered the clients' requests, every outage ended "+
		"within the bound after the faults around it healed, and the run's final write succeeded")
)

// Checks returns run/availability.
func Checks() []check.Check {
	return []check.Check{{Name: Name, Guarantee: Err, Severity: check.Liveness, Run: Check}}
}
