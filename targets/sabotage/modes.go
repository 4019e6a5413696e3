// Package sabotage wraps any etcd-API targets.Client and injects one named
// semantic bug into what vigil's clients see: a dropped, repeated or
// reordered watch event, a stale read, a lost write and so on. Each mode
// names the check that must catch it, which makes the checks testable
// against a real cluster: run with a mode, expect that check to fail and
// to point at the sabotaged record.
//
// A Saboteur is shared by every client of one run. It picks the moment of
// the injection from the run's seed, injects once, and records what it did
// as a history.Fault named "sabotage:<mode>" whose Details give the client,
// key and revision concerned.
package sabotage

import (
	"fmt"
	"sort"
	"strings"
	"time"

	kubecheck "github.com/vigil-suite/vigil/checkers/kube"
	kvcheck "github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/checkers/linearizable"
	"github.com/vigil-suite/vigil/checkers/watch"
)

// Mode is one semantic bug the Saboteur can inject.
type Mode struct {
	// Name is what --sabotage takes.
	Name string
	// Check is the name of the check that must fail when it is injected.
	Check string
	// Description says what the injection does, for people.
	Description string
	// Target is the API family it sabotages: TargetEtcd or TargetKube.
	Target string
	// MinDuration is the shortest run in which the mode was caught at
	// every seed tried (docs/sabotage.md gives the measurement); a
	// shorter run may give it no opportunity, so Fits refuses it.
	MinDuration time.Duration
	// CompactEvery, when set, is the longest period of compactions the
	// mode needs (compaction-silent needs watches that start below one).
	CompactEvery time.Duration
	// MinMembers, when set, is the fewest members the mode can be shown
	// on (diverge-member needs another member to differ from).
	MinMembers int

	// arm is the part of the run, as fractions of its duration, in which
	// the moment the saboteur arms is drawn; maxSkip is how many eligible
	// opportunities after arming it may let pass (drawn in [0, maxSkip]).
	// Modes with few opportunities arm early and skip none.
	arm     [2]float64
	maxSkip int
}

var (
	common = [2]float64{0.2, 0.6}
	early  = [2]float64{0.1, 0.3}
	first  = [2]float64{0, 0}
)

var modes = []Mode{
	{Name: "drop-event", Check: watch.NameReliable, arm: common, maxSkip: 2,
		Description: "drops one event from a watch response mid-stream (never the watch's first or last event)"},
	{Name: "duplicate-event", Check: watch.NameUnique, arm: common, maxSkip: 2,
		Description: "delivers one watch event twice, the copy right after the original"},
	{Name: "reorder-events", Check: watch.NameOrdered, arm: common, maxSkip: 2,
		Description: "holds one watch response back and delivers it after the next one"},
	{Name: "split-revision", Check: watch.NameAtomic, arm: common, maxSkip: 2,
		Description: "delivers the events of one multi-key txn revision in two watch responses"},
	{Name: "stale-read", Check: linearizable.Name, arm: common, maxSkip: 2,
		Description: "answers a linearizable get with an older response for the same key, after a newer write to it was acknowledged"},
	{Name: "future-progress", Check: watch.NameBookmarkable, arm: common, maxSkip: 2,
		Description: "sends a progress notification at the revision of events not yet delivered, then delivers them"},
	{Name: "wrong-prev-kv", Check: watch.NamePrevKV, arm: common, maxSkip: 2,
		Description: "alters the prev_kv of one event on a prev_kv watch (an older value of the key, or one never written)"},
	{Name: "fake-create", Check: watch.NameIsCreate, arm: common, maxSkip: 2,
		Description: "marks a put on an existing key as a create (version 1, create revision = mod revision)"},
	{Name: "resume-late", Check: watch.NameResumable, arm: early, maxSkip: 1,
		Description: "a watch started at an explicit revision silently skips the first revision it would deliver"},
	// With the default compaction every 8 s, a 10 s run had no watch start
	// below a compaction at any of seeds 1-6; every 2 s, all six caught it.
	{Name: "compaction-silent", Check: watch.NameResumable, arm: first, maxSkip: 0, CompactEvery: 2 * time.Second,
		Description: "a watch the server cancels as compacted is silently restarted at the compact revision on the same stream"},
	{Name: "lost-write", Check: linearizable.Name, arm: common, maxSkip: 2,
		Description: "acknowledges one put without sending it, with the header of the client's previous answer"},
	{Name: "ghost-value", Check: linearizable.Name, arm: common, maxSkip: 2,
		Description: "a linearizable get returns a value nobody wrote (\"ghost.<n>\"), other fields kept"},
	// The server side ignores a whole request kind: nothing is ever
	// answered, which only the evidence of the owning check can show.
	{Name: "ignore-progress", Check: watch.NameBookmarkable, arm: first, maxSkip: 0,
		Description: "drops every progress request before it reaches the server, from the run's start (a server that ignores them)"},
	{Name: "contended-lost-write", Check: linearizable.Name, arm: common, maxSkip: 2,
		Description: "acknowledges one put without sending it, only while another client's write to the same key is in flight"},
	{Name: "out-of-filter", Check: watch.NameFilter, arm: common, maxSkip: 2,
		Description: "delivers an event the watch excludes: another key on a single-key watch, the filtered type on a " +
			"filtered watch, else a key outside the watched range"},

	// A server that is so all the time, not one injection: arms at once.
	// Only a read sent to a member as another acknowledges a write meets
	// the lag (the read-after-ack pattern): docs/sabotage.md measures it.
	{Name: "stale-member-read", Check: linearizable.Name, arm: first, maxSkip: 0, MinDuration: 20 * time.Second,
		Description: "answers every linearizable read from the state of the member asked, as a serializable read, with no read index " +
			"(from the run's start): a member behind the leader misses writes another member acknowledged"},
	// The member comparer reads every member every few seconds and once
	// more at the run's end, so one write suffices whenever it falls.
	{Name: "diverge-member", Check: kvcheck.NameMemberAgreement, arm: common, maxSkip: 2, MinMembers: 2,
		Description: "one member looks as if it had not applied one put: from that put's revision on, its HashKV " +
			"differs and its serializable reads at those revisions show the key as before the put"},

	{Name: "quiet-end", Check: watch.NameCancelReason, arm: common, maxSkip: 2,
		Description: "closes one watch stream after an event, with no cancel response and no error, while the client still waits"},

	{Name: "kube-drop-event", Check: kubecheck.NameWatchFromRV, Target: TargetKube, arm: common, maxSkip: 2,
		Description: "drops one change from a Kubernetes watch after its initial state (never its first two changes or its last)"},
	{Name: "stale-list", Check: kubecheck.NameConsistentRead, Target: TargetKube, arm: common, maxSkip: 0,
		Description: "answers a consistent list (resourceVersion unset) with the previous one, though a write at a higher resourceVersion was acknowledged since"},
	// A short run opens only a few streaming lists, seconds apart (each
	// streamer's watches last 3-8 s, half of them streaming lists): armed
	// at 10-30% of a 12 s run, the mode missed every one left in 1 of 6.
	{Name: "missing-initial-events-end", Check: kubecheck.NameWatchlistInitial, Target: TargetKube, arm: first, maxSkip: 1,
		Description: "drops the BOOKMARK annotated k8s.io/initial-events-end from a streaming list (sendInitialEvents=true)"},
	{Name: "conflict-not-detected", Check: kubecheck.NameOptimisticConcurrency, Target: TargetKube, arm: early, maxSkip: 0,
		Description: "an update the server refused with 409 (stale resourceVersion) is sent again without the precondition and reported as accepted"},
	// Needs a workload that sends dry runs (history format 5).
	{Name: "dry-run-applied", Check: kubecheck.NameWritePaths, Target: TargetKube, arm: early, maxSkip: 0,
		Description: "a create, update or patch sent with dryRun=All is sent again without it, applied for real, and answered as the dry run"},
	{Name: "kube-quiet-end", Check: kubecheck.NameWatchTimeout, Target: TargetKube, arm: common, maxSkip: 2,
		Description: "closes one watch with timeoutSeconds cleanly, after a change, at least 1 s before its timeout, with no ERROR event"},
	{Name: "rv-regression", Check: kubecheck.NameWatchOrdered, Target: TargetKube, arm: common, maxSkip: 2,
		Description: "one watch event after the initial state carries a resourceVersion below the change delivered before it"},
}

