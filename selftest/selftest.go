// Package selftest measures what vigil's checks cannot miss: it takes a
// history every check passed and makes many single, seeded, small
// corruptions of what the system answered (drop a watch event, duplicate
// one, return an older value, ...). Each corrupted history must be
// rejected by some check, and by the check that owns the corrupted
// guarantee; every miss is listed with the corruption applied, to be fixed
// or argued undetectable.
package selftest

import (
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/vigil-suite/vigil/checkers"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/reports"
)

// Config bounds a self-test.
type Config struct {
	// PerKind is how many corruptions of each kind are tried (at most
	// one per site); zero means 20.
	PerKind int
	Seed    uint64
	Checks  check.Config
	// Only, when set, names the kinds to try.
	Only []string
	// AllChecks judges every trial with every check. By default the owner
	// judges first, and the other checks only a trial the owner missed
	// (to say who else caught it): as sure, and many times faster on a
	// long run, but Report.ByCheck then counts only what they judged.
	AllChecks bool
}

// Trial is one corrupted history and what the checks said of it.
type Trial struct {
	Kind, Owner string
	// What says what was corrupted, and where.
	What string
	// Failed are the MUST checks that rejected it.
	Failed []string
	// Warned are the SHOULD checks that flagged it.
	Warned []string
	// Argued, for a miss, says why it is no weakness of a MUST check.
	Argued string
}

// Caught: some MUST check rejected the corrupted history.
func (t Trial) Caught() bool { return len(t.Failed) > 0 }

// ByOwner: the check owning the corrupted guarantee rejected it.
func (t Trial) ByOwner() bool { return slices.Contains(t.Failed, t.Owner) }

// KindResult sums the trials of one kind.
type KindResult struct {
	Kind, Owner     string
	Sites           int
	Tried           int
	Caught, ByOwner int
	// Argued counts the misses argued to be no weakness (Trial.Argued).
	Argued int
}

// Report is a whole self-test.
type Report struct {
	Kinds []KindResult
	// Misses are the trials the owner did not catch, the argued ones
	// (Argued set) included.
	Misses []Trial
	// ByCheck counts, per check, the trials it rejected.
	ByCheck map[string]int
	// AllChecks: every check judged every trial (Config.AllChecks), so
	// ByCheck counts them all, not only the misses of their owners.
	AllChecks bool
}

// Run corrupts h, which every MUST check must pass, kind by kind: with
// the corruptions of Kubernetes histories for a run of the Kubernetes
// target, of etcd histories otherwise.
func Run(h *history.History, cfg Config) (Report, error) {
	if h.Meta.Target.Kind == "kube" {
		return run(h, cfg, KubeKinds())
	}
	return run(h, cfg, Kinds())
}

// Unargued is how many misses no argument excuses: each a weakness.
func (r Report) Unargued() int {
	n := 0
	for _, m := range r.Misses {
		if m.Argued == "" {
			n++
		}
	}
	return n
}

// Print writes the report for people: a line per kind, what each check
// rejected, every miss with who else caught or warned of it and its
// argument, and last whether a miss is a weakness (Unargued) or none is.
func (r Report) Print(w io.Writer, wide bool) {
	var rows [][]string
	for _, k := range r.Kinds {
		rows = append(rows, []string{k.Kind, k.Owner, fmt.Sprint(k.Sites), fmt.Sprint(k.Tried), fmt.Sprint(k.Caught),
			fmt.Sprint(k.ByOwner), fmt.Sprint(k.Argued)})
	}
	reports.Listing(w, wide, []string{"KIND", "OWNER", "PLACES", "TRIED", "CAUGHT", "BY OWNER", "ARGUED"}, rows)
	var byCheck []string
	for _, name := range slices.Sorted(maps.Keys(r.ByCheck)) {
		byCheck = append(byCheck, fmt.Sprintf("%s %d", name, r.ByCheck[name]))
	}
	judged := "(the owner first; the others only where it missed: --all-checks for all)"
	if r.AllChecks {
		judged = "(every check judged every corruption)"
	}
	fmt.Fprintf(w, "\ncorruptions each check rejected %s: %s\n", judged, strings.Join(byCheck, ", "))
	for _, m := range r.Misses {
		fmt.Fprintf(w, "\nmissed by %s: %s: %s\n", m.Owner, m.Kind, m.What)
		if len(m.Failed) > 0 {
			fmt.Fprintf(w, "  rejected by %s\n", strings.Join(m.Failed, ", "))
		}
		if len(m.Warned) > 0 {
			fmt.Fprintf(w, "  warned by %s\n", strings.Join(m.Warned, ", "))
		}
		if m.Argued != "" {
			fmt.Fprintf(w, "  argued: %s\n", m.Argued)
		}
	}
	if n := r.Unargued(); n > 0 {
		fmt.Fprintf(w, "\n%d corruption(s) missed with no argument: each is a weakness of its owner check\n", n)
		return
	}
	fmt.Fprintln(w, "\nevery corruption was caught by its owner, or its miss is argued")
}

