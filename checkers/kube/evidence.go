package kube

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/checkers/kube/model"
	"github.com/vigil-suite/vigil/history"
)

// The evidence of every Kubernetes check (check.Evidence): the requests
// of the kind the check judges, and how many the server answered with
// what the check reads. Each request kind is drawn as close as the history
// allows to what the check judges, so that a request answered is a
// request judged, and a check with nothing to judge says why the run did
// not ask rather than that the server did not answer.
//
// Two answers are owed by the API: the initial-events-end BOOKMARK of a
// streaming list, and a BOOKMARK on a watch that allowed them and ran to
// its timeout or longer than the bookmark period. A run in which every
// owed one went unanswered fails the check (check.Apply).

// initialEventsOwedAfter is how long a streaming list must stay open, with
// no fault around it, to be owed its initial-events-end BOOKMARK.
// kube-apiserver waits at most 3 s for its watch cache to catch up before
// it answers a streaming list one way or another (the cacher's
// blockTimeout), and sends the state of a few dozen objects at once.
const initialEventsOwedAfter = 4 * time.Second

// watchEnd is when a watch ended as far as the history says: its end, or
// its last event; ok is false when the history does not record its end.
func watchEnd(w *history.KubeWatchStream) (time.Duration, bool) {
	if w.End != nil {
		return w.End.Time, true
	}
	if n := len(w.Events); n > 0 {
		return w.Events[n-1].Time, false
	}
	return w.Call, false
}

// validWatch: a watch the checks can judge — a request that reached the
// server, one the API accepts (not one of the invalid probes), with an RV
// and a selector vigil reads.
func validWatch(kw *model.Watch) bool {
	return invalidWatch(kw.Stream.Request) == "" && kw.Mode != model.WatchUnjudged && !facts.KubeWatchNeverSent(kw.Stream)
}

// served: a watch the server answered with a stream.
func served(kw *model.Watch) bool {
	return kw.Mode != model.WatchRefused && kw.Mode != model.WatchUnjudged && facts.KubeServed(kw.Stream)
}

