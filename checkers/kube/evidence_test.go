package kube

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

const sec = int(time.Second)

// checkNamed is the registered check of that name (with its evidence).
func checkNamed(t *testing.T, name string) check.Check {
	t.Helper()
	for _, c := range Checks() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %s", name)
	return check.Check{}
}

// owedViolation is the violation the evidence rule adds: it names the
// owed requests left unanswered.
func owedViolation(r check.Result) *check.Violation {
	for i := range r.Violations {
		if strings.Contains(r.Violations[i].Message, "owed an answer") {
			return &r.Violations[i]
		}
	}
	return nil
}

// streamingLists builds n streaming lists of a collection holding a (RV
// 10), each called a second after the last and closed by vigil open
// seconds after its call; with marker, each ends its initial events with
// the bookmark.
func streamingLists(b *histbuild.KubeBuilder, n int, open time.Duration, marker bool) {
	b.Create(1, 0, 10, histbuild.A10)
	yes := true
	for i := 0; i < n; i++ {
		id, at := int64(i+1), (i+1)*sec
		b.Watch(id, 10+i, at, history.KubeWatchRequest{SendInitialEvents: &yes, ResourceVersionMatch: "NotOlderThan",
			AllowBookmarks: true})
		b.Ev(id, at+1000, history.KubeAdded, histbuild.A10)
		if marker {
			b.Bookmark(id, at+2000, 10, true)
		}
		b.End(id, at+int(open), history.EndClient, nil)
	}
}

// TestWatchlistInitialEventsOwed: a streaming list that stayed open with
// no fault around it is owed its initial-events-end bookmark. When every
// owed one goes unanswered the check fails, though it judged nothing on
// its own (no later event came, vigil closed each); a fault around them,
// or lists closed too soon, owe nothing and leave it unknown; a server
// that refuses streaming lists makes it skipped with its words.
func TestWatchlistInitialEventsOwed(t *testing.T) {
	c := checkNamed(t, NameWatchlistInitial)
	for _, tc := range []struct {
		name    string
		build   func(b *histbuild.KubeBuilder)
		want    check.Verdict
		owed    int
		reason  string
		refused int
	}{
		{"every owed marker missing", func(b *histbuild.KubeBuilder) { streamingLists(b, 3, 6*time.Second, false) },
			check.Fail, 3, "", 0},
		{"markers sent", func(b *histbuild.KubeBuilder) { streamingLists(b, 3, 6*time.Second, true) },
			check.Pass, 3, "", 0},
		{"a fault around them", func(b *histbuild.KubeBuilder) {
			streamingLists(b, 3, 6*time.Second, false)
			b.Fault(1, "restart-apiserver", sec/2, 5*sec, "kube-0")
		}, check.Unknown, 0, "none was owed", 0},
		{"sabotage excuses nothing", func(b *histbuild.KubeBuilder) {
			streamingLists(b, 3, 6*time.Second, false)
			b.Fault(1, "sabotage:missing-initial-events-end", sec, sec)
		}, check.Fail, 3, "", 0},
		{"closed too soon to owe it", func(b *histbuild.KubeBuilder) { streamingLists(b, 3, time.Second, false) },
			check.Unknown, 0, "none was owed", 0},
		{"refused: no WatchList", func(b *histbuild.KubeBuilder) {
			streamingLists(b, 0, 0, false)
			yes := true
			for id := int64(1); id <= 2; id++ {
				b.Watch(id, 10, int(id)*sec, history.KubeWatchRequest{SendInitialEvents: &yes, ResourceVersionMatch: "NotOlderThan",
					AllowBookmarks: true})
				b.End(id, int(id)*sec+1000, history.EndError, &history.KubeStatus{Code: 422, Reason: "Invalid",
					Message: "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"})
			}
		}, check.Skipped, 0, "WatchList feature gate", 2},
		{"none sent", func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			histbuild.FullWatch(b, 1)
		}, check.Skipped, 0, "the run sent no streaming list", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := histbuild.NewKube()
			tc.build(b)
			r := check.Run(c, b.H, check.DefaultConfig())
			e := r.Evidence
			if r.Verdict != tc.want || e == nil || e.Owed != tc.owed || e.Refused != tc.refused ||
				!strings.Contains(r.Reason+" "+e.Why, tc.reason) {
				t.Fatalf("%s (%s), evidence %+v; want %s, %d owed, %d refused, reason with %q", r.Verdict, r.Reason, e,
					tc.want, tc.owed, tc.refused, tc.reason)
			}
			if tc.want == check.Fail {
				v := owedViolation(r)
				if v == nil || !slices.Equal(v.Watches, []int64{1, 2, 3}) {
					t.Errorf("no violation naming the three streaming lists: %s", histbuild.ViolationTexts(r.Violations))
				}
			}
		})
	}
	// On its own the check has nothing to judge there: the evidence rule
	// is what fails it.
	b := histbuild.NewKube()
	streamingLists(b, 3, 6*time.Second, false)
	if r := CheckWatchlistInitialEvents(b.H, check.DefaultConfig()); r.Verdict != check.Skipped {
		t.Errorf("the check alone: %s, want skipped", r.Verdict)
	}
}

