package kube

import (
	"sync"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/kube/model"
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
	on := func(f func(*model.Model, check.Config) check.Result) func(*history.History, check.Config) check.Result {
		return func(h *history.History, cfg check.Config) check.Result { return f(s.model(h), cfg) }
	}
	lazy := func(f func(*history.History, func() *model.Model, check.Config) check.Result) func(*history.History, check.Config) check.Result {
		return func(h *history.History, cfg check.Config) check.Result {
			return f(h, func() *model.Model { return s.model(h) }, cfg)
		}
	}
	return []check.Check{
		{Name: NameRVFormat, Guarantee: ErrRVFormat, Severity: check.Order, Run: CheckRVFormat},
		{Name: NameRVOrder, Guarantee: ErrRVOrder, Severity: check.Order, Run: CheckRVOrder},
		{Name: NameWatchOrdered, Guarantee: ErrWatchOrdered, Severity: check.Order, Run: on(checkWatchOrdered)},
		{Name: NameWatchFromRV, Guarantee: ErrWatchFromRV, Severity: check.Data, Run: on(checkWatchFromRV)},
		{Name: NameWatchAgreement, Guarantee: ErrWatchAgreement, Severity: check.Data, Run: on(checkWatchAgreement)},
		{Name: NameWatchResume, Guarantee: ErrWatchResume, Severity: check.Data, Run: on(checkWatchResume)},
		{Name: NameWatchExpired, Guarantee: ErrWatchExpired, Severity: check.Order, Run: on(checkWatchExpired)},
		{Name: NameWatchInitialState, Guarantee: ErrWatchInitialState, Severity: check.Data, Run: on(checkWatchInitialState)},
		{Name: NameWatchSelector, Guarantee: ErrWatchSelector, Severity: check.Data, Run: on(checkWatchSelector)},
		{Name: NameWatchDeletedRV, Guarantee: ErrWatchDeletedRV, Severity: check.Order, Run: on(checkWatchDeletedRV)},
		{Name: NameWatchTimeout, Guarantee: ErrWatchTimeout, Severity: check.Liveness, Run: CheckWatchTimeout},
		{Name: NameWatchlistInitial, Guarantee: ErrWatchlistInitialEvents, Severity: check.Data, Run: on(checkWatchlistInitialEvents)},
		{Name: NameWatchlistValidation, Guarantee: ErrWatchlistValidation, Severity: check.Order, Run: CheckWatchlistValidation},
		{Name: NameConsistentRead, Guarantee: ErrConsistentRead, Severity: check.Data, Run: on(checkConsistentRead)},
		{Name: NameListExact, Guarantee: ErrListExact, Severity: check.Data, Run: on(checkListExact)},
		{Name: NameListNotOlderThan, Guarantee: ErrListNotOlderThan, Severity: check.Data, Run: on(checkListNotOlderThan)},
		{Name: NameFutureRV, Guarantee: ErrFutureRV, Severity: check.Data, Run: on(checkFutureRV)},
		{Name: NamePagination, Guarantee: ErrPagination, Severity: check.Data, Run: on(checkPagination)},
		{Name: NameContinueExpired, Guarantee: ErrContinueExpired, Severity: check.Order, Run: CheckContinueExpired},
		{Name: NameOptimisticConcurrency, Guarantee: ErrOptimisticConcurrency, Severity: check.Data, Run: on(checkOptimisticConcurrency)},
		{Name: NameLinearizable, Guarantee: ErrLinearizable, Severity: check.Data, Run: on(checkLinearizable)},
		{Name: NameBookmarks, Guarantee: ErrBookmarks, Severity: check.Order, Should: true, Run: on(checkBookmarks)},
		{Name: NameStaleReadBound, Guarantee: ErrStaleReadBound, Severity: check.Data, Should: true, Run: on(checkStaleReadBound)},
		{Name: NameCacheAgreesWithEtcd, Guarantee: ErrCacheAgreesWithEtcd, Severity: check.Data, Should: true, Run: lazy(checkCacheAgreesWithEtcd)},
		{Name: NameRecovery, Guarantee: ErrRecovery, Severity: check.Liveness, Should: true, Run: lazy(checkRecovery)},
	}
}

// kubeShared holds the model of the last history a Kube() list judged.
type kubeShared struct {
	mu sync.Mutex
	h  *history.History
	m  *model.Model
}

func (s *kubeShared) model(h *history.History) *model.Model {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h != h {
		s.h, s.m = h, model.Build(h)
	}
	return s.m
}

// kubeSkipReason says why a Kubernetes check has nothing to judge.
func kubeSkipReason(h *history.History, what string) string {
	if len(h.KubeOps) == 0 && len(h.KubeWatches) == 0 {
		return "the history has no Kubernetes operation or watch"
	}
	return what
}
