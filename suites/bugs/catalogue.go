// Package bugs is vigil's known-bug matrix: real etcd bugs, each with the
// release that had it, the release that fixed it, a recipe (cluster,
// workload shape, faults, settings, budget) that reproduces it with vigil's
// ordinary run machinery, and the checks whose failure is the bug. The
// runner builds both releases, runs attempts until the named check fails
// or the budget is spent, and reports a matrix: reproduced on the affected
// release, clean on the fixed one — or what was found instead.
package bugs

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/checkers/linearizable"
	"github.com/vigil-suite/vigil/checkers/watch"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/reports"
	"github.com/vigil-suite/vigil/workload"
)

// Bug is one catalogue entry.
type Bug struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
	// Affected is the release vigil builds to show the bug; Fixed is the
	// first release with the fix.
	Affected string `json:"affected"`
	Fixed    string `json:"fixed"`
	// Checks are the checks whose failure is this bug; a failure of any
	// other check is not a reproduction of it.
	Checks []string `json:"checks"`
	// Symptom, when set, narrows Checks: only a violation of one of them
	// that shows the bug's own symptom reproduces it (another bug of the
	// same release can fail the same check another way); Shows says what
	// it is, for the listing.
	Symptom *Symptom `json:"symptom,omitempty"`
	Recipe  Recipe   `json:"recipe"`
	// Sources say where the facts (releases, recipe) come from.
	Sources []string `json:"sources"`
	// Notes: how etcd's own suite reproduces it, what differs here.
	Notes string `json:"notes,omitempty"`
}

// Recipe is how vigil tries to reproduce a bug: one attempt is an ordinary
// vigil run on a fresh cluster.
type Recipe struct {
	Members    int  `json:"members"`
	Failpoints bool `json:"failpoints,omitempty"`
	// Shape, Rate (0: unthrottled), Clients, Keys, Watchers and
	// CompactEvery change the default workload where set.
	Shape        string        `json:"shape,omitempty"`
	Rate         float64       `json:"rate"`
	Clients      int           `json:"clients,omitempty"`
	Keys         int           `json:"keys,omitempty"`
	Watchers     int           `json:"watchers,omitempty"`
	CompactEvery time.Duration `json:"compact_every_ns"`
	// Patterns changes the workload's placement and timing patterns
	// (workload.Config.Patterns), e.g. "fault-start=0".
	Patterns string `json:"patterns,omitempty"`
	// Faults are fault names (vigil faults), taking turns every
	// FaultInterval.
	Faults        []string              `json:"faults,omitempty"`
	FaultInterval time.Duration         `json:"fault_interval_ns,omitempty"`
	Settings      fixtures.EtcdSettings `json:"settings"`
	// Patch, if set, is applied to both releases' source before their
	// failpoint builds, so that both run the same recipe (a release that
	// already has the patched line is left as it is); the matrix marks
	// the rows "patched" and shows the patch.
	Patch *binaries.Patch `json:"patch,omitempty"`
	// Attempt is how long one attempt's workload runs; Attempts the most
	// attempts on one release.
	Attempt  time.Duration `json:"attempt_ns"`
	Attempts int           `json:"attempts"`
}

// Workload is the recipe's workload: the default one with the recipe's
// changes.
func (r Recipe) Workload() workload.Config {
	w := workload.DefaultConfig()
	w.Shape, w.Rate, w.Duration = r.Shape, r.Rate, r.Attempt
	if r.Clients > 0 {
		w.Clients = r.Clients
	}
	if r.Keys > 0 {
		w.Keys = r.Keys
	}
	if r.Watchers > 0 {
		w.Watchers = r.Watchers
	}
	w.CompactEvery = r.CompactEvery
	w.Patterns = r.Patterns
	return w
}

