package reports

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/vigil-suite/vigil/history"
)

// The plots of report.html, drawn with gonum/plot as SVG and inlined in
// the page: nothing is fetched when it is opened. Every plot's x axis is
// the run's time in seconds, with each fault's interval shaded and named
// and each finding's moment marked, so that one reads across them.

// Marker is a moment to mark on every plot (a finding's witness).
type Marker struct {
	At    time.Duration
	Label string
}

const plotW, plotH = 10 * vg.Inch, 3 * vg.Inch

var (
	faultShade = color.NRGBA{R: 255, G: 160, B: 0, A: 50}
	faultText  = color.NRGBA{R: 150, G: 90, B: 0, A: 255}
	markColor  = color.NRGBA{R: 200, G: 0, B: 0, A: 255}
	okColor    = color.NRGBA{R: 40, G: 120, B: 200, A: 255}
	failColor  = color.NRGBA{R: 220, G: 40, B: 40, A: 255}
	maybeColor = color.NRGBA{R: 240, G: 150, B: 0, A: 255}
)

// kindColors cycle over operation kinds and watchers.
var kindColors = []color.Color{
	color.NRGBA{R: 31, G: 119, B: 180, A: 160}, color.NRGBA{R: 44, G: 160, B: 44, A: 160},
	color.NRGBA{R: 148, G: 103, B: 189, A: 160}, color.NRGBA{R: 140, G: 86, B: 75, A: 160},
	color.NRGBA{R: 23, G: 190, B: 207, A: 160}, color.NRGBA{R: 188, G: 189, B: 34, A: 160},
	color.NRGBA{R: 127, G: 127, B: 127, A: 160}, color.NRGBA{R: 227, G: 119, B: 194, A: 160},
}

// bands shades the faults' intervals and marks the findings on a plot.
type bands struct {
	faults  []history.Fault
	markers []Marker
}

func (b bands) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	sty := draw.TextStyle{Color: faultText, Font: plot.DefaultFont, Handler: p.Title.TextStyle.Handler}
	sty.Font.Size = vg.Points(8)
	spans := make([][2]vg.Length, len(b.faults))
	for i, f := range b.faults {
		x0, x1 := trX(f.Start.Seconds()), trX(f.End.Seconds())
		if f.End <= f.Start {
			x1 = x0 + 1
		}
		spans[i] = [2]vg.Length{x0, x1}
	}
	// Bands less than a point apart are shaded as one, so that a day of
	// faults costs no more than the plot has points.
	sorted := slices.Clone(spans)
	slices.SortFunc(sorted, func(a, b [2]vg.Length) int { return cmp.Compare(a[0], b[0]) })
	for i := 0; i < len(sorted); {
		x0, x1 := sorted[i][0], sorted[i][1]
		for i++; i < len(sorted) && sorted[i][0] <= x1+1; i++ {
			x1 = max(x1, sorted[i][1])
		}
		c.FillPolygon(faultShade, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	}
	// Labels go on three rows, each fault's on the first row with room
	// after the label before it there; a fault with no room is shaded
	// unnamed (the page lists every fault).
	var rowEnd [3]vg.Length
	for i := range rowEnd {
		rowEnd[i] = c.Min.X - 1e6
	}
	for i, f := range b.faults {
		x0 := spans[i][0]
		for row := range rowEnd {
			if x0 >= rowEnd[row] {
				c.FillText(sty, vg.Point{X: x0 + 2, Y: c.Max.Y - sty.Font.Size*vg.Length(1+row)}, f.Name)
				rowEnd[row] = x0 + 2 + sty.Width(f.Name) + 3
				break
			}
		}
	}
	line := draw.LineStyle{Color: markColor, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}
	msty := sty
	msty.Color = markColor
	for i, m := range b.markers {
		x := trX(m.At.Seconds())
		c.StrokeLine2(line, x, c.Min.Y, x, c.Max.Y)
		c.FillText(msty, vg.Point{X: x + 2, Y: c.Min.Y + 2 + msty.Font.Size*vg.Length(i%4)}, m.Label)
	}
}

