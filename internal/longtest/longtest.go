// Package longtest marks the tests of vigil's long suite: the ones `make
// test` leaves out to stay near 20 minutes on a 2-core machine (a second
// or third case of what a kept test already covers end to end, the Docker
// image build, sweeps over every sabotage mode). `make test-long` runs
// them, with everything else, by setting VIGIL_LONG=1.
package longtest

import (
	"os"
	"testing"
)

// Env turns the long suite on.
const Env = "VIGIL_LONG"

// On reports whether the long suite runs.
func On() bool { return os.Getenv(Env) != "" }

// Skip skips t unless the long suite runs, saying how to run it.
func Skip(t testing.TB) {
	t.Helper()
	if !On() {
		t.Skip("in the long suite: make test-long (" + Env + "=1)")
	}
}
