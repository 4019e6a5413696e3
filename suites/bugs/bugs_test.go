package bugs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/checkers"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// Every entry is complete and runnable as written: its faults exist, its
// shape is known, its checks are checks vigil has, its budget is bounded.
func TestCatalogueEntriesAreWellFormed(t *testing.T) {
	g := NewWithT(t)
	known := map[string]bool{}
	for _, c := range checkers.Etcd() {
		known[c.Name] = true
	}
	seen := map[int]bool{}
	for _, b := range Catalogue() {
		g.Expect(seen[b.Number]).To(BeFalse(), "#%d twice", b.Number)
		seen[b.Number] = true
		g.Expect(b.Title).NotTo(BeEmpty())
		g.Expect(b.Affected).NotTo(Equal(b.Fixed), "#%d", b.Number)
		g.Expect(b.Sources).NotTo(BeEmpty(), "#%d names no source", b.Number)
		g.Expect(b.Checks).NotTo(BeEmpty())
		for _, c := range b.Checks {
			g.Expect(known).To(HaveKey(c), "#%d names unknown check %s", b.Number, c)
		}
		if len(b.Recipe.Faults) > 0 {
			_, err := chaos.ParseList(joinFaults(b.Recipe.Faults))
			g.Expect(err).NotTo(HaveOccurred(), "#%d", b.Number)
			g.Expect(b.Recipe.FaultInterval).To(BeNumerically(">", 0))
		}
		wl := b.Recipe.Workload()
		wl.Prefix = "/x/"
		g.Expect(wl.Validate()).To(Succeed(), "#%d", b.Number)
		_, err := wl.PatternShares()
		g.Expect(err).NotTo(HaveOccurred(), "#%d: patterns %q", b.Number, b.Recipe.Patterns)
		g.Expect(b.Recipe.Attempts).To(BeNumerically(">=", 1))
		g.Expect(b.Recipe.Attempt).To(BeNumerically("<=", time.Minute))
	}
	g.Expect(len(seen)).To(BeNumerically(">=", 7))
}

func joinFaults(f []string) string {
	out := ""
	for i, s := range f {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}

// The matrix's verdicts, on attempts made by hand: the bug's own check
// reproduces it, another check does not, and a fixed release that fails
// any check is not clean.
func TestRowVerdicts(t *testing.T) {
	bug := Bug{Number: 1, Affected: "v1", Fixed: "v2", Checks: []string{"kv/linearizable"},
		Recipe: Recipe{Attempts: 3}}
	pass := AttemptResult{Verdict: check.Pass}
	own := AttemptResult{Verdict: check.Fail, Failed: []string{"kv/linearizable", "watch/reliable"}, Matched: true, Detected: 4 * time.Second}
	other := AttemptResult{Verdict: check.Fail, Failed: []string{"watch/bookmarkable"}}
	unknown := AttemptResult{Verdict: check.Unknown}
	for _, tc := range []struct {
		name     string
		which    string
		attempts []AttemptResult
		want     string
		tries    int
		expected bool
	}{
		{"reproduced on the second attempt, then stops", Affected, []AttemptResult{pass, own, pass}, Reproduced, 2, true},
		{"budget spent without a failure", Affected, []AttemptResult{pass, pass, pass}, NotReproduced, 3, false},
		{"another check only is not the bug", Affected, []AttemptResult{other, pass, pass}, OtherFailure, 3, false},
		{"unknown is never read as clean or reproduced", Affected, []AttemptResult{unknown, pass, pass}, Unknown, 3, false},
		{"fixed release clean", Fixed, []AttemptResult{pass, pass, pass}, Clean, 3, true},
		{"fixed release failing the bug's check", Fixed, []AttemptResult{pass, own, pass}, FailsWhenFixed, 3, false},
		{"fixed release failing another check", Fixed, []AttemptResult{other, pass, pass}, FailsWhenFixed, 3, false},
		{"fixed release with an unknown attempt", Fixed, []AttemptResult{pass, unknown, pass}, Unknown, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			n := 0
			r := &Runner{Options: Options{Which: tc.which}}
			r.Attempt = func(ctx context.Context, b Bug, release, dir string, seed int64) (AttemptResult, error) {
				res := tc.attempts[n]
				n++
				return res, nil
			}
			rows := r.Run(context.Background(), []Bug{bug})
			g.Expect(rows).To(HaveLen(1))
			g.Expect(rows[0].Verdict).To(Equal(tc.want))
			g.Expect(rows[0].Attempts).To(Equal(tc.tries))
			g.Expect(rows[0].Expected()).To(Equal(tc.expected))
			if tc.want == Reproduced {
				g.Expect(rows[0].Detected).To(Equal(4 * time.Second))
			}
		})
	}
	t.Run("a release that cannot be built is an error row, and the matrix goes on", func(t *testing.T) {
		g := NewWithT(t)
		r := &Runner{Options: Options{Which: Both}}
		r.Attempt = func(ctx context.Context, b Bug, release, dir string, seed int64) (AttemptResult, error) {
			if release == "v1" {
				return AttemptResult{}, errors.New("no such version")
			}
			return pass, nil
		}
		rows := r.Run(context.Background(), []Bug{bug})
		g.Expect(rows).To(HaveLen(2))
		g.Expect(rows[0].Verdict).To(Equal(RunError))
		g.Expect(rows[1].Verdict).To(Equal(Clean))
		dir := t.TempDir()
		g.Expect(Write(dir, rows)).To(Succeed())
		junit, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(junit)).To(ContainSubstring(`tests="2" failures="0" errors="1"`))
		var m struct{ Rows []Row }
		b, _ := os.ReadFile(filepath.Join(dir, "matrix.json"))
		g.Expect(json.Unmarshal(b, &m)).To(Succeed())
		g.Expect(m.Rows).To(HaveLen(2))
		g.Expect(ExitCode(rows)).To(Equal(3), "a row that could not run")
	})
	g := NewWithT(t)
	clean, reproduced := Row{Role: Fixed, Verdict: Clean}, Row{Role: Affected, Verdict: Reproduced}
	g.Expect(ExitCode([]Row{reproduced, clean})).To(Equal(0))
	g.Expect(ExitCode([]Row{reproduced, {Role: Fixed, Verdict: FailsWhenFixed}})).To(Equal(1))
	g.Expect(ExitCode(nil)).To(Equal(0))
}

