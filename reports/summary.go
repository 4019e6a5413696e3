package reports

import (
	"math"
	"slices"
	"sort"
)

// A summary stands for a bucket's values (latencies, lags, in ms) in a
// size that does not grow with their number: how many, the exact
// largest, and a histogram on a log scale, kept sparse (only the bins
// that were hit, a few dozen in a bucket of calls alike, 4 bytes each),
// from which the p50 and p99 are read.
//
// The bins are histPerDecade to a decade from histLow ms up (160 bins to
// 10^6 ms, about 17 minutes): a quantile is read as the geometric middle
// of its bin, within a factor of 10^(1/40) of the true value, 5.9 %, and
// never above the exact largest. Values under histLow fall in the first
// bin, those over 10^6 ms in the last. On the page's log axes, over four
// decades or more, that is about a pixel.
const (
	histPerDecade = 20
	histLow       = 0.01
	histDecades   = 8
	histBins      = histPerDecade * histDecades
)

// histRelErr is the relative error of a quantile read from a summary.
var histRelErr = math.Pow(10, 1/(2.0*histPerDecade)) - 1

// bin is one histogram bin that was hit: its index in the top 8 bits,
// its count in the low 24. A bin that would count past binMax gets a
// second entry with the same index (a run of more than a year).
type bin uint32

const binMax = 1<<24 - 1

func mkBin(i uint8, n uint32) bin { return bin(uint32(i)<<24 | n) }
func (b bin) index() uint8        { return uint8(b >> 24) }
func (b bin) count() uint32       { return uint32(b) & binMax }

type summary struct {
	n    int
	max  float64
	bins []bin // by index
}

func binOf(v float64) uint8 {
	if !(v > histLow) {
		return 0
	}
	i := int(math.Log10(v/histLow) * histPerDecade)
	return uint8(min(max(i, 0), histBins-1))
}

// binValue is the geometric middle of bin i.
func binValue(i uint8) float64 {
	return histLow * math.Pow(10, (float64(i)+0.5)/histPerDecade)
}

func (s *summary) add(v float64) {
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n++
	b := binOf(v)
	j := sort.Search(len(s.bins), func(k int) bool { return s.bins[k].index() > b })
	if j > 0 && s.bins[j-1].index() == b && s.bins[j-1].count() < binMax {
		s.bins[j-1]++
		return
	}
	s.bins = slices.Insert(s.bins, j, mkBin(b, 1))
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
	put := func(b bin) {
		if k := len(out) - 1; k >= 0 && out[k].index() == b.index() {
			room := binMax - out[k].count()
			take := min(room, b.count())
			out[k] += bin(take)
			if b.count() == take {
				return
			}
			b -= bin(take)
		}
		out = append(out, b)
	}
	a, b := s.bins, o.bins
	for len(a) > 0 || len(b) > 0 {
		if len(b) == 0 || (len(a) > 0 && a[0].index() <= b[0].index()) {
			put(a[0])
			a = a[1:]
		} else {
			put(b[0])
			b = b[1:]
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
		seen += int(b.count())
		if seen > k {
			return math.Min(binValue(b.index()), s.max)
		}
	}
	return s.max
}

// clip gives back the room the bins' slice grew past them.
func (s *summary) clip() { s.bins = slices.Clip(s.bins) }

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