// timedWatches builds n watches from RV 9 allowing bookmarks, each with
// timeoutSeconds 10 that the server ended at its timeout; with bookmark,
// each got a bookmark a second before.
func timedWatches(b *histbuild.KubeBuilder, n int, bookmark bool) {
	histbuild.BaseWrites(b)
	for i := 0; i < n; i++ {
		id := int64(i + 1)
		b.Watch(id, 10+i, 1, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true, TimeoutSeconds: 10})
		histbuild.FullWatchEvents(b, id)
		if bookmark {
			b.Bookmark(id, 9*sec, 21, false)
		}
		b.End(id, 10*sec, history.EndServer, nil)
	}
}

// TestBookmarksOwed: a watch that allowed bookmarks and ran to its
// timeout, or stayed open past the bookmark period, is owed a bookmark
// unless a fault was around; when every owed one got none, kube/bookmarks
// fails by the evidence rule too; a watch too short to owe one leaves it
// unknown when no watch got any.
func TestBookmarksOwed(t *testing.T) {
	c := checkNamed(t, NameBookmarks)
	for _, tc := range []struct {
		name  string
		build func(b *histbuild.KubeBuilder)
		want  check.Verdict
		owed  int
		rule  bool // the evidence rule's violation is there
	}{
		{"none at the timeout", func(b *histbuild.KubeBuilder) { timedWatches(b, 2, false) }, check.Fail, 2, true},
		{"one before the timeout", func(b *histbuild.KubeBuilder) { timedWatches(b, 2, true) }, check.Pass, 2, false},
		{"none in 100 s", func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.Watch(1, 10, 1, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true})
			histbuild.FullWatchEvents(b, 1)
			b.End(1, 100*sec, history.EndClient, nil)
		}, check.Fail, 1, true},
		{"none in 100 s, a fault in the middle", func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.Watch(1, 10, 1, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true})
			histbuild.FullWatchEvents(b, 1)
			b.End(1, 100*sec, history.EndClient, nil)
			b.Fault(1, "pause-apiserver", 40*sec, 41*sec, "kube-0")
		}, check.Fail, 0, false},
		{"a fault before the timeout", func(b *histbuild.KubeBuilder) {
			timedWatches(b, 2, false)
			b.Fault(1, "restart-apiserver", 8*sec, 9*sec, "kube-0")
		}, check.Fail, 0, false},
		{"too short to owe one", func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.Watch(1, 10, 1, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true})
			histbuild.FullWatchEvents(b, 1)
			b.End(1, 2*sec, history.EndClient, nil)
		}, check.Unknown, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := histbuild.NewKube()
			tc.build(b)
			r := check.Run(c, b.H, check.DefaultConfig())
			if r.Verdict != tc.want || r.Evidence == nil || r.Evidence.Owed != tc.owed || (owedViolation(r) != nil) != tc.rule {
				t.Fatalf("%s (%s), evidence %+v, violations %s; want %s, %d owed, rule %v", r.Verdict, r.Reason, r.Evidence,
					histbuild.ViolationTexts(r.Violations), tc.want, tc.owed, tc.rule)
			}
		})
	}
}

