package kube

import (
	"fmt"
	"strings"
	"sync"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// The Kubernetes checks (docs/checks.md) judge the Kubernetes side of
// a history: the calls to one namespaced resource (history.KubeOps) and
// the watches of it (history.KubeWatches). A resourceVersion (RV) is the
// etcd revision of the change that made an object's state, so the RVs of
// one resource have gaps (etcd holds other resources too) and no check
// assumes +1 steps.

// Checks returns every Kubernetes check, in report order (the SHOULD
// lines last). The checks of one returned list share the model they
// derive from a history (the objects' timelines, the watches' windows):
// run them one after another on a history that does not change meanwhile;
// a list run on another history derives it again.
func Checks() []check.Check {
	s := &kubeShared{}
	on := func(f func(*kubeModel, check.Config) check.Result) func(*history.History, check.Config) check.Result {
		return func(h *history.History, cfg check.Config) check.Result { return f(s.model(h), cfg) }
	}
	lazy := func(f func(*history.History, func() *kubeModel, check.Config) check.Result) func(*history.History, check.Config) check.Result {
		return func(h *history.History, cfg check.Config) check.Result {
			return f(h, func() *kubeModel { return s.model(h) }, cfg)
		}
	}
	return []check.Check{
		{Name: NameRVFormat, Guarantee: ErrRVFormat, Run: CheckRVFormat},
		{Name: NameRVOrder, Guarantee: ErrRVOrder, Run: CheckRVOrder},
		{Name: NameWatchOrdered, Guarantee: ErrWatchOrdered, Run: on(checkWatchOrdered)},
		{Name: NameWatchFromRV, Guarantee: ErrWatchFromRV, Run: on(checkWatchFromRV)},
		{Name: NameWatchAgreement, Guarantee: ErrWatchAgreement, Run: on(checkWatchAgreement)},
		{Name: NameWatchResume, Guarantee: ErrWatchResume, Run: on(checkWatchResume)},
		{Name: NameWatchExpired, Guarantee: ErrWatchExpired, Run: on(checkWatchExpired)},
		{Name: NameWatchInitialState, Guarantee: ErrWatchInitialState, Run: on(checkWatchInitialState)},
		{Name: NameWatchSelector, Guarantee: ErrWatchSelector, Run: on(checkWatchSelector)},
		{Name: NameWatchDeletedRV, Guarantee: ErrWatchDeletedRV, Run: on(checkWatchDeletedRV)},
		{Name: NameWatchTimeout, Guarantee: ErrWatchTimeout, Run: CheckWatchTimeout},
		{Name: NameWatchlistInitial, Guarantee: ErrWatchlistInitialEvents, Run: on(checkWatchlistInitialEvents)},
		{Name: NameWatchlistValidation, Guarantee: ErrWatchlistValidation, Run: CheckWatchlistValidation},
		{Name: NameConsistentRead, Guarantee: ErrConsistentRead, Run: on(checkConsistentRead)},
		{Name: NameListExact, Guarantee: ErrListExact, Run: on(checkListExact)},
		{Name: NameListNotOlderThan, Guarantee: ErrListNotOlderThan, Run: on(checkListNotOlderThan)},
		{Name: NameFutureRV, Guarantee: ErrFutureRV, Run: on(checkFutureRV)},
		{Name: NamePagination, Guarantee: ErrPagination, Run: on(checkPagination)},
		{Name: NameContinueExpired, Guarantee: ErrContinueExpired, Run: CheckContinueExpired},
		{Name: NameOptimisticConcurrency, Guarantee: ErrOptimisticConcurrency, Run: on(checkOptimisticConcurrency)},
		{Name: NameLinearizable, Guarantee: ErrLinearizable, Run: on(checkLinearizable)},
		{Name: NameBookmarks, Guarantee: ErrBookmarks, Should: true, Run: on(checkBookmarks)},
		{Name: NameStaleReadBound, Guarantee: ErrStaleReadBound, Should: true, Run: on(checkStaleReadBound)},
		{Name: NameCacheAgreesWithEtcd, Guarantee: ErrCacheAgreesWithEtcd, Should: true, Run: lazy(checkCacheAgreesWithEtcd)},
		{Name: NameRecovery, Guarantee: ErrRecovery, Should: true, Run: lazy(checkRecovery)},
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

// objRV is an object's RV, 0 when absent or not well-formed.
func objRV(o *history.Object) int64 {
	if o == nil {
		return 0
	}
	n, _ := facts.ParseRV(o.ResourceVersion)
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