// writeTimes are the return times of acknowledged writes (deletes only,
// when deletes), sorted.
func writeTimes(h *history.History, deletes bool) []time.Duration {
	var out []time.Duration
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Response != nil && o.Request.Verb.IsWrite() && !o.Request.DryRun &&
			(!deletes || o.Request.Verb == history.KubeDelete || o.Request.Verb == history.KubeDeleteCollection) {
			out = append(out, o.Return)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// openAcross reports whether w was open when one of the writes returned
// (ts sorted): a change it may owe was made while it watched.
func openAcross(w *history.KubeWatchStream, ts []time.Duration) bool {
	end := time.Duration(math.MaxInt64)
	if w.End != nil {
		end = w.End.Time
	}
	i := sort.Search(len(ts), func(i int) bool { return ts[i] > w.Call })
	return i < len(ts) && ts[i] < end
}

// watchTally counts, over the model's watches, those asked (or answered:
// a watch that delivered what the check reads was evidently asked).
func watchTally(m *model.Model, request, answer string, asked, answered func(kw *model.Watch) bool, why string) check.Evidence {
	t := facts.NewTally(request, answer, check.RecordKubeWatches)
	for _, kw := range m.Watches {
		if !validWatch(kw) {
			continue
		}
		if a := answered(kw); a || asked(kw) {
			t.Count(kw.Stream.ID, a, false, false)
		}
	}
	return t.Evidence(kubeSkipReason(m.History, why))
}

func evRVFormat(h *history.History) check.Evidence {
	t := facts.NewTally("Kubernetes request", "resourceVersion", check.RecordKubeOps)
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		r := o.Response
		if o.NeverSent() {
			continue
		}
		t.Count(o.ID, r != nil && (o.Request.Verb == history.KubeList || r.Object != nil && o.Request.Verb != history.KubeDelete),
			false, false)
	}
	for _, w := range h.KubeWatches {
		if facts.KubeWatchNeverSent(w) {
			continue
		}
		rv := false
		for i := range w.Events {
			rv = rv || w.Events[i].Object != nil && w.Events[i].Type != history.KubeError
		}
		t.Count(w.ID, rv, false, false)
	}
	return t.Evidence(kubeSkipReason(h, ""))
}

func evRVOrder(h *history.History) check.Evidence {
	return facts.KubeOpEvidence(h, "write request", "resourceVersion",
		func(o *history.KubeOperation) bool { return o.Request.Verb.IsWrite() },
		func(o *history.KubeOperation) bool { return o.Response != nil && model.ObjRV(o.Response.Object) > 0 },
		kubeSkipReason(h, "the run sent no create, update or delete"))
}

func evWatchOrdered(h *history.History, m *model.Model) check.Evidence {
	writes := writeTimes(h, false)
	return watchTally(m, "watch request", "change event",
		func(kw *model.Watch) bool { return openAcross(kw.Stream, writes) },
		func(kw *model.Watch) bool { return len(kw.Live) > 0 },
		"no watch was open when an acknowledged write returned")
}

func evWatchFromRV(h *history.History, m *model.Model) check.Evidence {
	return watchTally(m, "watch request", "served stream",
		func(*model.Watch) bool { return true }, served, "the run opened no watch")
}

// evWatchAgreement counts the watches open across a write that have a
// peer with the same selector (the check compares watches within a
// selector); one is answered when it and a peer delivered changes.
func evWatchAgreement(h *history.History, m *model.Model) check.Evidence {
	writes := writeTimes(h, false)
	delivered := func(kw *model.Watch) bool {
		return kw.Mode != model.WatchRefused && (len(kw.Live) > 0 || kw.Extended)
	}
	asked, answered := map[string]int{}, map[string]int{}
	for _, kw := range m.Watches {
		if !validWatch(kw) {
			continue
		}
		sel := selectorKey(kw)
		if d := delivered(kw); d || openAcross(kw.Stream, writes) {
			asked[sel]++
			if d {
				answered[sel]++
			}
		}
	}
	return watchTally(m, "paired watch request", "change event",
		func(kw *model.Watch) bool {
			return asked[selectorKey(kw)] >= 2 && openAcross(kw.Stream, writes)
		},
		func(kw *model.Watch) bool { return answered[selectorKey(kw)] >= 2 && delivered(kw) },
		"no two watches with the same selector were open when an acknowledged write returned")
}

// evWatchResume counts the watches that resume another from the last RV
// it saw (as the check finds them); a resume from another RV is the
// harness's and asks nothing.
func evWatchResume(h *history.History, m *model.Model) check.Evidence {
	t := facts.NewTally("resuming watch request", "served stream or 410", check.RecordKubeWatches)
	elsewhere := 0
	for _, kw := range m.Watches {
		w := kw.Stream
		prev := m.ByWatch[w.Resumes]
		if w.Resumes == 0 || prev == nil || !validWatch(kw) {
			continue
		}
		L, _ := lastRVSeen(prev.Stream)
		if L == 0 {
			L = prev.ReqRV
		}
		if n, ok := facts.ParseRV(w.Request.ResourceVersion); !ok || n != L {
			elsewhere++
			continue
		}
		expired := kw.Mode == model.WatchRefused && model.IsExpired(w.End.Status) ||
			kw.ErrIdx == 0 && model.IsExpired(w.Events[0].Status)
		t.Count(w.ID, expired || kw.Mode == model.WatchExplicit && facts.KubeServed(w), false, false)
	}
	why := "no watch resumed another from the last RV it saw"
	if elsewhere > 0 {
		why += fmt.Sprintf(" (%d resumed from another RV: the harness's doing, not judged)", elsewhere)
	}
	return t.Evidence(kubeSkipReason(h, why))
}

// evWatchExpired counts the watches from an RV below a compaction the run
// made before it, and those the server told expired (an ERROR event, a
// refusal with 410): the check judges both.
func evWatchExpired(h *history.History, m *model.Model) check.Evidence {
	type compaction struct {
		at  time.Duration
		rev int64
	}
	var comps []compaction
	for i := range h.Operations {
		if o := &h.Operations[i]; o.Request.Kind == history.OpCompact && o.Response != nil {
			comps = append(comps, compaction{o.Return, o.Request.Revision})
		}
	}
	below := func(kw *model.Watch) bool {
		if kw.Mode != model.WatchExplicit {
			return false
		}
		for _, c := range comps {
			if c.at < kw.Stream.Call && kw.ReqRV+1 < c.rev {
				return true
			}
		}
		return false
	}
	told := func(kw *model.Watch) bool {
		return kw.Mode == model.WatchRefused && model.IsExpired(kw.Stream.End.Status) || kw.ErrIdx >= 0
	}
	return watchTally(m, "compacted-RV watch request", "410 or the changes from its RV", below,
		func(kw *model.Watch) bool { return told(kw) || below(kw) && facts.KubeServed(kw.Stream) },
		"no watch asked for an RV below a compaction the run had made, and the server told none it expired")
}

func evWatchInitialState(h *history.History, m *model.Model) check.Evidence {
	return watchTally(m, "state watch request", "served stream",
		func(kw *model.Watch) bool {
			r := kw.Stream.Request
			return (r.ResourceVersion == "" || r.ResourceVersion == "0") && r.SendInitialEvents == nil
		},
		func(kw *model.Watch) bool { return kw.Mode == model.WatchState && served(kw) },
		`the run opened no watch from RV unset or "0" (without sendInitialEvents)`)
}

func evWatchSelector(h *history.History, m *model.Model) check.Evidence {
	return watchTally(m, "selector watch request", "served stream",
		func(kw *model.Watch) bool { return kw.Sel != nil },
		func(kw *model.Watch) bool { return kw.Sel != nil && served(kw) },
		"the run opened no watch with a label selector")
}

func evWatchDeletedRV(h *history.History, m *model.Model) check.Evidence {
	deletes := writeTimes(h, true)
	return watchTally(m, "watch request", "DELETED event",
		func(kw *model.Watch) bool { return openAcross(kw.Stream, deletes) },
		func(kw *model.Watch) bool {
			for _, i := range kw.Live {
				if e := &kw.Stream.Events[i]; e.Type == history.KubeDeleted && m.Objs[e.Object.Name] != nil {
					return true
				}
			}
			return false
		},
		"no watch was open when an acknowledged delete returned")
}

// evWatchTimeout counts the watches kube/watch-timeout judges, by the one
// rule of endings: those that ended unexplained, and those with
// timeoutSeconds that vigil let run to their timeout outside faults aimed
// at their API server. The API owes each a clean end by its timeout (with
// the check's slack) or an answer that says why.
func evWatchTimeout(h *history.History) check.Evidence {
	t := facts.NewTally("timed watch request", "clean end at the timeout", check.RecordKubeWatches)
	rule := facts.NewEndings(h)
	closed, faulted := 0, 0
	for _, w := range h.KubeWatches {
		end := rule.KubeWatch(w)
		if end.Class == facts.EndingUnexplained {
			t.Count(w.ID, false, false, true)
			continue
		}
		T := end.Timeout
		switch end.Class {
		case facts.EndingAnswered, facts.EndingExpired, facts.EndingRefused, facts.EndingOpen:
			continue
		}
		if T <= 0 {
			continue
		}
		deadline, slack := w.Call+T, watchTimeoutSlack(T)
		switch {
		case end.Class == facts.EndingClient && end.At <= deadline+slack:
			closed++
		case end.Class == facts.EndingFault || rule.FaultAt(w.Server, w.Call, min(end.At, deadline+slack), 0) != nil:
			faulted++
		default:
			t.Count(w.ID, end.Class == facts.EndingTimeout, false, true)
		}
	}
	why := fmt.Sprintf("no watch with timeoutSeconds ran to its timeout outside a fault on its API server, and none ended "+
		"unexplained (%d closed by vigil first, %d overlapped by such a fault)", closed, faulted)
	return t.Evidence(kubeSkipReason(h, why))
}

// streamingList: a well-formed streaming list that asked for bookmarks,
// the requests kube/watchlist-initial-events judges.
func streamingList(r history.KubeWatchRequest) bool {
	return r.SendInitialEvents != nil && *r.SendInitialEvents && r.ResourceVersionMatch == "NotOlderThan" &&
		r.Continue == "" && r.AllowBookmarks
}

// evWatchlistInitial counts the streaming lists: answered with their
// initial-events-end BOOKMARK, or refused as unsupported (the server's
// words are the check's reason). A streaming list is owed the BOOKMARK
// when the server served it without an ERROR first and it stayed open
// initialEventsOwedAfter, or the server ended it, with no fault around:
// kube-apiserver either serves a streaming list with its marker at once
// or refuses it (422 when WatchList is off), so silence is a violation.
func evWatchlistInitial(h *history.History, m *model.Model) check.Evidence {
	t := facts.NewTally("streaming list", "BOOKMARK annotated "+history.AnnotationInitialEventsEnd, check.RecordKubeWatches)
	for _, kw := range m.Watches {
		w := kw.Stream
		if !streamingList(w.Request) || kw.Mode == model.WatchUnjudged || facts.KubeWatchNeverSent(w) {
			continue
		}
		if watchListUnsupported(kw) != "" {
			t.Count(w.ID, false, true, false)
			continue
		}
		marker := -1
		for i := 0; i < kw.LiveEnd() && marker < 0; i++ {
			if model.IsInitialEnd(&w.Events[i]) {
				marker = i
			}
		}
		end, known := watchEnd(w)
		long := known && (end >= w.Call+initialEventsOwedAfter || w.End.Reason == history.EndServer && w.End.Status == nil)
		owed := kw.Mode == model.WatchStreaming && (kw.ErrIdx < 0 || marker >= 0) && long &&
			!facts.FaultAround(h.Faults, w.Call, min(end, w.Call+initialEventsOwedAfter))
		t.Count(w.ID, marker >= 0, false, owed)
	}
	return t.Evidence(kubeSkipReason(h, "the run sent no streaming list (sendInitialEvents=true, "+
		"resourceVersionMatch=NotOlderThan, allowWatchBookmarks=true)"))
}

// evWatchlistValidation counts the invalid requests the workload sent and
// those the server answered at all (the check judges every answer).
func evWatchlistValidation(h *history.History) check.Evidence {
	t := facts.NewTally("invalid request", "reply", check.RecordKubeWatches)
	for _, w := range h.KubeWatches {
		if invalidWatch(w.Request) == "" || facts.KubeWatchNeverSent(w) {
			continue
		}
		lone := len(w.Events) == 1 && w.Events[0].Type == history.KubeError
		noAnswer := !lone && len(w.Events) == 0 && (w.End == nil || w.End.Status == nil &&
			(w.End.Reason == history.EndError || kubeFaultDuring(h, w.Server, w.Call, w.End.Time)))
		t.Count(w.ID, !noAnswer, false, false)
	}
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		r := o.Request
		if !o.NeverSent() && r.Verb == history.KubeList && r.Continue != "" && (r.ResourceVersion != "" && r.ResourceVersion != "0" ||
			r.ResourceVersionMatch != "") {
			t.Count(o.ID, o.Error == "", false, false)
		}
	}
	return t.Evidence(kubeSkipReason(h, "the run sent no request the API must refuse"))
}