// The bugs of a command line: numbers with or without #, in their order;
// none is the whole catalogue.
func TestSelect(t *testing.T) {
	g := NewWithT(t)
	all := Catalogue()
	first, second := all[0].Number, all[1].Number
	numbers, err := ParseNumbers([]string{fmt.Sprint(second), fmt.Sprintf("#%d", first)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(numbers).To(Equal([]int{second, first}))
	selected, err := Select(numbers)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(selected).To(Equal([]Bug{all[1], all[0]}))
	selected, err = Select(nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(selected).To(HaveLen(len(all)))
	_, err = ParseNumbers([]string{"abc"})
	g.Expect(err).To(MatchError(`"abc" is not a bug number; see vigil bugs list`))
	_, err = Select([]int{1})
	g.Expect(err).To(MatchError("no known bug #1; see vigil bugs list"))
}

// The listing has a line per bug; wide adds the checks and the recipes.
func TestPrintCatalogue(t *testing.T) {
	g := NewWithT(t)
	var narrow, wide strings.Builder
	PrintCatalogue(&narrow, false)
	PrintCatalogue(&wide, true)
	b := Catalogue()[0]
	g.Expect(narrow.String()).To(HavePrefix("BUG  "))
	g.Expect(narrow.String()).To(ContainSubstring(fmt.Sprintf("#%d ", b.Number)))
	g.Expect(narrow.String()).To(HaveSuffix("\n(-o wide: the checks each bug trips, and its recipe)\n"))
	g.Expect(wide.String()).To(ContainSubstring(strings.Join(b.Checks, ",")))
	g.Expect(wide.String()).To(ContainSubstring(fmt.Sprintf("#%d recipe: %s\n", b.Number, b.Recipe.Summary())))
}

// Detection time is when the violation became provable: the latest record
// it cites, from the workload's first call.
func TestJudgeDetectionTime(t *testing.T) {
	g := NewWithT(t)
	h := history.New(history.Meta{})
	h.Operations = []history.Operation{
		{ID: 1, Call: 2 * time.Second, Return: 3 * time.Second},
		{ID: 2, Call: 5 * time.Second, Return: 6 * time.Second},
		{ID: 3, Call: 8 * time.Second, Return: 9 * time.Second},
	}
	results := []check.Result{
		{Name: "kv/linearizable", Verdict: check.Fail, Violations: []check.Violation{
			{Operations: []int64{3, 2}}, {Operations: []int64{1, 2}}}},
		{Name: "watch/liveness", Verdict: check.Fail, Should: true},
		{Name: "watch/reliable", Verdict: check.Pass},
	}
	res := Judge(h, results, []string{"kv/linearizable"}, nil)
	g.Expect(res.Failed).To(Equal([]string{"kv/linearizable"}), "a SHOULD warning is not a failure")
	g.Expect(res.Detected).To(Equal(4*time.Second), "ops 1 and 2 prove it once op 2 returned at 6 s; the workload began at 2 s")
	g.Expect(Judge(h, results, []string{"watch/reliable"}, nil).Detected).To(BeZero())
	g.Expect(Judge(h, results, []string{"watch/liveness"}, nil).Failed).To(ContainElement("watch/liveness"),
		"a SHOULD check that is the bug's own counts")
}

// A bug with a symptom is reproduced only by a violation that shows it:
// on v3.5.17, #20221's event below a watch's start fails watch/resumable
// as #19179's skipped DELETE does (seen: six attempts "reproduced" #19179
// that way before symptoms).
func TestJudgeWantsTheSymptom(t *testing.T) {
	g := NewWithT(t)
	h := history.New(history.Meta{})
	h.Operations = []history.Operation{{ID: 1, Call: time.Second, Return: 2 * time.Second}, {ID: 2, Call: 3 * time.Second, Return: 4 * time.Second}}
	for id, start := range map[int64]int64{13: 210, 22: 35, 73: 815} {
		h.Add(history.Record{Watch: &history.Watch{ID: id, Request: history.WatchRequest{Key: "/p/", StartRevision: start}}})
	}
	below := check.Violation{Watch: 13, Revision: 197, Want: ">= 210", Got: "197", Operations: []int64{1},
		Message: "watch 13 (client 21) started at revision 210 delivered PUT k012 at revision 197, below its start"}
	skipped := check.Violation{Watch: 22, Revision: 35, Want: "DELETE /p/k003 at 35 first", Got: "DELETE k002 at 36 first", Operations: []int64{2},
		Message: "watch 22 (client 19) started at revision 35 skipped the DELETE of k003 at revision 35"}
	// A watch that stalled after its start and missed a later DELETE
	// (seen on v3.5.16 under #18089's recipe) is not it either.
	stalled := check.Violation{Watch: 73, Revision: 956, Want: "DELETE /p/k009 at 956", Got: "nothing", Operations: []int64{2},
		Message: "watch 73 (client 12) missed the DELETE of k009 at revision 956"}
	bug := Bug19179(g)
	only := []check.Result{{Name: "watch/resumable", Verdict: check.Fail, Violations: []check.Violation{below, stalled}}}
	res := Judge(h, only, bug.Checks, bug.Symptom)
	g.Expect(res.Failed).To(Equal([]string{"watch/resumable"}))
	g.Expect(res.Matched).To(BeFalse(), "an event below a watch's start is not #19179")
	g.Expect(res.Detected).To(BeZero())
	row := Row{Role: Affected, Checks: bug.Checks}
	row.add(res)
	g.Expect(row.verdict()).To(Equal(OtherFailure))

	both := []check.Result{{Name: "watch/resumable", Verdict: check.Fail, Violations: []check.Violation{below, skipped}}}
	res = Judge(h, both, bug.Checks, bug.Symptom)
	g.Expect(res.Matched).To(BeTrue())
	g.Expect(res.Detected).To(Equal(3*time.Second), "the skipped DELETE's operation returned at 4 s; the workload began at 1 s")
	row = Row{Role: Affected, Checks: bug.Checks}
	row.add(res)
	g.Expect(row.verdict()).To(Equal(Reproduced))
}

// Bug19179 is the catalogue's #19179.
func Bug19179(g Gomega) Bug {
	for _, b := range Catalogue() {
		if b.Number == 19179 {
			g.Expect(b.Symptom).NotTo(BeNil())
			return b
		}
	}
	g.Expect("#19179").To(BeEmpty(), "not in the catalogue")
	return Bug{}
}

// One known bug end to end on real etcd (so CI keeps the matrix working):
// #14370 on v3.5.4 with a failpoint build, a few attempts at most.
func TestKnownBugReproducedEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs etcd v3.5.4")
	}
	g := NewWithT(t)
	b, ok := Lookup(14370)
	g.Expect(ok).To(BeTrue())
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	dir := t.TempDir()
	r := NewRunner(Options{Out: dir, Which: Affected, Attempts: 4, Seed: 1, Vigil: "test", Progress: os.Stderr})
	rows := r.Run(ctx, []Bug{b})
	g.Expect(rows).To(HaveLen(1))
	row := rows[0]
	t.Logf("#14370 on %s: %s after %d attempt(s), detected %v into the workload, failed %v", row.Release, row.Verdict, row.Attempts, row.Detected, row.Failed)
	g.Expect(row.Error).To(BeEmpty())
	g.Expect(row.Verdict).To(Equal(Reproduced))
	g.Expect(row.Detected).To(BeNumerically(">", 0))
	// The attempt is an ordinary run dir: a history vigil check can read.
	last := row.Dirs[len(row.Dirs)-1]
	h, err := history.Load(history.InDir(last))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(h.Faults).NotTo(BeEmpty())
	_, err = os.Stat(filepath.Join(last, "result.json"))
	g.Expect(err).NotTo(HaveOccurred())
}

// An attempt whose recipe's faults never ran is an error, not a clean or
// unreproduced attempt.
func TestFaultsThatNeverRanAreAnError(t *testing.T) {
	g := NewWithT(t)
	h := history.New(history.Meta{})
	h.Faults = []history.Fault{
		{Name: "kill-leader"},
		{Name: "failpoint:x", Details: map[string]string{"error": "needs failpoint x, which this etcd build does not have"}},
	}
	g.Expect(faultsRan(h, []string{"kill-leader"})).To(Succeed())
	g.Expect(faultsRan(h, []string{"failpoint:x"})).To(MatchError(ContainSubstring("does not have")))
	g.Expect(faultsRan(h, []string{"pause-leader"})).To(MatchError(ContainSubstring("never scheduled")))
}