// DefaultMinDuration is the shortest run every mode is caught in, unless
// it declares a longer one.
const DefaultMinDuration = 10 * time.Second

// Fits says why a run of that duration and period of compactions cannot
// prove the mode, or nil when it can.
func (m Mode) Fits(duration, compactEvery time.Duration) error {
	if duration < m.MinDuration {
		return fmt.Errorf("sabotage mode %s needs a run of at least %v (it was not caught at every seed in shorter "+
			"runs: too few opportunities); got --duration %v", m.Name, m.MinDuration, duration)
	}
	if m.CompactEvery > 0 && (compactEvery <= 0 || compactEvery > m.CompactEvery) {
		return fmt.Errorf("sabotage mode %s needs compactions at least every %v (it needs watches that start below "+
			"one); got --compact-every %v", m.Name, m.CompactEvery, compactEvery)
	}
	return nil
}

// FitsMembers says why a cluster of that many members cannot prove the
// mode, or nil when it can.
func (m Mode) FitsMembers(members int) error {
	if members < m.MinMembers {
		return fmt.Errorf("sabotage mode %s needs a cluster of at least %d members (a member can only differ "+
			"from another); got %d", m.Name, m.MinMembers, members)
	}
	return nil
}

// The API families a mode can sabotage.
const (
	TargetEtcd = "etcd"
	TargetKube = "kube"
)

func init() {
	for i := range modes {
		if modes[i].Target == "" {
			modes[i].Target = TargetEtcd
		}
		modes[i].MinDuration = max(modes[i].MinDuration, DefaultMinDuration)
	}
}

// NamesFor returns the names of the modes of one target, sorted.
func NamesFor(target string) []string {
	var out []string
	for _, m := range Modes() {
		if m.Target == target {
			out = append(out, m.Name)
		}
	}
	return out
}

// Modes returns every mode, sorted by name.
func Modes() []Mode {
	out := append([]Mode(nil), modes...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns the mode names, sorted.
func Names() []string {
	var out []string
	for _, m := range Modes() {
		out = append(out, m.Name)
	}
	return out
}

// Lookup returns the mode with the given name.
func Lookup(name string) (Mode, bool) {
	for _, m := range modes {
		if m.Name == name {
			return m, true
		}
	}
	return Mode{}, false
}

// FaultName is the name of the fault record a mode's injection writes.
func FaultName(mode string) string { return FaultPrefix + mode }

// FaultPrefix starts the name of every sabotage fault record.
const FaultPrefix = "sabotage:"

// IsSabotage reports whether a fault record was written by a Saboteur.
func IsSabotage(faultName string) bool { return strings.HasPrefix(faultName, FaultPrefix) }