func run(h *history.History, cfg Config, kinds []Kind) (Report, error) {
	var names []string
	for _, k := range kinds {
		names = append(names, k.Name)
	}
	for _, o := range cfg.Only {
		if !slices.Contains(names, o) {
			return Report{}, fmt.Errorf("%q is not a corruption kind; the kinds: %s", o, strings.Join(names, ", "))
		}
	}
	if cfg.PerKind <= 0 {
		cfg.PerKind = 20
	}
	for _, r := range checkers.Run(h, cfg.Checks) {
		if !r.Should && r.Verdict != check.Pass && r.Verdict != check.Skipped && r.Verdict != check.Documented {
			return Report{}, fmt.Errorf("the self-test needs a history every check passes; %s says %s (%s)", r.Name, r.Verdict, r.Reason)
		}
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5e1f7e57))
	rep := Report{ByCheck: map[string]int{}, AllChecks: cfg.AllChecks}
	for _, k := range kinds {
		if len(cfg.Only) > 0 && !slices.Contains(cfg.Only, k.Name) {
			continue
		}
		sites := k.sites(h)
		kr := KindResult{Kind: k.Name, Owner: k.Owner, Sites: len(sites)}
		for _, i := range pick(rng, len(sites), cfg.PerKind) {
			c := clone(h)
			t := Trial{Kind: k.Name, Owner: k.Owner, What: k.apply(c, sites[i])}
			// The checks prepared for the corrupted history, its owner first.
			all := checkers.ForHistory(c)
			if i := slices.IndexFunc(all, func(c check.Check) bool { return c.Name == k.Owner }); i > 0 {
				owner := all[i]
				all = slices.Insert(slices.Delete(all, i, i+1), 0, owner)
			}
			// The owner first (all is ordered so); the others only when
			// it missed, or when every check is to judge.
			for i, ch := range all {
				if i > 0 && t.ByOwner() && !cfg.AllChecks {
					break
				}
				switch r := check.Run(ch, c, cfg.Checks); {
				case r.Verdict == check.Fail && r.Should:
					t.Warned = append(t.Warned, r.Name)
				case r.Verdict == check.Fail:
					t.Failed = append(t.Failed, r.Name)
					rep.ByCheck[r.Name]++
				}
			}
			kr.Tried++
			if t.Caught() {
				kr.Caught++
			}
			if t.ByOwner() {
				kr.ByOwner++
				continue
			}
			if k.argue != nil {
				if t.Argued = k.argue(h, sites[i]); t.Argued != "" {
					kr.Argued++
				}
			}
			rep.Misses = append(rep.Misses, t)
		}
		rep.Kinds = append(rep.Kinds, kr)
	}
	tried := 0
	for _, k := range rep.Kinds {
		tried += k.Tried
	}
	if tried == 0 {
		return rep, fmt.Errorf("nothing to corrupt: the history has no acknowledged operation or watch event the corruptions apply to")
	}
	return rep, nil
}

// pick chooses up to n of m indexes, in order.
func pick(rng *rand.Rand, m, n int) []int {
	if m <= n {
		out := make([]int, m)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := rng.Perm(m)[:n]
	slices.Sort(out)
	return out
}

// clone copies h for one corruption: the operations and each watch's
// responses (or events) are copied, the rest is shared. A corruption
// copies the response or events it changes further (mutableOp,
// mutableResponse, mutableKubeOp, mutableKubeEvent); checks never change
// a history.
func clone(h *history.History) *history.History {
	c := &history.History{Meta: h.Meta, Operations: slices.Clone(h.Operations), Watches: make([]*history.WatchStream, len(h.Watches)),
		Faults: h.Faults, Marks: h.Marks, Calls: h.Calls}
	for i, w := range h.Watches {
		cw := *w
		cw.Responses = slices.Clone(w.Responses)
		c.Watches[i] = &cw
	}
	c.KubeOps = slices.Clone(h.KubeOps)
	c.KubeWatches = make([]*history.KubeWatchStream, len(h.KubeWatches))
	for i, w := range h.KubeWatches {
		cw := *w
		cw.Events = slices.Clone(w.Events)
		c.KubeWatches[i] = &cw
	}
	return c
}

// mutableOp gives operation i of a clone its own response to change.
func mutableOp(h *history.History, i int) *history.Operation {
	o := &h.Operations[i]
	r := *o.Response
	r.KVs = slices.Clone(r.KVs)
	o.Response = &r
	return o
}

// mutableResponse gives response ri of watch wi of a clone its own events
// (and prev_kvs) to change.
func mutableResponse(h *history.History, wi, ri int) (*history.WatchStream, *history.WatchResponse) {
	w := h.Watches[wi]
	r := &w.Responses[ri]
	r.Events = slices.Clone(r.Events)
	for i := range r.Events {
		if p := r.Events[i].PrevKV; p != nil {
			c := *p
			r.Events[i].PrevKV = &c
		}
	}
	return w, r
}