func readKind(o *history.KubeOperation) model.ReadKind {
	k, _ := model.ReadKindOf(o.Request)
	return k
}

func isRead(o *history.KubeOperation) bool {
	return o.Request.Verb == history.KubeGet || o.Request.Verb == history.KubeList
}

func evConsistentRead(h *history.History) check.Evidence {
	return facts.KubeOpEvidence(h, "consistent read", "response or 404",
		func(o *history.KubeOperation) bool { return isRead(o) && readKind(o) == model.ReadConsistent },
		func(o *history.KubeOperation) bool {
			return o.Response != nil || o.Request.Verb == history.KubeGet && o.Status != nil && o.Status.Code == 404
		},
		kubeSkipReason(h, "the run sent no get or list with RV unset"))
}

func evListExact(h *history.History) check.Evidence {
	return facts.KubeOpEvidence(h, "Exact list", "response",
		func(o *history.KubeOperation) bool {
			return o.Request.Verb == history.KubeList && readKind(o) == model.ReadExact
		},
		func(o *history.KubeOperation) bool { return o.Response != nil },
		kubeSkipReason(h, "the run sent no list with resourceVersionMatch=Exact (or an RV and a limit)"))
}

func evListNotOlderThan(h *history.History) check.Evidence {
	return facts.KubeOpEvidence(h, "NotOlderThan list", "response",
		func(o *history.KubeOperation) bool {
			return o.Request.Verb == history.KubeList && readKind(o) == model.ReadNotOlder
		},
		func(o *history.KubeOperation) bool { return o.Response != nil },
		kubeSkipReason(h, "the run sent no list with resourceVersionMatch=NotOlderThan (or an RV and no limit)"))
}

