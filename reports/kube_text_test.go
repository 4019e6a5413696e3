package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/kube"
	"github.com/vigil-suite/vigil/history"
)

// A Kubernetes violation shows the watch events that prove it, by watch
// and index, with their type, object, RV and value.
func TestTableShowsKubeEvidence(t *testing.T) {
	results := []check.Result{{Name: kube.NameWatchFromRV, Verdict: check.Fail, Violations: []check.Violation{{
		Message: "watch 5 (client 3) missed the change of o-06 at RV 800", Watch: 5, Revision: 800, Operations: []int64{2252},
		KubeEvents: []history.KubeEventAt{
			{Index: 723, Event: history.KubeEvent{Watch: 5, Type: history.KubeAdded,
				Object: &history.Object{Name: "o-02", ResourceVersion: "799", Value: "val:14.277"}}},
			{Index: 724, Event: history.KubeEvent{Watch: 5, Type: history.KubeError,
				Status: &history.KubeStatus{Code: 410, Reason: "Expired"}}},
		},
	}}}}
	var b bytes.Buffer
	Table(&b, Summarize(history.New(history.Meta{Target: history.Target{Kind: "kube"}}), results, 1))
	for _, want := range []string{"operations: 2252", `watch 5 event 723: ADDED o-02 rv=799 value="val:14.277"`,
		"watch 5 event 724: ERROR 410 Expired"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
