package reports

import (
	"fmt"
	"image/color"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The plots aggregate into time buckets rather than draw a mark per call
// or event: a run of an hour has millions of both, and one SVG path each
// made pages no browser opens. A fixed number of buckets over the run keeps
// report.html the same size whatever the run's length.

// buckets is about how many buckets a plot has: a run of 10 minutes or
// less has one a second; a longer one, about this many of whole seconds
// (at most 1.5 times as many, a 899 s run's 900 of 1 s).
const buckets = 600

// timeline cuts a run's span into buckets of whole seconds, at least one
// second (the finest the plots need).
type timeline struct {
	span, width time.Duration
	n           int
}

func newTimeline(span time.Duration) timeline {
	w := max(time.Second, (span / buckets).Round(time.Second))
	return timeline{span: span, width: w, n: int(span/w) + 1}
}

// bucket is the bucket of time at, or -1 outside the run.
func (t timeline) bucket(at time.Duration) int {
	if at < 0 {
		return -1
	}
	if i := int(at / t.width); i < t.n {
		return i
	}
	return -1
}

// x is the middle of bucket i, in seconds: where its values are drawn.
func (t timeline) x(i int) float64 { return (time.Duration(i)*t.width + t.width/2).Seconds() }

// per says the bucket width for a title: "per 1 s".
func (t timeline) per() string { return fmt.Sprintf("per %s", t.width) }

// quantiles are the quantiles qs (0.5, 0.99, 1 for the exact largest)
// of the summaries of each bucket with values, read as summary.quantile
// does: one series per quantile, each point at the bucket's middle. Empty
// buckets have no point. It also returns how many values and how many
// buckets with any.
func quantiles(t timeline, sums []*summary, qs ...float64) (out []plotter.XYs, count, filled int) {
	out = make([]plotter.XYs, len(qs))
	for i, s := range sums {
		if s == nil || s.n == 0 {
			continue
		}
		count += s.n
		filled++
		for j, q := range qs {
			out[j] = append(out[j], plotter.XY{X: t.x(i), Y: s.quantile(q)})
		}
	}
	return out, count, filled
}

// peaks are the largest value of each bucket with values, and their count.
func peaks(t timeline, ps []peak) (pts plotter.XYs, count int) {
	for i, p := range ps {
		if p.n > 0 {
			pts = append(pts, plotter.XY{X: t.x(i), Y: p.max})
			count += p.n
		}
	}
	return pts, count
}

// addRuns draws pts as lines, broken where buckets are missing (nothing
// was measured there, which a line across would hide). A run of one
// bucket gets no line; the caller's marks show it. It returns the first
// line drawn, for the legend.
func addRuns(p *plot.Plot, t timeline, pts plotter.XYs, sty draw.LineStyle) (*plotter.Line, error) {
	var first *plotter.Line
	for start := 0; start < len(pts); {
		end := start + 1
		for end < len(pts) && pts[end].X-pts[end-1].X < t.width.Seconds()*1.5 {
			end++
		}
		if end-start > 1 {
			l, err := plotter.NewLine(pts[start:end])
			if err != nil {
				return nil, err
			}
			l.LineStyle = sty
			p.Add(l)
			if first == nil {
				first = l
			}
		}
		start = end
	}
	return first, nil
}

// addMarks draws one glyph per point; it returns the scatter for the legend
// (nil when pts is empty).
func addMarks(p *plot.Plot, pts plotter.XYs, col color.Color, glyph draw.GlyphDrawer, radius float64) (*plotter.Scatter, error) {
	if len(pts) == 0 {
		return nil, nil
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	s.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(radius), Shape: glyph}
	p.Add(s)
	return s, nil
}

// spreadLines draws q, the p50 (thin), p99 (thick) and max (dots) of
// the buckets, in col, and adds one legend entry, name. Values seen in
// fewer than a third of the buckets (filled: a rare call, a short burst)
// get their max dots only: their lines would be specks.
func spreadLines(p *plot.Plot, t timeline, q []plotter.XYs, filled int, name string, col color.Color) error {
	var thumbs []plot.Thumbnailer
	if filled*3 >= t.n {
		for i, w := range []float64{0.7, 1.6} {
			l, err := addRuns(p, t, q[i], draw.LineStyle{Color: col, Width: vg.Points(w)})
			if err != nil {
				return err
			}
			if l != nil && i == 1 {
				thumbs = append(thumbs, l)
			}
		}
	}
	dots, err := addMarks(p, q[2], col, draw.CircleGlyph{}, 1.3)
	if err != nil {
		return err
	}
	if dots != nil {
		thumbs = append(thumbs, dots)
	}
	if len(thumbs) > 0 {
		p.Legend.Add(name, thumbs...)
	}
	return nil
}
