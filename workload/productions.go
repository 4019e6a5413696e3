package workload

import (
	"strings"

	"github.com/vigil-suite/vigil/workload/grammar"
)

// weights is the grammar's weighting of the shape (the default one for a
// shape Validate refuses).
func (c Config) weights() *grammar.Weights {
	ws, err := grammar.For(c.Shape)
	if err != nil {
		return grammar.MustFor(ShapeDefault)
	}
	return ws
}

// Productions lists the grammar productions the workload may draw: those
// its shape reaches, its watchers and compactor send, and the target did
// not refuse before the run (a report lists those never drawn).
func (c Config) Productions() []string {
	watch := map[string]bool{}
	for i := 0; i < c.Watchers; i++ {
		req, start := c.watchPlan(i)
		for _, d := range grammar.WatchDraw(req, start) {
			watch[d] = true
		}
		if i%4 == 3 {
			watch["watch.start=resume"] = true
		}
	}
	// Without a compaction in the run, the classes that need one are out
	// of reach (the compactor's first comes after CompactEvery).
	compacts := c.CompactEvery > 0 && c.CompactEvery < c.Duration
	needsCompaction := map[string]bool{"range.revision=compact": true, "range.revision=below-compact": true,
		"hashkv.revision=compact": true, "hashkv.revision=below-compact": true, "compact.revision=past": true,
		"compact.revision=head": true, "compact.revision=compact": true, "compact.revision=below-compact": true,
		"watch.start=compact": true, "watch.start=below-compact": true}
	var out []string
	for _, p := range c.weights().Without(c.refuses).Reachable() {
		switch {
		case c.refuses(p), needsCompaction[p] && !compacts:
		case strings.HasPrefix(p, "watch."):
			if watch[p] {
				out = append(out, p)
			}
		case strings.HasPrefix(p, "compact."):
			if c.CompactEvery > 0 {
				out = append(out, p)
			}
		default:
			out = append(out, p)
		}
	}
	return out
}

// Pruned lists what the target refused, before or during the run, that
// the generators no longer draw, with its words.
func (w *Workload) Pruned() string { return w.pruner.String() }

// PrunedDuring says what refusals met during the run pruned (for the
// log), or "".
func (w *Workload) PrunedDuring() string { return w.pruner.During() }