// evFutureRV counts the requests at an RV the history proves the store
// had not reached (as the check finds them). Waiting is an answer the API
// allows, so every one that reached the server is answered.
func evFutureRV(h *history.History, m *model.Model) check.Evidence {
	x := buildLinIndex(m)
	t := facts.NewTally("future-RV request", "response, 504 or wait", check.RecordKubeOps)
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		k, n := model.ReadKindOf(o.Request)
		if !isRead(o) || k != model.ReadNotOlder && k != model.ReadExact || o.NeverSent() {
			continue
		}
		if below, _ := belowAfter(m, &x, o.Return); below < n {
			t.Count(o.ID, true, false, false)
		}
	}
	// Watches count too; ids of calls and watches are not mixed in
	// Unanswered since nothing here is owed.
	for _, kw := range m.Watches {
		w := kw.Stream
		n, ok := facts.ParseRV(w.Request.ResourceVersion)
		if !ok || facts.KubeWatchNeverSent(w) {
			continue
		}
		end := w.Call
		if len(w.Events) > 0 {
			end = w.Events[0].Time
		} else if w.End != nil {
			end = w.End.Time
		}
		if below, _ := belowAfter(m, &x, end); below < n {
			t.Count(w.ID, true, false, false)
		}
	}
	return t.Evidence(kubeSkipReason(h, "no request asked for an RV the history proves the store had not reached"))
}

