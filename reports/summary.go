package reports

import (
	"math"
	"slices"
)

// A summary stands for a bucket's values (latencies, lags, in ms) in a
// size that does not grow with their number: how many, the exact
// largest, and a histogram on a log scale, kept sparse (only the bins
// that were hit, a few dozen in a bucket of calls alike), from which the
// p50 and p99 are read.
//
// The bins are histPerDecade to a decade from histLow ms up: a quantile
// is read as the geometric middle of its bin, within a factor of
// 10^(1/80) of the true value, 2.9 % (and never above the exact largest).
// Values under histLow fall in the first bin, those over 10^6 ms (about
// 17 minutes) in the last.
const (
	histPerDecade = 40
	histLow       = 0.01
	histDecades   = 8
	histBins      = histPerDecade * histDecades
)

// histRelErr is the relative error of a quantile read from a summary.
var histRelErr = math.Pow(10, 1/(2.0*histPerDecade)) - 1

// bin is one histogram bin that was hit: its index and count.
type bin struct {
	i uint16
	n uint32
}

type summary struct {
	n    int
	max  float64
	bins []bin // by index
}

func binOf(v float64) uint16 {
	if !(v > histLow) {
		return 0
	}
	i := int(math.Log10(v/histLow) * histPerDecade)
	return uint16(min(max(i, 0), histBins-1))
}

// binValue is the geometric middle of bin i.
func binValue(i int) float64 {
	return histLow * math.Pow(10, (float64(i)+0.5)/histPerDecade)
}

func (s *summary) add(v float64) {
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n++
	b := binOf(v)
	j, found := slices.BinarySearchFunc(s.bins, b, func(x bin, t uint16) int { return int(x.i) - int(t) })
	if found {
		s.bins[j].n++
		return
	}
	s.bins = slices.Insert(s.bins, j, bin{i: b, n: 1})
}

// merge adds o's values to s.
func (s *summary) merge(o *summary) {
	if o.n == 0 {
		return
	}
	if s.n == 0 || o.max > s.max {
		s.max = o.max
	}
	s.n += o.n
	if len(s.bins) == 0 {
		s.bins = slices.Clone(o.bins)
		return
	}
	out := make([]bin, 0, len(s.bins)+len(o.bins))
	a, b := s.bins, o.bins
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0].i < b[0].i):
			out, a = append(out, a[0]), a[1:]
		case len(a) == 0 || b[0].i < a[0].i:
			out, b = append(out, b[0]), b[1:]
		default:
			out = append(out, bin{i: a[0].i, n: a[0].n + b[0].n})
			a, b = a[1:], b[1:]
		}
	}
	s.bins = slices.Clip(out)
}

// quantile is the nearest-rank quantile q of the values (1: the exact
// largest), read from the histogram (histRelErr).
func (s *summary) quantile(q float64) float64 {
	if q >= 1 || s.n == 0 {
		return s.max
	}
	k := max(int(math.Ceil(q*float64(s.n)))-1, 0) // 0-based rank
	seen := 0
	for _, b := range s.bins {
		seen += int(b.n)
		if seen > k {
			return math.Min(binValue(int(b.i)), s.max)
		}
	}
	return s.max
}

// peak is a count and the exact largest value, for marks that show only
// a bucket's worst.
type peak struct {
	n   int
	max float64
}

func (p *peak) add(v float64) {
	if p.n == 0 || v > p.max {
		p.max = v
	}
	p.n++
}

func (p *peak) merge(o peak) {
	if o.n == 0 {
		return
	}
	if p.n == 0 || o.max > p.max {
		p.max = o.max
	}
	p.n += o.n
}