// Summary is the recipe in one line, for `vigil bugs list`.
func (r Recipe) Summary() string {
	s := fmt.Sprintf("%d member(s)", r.Members)
	shape := r.Shape
	if shape == "" {
		shape = workload.ShapeDefault
	}
	rate := "unthrottled"
	if r.Rate > 0 {
		rate = strconv.FormatFloat(r.Rate, 'f', -1, 64) + "/s"
	}
	s += fmt.Sprintf(", %s workload at %s", shape, rate)
	if r.CompactEvery > 0 {
		s += fmt.Sprintf(", compaction every %v", r.CompactEvery)
	}
	if r.Patterns != "" {
		s += ", patterns " + r.Patterns
	}
	if len(r.Faults) > 0 {
		s += fmt.Sprintf(", %v every %v", r.Faults, r.FaultInterval)
	}
	if r.Settings.SnapshotCount > 0 {
		s += fmt.Sprintf(", snapshot-count %d", r.Settings.SnapshotCount)
	}
	if r.Settings.CompactionBatchLimit > 0 {
		s += fmt.Sprintf(", compaction-batch-limit %d", r.Settings.CompactionBatchLimit)
	}
	return s + fmt.Sprintf("; %d attempts of %v", r.Attempts, r.Attempt)
}

// Catalogue lists every known bug, by number.
func Catalogue() []Bug {
	bugs := []Bug{
		{
			Number: 14370, Title: "a single-member cluster loses an acknowledged write when it crashes before saving raft state",
			Affected: "v3.5.4", Fixed: "v3.5.5",
			// A lost acknowledged write: reads and revisions show it.
			Checks: []string{linearizable.Name, kv.NameRevisionMonotonic},
			Recipe: Recipe{Members: 1, Failpoints: true, Rate: 300, CompactEvery: 0,
				Faults: []string{"failpoint:raftBeforeSave"}, FaultInterval: 2 * time.Second,
				Attempt: 12 * time.Second, Attempts: 5},
			Sources: []string{"etcd tests/robustness/README.md (track record: #14370)",
				"etcd tests/robustness/Makefile test-robustness-issue14370 (v3.5.4 failpoint build)",
				"etcd tests/robustness scenarios: Issue14370 = RaftBeforeSavePanic on a 1-member cluster",
				"etcd CHANGELOG-3.5.md v3.5.5: fix of a single-member cluster losing a write on crash"},
			Notes: "same failpoint and cluster as etcd's own reproduction; no patch",
		},
		{
			Number: 13766, Title: "members end with inconsistent revisions after a crash under a high write load",
			Affected: "v3.5.2", Fixed: "v3.5.3",
			// The members' state splits. Not the watch checks nor
			// kv/linearizable: under this load on v3.5.2 a watch missed
			// PUTs other watches delivered while the members agreed
			// (etcd has had such watch bugs: #17529, #20655), which fails
			// them, and kv/linearizable where it rests on that watch.
			Checks: []string{kv.NameConvergence, kv.NameMemberAgreement, kv.NameRevisionMonotonic},
			// A member's consistent index is committed ahead of its data
			// only when the backend's periodic commit takes the lock
			// between the apply loop setting the index and writing the
			// entry, and the SIGKILL must land before the next commit: a
			// small chance per kill, so the recipe kills every second
			// under as many puts as the clients can send. Here 2 attempts
			// of 56 (some 18 kills each) split the members, so a budget of
			// 20 attempts finds it about half the time.
			Recipe: Recipe{Members: 3, Shape: workload.ShapeWriteHeavy, Rate: 0, Clients: 16,
				Faults: []string{"kill-random"}, FaultInterval: time.Second,
				Settings: fixtures.EtcdSettings{SnapshotCount: 100}, Attempt: 30 * time.Second, Attempts: 20},
			Sources: []string{"etcd tests/robustness/README.md (track record: #13766)",
				"etcd tests/robustness/Makefile test-robustness-issue13766 (v3.5.2)",
				"etcd tests/robustness scenarios: Issue13766 = kill under high put traffic, snapshot-count 100",
				"etcd CHANGELOG-3.5.md v3.5.3: fix of inconsistent revision and data after a crash"},
			Notes: "etcd's table notes its load was not high enough to reproduce this reliably; vigil runs puts unthrottled",
		},
		{
			Number: 14685, Title: "a crash during defragmentation leaves the member with an inconsistent revision",
			Affected: "v3.5.5", Fixed: "v3.5.6",
			Checks: []string{linearizable.Name, kv.NameRevisionMonotonic, watch.NameReliable, watch.NameOrdered, watch.NameUnique},
			Recipe: Recipe{Members: 1, Failpoints: true, Shape: workload.ShapeChurn, Rate: 300,
				Faults: []string{"failpoint:defragBeforeCopy"}, FaultInterval: 2 * time.Second,
				Attempt: 12 * time.Second, Attempts: 5},
			Sources: []string{"etcd tests/robustness/README.md (track record: #14685)",
				"etcd tests/robustness/Makefile test-robustness-issue14685 (v3.5.5 failpoint build)",
				"etcd tests/robustness scenarios: Issue14685 = DefragBeforeCopyPanic on a 1-member cluster",
				"etcd CHANGELOG-3.5.md v3.5.6: fix of inconsistent revision after a crash during defrag"},
			Notes: "the defrag failpoint fault defragments the armed member itself",
		},
		{
			Number: 15220, Title: "a progress notification is not synchronised with the watch stream: it reports a revision whose events have not been sent",
			Affected: "v3.5.7", Fixed: "v3.5.8",
			Checks: []string{watch.NameBookmarkable},
			Recipe: Recipe{Members: 1, Rate: 600, Watchers: 16, CompactEvery: 8 * time.Second,
				Attempt: 12 * time.Second, Attempts: 5},
			Sources: []string{"etcd tests/robustness/README.md (track record: #15220)",
				"etcd tests/robustness/Makefile test-robustness-issue15220 (v3.5.7)",
				"etcd tests/robustness scenarios: Issue15220 = RequestProgress on a 1-member cluster",
				"Kubernetes (storage/etcd3) treats RequestWatchProgress as safe from etcd 3.4.25 and 3.5.8 on, citing #15220"},
			Notes: "vigil's watchers with progress_notify ask for a progress notification every second",
		},
		{
			Number: 17780, Title: "the store revision goes backwards after a crash during compaction",
			Affected: "v3.5.13", Fixed: "v3.5.14",
			// Not watch/reliable: v3.5.13 also has #18089, whose dropped
			// DELETE at a compaction revision fails it in the same attempts.
			Checks: []string{kv.NameRevisionMonotonic, linearizable.Name, watch.NameOrdered},
			// The revision goes back only when (1) a compaction lands on the
			// head revision and the head is a tombstone, which the
			// compaction removes; (2) that removal is committed by a batch
			// that is not the compaction's last (v3.5.13 force-commits each
			// full batch), so the last batch is empty and panics at the
			// failpoint before it marks the compaction finished; (3) no
			// later write is committed before the panic. A batch limit of 1
			// makes (2) hold for every compaction (etcd's own scenario, with
			// 300, needs the key count to be a multiple of it); few keys and
			// a low rate keep the compaction short and (3) likely; deletes
			// outnumbering puts make (1) likely. The fault compacts at the
			// head itself once armed; the fault-start pattern's burst of
			// writes at that moment would put the head past it.
			Recipe: Recipe{Members: 1, Failpoints: true, Shape: workload.ShapeDeleteHeavy, Rate: 5, Clients: 2, Keys: 4,
				CompactEvery: time.Second, Patterns: "fault-start=0",
				Faults: []string{"failpoint:compactBeforeSetFinishedCompact"}, FaultInterval: 2 * time.Second,
				Settings: fixtures.EtcdSettings{CompactionBatchLimit: 1, SnapshotCount: 1000},
				Attempt:  15 * time.Second, Attempts: 6,
				// v3.5.13 has no failpoint at the end of a compaction batch
				// (v3.5.14 added it); this puts it where v3.5.14 has it.
				Patch: &binaries.Patch{Name: "compactBeforeSetFinishedCompact", Edits: []binaries.Edit{{
					File: "mvcc/kvstore_compaction.go", Before: "rbytes := make([]byte, 8+1+8)",
					Insert: "// gofail: var compactBeforeSetFinishedCompact struct{}"}}}},
			Sources: []string{"etcd tests/robustness/README.md (track record: #17780)",
				"etcd tests/robustness scenarios: Issue17780 = a panic at compactBeforeSetFinishedCompact, Kubernetes traffic, compaction batch limit 300, 1 member",
				"etcd scripts/test_robustness_regression.sh: Issue17780 on v3.5.13-patched",
				"etcd CHANGELOG-3.5.md v3.5.14: fix of the revision decreasing after a panic during compaction",
				"vigil's own build: the v3.5.13 failpoint build has no compactBeforeSetFinishedCompact, v3.5.14's has it (mvcc/kvstore_compaction.go)"},
			Notes: "patched like etcd's own reproduction: the failpoint is added to v3.5.13; an unpatched attempt cannot arm it",
		},
		{
			Number: 18089, Title: "a watch drops an event when a compaction lands on a delete",
			Affected: "v3.5.15", Fixed: "v3.5.16",
			// The symptom: a watch started at the compaction revision
			// skips the DELETE committed there (its tombstone was
			// compacted away), which is watch/resumable's guarantee.
			Checks:  []string{watch.NameResumable, watch.NameReliable, watch.NameAgreement},
			Symptom: missedDelete,
			Recipe: Recipe{Members: 1, Failpoints: true, Shape: workload.ShapeDeleteHeavy, Rate: 300, CompactEvery: 100 * time.Millisecond,
				// etcd's scenario sleeps 1 s before a watch response. Every
				// watcher opens at the compact revision: the default share
				// (20% of openings) gave 2 such watches an attempt, and 0 of
				// 5 attempts reproduced it after the timing patterns came in.
				Watchers: 16, Patterns: "watch-at-compact=100,watch-at-head=0,compact-race=0",
				Faults: []string{"failpoint-sleep:beforeSendWatchResponse@random=1s"}, FaultInterval: 2 * time.Second,
				Attempt: 12 * time.Second, Attempts: 5,
				// As etcd's own reproduction: a failpoint before each watch
				// response is sent (etcd 3.6 has it; 3.5 gets it by patch).
				Patch: &binaries.Patch{Name: "beforeSendWatchResponse", Edits: []binaries.Edit{{
					File: "etcdserver/api/v3rpc/watch.go", Before: "if !fragmented && !ok {",
					Insert: "// gofail: var beforeSendWatchResponse struct{}"}}}},
			Sources: []string{"etcd tests/robustness/README.md (track record: #18089)",
				"etcd tests/robustness scenarios: Issue18089 = delete traffic, compaction every 100 ms, a sleep before each watch response (failpoint beforeSendWatchResponse, added to 3.5 by a patch)",
				"etcd tests/robustness/patches/beforeSendWatchResponse: the failpoint's place in the watch server's send loop (etcd v3.6.16 has it there natively)",
				"etcd CHANGELOG-3.5.md v3.5.16: keep the tombstone during compaction if it happens to be the compaction revision (PR #18474, the fix of #18089: etcd commit 8db31b666 'CHANGELOG: update changes for issue 18089'); so v3.5.15 is the last affected 3.5 release"},
			Notes: "an earlier entry named v3.5.14/v3.5.15 as affected/fixed, which the CHANGELOG contradicts; an earlier recipe without the patch (vigil's proxy holding watch responses instead) found only #19179's symptom on v3.5.14 and v3.5.15",
		},
		{
			Number: 18667, Title: "a txn with a write and a range at a future or compacted revision fails on the member asked and is applied by the others: the members split",
			Affected: "v3.6.16", Fixed: "v3.7.0",
			Checks: []string{kv.NameMemberAgreement, kv.NameConvergence},
			// The default workload sends such txns (a range of a txn's
			// path at a future revision is one of the grammar's value
			// classes); three members, so that one is not the one asked.
			Recipe: Recipe{Members: 3, Rate: 300, CompactEvery: 8 * time.Second, Attempt: 12 * time.Second, Attempts: 5},
			Sources: []string{"etcd-io/etcd#18667: specifying a revision for a range request in a transaction may cause data inconsistency",
				"etcd server/v3 v3.6.16 etcdserver/server.go removeNeedlessRangeReqs (v3.5.17: etcdserver/apply.go); gone from v3.7.0",
				"vigil's own runs: docs/findings/etcd-txn-range-divergence.md (v3.5.17 and v3.6.16 split, v3.7.3 does not)"},
			Notes: "found by vigil's grammar workload and kv/member-agreement; the 3.6 line has no release with the fix (v3.6.16 is its newest), so the fixed release is v3.7.0",
		},
		{
			Number: 19179, Title: "a watch opened at the compact revision misses the DELETE committed at that revision",
			Affected: "v3.5.17", Fixed: "v3.5.18",
			// v3.5.17 also has #20221: a watch opened ahead of the store
			// there gets events below its start, which fails
			// watch/resumable too; only a skipped DELETE is this bug's.
			Checks:  []string{watch.NameResumable},
			Symptom: missedDelete,
			// etcd's scenario (create/delete churn, a small compaction
			// batch, a panic before a compaction finishes) in #17780's
			// terms: a tombstone's compaction split from its creation's
			// (batch limit 1), a compaction at the head (the fault's own)
			// landing on a delete, few writes around it. The earlier
			// recipe (churn at 100/s, batch limit 50) "reproduced" it only
			// through #20221's events below a watch's start.
			Recipe: Recipe{Members: 1, Failpoints: true, Shape: workload.ShapeDeleteHeavy, Rate: 5, Clients: 2, Keys: 4,
				CompactEvery: time.Second, Patterns: "fault-start=0",
				Faults: []string{"failpoint:compactBeforeSetFinishedCompact"}, FaultInterval: 2 * time.Second,
				Settings: fixtures.EtcdSettings{CompactionBatchLimit: 1, SnapshotCount: 1000},
				Attempt:  15 * time.Second, Attempts: 10},
			Sources: []string{"etcd tests/robustness/README.md (track record: #19179)",
				"etcd scripts/test_robustness_regression.sh: Issue19179 on v3.5.17",
				"etcd tests/robustness scenarios: Issue19179 = create/delete traffic, compaction batch limit 50, a panic at compactBeforeSetFinishedCompact",
				"vigil's own runs: #18089's recipe failed watch/resumable on v3.5.14 and v3.5.15 (4 of 5 attempts each) with a watch opened at the compact revision R skipping the DELETE at R, the symptom this issue describes; the same recipe passed 5 of 5 on v3.5.17 and v3.5.18"},
			Notes: "fixed release: the next 3.5 release after etcd's v3.5.17 pin; the matrix found it clean (10 of 10 attempts with this recipe)",
		},
		{
			Number: 20221, Title: "a watch opened at a future revision receives old events or progress notifications below its start revision",
			Affected: "v3.6.1", Fixed: "v3.6.2",
			// Its notification half breaks no MUST: it is the SHOULD
			// watch/progress-before-start; its old-events half would
			// fail watch/resumable or watch/ordered.
			Checks:  []string{watch.NameProgressBeforeStart, watch.NameResumable, watch.NameOrdered},
			Symptom: belowStart,
			// As etcd's scenario: a follower cut off until the leader must
			// send it a snapshot (snapshots every 10 entries, 10 catch-up
			// entries), watches on every member opened ahead of the store,
			// progress notifications every 10 ms, a high put load.
			Recipe: Recipe{Members: 3, Shape: workload.ShapeFutureWatch, Rate: 0, Clients: 12, Watchers: 16, CompactEvery: 8 * time.Second,
				Faults: []string{"isolate-follower-until-snapshot"}, FaultInterval: 4 * time.Second,
				Settings: fixtures.EtcdSettings{SnapshotCount: 10, SnapshotCatchUpEntries: 10, WatchProgressNotifyInterval: 10 * time.Millisecond},
				Attempt:  15 * time.Second, Attempts: 5},
			Sources: []string{"etcd tests/robustness/README.md (track record: #20221, reproducible after covering connections to several members)",
				"etcd tests/robustness scenarios: Issue20221 = BlackholeUntilSnapshot, snapshot count 10, catch-up entries 10, progress notify 10 ms, watches 50-100 revisions ahead on single members, put traffic (etcd commit 565e41aa7)",
				"etcd CHANGELOG-3.6.md v3.6.2: fix watch on future revision returns old events or notifications (PR #20286)",
				"etcd blog, autonomous testing of etcd's robustness (2025): 'Watch on future revision might receive old notifications', fixed in 3.6.2"},
			Notes: "an earlier recipe (members killed instead of cut off until a snapshot) did not reproduce it; seen so far through its notification half (progress notifications below a future watch's start revision), not old events",
		},
	}
	slices.SortFunc(bugs, func(a, b Bug) int { return a.Number - b.Number })
	return bugs
}