// newPlot is a plot over the run's time with the bands drawn first.
func newPlot(title, ylabel string, span time.Duration, b bands) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "run time (s)"
	p.Y.Label.Text = ylabel
	p.X.Min, p.X.Max = 0, math.Max(span.Seconds(), 1)
	p.Add(plotter.NewGrid())
	p.Add(b)
	p.Legend.Top = true
	p.Legend.Left = false
	p.Legend.TextStyle.Font.Size = vg.Points(7)
	p.Legend.ThumbnailWidth = vg.Points(10)
	return p
}

// svgOf renders p as an SVG element.
func svgOf(p *plot.Plot) (string, error) {
	c := vgsvg.New(plotW, plotH)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	// Drop the XML declaration: the SVG goes inline in HTML.
	s := buf.String()
	return s[max(strings.Index(s, "<svg"), 0):], nil
}

// timelinePlots are the page's plots of the run d digests: latency,
// throughput and watch delivery lag, each aggregated into the same buckets.
func (d *Digest) timelinePlots(b bands) ([]*plot.Plot, error) {
	t := d.timeline()
	bs := d.buckets(t)
	var plots []*plot.Plot
	for _, mk := range []func(*Digest, timeline, []slot, bands) (*plot.Plot, error){latencyPlot, throughputPlot, watchLagPlot} {
		p, err := mk(d, t, bs, b)
		if err != nil {
			return nil, err
		}
		headroom(p)
		plots = append(plots, p)
	}
	return plots, nil
}

// headroom raises the top of p's y axis by a fifth of its height (on its
// scale), so that the fault names along the top do not hide the data.
func headroom(p *plot.Plot) {
	if p.Y.Max <= p.Y.Min {
		return
	}
	if _, log := p.Y.Scale.(plot.LogScale); log && p.Y.Min > 0 {
		p.Y.Max *= math.Pow(p.Y.Max/p.Y.Min, 0.2)
		return
	}
	p.Y.Max += (p.Y.Max - p.Y.Min) * 0.2
}

// latencyPlot: the latency of the calls started in each bucket, by kind
// (the calls of the system under test, as facts.Calls lists them): p50
// and p99 as lines (read from the buckets' histograms, within 6 %), the
// slowest as a dot; the slowest call with a definite error (red cross)
// and the slowest left unanswered (of unknown outcome, orange triangle)
// of each bucket that had any.
func latencyPlot(d *Digest, t timeline, bs []slot, b bands) (*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("call latency by kind, %s: p50 thin, p99 thick, slowest dot", t.per()), "latency (ms, log)", t.span, b)
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	var kinds []int
	for k := range d.kinds {
		if slices.ContainsFunc(bs, func(s slot) bool { return k < len(s.kinds) && s.kinds[k].n > 0 }) {
			kinds = append(kinds, k)
		}
	}
	slices.SortFunc(kinds, func(a, b int) int { return strings.Compare(d.kinds[a], d.kinds[b]) })
	for i, k := range kinds {
		sums := make([]*summary, len(bs))
		for j := range bs {
			if k < len(bs[j].kinds) {
				sums[j] = &bs[j].kinds[k]
			}
		}
		q, n, filled := quantiles(t, sums, 0.5, 0.99, 1)
		if err := spreadLines(p, t, q, filled, fmt.Sprintf("%s (%d)", d.kinds[k], n), kindColors[i%len(kindColors)]); err != nil {
			return nil, err
		}
	}
	failed, unanswered := make([]peak, len(bs)), make([]peak, len(bs))
	for j := range bs {
		failed[j], unanswered[j] = bs[j].failed, bs[j].unanswered
	}
	for _, m := range []struct {
		ps    []peak
		name  string
		col   color.Color
		glyph draw.GlyphDrawer
	}{{failed, "failed", failColor, draw.CrossGlyph{}}, {unanswered, "unanswered", maybeColor, draw.TriangleGlyph{}}} {
		pts, n := peaks(t, m.ps)
		s, err := addMarks(p, pts, m.col, m.glyph, 2.5)
		if err != nil {
			return nil, err
		}
		if s != nil {
			p.Legend.Add(fmt.Sprintf("%s (%d)", m.name, n), s)
		}
	}
	return p, nil
}