func evPagination(h *history.History) check.Evidence {
	return facts.KubeOpEvidence(h, "paginated list", "first page",
		func(o *history.KubeOperation) bool {
			return o.Request.Verb == history.KubeList && o.Request.Limit > 0 && o.Request.Continue == ""
		},
		func(o *history.KubeOperation) bool { return o.Response != nil },
		kubeSkipReason(h, "the run sent no list with a limit"))
}

// evContinueExpired counts the next pages requested after a compaction of
// etcd passed the RV of their list's first page (the token's RV), and any
// the server answered 410. A page served anyway counts as refused: the
// server kept the token valid (a watch cache serves the page from its own
// snapshot), which the API allows, so the check has nothing to judge.
func evContinueExpired(h *history.History) check.Evidence {
	var comps []*history.Operation
	for i := range h.Operations {
		if o := &h.Operations[i]; o.Request.Kind == history.OpCompact && o.Response != nil {
			comps = append(comps, o)
		}
	}
	passed := func(rv int64, at time.Duration) bool {
		for _, c := range comps {
			if c.Return < at && c.Request.Revision > rv {
				return true
			}
		}
		return false
	}
	t := facts.NewTally("list continuation", "410 Expired", check.RecordKubeOps)
	for _, ch := range pageChains(h) {
		rv, ok := facts.ParseRV(ch.pages[0].Response.ListRV)
		next := ch.pages[1:]
		if ch.expired != nil {
			next = append(next, ch.expired)
		}
		for _, p := range next {
			if p == ch.expired || ok && passed(rv, p.Call) && !p.NeverSent() {
				t.Count(p.ID, p == ch.expired, p.Response != nil, false)
			}
		}
	}
	return t.Evidence(kubeSkipReason(h, "no list continuation was sent after a compaction passed its token's RV"))
}