// Lookup finds a bug by number.
func Lookup(number int) (Bug, bool) {
	for _, b := range Catalogue() {
		if b.Number == number {
			return b, true
		}
	}
	return Bug{}, false
}

// ParseNumbers reads the bug numbers of a command line, "14370" or
// "#14370" as the catalogue writes them; its error names the argument
// that is no number.
func ParseNumbers(args []string) ([]int, error) {
	var numbers []int
	for _, a := range args {
		n, err := strconv.Atoi(strings.TrimPrefix(a, "#"))
		if err != nil {
			return nil, fmt.Errorf("%q is not a bug number; see vigil bugs list", a)
		}
		numbers = append(numbers, n)
	}
	return numbers, nil
}

// Select is the bugs to run: those numbered, in their order, or the whole
// catalogue when none is. Its error names the first number that is no
// known bug.
func Select(numbers []int) ([]Bug, error) {
	if len(numbers) == 0 {
		return Catalogue(), nil
	}
	var selected []Bug
	for _, n := range numbers {
		b, ok := Lookup(n)
		if !ok {
			return nil, fmt.Errorf("no known bug #%d; see vigil bugs list", n)
		}
		selected = append(selected, b)
	}
	return selected, nil
}

// PrintCatalogue lists the catalogue for people, a bug per line: its
// releases and title; with wide, also the checks each bug trips, and
// below the table each bug's recipe.
func PrintCatalogue(w io.Writer, wide bool) {
	headers := []string{"BUG", "AFFECTED", "FIXED", "TITLE"}
	if wide {
		headers = slices.Insert(headers, 3, "CHECKS")
	}
	bugs := Catalogue()
	var rows [][]string
	for _, b := range bugs {
		row := []string{fmt.Sprintf("#%d", b.Number), b.Affected, b.Fixed, b.Title}
		if wide {
			checks := strings.Join(b.Checks, ",")
			if b.Symptom != nil {
				checks += " (" + b.Symptom.Shows + ")"
			}
			row = slices.Insert(row, 3, checks)
		}
		rows = append(rows, row)
	}
	reports.Listing(w, wide, headers, rows)
	if !wide {
		fmt.Fprintln(w, "\n(-o wide: the checks each bug trips, and its recipe)")
		return
	}
	fmt.Fprintln(w)
	for _, b := range bugs {
		fmt.Fprintf(w, "#%d recipe: %s\n", b.Number, b.Recipe.Summary())
	}
}

// Symptom picks the violations that show one bug among those of its checks.
type Symptom struct {
	Shows string                                           `json:"shows"`
	Match func(h *history.History, v check.Violation) bool `json:"-"`
}

// missedDelete: a watch missed the DELETE committed at the revision it
// started at (the violation wants a DELETE there), which is how a
// tombstone lost to the compaction at that revision shows (#18089,
// #19179). A watch delivering events below its start (#20221), or one
// that stalls and then misses later changes, does not.
var missedDelete = &Symptom{Shows: "a watch missed the DELETE at its start revision",
	Match: func(h *history.History, v check.Violation) bool {
		w := h.WatchByID(v.Watch)
		return w != nil && strings.HasPrefix(v.Want, "DELETE ") && v.Revision == w.Request.StartRevision
	}}

// belowStart: a watch received a progress notification or an event below
// the revision it asked to start at (the violation wants ">= start"),
// #20221's symptom; a skipped DELETE (#19179, in the same releases) is not.
var belowStart = &Symptom{Shows: "a watch got a notification or event below its start",
	Match: func(_ *history.History, v check.Violation) bool { return strings.HasPrefix(v.Want, ">= ") }}
