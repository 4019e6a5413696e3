package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strconv"
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
	if i := bytes.Index(buf.Bytes(), []byte("<svg")); i > 0 {
		s = s[i:]
	}
	return s, nil
}

// call is one timed call of either API, as the plots see it.
type call struct {
	kind      string
	at, took  time.Duration
	failed    bool // no answer
	uncertain bool // a write whose outcome is unknown
	gone      bool // a Kubernetes 410
	list      bool // a Kubernetes list (a relist after a 410 among them)
}

func calls(h *history.History) []call {
	var out []call
	for _, o := range h.Operations {
		c := call{kind: string(o.Request.Kind), at: o.Call, took: o.Return - o.Call, failed: o.Failed()}
		c.uncertain = c.failed && o.Request.Kind.IsWrite() && o.Code == history.ErrUnknown
		out = append(out, c)
	}
	for _, o := range h.KubeOps {
		c := call{kind: string(o.Request.Verb), at: o.Call, took: o.Return - o.Call,
			failed: o.Response == nil && (o.Status == nil || o.Status.Code >= 500)}
		c.uncertain = c.failed && o.Status == nil && !o.NeverSent()
		c.gone = o.Status != nil && o.Status.Code == 410
		c.list = o.Request.Verb == history.KubeList
		out = append(out, c)
	}
	return out
}

// latencyPlot: every call's latency at its start, by kind; failed calls
// in red, writes of unknown outcome in orange.
func latencyPlot(h *history.History, b bands) (*plot.Plot, error) {
	p := newPlot("call latency", "latency (ms, log)", h.End(), b)
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	byKind := map[string]plotter.XYs{}
	var failed, uncertain plotter.XYs
	for _, c := range calls(h) {
		pt := plotter.XY{X: c.at.Seconds(), Y: math.Max(float64(c.took)/1e6, 0.01)}
		switch {
		case c.uncertain:
			uncertain = append(uncertain, pt)
		case c.failed:
			failed = append(failed, pt)
		default:
			byKind[c.kind] = append(byKind[c.kind], pt)
		}
	}
	kinds := slices.Sorted(maps.Keys(byKind))
	for i, k := range kinds {
		if err := addScatter(p, byKind[k], k, kindColors[i%len(kindColors)], draw.CircleGlyph{}, 1.2); err != nil {
			return nil, err
		}
	}
	if err := addScatter(p, failed, "failed", failColor, draw.CrossGlyph{}, 2.5); err != nil {
		return nil, err
	}
	if err := addScatter(p, uncertain, "unknown outcome", maybeColor, draw.TriangleGlyph{}, 2.5); err != nil {
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

// perSecond counts, per second of the run, the calls each series picks.
func perSecond(cs []call, n int, pick func(call) bool) plotter.XYs {
	counts := make([]float64, n)
	for _, c := range cs {
		if i := int(c.at / time.Second); pick(c) && i >= 0 && i < n {
			counts[i]++
		}
	}
	pts := make(plotter.XYs, n)
	for i, v := range counts {
		pts[i] = plotter.XY{X: float64(i) + 0.5, Y: v}
	}
	return pts
}

// throughputPlot: calls per second answered, failed and of unknown
// outcome; for Kubernetes also the 410s and the lists.
func throughputPlot(h *history.History, b bands) (*plot.Plot, error) {
	sp := h.End()
	p := newPlot("throughput", "calls per second", sp, b)
	cs := calls(h)
	n := int(sp/time.Second) + 1
	series := []struct {
		name string
		col  color.Color
		pick func(call) bool
	}{
		{"answered", okColor, func(c call) bool { return !c.failed }},
		{"failed", failColor, func(c call) bool { return c.failed && !c.uncertain }},
		{"unknown outcome", maybeColor, func(c call) bool { return c.uncertain }},
	}
	if len(h.KubeOps) > 0 {
		series = append(series,
			struct {
				name string
				col  color.Color
				pick func(call) bool
			}{"410 Gone", kindColors[2], func(c call) bool { return c.gone }},
			struct {
				name string
				col  color.Color
				pick func(call) bool
			}{"lists", kindColors[1], func(c call) bool { return c.list }})
	}
	for _, s := range series {
		pts := perSecond(cs, n, s.pick)
		total := 0.0
		for _, pt := range pts {
			total += pt.Y
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
		p.Legend.Add(fmt.Sprintf("%s (%.0f)", s.name, total), l)
	}
	return p, nil
}

// watchLagPlot: for every event a watch delivered, how long after the
// write that made its revision was acknowledged it arrived (a write never
// acknowledged has no point); a color per watch; progress notifications
// as marks on the axis.
func watchLagPlot(h *history.History, b bands) (*plot.Plot, error) {
	p := newPlot("watch delivery lag", "lag (ms)", h.End(), b)
	committed := map[int64]time.Duration{}
	for _, o := range h.Operations {
		if o.Response != nil && o.Request.Kind.IsWrite() && o.Response.Revision > 0 {
			if t, ok := committed[o.Response.Revision]; !ok || o.Return < t {
				committed[o.Response.Revision] = o.Return
			}
		}
	}
	for _, o := range h.KubeOps {
		if o.Response != nil && o.Response.Object != nil && o.Request.Verb != history.KubeGet && o.Request.Verb != history.KubeList {
			if rv, err := strconv.ParseInt(o.Response.Object.ResourceVersion, 10, 64); err == nil {
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
			rv, err := strconv.ParseInt(e.Object.ResourceVersion, 10, 64)
			if e.Type == "BOOKMARK" {
				progress = append(progress, plotter.XY{X: e.Time.Seconds(), Y: 0})
				continue
			}
			if t, ok := committed[rv]; ok && err == nil {
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
