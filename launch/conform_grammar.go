package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/suites/conformance"
	"github.com/vigil-suite/vigil/suites/reduce"
)

// grammarReplays bounds the replays (each on both servers) that reduce
// one grammar sequence that differs.
const grammarReplays = 150

// reduceGrammar reduces every grammar sequence whose answers differ from
// the reference's (or fail) to the fewest and simplest requests that
// still differ, replayed one after another on both servers, and returns
// each as a result of its own ("<sequence>/reduced"), with the transcripts
// a reproduction program is written from. A sequence that no replay
// shows differing again is said so on stderr.
func reduceGrammar(ctx context.Context, target, ref probed, results []conformance.Result, lims []conformance.Limitation) []conformance.Result {
	if target.grammar == nil || target.probes == nil || ref.probes == nil {
		return nil
	}
	var out []conformance.Result
	salt := int64(0)
	for _, r := range results {
		if !strings.HasPrefix(r.Name, "grammar/") || r.Verdict == conformance.Pass || r.Verdict == conformance.Skipped {
			continue
		}
		var steps []reduce.Step
		for _, q := range target.grammar.Sent(r.Name) {
			steps = append(steps, reduce.Step{Req: q})
		}
		info := conformance.Info{Name: r.Name + "/reduced", Title: "the fewest requests of " + r.Name + " whose answers still differ from the reference's"}
		var last []conformance.Result
		symptom := func(ctx context.Context, st []reduce.Step) (bool, string, error) {
			salt++
			reqs := make([]history.Request, len(st))
			for i := range st {
				reqs[i] = st[i].Req
			}
			pr := conformance.ReplayProbe(info, reqs, salt)
			x, err := target.probes(ctx, []conformance.EtcdProbe{pr})
			if err != nil {
				return false, "", err
			}
			y, err := ref.probes(ctx, []conformance.EtcdProbe{pr})
			if err != nil {
				return false, "", err
			}
			c := conformance.CompareWithReference(x, y, lims...)
			if len(c) == 0 || c[0].Verdict == conformance.Pass || firstDiffRefused(c[0]) {
				// A reduction whose first difference is the target's
				// refusal (a txn stripped to a form it does not serve)
				// shows that refusal, not the difference sought.
				return false, "", nil
			}
			last = c
			return true, fmt.Sprint(c[0].Diff), nil
		}
		fmt.Fprintf(os.Stderr, "%s differs from the reference: reducing its %d requests...\n", r.Name, len(steps))
		red, err := reduce.Reduce(ctx, steps, symptom, grammarReplays)
		switch {
		case errors.Is(err, reduce.ErrNotSequential):
			fmt.Fprintf(os.Stderr, "%s: replayed, its requests answer alike on both servers: not reduced\n", r.Name)
			continue
		case err != nil:
			fmt.Fprintf(os.Stderr, "%s: reduction stopped: %v\n", r.Name, err)
		}
		if len(last) > 0 {
			fmt.Fprintf(os.Stderr, "%s: reduced to %d request(s) in %d replays\n", r.Name, len(red.Steps), red.Replays)
			out = append(out, last[0])
		}
	}
	return out
}

// firstDiffRefused reports whether a result's first difference from the
// reference is the target declining a request it does not implement.
func firstDiffRefused(r conformance.Result) bool {
	if len(r.Diff) == 0 {
		return false
	}
	d := r.Diff[0]
	if i := strings.Index(d, "; the reference: "); i >= 0 {
		d = d[:i] // the target's answer only
	}
	return strings.Contains(d, "-> error Unimplemented") || history.SaysRefused(d)
}

// grammarRepros says how to run each grammar sequence again and writes,
// for each reduced one that still differs, its reproduction program to
// the output dir (repro-grammar-SEED-N.go): it replays the reduced
// requests and exits 1 while the server answers otherwise than the
// reference did.
func (o ConformOptions) grammarRepros(results []conformance.Result, refName string) {
	again := fmt.Sprintf("vigil conform --grammar %d --grammar-length %d --seed %d", o.Grammar, o.GrammarLength, o.Seed)
	for i := range results {
		r := &results[i]
		if !strings.HasPrefix(r.Name, "grammar/") {
			continue
		}
		r.Again = again
		if !strings.HasSuffix(r.Name, "/reduced") || r.Verdict == conformance.Pass {
			continue
		}
		src := r.Reproduction()
		if src == "" {
			continue
		}
		file := filepath.Join(o.Out, "repro-"+strings.ReplaceAll(strings.TrimSuffix(r.Name, "/reduced"), "/", "-")+".go")
		if err := os.WriteFile(file, []byte(src), 0o644); err == nil {
			r.ReproFile = file
		}
	}
}
