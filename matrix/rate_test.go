package matrix

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// The bound of k false alarms in n runs: none in 100 allows about 3%
// (1-0.05^(1/100)), none in 6 about 39%; one in 100 about 4.7% (the
// Clopper-Pearson value). A matrix that alarmed once must say so.
func TestUpperBound(t *testing.T) {
	for _, c := range []struct {
		k, n int
		want float64
	}{{0, 100, 1 - math.Pow(0.05, 0.01)}, {0, 6, 1 - math.Pow(0.05, 1.0/6)}, {1, 100, 0.0466}, {5, 5, 1}, {0, 0, 1}} {
		if got := UpperBound(c.k, c.n, 0.95); math.Abs(got-c.want) > 0.0005 {
			t.Errorf("UpperBound(%d, %d) = %.4f, want %.4f", c.k, c.n, got, c.want)
		}
	}
}

func TestRateOf(t *testing.T) {
	m := &Matrix{Name: "fp-etcd3", Cells: []Cell{{Index: 0, Verdict: "pass"}, {Index: 1, Label: "seed=2", Verdict: "fail", Failed: []string{"watch/reliable"}},
		{Index: 2, Verdict: NotRun}, {Index: 3, Verdict: "pass"}}}
	r := RateOf(m)
	if r.Ran != 3 || r.Alarms != 1 || len(r.Cells) != 1 || !strings.Contains(r.Cells[0], "watch/reliable") {
		t.Fatalf("%+v", r)
	}
	var b bytes.Buffer
	WriteRates(&b, []string{"runs/fp/etcd3"}, []Rate{r})
	if !strings.Contains(b.String(), "| fp-etcd3 | 3 | 1 |") || !strings.Contains(b.String(), "cell 1 (seed=2): fail watch/reliable") {
		t.Fatal(b.String())
	}
}