// series is one line of the throughput plot: how many calls of a bucket
// it counts.
type series struct {
	name  string
	col   color.Color
	count func(*slot) int
}

// throughputPlot: calls per second started in each bucket, answered,
// failed and unanswered; for Kubernetes also the 410s and the lists.
func throughputPlot(d *Digest, t timeline, bs []slot, b bands) (*plot.Plot, error) {
	p := newPlot(fmt.Sprintf("throughput, %s", t.per()), "calls per second", t.span, b)
	all := []series{
		{"answered", okColor, func(s *slot) int {
			n := 0
			for k := range s.kinds {
				n += s.kinds[k].n
			}
			return n
		}},
		{"failed", failColor, func(s *slot) int { return s.failed.n }},
		{"unanswered", maybeColor, func(s *slot) int { return s.unanswered.n }},
	}
	if d.kubeOps {
		all = append(all, series{"410 Gone", kindColors[2], func(s *slot) int { return s.gone }},
			series{"lists", kindColors[1], func(s *slot) int { return s.lists }})
	}
	for _, s := range all {
		pts := make(plotter.XYs, t.n)
		total := 0
		for i := range pts {
			n := s.count(&bs[i])
			pts[i] = plotter.XY{X: t.x(i), Y: float64(n) / t.width.Seconds()}
			total += n
		}
		if total == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.LineStyle = draw.LineStyle{Color: s.col, Width: vg.Points(1.5)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (%d)", s.name, total), l)
	}
	return p, nil
}

// lagFloor is the least lag drawn (ms): the axis is logarithmic, and the
// progress notifications are marked on it.
const lagFloor = 0.1

// watchLagPlot: how long after the write that made its revision was
// acknowledged each event a watch delivered arrived (a write never
// acknowledged has no lag), over every watch's events received in each
// bucket: p50, p99 (within 6 %) and the slowest; the buckets with
// progress notifications (or bookmarks) marked on the axis. A Kubernetes
// run's etcd operations and watches are vigil's oracle, not the system
// under test: the digest leaves them out (Digest.addLags).
func watchLagPlot(d *Digest, t timeline, bs []slot, b bands) (*plot.Plot, error) {
	p := newPlot("", "lag (ms, log)", t.span, b)
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	sums := make([]*summary, len(bs))
	notes := 0
	var marks plotter.XYs
	for i := range bs {
		sums[i] = &bs[i].lag
		if n := bs[i].progress; n > 0 {
			notes += n
			marks = append(marks, plotter.XY{X: t.x(i), Y: lagFloor})
		}
	}
	q, events, _ := quantiles(t, sums, 0.5, 0.99, 1)
	for i, line := range []struct {
		name string
		col  color.Color
	}{{"p50", okColor}, {"p99", kindColors[2]}} {
		l, err := addRuns(p, t, q[i], draw.LineStyle{Color: line.col, Width: vg.Points(1.5)})
		if err != nil {
			return nil, err
		}
		if l != nil {
			p.Legend.Add(line.name, l)
		}
	}
	if s, err := addMarks(p, q[2], kindColors[3], draw.CircleGlyph{}, 1.3); err != nil {
		return nil, err
	} else if s != nil {
		p.Legend.Add("slowest", s)
	}
	if s, err := addMarks(p, marks, color.Black, draw.PyramidGlyph{}, 2.5); err != nil {
		return nil, err
	} else if s != nil {
		p.Legend.Add(fmt.Sprintf("progress notifications / bookmarks (%d)", notes), s)
	}
	p.Title.Text = fmt.Sprintf("watch delivery lag behind the acknowledged write, %s: %d events of %d watches", t.per(), events, d.lagWatches)
	return p, nil
}