func evOptimisticConcurrency(h *history.History, m *model.Model) check.Evidence {
	t := facts.NewTally("conditional write", "response or refusal", check.RecordKubeOps)
	for _, w := range m.Writes {
		if w.Verb != history.KubeCreate && !w.Op.NeverSent() && !w.Context && (model.PreconditionRV(w.Op) != 0 || model.PreconditionUID(w.Op) != "") {
			t.Count(w.Op.ID, w.Outcome != model.WriteUnknown, false, false)
		}
	}
	return t.Evidence(kubeSkipReason(h, "the run sent no update or delete with a precondition"))
}

func evLinearizable(h *history.History, m *model.Model) check.Evidence {
	t := facts.NewTally("linearizable request", "response", check.RecordKubeOps)
	for _, w := range m.Writes {
		if w.Op.NeverSent() || w.Context {
			continue
		}
		refused := w.Op.Status != nil && (w.Op.Status.Code == 404 || w.Op.Status.Code == 409)
		t.Count(w.Op.ID, w.Outcome == model.WriteAcked && w.Rv != 0 || refused, false, false)
	}
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if isRead(o) && readKind(o) == model.ReadConsistent && !o.NeverSent() {
			t.Count(o.ID, o.Response != nil || o.Request.Verb == history.KubeGet && o.Status != nil && o.Status.Code == 404,
				false, false)
		}
	}
	return t.Evidence(kubeSkipReason(h, "the run sent no write and no consistent read"))
}

// evBookmarks counts the watches that allowed bookmarks and those that got
// one (other than a streaming list's end marker, which
// kube/watchlist-initial-events reads). kube-apiserver's watch cache sends
// one about every minute and shortly before a watch's timeout, so a watch
// that ran to a timeout of bookmarkMinTimeout or more with no fault in its
// last bookmarkPreTimeout, or stayed open longer than bookmarkPeriodBound
// with no fault in that span, is owed one. (With --watch-cache=false it
// sends none: the SHOULD check warns, as it does on its own.)
func evBookmarks(h *history.History, m *model.Model) check.Evidence {
	t := facts.NewTally("bookmark-enabled watch request", "BOOKMARK", check.RecordKubeWatches)
	for _, kw := range m.Watches {
		w := kw.Stream
		if !w.Request.AllowBookmarks || !validWatch(kw) {
			continue
		}
		got := false
		for i := 0; i < kw.LiveEnd(); i++ {
			got = got || w.Events[i].Type == history.KubeBookmark && !model.IsInitialEnd(&w.Events[i])
		}
		owed := false
		if T := time.Duration(w.Request.TimeoutSeconds) * time.Second; w.End != nil && kw.ErrIdx < 0 &&
			kw.Mode != model.WatchRefused {
			end := w.End.Time
			atTimeout := T >= bookmarkMinTimeout && w.End.Reason == history.EndServer && end-w.Call >= T-facts.TimeoutTolerance &&
				!facts.FaultAround(h.Faults, end-bookmarkPreTimeout, end)
			owed = atTimeout || facts.QuietSpan(h.Faults, w.Call, end) > bookmarkPeriodBound
		}
		t.Count(w.ID, got, false, owed)
	}
	return t.Evidence(kubeSkipReason(h, "the run opened no watch with allowWatchBookmarks=true"))
}

