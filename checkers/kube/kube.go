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
