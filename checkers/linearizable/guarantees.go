// Package linearizable holds kv/linearizable: a model of the etcd KV
// store for porcupine, the preparation that turns a history into its
// operations (writes of unknown outcome included), the search, and the
// drawing of a failing search window.
package linearizable

import (
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// Names of the checks of this package, as reports and result.json spell them.
const (
	Name = "kv/linearizable"
)

// Guarantees, one sentinel per check; a Violation wraps the one it breaks.
var (
	Err = check.Guarantee(Name, "linearizable reads and all writes form one history "+
		"that a single copy of the store could have produced, respecting real time")
)

// Checks returns kv/linearizable.
func Checks() []check.Check {
	return []check.Check{{Name: Name, Guarantee: Err, Profiles: check.ForKubernetes, Severity: check.Data, Run: Check, Evidence: askedAndAnswered}}
}

// askedAndAnswered: the linearizable reads and the writes the run sent, answered
// when a response or a definite error came back.
func askedAndAnswered(h *history.History) check.Evidence {
	return facts.OpEvidence(h, "linearizable read or write", "response", facts.IsLinearizableOp)
}