// TestKubeEvidenceNotAsked: checks whose situation the run never made are
// skipped, their evidence saying why the run did not ask; a run that asked
// and got no answer is unknown, not skipped.
func TestKubeEvidenceNotAsked(t *testing.T) {
	for _, tc := range []struct {
		name, check string
		build       func(b *histbuild.KubeBuilder)
		want        check.Verdict
		reason      string
	}{
		{"timed watch closed by vigil first", NameWatchTimeout, func(b *histbuild.KubeBuilder) {
			b.Watch(1, 10, 0, history.KubeWatchRequest{ResourceVersion: "9", TimeoutSeconds: 10})
			b.End(1, 2*sec, history.EndClient, nil)
		}, check.Skipped, "1 closed by vigil first"},
		{"timed watch ran to its timeout", NameWatchTimeout, func(b *histbuild.KubeBuilder) {
			b.Watch(1, 10, 0, history.KubeWatchRequest{ResourceVersion: "9", TimeoutSeconds: 10})
			b.End(1, 10*sec+1000, history.EndServer, nil)
		}, check.Pass, ""},
		{"timed watch vigil closed past it", NameWatchTimeout, func(b *histbuild.KubeBuilder) {
			b.Watch(1, 10, 0, history.KubeWatchRequest{ResourceVersion: "9", TimeoutSeconds: 10})
			b.End(1, 30*sec, history.EndClient, nil)
		}, check.Fail, ""},
		{"no fault", NameRecovery, func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			histbuild.FullWatch(b, 1)
		}, check.Skipped, "the history has no fault"},
		{"no watch across a heal", NameRecovery, func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			histbuild.FullWatch(b, 1)
			b.Fault(1, "restart-apiserver", 300, 400, "kube-0")
		}, check.Skipped, "no watch was open across the heal"},
		{"no continuation after a compaction", NameContinueExpired, func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.List(2, 100, 110, history.KubeRequest{Limit: 1}, 20, "tok", histbuild.A20)
			b.List(2, 120, 130, history.KubeRequest{Limit: 1, Continue: "tok"}, 20, "")
			b.CompactEtcd(200, 210, 20)
		}, check.Skipped, "no list continuation was sent after a compaction passed"},
		{"a continuation served after a compaction", NameContinueExpired, func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.List(2, 100, 110, history.KubeRequest{Limit: 1}, 20, "tok", histbuild.A20)
			b.CompactEtcd(111, 112, 21)
			b.List(2, 120, 130, history.KubeRequest{Limit: 1, Continue: "tok"}, 20, "")
		}, check.Skipped, "no continue token expired"},
		{"a continuation expired after a compaction", NameContinueExpired, func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.List(2, 100, 110, history.KubeRequest{Limit: 1}, 20, "tok", histbuild.A20)
			b.CompactEtcd(111, 112, 21)
			b.ListStatus(2, 120, 130, history.KubeRequest{Limit: 1, Continue: "tok"},
				history.KubeStatus{Code: 410, Reason: "Expired", Continue: "fresh"})
		}, check.Pass, ""},
		{"consistent reads sent, none answered", NameConsistentRead, func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.Op(2, 100, 110, history.KubeRequest{Verb: history.KubeList}, nil, nil, "context deadline exceeded")
		}, check.Unknown, "answered none"},
		{"no consistent read sent", NameConsistentRead, func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
		}, check.Skipped, "the run sent no get or list with RV unset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := histbuild.NewKube()
			tc.build(b)
			r := check.Run(checkNamed(t, tc.check), b.H, check.DefaultConfig())
			if r.Verdict != tc.want || r.Evidence == nil || !strings.Contains(r.Reason+" "+r.Evidence.Why, tc.reason) {
				t.Fatalf("%s: %s (%s), evidence %+v; want %s with %q", tc.check, r.Verdict, r.Reason, r.Evidence, tc.want, tc.reason)
			}
		})
	}
}
