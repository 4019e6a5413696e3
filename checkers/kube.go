package checkers

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/vigil-suite/vigil/history"
)

// The Kubernetes checks (SEMANTICS.md Part 2) judge the Kubernetes side of
// a history: the calls to one namespaced resource (history.KubeOps) and
// the watches of it (history.KubeWatches). A resourceVersion (RV) is the
// etcd revision of the change that made an object's state, so the RVs of
// one resource have gaps (etcd holds other resources too) and no check
// assumes +1 steps.

// Guarantees of Part 2, one sentinel per check, quoting SEMANTICS.md.
var (
	ErrKubeRVFormat = errors.New("kube/rv-format: resourceVersions are positive decimal integers, " +
		"increasing within the resource type")
	ErrKubeRVOrder = errors.New("kube/rv-order: the order of resourceVersions matches the real-time order of writes")

	ErrKubeWatchOrdered = errors.New("kube/watch-ordered: within a watch, non-BOOKMARK events have strictly increasing RVs")
	ErrKubeWatchFromRV  = errors.New("kube/watch-from-rv: a watch from N delivers every matching change with RV > N, " +
		"nothing at or below N, and no synthetic ADDED events")
	ErrKubeWatchAgreement = errors.New("kube/watch-agreement: watches started at the same RV see identical sequences")
	ErrKubeWatchResume    = errors.New("kube/watch-resume: resuming from the last RV seen gives no gap and no duplicate, or a 410")
	ErrKubeWatchExpired   = errors.New("kube/watch-expired: a watch from a compacted RV answers HTTP 200 with an ERROR " +
		"event (Status 410, reason Expired); nothing follows an ERROR event")
	ErrKubeWatchInitialState = errors.New("kube/watch-initial-state: a watch with RV unset or \"0\" starts with ADDED " +
		"events for one state of the collection; later events have RV above that state's")
	ErrKubeWatchSelector = errors.New("kube/watch-selector: an object leaving the selector gives DELETED, one entering " +
		"gives ADDED, non-matching objects are silent")
	ErrKubeWatchDeletedRV = errors.New("kube/watch-deleted-rv: a DELETED event carries the object's last state with " +
		"RV = the deletion's RV")
	ErrKubeWatchTimeout = errors.New("kube/watch-timeout: a watch ends cleanly at its timeoutSeconds")

	ErrKubeWatchlistInitialEvents = errors.New("kube/watchlist-initial-events: ADDED for the state, then exactly one " +
		"BOOKMARK annotated k8s.io/initial-events-end: \"true\" whose RV >= every item's and >= the requested RV, " +
		"then only later changes")
	ErrKubeWatchlistValidation = errors.New("kube/watchlist-validation: sendInitialEvents without " +
		"resourceVersionMatch=NotOlderThan, resourceVersionMatch on a plain watch, or RV together with continue, answer 400")

	ErrKubeConsistentRead = errors.New("kube/consistent-read: get/list with RV unset sees every write acknowledged " +
		"before the request started, on every API server replica")
	ErrKubeListExact = errors.New("kube/list-exact: list with resourceVersionMatch=Exact and RV=N returns RV == N " +
		"and the state at N, or 410")
	ErrKubeListNotOlderThan = errors.New("kube/list-not-older-than: list NotOlderThan N returns a list RV >= N")
	ErrKubeFutureRV         = errors.New("kube/future-rv: a future RV answers 504 (ResourceVersionTooLarge) or " +
		"waits; never stale data")

	ErrKubePagination = errors.New("kube/pagination: all pages carry the first page's RV; their union equals the " +
		"list at that RV; no duplicates; only an empty continue ends the list")
	ErrKubeContinueExpired = errors.New("kube/continue-expired: an expired continue token answers 410 with a fresh " +
		"inconsistent token that resumes after the last key")

	ErrKubeOptimisticConcurrency = errors.New("kube/optimistic-concurrency: an update with a stale RV or uid " +
		"precondition answers 409 Conflict; of N concurrent updates from one RV exactly one succeeds")
	ErrKubeLinearizable = errors.New("kube/linearizable: creates, updates, deletes and consistent reads of the " +
		"resource form a linearizable history (RV as the revision)")

	ErrKubeBookmarks = errors.New("kube/bookmarks: bookmarks come only when allowed, carry only an RV >= the last " +
		"event's, and arrive periodically (about every minute) and shortly before the timeout")
	ErrKubeStaleReadBound = errors.New("kube/stale-read-bound: RV=\"0\" and NotOlderThan reads may be stale, never " +
		"older than the requested N")
	ErrKubeCacheAgreesWithEtcd = errors.New("kube/cache-agrees-with-etcd: what the API server's watch cache serves " +
		"equals what etcd committed at the same revision")
	ErrKubeRecovery = errors.New("kube/recovery: after an API server restart, an etcd leader kill or a partition, " +
		"watches resume without loss or fail with 410/429, never silently")
)

