package reports

import (
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

// Quantiles are nearest-rank, per bucket, with no point for an empty one.
func TestSamplesQuantiles(t *testing.T) {
	tl := newTimeline(3 * time.Second)
	s := tl.samples()
	for v := 1; v <= 100; v++ {
		s.add(0, float64(101-v))
	}
	s.add(2, 7)
	s.add(-1, 99) // outside the run: dropped
	q := s.quantiles(tl, 0.5, 0.99, 1)
	if len(q[0]) != 2 || q[0][0].Y != 50 || q[1][0].Y != 99 || q[2][0].Y != 100 || q[0][1].Y != 7 || q[2][1].X != 2.5 {
		t.Errorf("quantiles %v", q)
	}
	if s.count() != 101 || s.filled() != 2 {
		t.Errorf("count %d filled %d", s.count(), s.filled())
	}
}
