package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/vigil-suite/vigil/checkers/facts"
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
	for i, f := range b.faults {
		x0, x1 := trX(f.Start.Seconds()), trX(f.End.Seconds())
		if f.End <= f.Start {
			x1 = x0 + 1
		}
		c.FillPolygon(faultShade, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
		// Labels alternate in height so that close faults stay legible.
		y := c.Max.Y - sty.Font.Size*vg.Length(1+i%3)
		c.FillText(sty, vg.Point{X: x0 + 2, Y: y}, f.Name)
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

// latencyPlot: every call's latency at its start, by kind, the calls of
// the system under test as facts.Calls lists them; definite errors in red,
// calls left unanswered (of unknown outcome) in orange.
func latencyPlot(h *history.History, b bands) (*plot.Plot, error) {
	p := newPlot("call latency", "latency (ms, log)", h.End(), b)
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	byKind := map[string]plotter.XYs{}
	var failed, unanswered plotter.XYs
	for _, c := range facts.Calls(h) {
		pt := plotter.XY{X: c.Start.Seconds(), Y: math.Max(float64(c.Ret-c.Start)/1e6, 0.01)}
		switch {
		case !c.Ok:
			unanswered = append(unanswered, pt)
		case c.Failed:
			failed = append(failed, pt)
		default:
			byKind[c.Kind] = append(byKind[c.Kind], pt)
		}
	}
	for i, k := range slices.Sorted(maps.Keys(byKind)) {
		if err := addScatter(p, byKind[k], k, kindColors[i%len(kindColors)], draw.CircleGlyph{}, 1.2); err != nil {
			return nil, err
		}
	}
	if err := addScatter(p, failed, "failed", failColor, draw.CrossGlyph{}, 2.5); err != nil {
		return nil, err
	}
	if err := addScatter(p, unanswered, "unanswered", maybeColor, draw.TriangleGlyph{}, 2.5); err != nil {
		return nil, err
	}
	return p, nil
}

func addScatter(p *plot.Plot, pts plotter.XYs, name string, col color.Color, glyph draw.GlyphDrawer, radius float64) error {
	if len(pts) == 0 {
		return nil
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	s.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(radius), Shape: glyph}
	p.Add(s)
	p.Legend.Add(fmt.Sprintf("%s (%d)", name, len(pts)), s)
	return nil
}

// series is one line of the throughput plot: the calls it counts.
type series struct {
	name string
	col  color.Color
	pick func(facts.Call) bool
}

// throughputPlot: calls per second answered, failed and unanswered; for
// Kubernetes also the 410s and the lists.
func throughputPlot(h *history.History, b bands) (*plot.Plot, error) {
	end := h.End()
	p := newPlot("throughput", "calls per second", end, b)
	all := []series{
		{"answered", okColor, func(c facts.Call) bool { return c.Ok && !c.Failed }},
		{"failed", failColor, func(c facts.Call) bool { return c.Failed }},
		{"unanswered", maybeColor, func(c facts.Call) bool { return !c.Ok }},
	}
	if len(h.KubeOps) > 0 {
		all = append(all, series{"410 Gone", kindColors[2], func(c facts.Call) bool { return c.Status == 410 }},
			series{"lists", kindColors[1], func(c facts.Call) bool { return c.Kind == string(history.KubeList) }})
	}
	cs := facts.Calls(h)
	n := int(end/time.Second) + 1
	for _, s := range all {
		pts := make(plotter.XYs, n)
		for i := range pts {
			pts[i].X = float64(i) + 0.5
		}
		total := 0
		for _, c := range cs {
			if i := int(c.Start / time.Second); s.pick(c) && i >= 0 && i < n {
				pts[i].Y++
				total++
			}
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

// watchLagPlot: for every event a watch delivered, how long after the
// write that made its revision was acknowledged it arrived (a write never
// acknowledged has no point); a color per watch; progress notifications
// as marks on the axis.
func watchLagPlot(h *history.History, b bands) (*plot.Plot, error) {
	p := newPlot("watch delivery lag", "lag (ms)", h.End(), b)
	// When each revision's write was acknowledged. A Kubernetes run's etcd
	// operations and watches are vigil's oracle, not the system under test.
	kubeRun := h.Meta.Target.Kind == "kube"
	committed := map[int64]time.Duration{}
	for i := range h.Operations {
		if rev, ok := facts.AckedWriteRevision(&h.Operations[i]); ok && !kubeRun {
			if t, seen := committed[rev]; !seen || h.Operations[i].Return < t {
				committed[rev] = h.Operations[i].Return
			}
		}
	}
	for _, o := range h.KubeOps {
		if o.Response != nil && o.Response.Object != nil && o.Request.Verb != history.KubeGet && o.Request.Verb != history.KubeList {
			if rv, ok := facts.ParseRV(o.Response.Object.ResourceVersion); ok {
				committed[rv] = o.Return
			}
		}
	}
	var progress plotter.XYs
	watchers := 0
	add := func(pts plotter.XYs) error {
		if len(pts) == 0 {
			return nil
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: kindColors[watchers%len(kindColors)], Radius: vg.Points(1), Shape: draw.CircleGlyph{}}
		watchers++
		p.Add(s)
		return nil
	}
	for _, w := range h.Watches {
		if kubeRun {
			break
		}
		var pts plotter.XYs
		for _, r := range w.Responses {
			if r.Progress {
				progress = append(progress, plotter.XY{X: r.Time.Seconds(), Y: 0})
			}
			for _, e := range r.Events {
				if t, ok := committed[e.Revision()]; ok {
					pts = append(pts, plotter.XY{X: r.Time.Seconds(), Y: math.Max(float64(r.Time-t)/1e6, 0)})
				}
			}
		}
		if err := add(pts); err != nil {
			return nil, err
		}
	}
	for _, w := range h.KubeWatches {
		var pts plotter.XYs
		for _, e := range w.Events {
			if e.Object == nil {
				continue
			}
			if e.Type == history.KubeBookmark {
				progress = append(progress, plotter.XY{X: e.Time.Seconds(), Y: 0})
				continue
			}
			rv, parsed := facts.ParseRV(e.Object.ResourceVersion)
			if t, ok := committed[rv]; ok && parsed {
				pts = append(pts, plotter.XY{X: e.Time.Seconds(), Y: math.Max(float64(e.Time-t)/1e6, 0)})
			}
		}
		if err := add(pts); err != nil {
			return nil, err
		}
	}
	if len(progress) > 0 {
		s, err := plotter.NewScatter(progress)
		if err != nil {
			return nil, err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(2.5), Shape: draw.PyramidGlyph{}}
		p.Add(s)
		p.Legend.Add(fmt.Sprintf("progress notifications / bookmarks (%d)", len(progress)), s)
	}
	p.Title.Text = fmt.Sprintf("watch delivery lag behind the acknowledged write (%d watches with events, a color each)", watchers)
	return p, nil
}
