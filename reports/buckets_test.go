package reports

import (
	"math"
	"testing"
	"time"
)

// Buckets are whole seconds, one a second up to 10 minutes, and about 600
// of them past it: never more than 900.
func TestTimelineBuckets(t *testing.T) {
	for _, c := range []struct {
		span  time.Duration
		width time.Duration
		n     int
	}{
		{0, time.Second, 1},
		{30 * time.Second, time.Second, 31},
		{602 * time.Second, time.Second, 603},
		{899 * time.Second, time.Second, 900},
		{900 * time.Second, 2 * time.Second, 451},
		{time.Hour, 6 * time.Second, 601},
		{24 * time.Hour, 144 * time.Second, 601},
	} {
		tl := newTimeline(c.span)
		if tl.width != c.width || tl.n != c.n {
			t.Errorf("%s: %d buckets of %s, want %d of %s", c.span, tl.n, tl.width, c.n, c.width)
		}
		if tl.bucket(c.span) != tl.n-1 || tl.bucket(-1) != -1 || tl.bucket(c.span+tl.width) != -1 {
			t.Errorf("%s: the run's end is not in its last bucket", c.span)
		}
	}
}

// Quantiles are nearest-rank, per bucket, read from the histogram within
// histRelErr (the slowest exact), with no point for an empty bucket.
func TestSummaryQuantiles(t *testing.T) {
	tl := newTimeline(3 * time.Second)
	sums := make([]*summary, tl.n)
	sums[0], sums[2] = &summary{}, &summary{}
	for v := 1; v <= 100; v++ {
		sums[0].add(float64(101 - v))
	}
	sums[2].add(7)
	q, count, filled := quantiles(tl, sums, 0.5, 0.99, 1)
	near := func(got, want float64) bool { return math.Abs(got-want) <= want*histRelErr }
	if len(q[0]) != 2 || !near(q[0][0].Y, 50) || !near(q[1][0].Y, 99) || q[2][0].Y != 100 || !near(q[0][1].Y, 7) || q[2][1].X != 2.5 {
		t.Errorf("quantiles %v", q)
	}
	if count != 101 || filled != 2 {
		t.Errorf("count %d filled %d", count, filled)
	}
	// Merged summaries are one summary of all their values.
	var a, b, all summary
	for i := range 1000 {
		v := 0.005 * math.Pow(1.02, float64(i))
		all.add(v)
		if i%3 == 0 {
			a.add(v)
		} else {
			b.add(v)
		}
	}
	a.merge(&b)
	for _, x := range []float64{0.01, 0.5, 0.99, 1} {
		if a.quantile(x) != all.quantile(x) || a.n != all.n {
			t.Errorf("merged q%v = %v, want %v", x, a.quantile(x), all.quantile(x))
		}
	}
	if h := histRelErr; h < 0.058 || h > 0.06 {
		t.Errorf("relative error %v, the docs say 5.9 %%", h)
	}
}

// A bin that would count past 24 bits gets a second entry of the same
// index, so that no count is lost.
func TestSummaryBinOverflow(t *testing.T) {
	a := summary{n: binMax - 1, max: 1, bins: []bin{mkBin(3, binMax-1)}}
	b := summary{n: 5, max: 2, bins: []bin{mkBin(1, 1), mkBin(3, 4)}}
	a.merge(&b)
	if len(a.bins) != 3 || a.bins[1] != mkBin(3, binMax) || a.bins[2] != mkBin(3, 3) || a.n != binMax+4 || a.max != 2 {
		t.Errorf("bins %x, n %d", a.bins, a.n)
	}
	a.add(binValue(3))
	if len(a.bins) != 3 || a.bins[2] != mkBin(3, 4) {
		t.Errorf("after add: bins %x", a.bins)
	}
}

// Past maxSlots seconds the slots merge in pairs, and the page's buckets
// are whole slots, still 500 to 900 of them.
func TestDigestTimeline(t *testing.T) {
	for _, span := range []time.Duration{30 * time.Second, 2047 * time.Second, 2049 * time.Second, 4100 * time.Second, 5 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour} {
		d := NewDigest()
		d.init()
		d.slotAt(span).progress++
		d.end = span
		tl := d.timeline()
		if len(d.slots) > maxSlots || tl.width%d.slotW != 0 || (span > 10*time.Minute && (tl.n < 500 || tl.n > 900)) {
			t.Errorf("%s: %d slots of %s, %d buckets of %s", span, len(d.slots), d.slotW, tl.n, tl.width)
		}
		if bs := d.buckets(tl); len(bs) != tl.n || bs[tl.bucket(span)].progress != 1 {
			t.Errorf("%s: the run's end is not in its last bucket", span)
		}
	}
}
