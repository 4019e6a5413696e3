package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/fixtures/binaries"
)

// Sequences drawn from the grammar answer alike on two servers of the
// same release, and are sent the same requests.
func TestGrammarSequencesAgreeOnOneRelease(t *testing.T) {
	v := binaries.DefaultEtcdVersion
	a, b := startEtcd(t, v), startEtcd(t, v)
	ctx := context.Background()
	run := time.Now().UnixNano()
	ta, tb := GrammarProbes(7, 3, 60, run), GrammarProbes(7, 3, 60, run)
	ra, err := RunEtcdProbes(ctx, EtcdConfig{Endpoints: a}, ta.Probes)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := RunEtcdProbes(ctx, EtcdConfig{Endpoints: b}, tb.Probes)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range CompareWithReference(ra, rb) {
		if r.Verdict != Pass {
			t.Errorf("%s: %s %s %s %v", r.Name, r.Verdict, r.Reason, r.Failure, r.Diff)
		}
		if n := len(ta.Sent(r.Name)); n < 50 {
			t.Errorf("%s sent %d requests", r.Name, n)
		}
	}
}
