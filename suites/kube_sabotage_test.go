package suites

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/internal/longtest"
	"github.com/vigil-suite/vigil/targets/sabotage"
	"github.com/vigil-suite/vigil/workload"
)

// Every Kubernetes sabotage mode, injected into a short run against a real
// kube-apiserver over a real etcd, is caught by the check it names, and a
// violation of that check points at the sabotaged record; the same seeded
// run without sabotage passes those checks. One API server over one etcd
// member serves every run: each run works in a namespace of its own, and
// what a run judges (its compactions, its writes) is in its own history.
// As for the etcd modes, VIGIL_SABOTAGE_SEEDS=N runs N seeds (a baseline
// and every mode per seed), and VIGIL_SABOTAGE_OUT=DIR keeps every run's
// files under DIR.
func TestKubeSabotageIsCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	nSeeds := sabotageSeedCount(t)
	modes := sabotage.NamesFor(sabotage.TargetKube)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(5+2*nSeeds*(len(modes)+1))*time.Minute)
	defer cancel()
	fx := startKube(t, ctx, 1, 1, true)

	wl := workload.DefaultKubeConfig()
	wl.Duration = 12 * time.Second
	run := func(t *testing.T, seed int64, mode string) *Outcome {
		g := NewWithT(t)
		dir := sabotageRunDir(t)
		start := time.Now()
		out, err := RunKube(ctx, fx, KubeConfig{Common: Common{Out: dir, Seed: seed, Vigil: "test", Checks: check.DefaultConfig(), Sabotage: mode},
			Workload: wl, Servers: kubeServers(fx), Etcd: fx.Endpoints()})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out.Interrupted).To(BeFalse())
		t.Logf("run took %s", time.Since(start).Round(100*time.Millisecond))
		return out
	}
	result := func(out *Outcome, name string) *check.Result {
		for i := range out.Results {
			if out.Results[i].Name == name {
				return &out.Results[i]
			}
		}
		return nil
	}

	type tally struct {
		ran, injected, caught, pointed int
		others                         map[string]int
		pointer                        string
	}
	tallies := map[string]*tally{}
	for _, name := range modes {
		tallies[name] = &tally{others: map[string]int{}}
	}
	for i := 0; i < nSeeds; i++ {
		seed := int64(101 + i)
		t.Run(fmt.Sprintf("clean/seed-%d", seed), func(t *testing.T) {
			g := NewWithT(t)
			out := run(t, seed, "")
			g.Expect(out.History.Faults).To(BeEmpty())
			for _, r := range out.Results {
				if r.Verdict == check.Fail {
					t.Logf("failing without sabotage: %s (%d violations), first: %s", r.Name, len(r.Violations), r.Violations[0].Message)
				}
			}
			// What each mode must trip holds without it.
			for _, name := range modes {
				m, _ := sabotage.Lookup(name)
				r := result(out, m.Check)
				g.Expect(r).NotTo(BeNil(), "check %s is missing", m.Check)
				g.Expect(r.Verdict).To(Equal(check.Pass), "%s without sabotage: %s\n%s", m.Check, r.Reason,
					describeViolations(r.Violations))
			}
		})
		for _, name := range modes {
			m, _ := sabotage.Lookup(name)
			tl := tallies[name]
			t.Run(fmt.Sprintf("%s/seed-%d", name, seed), func(t *testing.T) {
				// make test proves two modes end to end (a change lost, a
				// stale consistent list); the long suite every one.
				if name != "kube-drop-event" && name != "stale-list" {
					longtest.Skip(t)
				}
				g := NewWithT(t)
				tl.ran++
				out := run(t, seed, name)
				h := out.History
				var faults []history.Fault
				for _, f := range h.Faults {
					if f.Name == sabotage.FaultName(name) {
						faults = append(faults, f)
					}
				}
				t.Logf("faults: %+v", faults)
				for _, r := range out.Results {
					if r.Verdict == check.Fail && r.Name != m.Check {
						tl.others[r.Name]++
						t.Logf("also failing: %s (%d violations), first: %s", r.Name, len(r.Violations), r.Violations[0].Message)
					}
				}
				g.Expect(faults).To(HaveLen(1), "(a) the sabotage injected once")
				tl.injected++
				f := faults[0]

				r := result(out, m.Check)
				g.Expect(r).NotTo(BeNil(), "(b) check %s is missing", m.Check)
				g.Expect(r.Verdict).To(Equal(check.Fail), "(b) %s: %s", m.Check, r.Reason)
				tl.caught++

				var why string
				for _, v := range r.Violations {
					if why = kubePointsAt(h, f, v); why != "" {
						t.Logf("violation %q points at the sabotage: %s", v.Message, why)
						break
					}
				}
				g.Expect(why).NotTo(BeEmpty(), "(c) no violation of %s points at the sabotage %v:\n%s",
					m.Check, f.Details, describeViolations(r.Violations))
				tl.pointed++
				tl.pointer = why
			})
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "%-28s %-30s %9s %9s %9s  %s\n", "mode", "check", "injected", "caught", "pointed", "other checks failing")
	for _, name := range modes {
		tl := tallies[name]
		if tl.ran == 0 {
			continue
		}
		m, _ := sabotage.Lookup(name)
		var others []string
		for c, k := range tl.others {
			others = append(others, fmt.Sprintf("%s %d/%d", c, k, tl.ran))
		}
		slices.Sort(others)
		fmt.Fprintf(&b, "%-28s %-30s %6d/%-2d %6d/%-2d %6d/%-2d  %s\n", name, m.Check, tl.injected, tl.ran,
			tl.caught, tl.ran, tl.pointed, tl.ran, strings.Join(others, ", "))
	}
	t.Logf("Kubernetes sabotage summary over %d seed(s):\n%s", nSeeds, b.String())
}

// kubePointsAt says how v names the record the fault f sabotaged, or "" if
// it does not. The sabotaged record is the call of the fault's client
// that the fault lies inside, or the watch of that client open while it
// happened. v points at it when it names that call or watch (or cites one
// of the watch's events) and, where both say, the same object and — for a
// watch — the same resourceVersion.
func kubePointsAt(h *history.History, f history.Fault, v check.Violation) string {
	client, _ := strconv.Atoi(f.Details["client"])
	key := f.Details["key"]
	rev, _ := strconv.ParseInt(f.Details["revision"], 10, 64)
	sameKey := key == "" || v.Key == "" || v.Key == key
	for _, o := range h.KubeOps {
		if o.Client == client && o.Call <= f.Start && f.End <= o.Return && slices.Contains(v.Operations, o.ID) && sameKey {
			return fmt.Sprintf("names operation %d (%s of client %d), the sabotaged one", o.ID, o.Request.Verb, client)
		}
	}
	sameRev := rev == 0 || v.Revision == 0 || v.Revision == rev
	for _, w := range h.KubeWatches {
		if w.Client != client || w.Call > f.Start || (w.End != nil && w.End.Time < f.End) || !sameKey || !sameRev {
			continue
		}
		at := ""
		if v.Key != "" {
			at = fmt.Sprintf(" (%s at RV %d)", v.Key, v.Revision)
		}
		if v.Watch == w.ID {
			return fmt.Sprintf("names watch %d of client %d, the sabotaged one%s", w.ID, client, at)
		}
		for _, e := range v.KubeEvents {
			if e.Event.Watch == w.ID {
				return fmt.Sprintf("cites event %d of watch %d, the sabotaged one%s", e.Index, w.ID, at)
			}
		}
	}
	return ""
}