// Names of the Kubernetes checks, as reports and result.json spell them.
const (
	NameKubeRVFormat              = "kube/rv-format"
	NameKubeRVOrder               = "kube/rv-order"
	NameKubeWatchOrdered          = "kube/watch-ordered"
	NameKubeWatchFromRV           = "kube/watch-from-rv"
	NameKubeWatchAgreement        = "kube/watch-agreement"
	NameKubeWatchResume           = "kube/watch-resume"
	NameKubeWatchExpired          = "kube/watch-expired"
	NameKubeWatchInitialState     = "kube/watch-initial-state"
	NameKubeWatchSelector         = "kube/watch-selector"
	NameKubeWatchDeletedRV        = "kube/watch-deleted-rv"
	NameKubeWatchTimeout          = "kube/watch-timeout"
	NameKubeWatchlistInitial      = "kube/watchlist-initial-events"
	NameKubeWatchlistValidation   = "kube/watchlist-validation"
	NameKubeConsistentRead        = "kube/consistent-read"
	NameKubeListExact             = "kube/list-exact"
	NameKubeListNotOlderThan      = "kube/list-not-older-than"
	NameKubeFutureRV              = "kube/future-rv"
	NameKubePagination            = "kube/pagination"
	NameKubeContinueExpired       = "kube/continue-expired"
	NameKubeOptimisticConcurrency = "kube/optimistic-concurrency"
	NameKubeLinearizable          = "kube/linearizable"
	NameKubeBookmarks             = "kube/bookmarks"
	NameKubeStaleReadBound        = "kube/stale-read-bound"
	NameKubeCacheAgreesWithEtcd   = "kube/cache-agrees-with-etcd"
	NameKubeRecovery              = "kube/recovery"
)

// isKubeShould reports the SHOULD lines of Part 2.
func isKubeShould(name string) bool {
	switch name {
	case NameKubeBookmarks, NameKubeStaleReadBound, NameKubeCacheAgreesWithEtcd, NameKubeRecovery:
		return true
	}
	return false
}

// Kube returns every Part 2 check, in SEMANTICS.md order (the SHOULD
// lines last, as there). The checks of one returned list share what they
// derive from a history (the objects' timelines, the watches' windows):
// run them one after another on a history that does not change meanwhile;
// a list run on another history derives it again.
func Kube() []Check {
	s := &kubeShared{}
	on := func(f func(*kubeModel, Config) Result) func(*history.History, Config) Result {
		return func(h *history.History, cfg Config) Result { return f(s.model(h), cfg) }
	}
	lazy := func(f func(*history.History, func() *kubeModel, Config) Result) func(*history.History, Config) Result {
		return func(h *history.History, cfg Config) Result { return f(h, func() *kubeModel { return s.model(h) }, cfg) }
	}
	return []Check{
		{Name: NameKubeRVFormat, Run: CheckKubeRVFormat},
		{Name: NameKubeRVOrder, Run: CheckKubeRVOrder},
		{Name: NameKubeWatchOrdered, Run: on(checkKubeWatchOrdered)},
		{Name: NameKubeWatchFromRV, Run: on(checkKubeWatchFromRV)},
		{Name: NameKubeWatchAgreement, Run: on(checkKubeWatchAgreement)},
		{Name: NameKubeWatchResume, Run: on(checkKubeWatchResume)},
		{Name: NameKubeWatchExpired, Run: on(checkKubeWatchExpired)},
		{Name: NameKubeWatchInitialState, Run: on(checkKubeWatchInitialState)},
		{Name: NameKubeWatchSelector, Run: on(checkKubeWatchSelector)},
		{Name: NameKubeWatchDeletedRV, Run: on(checkKubeWatchDeletedRV)},
		{Name: NameKubeWatchTimeout, Run: CheckKubeWatchTimeout},
		{Name: NameKubeWatchlistInitial, Run: on(checkKubeWatchlistInitialEvents)},
		{Name: NameKubeWatchlistValidation, Run: CheckKubeWatchlistValidation},
		{Name: NameKubeConsistentRead, Run: on(checkKubeConsistentRead)},
		{Name: NameKubeListExact, Run: on(checkKubeListExact)},
		{Name: NameKubeListNotOlderThan, Run: on(checkKubeListNotOlderThan)},
		{Name: NameKubeFutureRV, Run: on(checkKubeFutureRV)},
		{Name: NameKubePagination, Run: on(checkKubePagination)},
		{Name: NameKubeContinueExpired, Run: CheckKubeContinueExpired},
		{Name: NameKubeOptimisticConcurrency, Run: on(checkKubeOptimisticConcurrency)},
		{Name: NameKubeLinearizable, Run: on(checkKubeLinearizable)},
		{Name: NameKubeBookmarks, Run: on(checkKubeBookmarks)},
		{Name: NameKubeStaleReadBound, Run: on(checkKubeStaleReadBound)},
		{Name: NameKubeCacheAgreesWithEtcd, Run: lazy(checkKubeCacheAgreesWithEtcd)},
		{Name: NameKubeRecovery, Run: lazy(checkKubeRecovery)},
		{Name: NameRunAvailability, Run: CheckRunAvailability},
	}
}