func evStaleReadBound(h *history.History) check.Evidence {
	return facts.KubeOpEvidence(h, "stale-allowed read", "response",
		func(o *history.KubeOperation) bool {
			k := readKind(o)
			return o.Request.Verb == history.KubeGet && k == model.ReadNotOlder || o.Request.Verb == history.KubeList && k == model.ReadAny
		},
		func(o *history.KubeOperation) bool {
			return o.Response != nil || o.Request.Verb == history.KubeGet && o.Status != nil && o.Status.Code == 404
		},
		kubeSkipReason(h, `the run sent no get at an RV and no list at RV "0"`))
}

// evCacheAgreesWithEtcd counts vigil's etcd watches of the API server's
// keys and those that observed a window of revisions to compare in.
func evCacheAgreesWithEtcd(h *history.History) check.Evidence {
	t := facts.NewTally("etcd oracle watch", "observed window", check.RecordWatches)
	if p := h.Meta.Prefix; p != "" {
		for _, w := range h.Watches {
			if w.Request.Key == p {
				win := facts.ObservedWindow(w)
				t.Count(w.ID, win.Ok && win.First <= win.Last, false, false)
			}
		}
	}
	return t.Evidence("the history has no etcd watch of the API server's keys (vigil did not run the etcd under the " +
		"API server)")
}

// evRecovery counts the watches the check judges: open across a fault's
// heal (and kept open after it, which is their answer: the check judges
// what they delivered), or failed with a Status near a fault (a visible
// end is an answer too).
func evRecovery(h *history.History, m *model.Model) check.Evidence {
	t := facts.NewTally("fault-crossing watch request", "stream open past the heal, or a visible end",
		check.RecordKubeWatches)
	faults := recoveryFaults(h)
	if len(faults) == 0 {
		return t.Evidence("the history has no fault")
	}
	for _, kw := range m.Watches {
		w := kw.Stream
		if kw.Mode == model.WatchUnjudged || facts.KubeWatchNeverSent(w) {
			continue
		}
		if kw.ErrIdx >= 0 || w.End != nil && w.End.Status != nil {
			at := w.Call
			if w.End != nil {
				at = w.End.Time
			}
			if faultNear(faults, at) != nil {
				t.Count(w.ID, true, false, false)
			}
			continue
		}
		if !kw.StartKnown || w.End != nil && w.End.Reason != history.EndClient {
			continue
		}
		end := time.Duration(math.MaxInt64)
		if w.End != nil {
			end = w.End.Time
		}
		for _, f := range faults {
			if w.Call < f.End && end > f.End+recoveryGrace {
				t.Count(w.ID, true, false, false)
				break
			}
		}
	}
	return t.Evidence("no watch was open across the heal of a fault, and none failed near one")
}

// selectorKey groups watches by what they select: label and field selector.
func selectorKey(kw *model.Watch) string {
	return kw.Stream.Request.LabelSelector + "\x00" + kw.Stream.Request.FieldSelector
}

// evWritePaths counts the requests of the write paths kube/write-paths
// judges: patches, status writes, dry runs, delete-collections and
// creates with generateName, and the updates of a resource that keeps a
// metadata.generation (the rule generation judges them); answered with a
// response or a refusal.
func evWritePaths(h *history.History) check.Evidence {
	generations := false // the resource keeps metadata.generation
	for i := range h.KubeOps {
		if r := h.KubeOps[i].Response; r != nil && r.Object != nil && r.Object.Generation > 0 {
			generations = true
			break
		}
	}
	return facts.KubeOpEvidence(h, "patch, status, dry-run, delete-collection, generateName or generation-keeping update request",
		"response or refusal",
		func(o *history.KubeOperation) bool {
			r := o.Request
			return r.Verb == history.KubePatch || r.Verb == history.KubeDeleteCollection || r.DryRun ||
				r.Subresource == history.SubresourceStatus || r.Verb == history.KubeCreate && r.Object != nil && r.Object.GenerateName != "" ||
				generations && r.Verb == history.KubeUpdate
		},
		func(o *history.KubeOperation) bool {
			return o.Response != nil || o.Status != nil && o.Status.Code < 500
		},
		kubeSkipReason(h, "the run sent no patch, status write, dry run, delete-collection or generateName create"))
}
