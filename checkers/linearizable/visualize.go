package linearizable

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// VisualizeOptions bounds what Visualize draws.
type VisualizeOptions struct {
	// MaxOperations is the most operations drawn (porcupine's page gets
	// slow past a few thousand). Zero means 2000.
	MaxOperations int
}

// Visualization says what Visualize drew.
type Visualization struct {
	// Scope is "the whole history", "the search that failed", or the
	// window of the history drawn.
	Scope      string
	Operations int
	Faults     int
}

// visualContext is how many operations of the plan are drawn on each side
// of the search that failed.
const visualContext = 30

// String says what was drawn, for a person.
func (v Visualization) String() string {
	return fmt.Sprintf("%s, %d operations, %d faults", v.Scope, v.Operations, v.Faults)
}

// Visualize writes porcupine's HTML view of the KV history to
// w, with vigil's fault intervals as annotations. What it draws:
//   - when kv/linearizable fails, the search that proved it: the operations
//     around the violation, starting from the store as the check found it
//     there, with the longest orders that fit;
//   - otherwise the whole history if it is small enough, else the last
//     MaxOperations of the order the check found.
//
// It runs the check (same budgets) to get there; a Result of Check draws
// the same view without judging again (Result.Drawing).
func Visualize(h *history.History, cfg check.Config, w io.Writer, opts VisualizeOptions) (Visualization, error) {
	p, err := prepareLinearizable(h)
	if err != nil {
		return Visualization{}, err
	}
	if p.figures["checked"] == 0 {
		return Visualization{}, fmt.Errorf("no KV operation to draw")
	}
	return p.draw(h, p.check(cfg, nil), w, opts)
}

// draw writes the view of a run that has ended.
func (p *linPrep) draw(h *history.History, run *linRun, w io.Writer, opts VisualizeOptions) (Visualization, error) {
	if opts.MaxOperations <= 0 {
		opts.MaxOperations = 2000
	}
	pl := run.pl
	var set *searchSet
	var info porcupine.LinearizationInfo
	var scope string
	switch {
	case run.st.violation != nil && run.last != nil:
		// The failed search, widened by some context on both sides: the
		// replay reached its start, so the store there is known.
		a, b := run.expand(max(0, run.last.a-visualContext), min(int32(len(pl.seq)), run.last.b+visualContext))
		set = run.searchSet(a, b, false)
		info = run.porcupine(set, false).info
		if len(set.pops) > opts.MaxOperations {
			set, info = run.last, run.lastOut.info
		}
		scope = fmt.Sprintf("the search that failed (revisions %s) and the operations around it", run.revRange(run.last.a, run.last.b))
	case run.st.reason != "":
		return Visualization{}, fmt.Errorf("kv/linearizable is unknown (%s): nothing proven to draw", run.st.reason)
	default:
		// A passing check knows the store before every position the
		// replay stepped, and at the start of every window it searched
		// (not inside one): the drawing starts at such a place.
		n := int32(len(pl.seq))
		a, b := max(0, n-int32(opts.MaxOperations)), n
		for moved := true; moved; {
			a, b = run.expand(a, b)
			moved = false
			for _, win := range run.windows {
				if win.a < a && a < win.b {
					a, moved = win.a, true
				}
			}
		}
		set = run.searchSet(a, b, false)
		out := run.porcupine(set, false)
		if !out.ok {
			return Visualization{}, fmt.Errorf("the window drawn did not replay (%v)", out.timedOut)
		}
		info = out.info
		scope = "the whole history"
		if a > 0 {
			scope = fmt.Sprintf("the last %d operations (revisions %s) of %d", len(set.pops), run.revRange(a, b), len(pl.seq))
		}
	}
	if len(set.pops) > opts.MaxOperations*2 {
		return Visualization{}, fmt.Errorf("the window to draw has %d operations, more than twice the cap of %d", len(set.pops), opts.MaxOperations)
	}
	if seg := h.Meta.Segment; seg != nil {
		// A segmented run draws from one segment: say which.
		scope = strings.Replace(scope, "the whole history", "the whole segment", 1)
		scope += fmt.Sprintf(" of segment %d (t=%.0f-%.0fs; the run was judged segment by segment)", seg.Index, seg.Start.Seconds(), seg.End.Seconds())
	}
	model := p.windowModel(winState{kv: set.start})
	faults := faultAnnotations(h, set.pops)
	info.AddAnnotations(faults)
	if err := porcupine.Visualize(model, info, w); err != nil {
		return Visualization{}, err
	}
	return Visualization{Scope: scope, Operations: len(set.pops), Faults: len(faults)}, nil
}

// faultAnnotations turns the faults that overlap the operations drawn into
// porcupine annotations on a "faults" row.
func faultAnnotations(h *history.History, pops []porcupine.Operation) []porcupine.Annotation {
	if len(pops) == 0 {
		return nil
	}
	lo, hi := pops[0].Call, pops[0].Return
	for _, o := range pops {
		lo, hi = min(lo, o.Call), max(hi, o.Return)
	}
	var out []porcupine.Annotation
	faults := append([]history.Fault(nil), h.Faults...)
	sort.Slice(faults, func(i, j int) bool { return faults[i].Start < faults[j].Start })
	for _, f := range faults {
		start, end := int64(f.Start), int64(f.End)
		if end < start {
			end = start
		}
		if end < lo || start > hi {
			continue
		}
		var details []string
		if len(f.Targets) > 0 {
			details = append(details, "targets: "+strings.Join(f.Targets, ", "))
		}
		keys := make([]string, 0, len(f.Details))
		for k := range f.Details {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			details = append(details, k+": "+f.Details[k])
		}
		out = append(out, porcupine.Annotation{Tag: "faults", Start: max(start, lo), End: min(end, hi),
			Description: f.Name, Details: strings.Join(details, "\n"), BackgroundColor: "#f4c7c3"})
	}
	return out
}