// kubeShared holds the model of the last history a Kube() list judged.
type kubeShared struct {
	mu sync.Mutex
	h  *history.History
	m  *kubeModel
}

func (s *kubeShared) model(h *history.History) *kubeModel {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h != h {
		s.h, s.m = h, buildKubeModel(h)
	}
	return s.m
}

// ForHistory returns the checks that judge h: the Kubernetes checks for a
// history of a Kubernetes target, every etcd check otherwise.
func ForHistory(h *history.History) []Check {
	if h.Meta.Target.Kind == "kube" {
		return Kube()
	}
	return All()
}

// parseRV reads a resourceVersion as kube/rv-format requires it: a
// positive decimal integer without leading zeros (the form
// k8s.io/apimachinery's resourceversion.CompareResourceVersion accepts).
// Integers too long for an int64 are well-formed but not comparable here.
func parseRV(s string) (int64, bool) {
	if !wellFormedRV(s) || len(s) > 18 {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func wellFormedRV(s string) bool {
	if s == "" || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// objRV is an object's RV, 0 when absent or not well-formed.
func objRV(o *history.Object) int64 {
	if o == nil {
		return 0
	}
	n, _ := parseRV(o.ResourceVersion)
	return n
}

// kevAt returns the evidence form of event i of watch w.
func kevAt(w *history.KubeWatchStream, i int) history.KubeEventAt {
	return history.KubeEventAt{Index: i, Event: w.Events[i]}
}

// kevText describes an event for messages: type, name, RV, value.
func kevText(e history.KubeEvent) string {
	switch {
	case e.Type == history.KubeError && e.Status != nil:
		return fmt.Sprintf("ERROR %d %s", e.Status.Code, e.Status.Reason)
	case e.Object == nil:
		return e.Type
	case e.Type == history.KubeBookmark:
		return fmt.Sprintf("BOOKMARK rv=%s", e.Object.ResourceVersion)
	}
	s := fmt.Sprintf("%s %s rv=%s", e.Type, e.Object.Name, e.Object.ResourceVersion)
	if e.Object.Value != "" {
		s += fmt.Sprintf(" value=%q", e.Object.Value)
	}
	return s
}

// statusText describes a Status answer.
func statusText(s *history.KubeStatus) string {
	if s == nil {
		return "no status"
	}
	if s.Reason != "" {
		return fmt.Sprintf("%d %s", s.Code, s.Reason)
	}
	return fmt.Sprint(s.Code)
}

// opText describes an operation briefly: id, client, verb and name.
func opText(o *history.KubeOperation) string {
	s := fmt.Sprintf("operation %d (client %d, %s", o.ID, o.Client, o.Request.Verb)
	if n := kopName(o); n != "" {
		s += " " + n
	}
	return s + ")"
}

// kopName is the object an operation is about ("" for a list).
func kopName(o *history.KubeOperation) string {
	if o.Request.Name != "" {
		return o.Request.Name
	}
	if o.Request.Object != nil {
		return o.Request.Object.Name
	}
	return ""
}

// isExpired reports a 410 answer.
func isExpired(s *history.KubeStatus) bool { return s != nil && s.Code == 410 }

// kubeSkipReason says why a Kubernetes check has nothing to judge.
func kubeSkipReason(h *history.History, what string) string {
	if len(h.KubeOps) == 0 && len(h.KubeWatches) == 0 {
		return "the history has no Kubernetes operation or watch"
	}
	return what
}

// joinWords joins with commas, for messages.
func joinWords(parts []string) string { return strings.Join(parts, ", ") }
