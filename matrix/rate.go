package matrix

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
)

// Rate is what a matrix of healthy runs says of vigil's false alarms: the
// cells that ran, those whose verdict was not pass (each a false alarm of
// vigil until shown to be a finding of the system), and the one-sided
// 95% upper bound on the false-alarm rate those numbers allow.
type Rate struct {
	Name    string
	Ran     int
	Alarms  int
	Bound   float64
	Verdict map[string]int
	// Cells are the labels of the cells that alarmed, with their reason.
	Cells []string
}

// RateOf counts a matrix's cells that ran to a verdict.
func RateOf(m *Matrix) Rate {
	r := Rate{Name: m.Name, Verdict: map[string]int{}}
	for _, c := range m.Cells {
		if c.Verdict == NotRun {
			continue
		}
		r.Ran++
		r.Verdict[c.Verdict]++
		if c.Verdict != "pass" {
			r.Alarms++
			r.Cells = append(r.Cells, fmt.Sprintf("cell %d (%s): %s %s", c.Index, c.Label, c.Verdict, strings.Join(c.Failed, ",")))
		}
	}
	r.Bound = UpperBound(r.Alarms, r.Ran, 0.95)
	return r
}

// UpperBound is the one-sided Clopper-Pearson upper confidence bound on a
// rate of which k events were seen in n trials: the rate p at which seeing
// k or fewer has probability 1-conf. With none seen it is 1-(1-conf)^(1/n)
// (about 3/n at 95%).
func UpperBound(k, n int, conf float64) float64 {
	if n <= 0 {
		return 1
	}
	if k >= n {
		return 1
	}
	alpha := 1 - conf
	lo, hi := float64(k)/float64(n), 1.0
	for i := 0; i < 100; i++ { // bisection on P(X <= k | p), which falls as p grows
		mid := (lo + hi) / 2
		if binomCDF(k, n, mid) > alpha {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// binomCDF is P(X <= k) for X ~ Binomial(n, p), summed in logs.
func binomCDF(k, n int, p float64) float64 {
	sum := 0.0
	for i := 0; i <= k; i++ {
		lg := lchoose(n, i) + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p)
		sum += math.Exp(lg)
	}
	return sum
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// WriteRates writes the false-alarm table of matrices of healthy runs, in
// Markdown, with the alarms listed under it.
func WriteRates(w io.Writer, dirs []string, rates []Rate) {
	fmt.Fprintln(w, "| matrix | runs | false alarms | 95% upper bound on the rate |")
	fmt.Fprintln(w, "|---|---|---|---|")
	total, alarms := 0, 0
	for _, r := range rates {
		fmt.Fprintf(w, "| %s | %d | %d | %.1f%% |\n", r.Name, r.Ran, r.Alarms, 100*r.Bound)
		total, alarms = total+r.Ran, alarms+r.Alarms
	}
	if len(rates) > 1 {
		fmt.Fprintf(w, "| all | %d | %d | %.1f%% |\n", total, alarms, 100*UpperBound(alarms, total, 0.95))
	}
	for i, r := range rates {
		for _, c := range r.Cells {
			fmt.Fprintf(w, "\n- %s, %s", filepath.Base(dirs[i]), c)
		}
	}
	fmt.Fprintln(w)
}
