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
// lines last). Each builds the model of the history it is given (the
// objects' timelines, the watches' windows) for itself; ChecksOf prepares
// one model for all of them.
func Checks() []check.Check { return checks(nil) }

// ChecksOf returns the checks of Checks prepared for h: the model of h is
// built once, when the first check needs it, and every check judging h
// reads it. Given another history, a check builds that history's model.
func ChecksOf(h *history.History) []check.Check {
	return checks(&prepared{h: h, build: sync.OnceValue(func() *model.Model { return model.Build(h) })})
}

// prepared is the model of one history, built on first use.
type prepared struct {
	h     *history.History
	build func() *model.Model
}

// modelOf is the model of h: the prepared one, or one built now.
func (p *prepared) modelOf(h *history.History) *model.Model {
	if p != nil && p.h == h {
		return p.build()
	}
	return model.Build(h)
}

func checks(p *prepared) []check.Check {
	on := func(f func(*model.Model, check.Config) check.Result) func(*history.History, check.Config) check.Result {
		return func(h *history.History, cfg check.Config) check.Result { return f(p.modelOf(h), cfg) }
	}
	lazy := func(f func(*history.History, func() *model.Model, check.Config) check.Result) func(*history.History, check.Config) check.Result {
		return func(h *history.History, cfg check.Config) check.Result {
			return f(h, func() *model.Model { return p.modelOf(h) }, cfg)
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

// kubeSkipReason says why a Kubernetes check has nothing to judge.
func kubeSkipReason(h *history.History, what string) string {
	if len(h.KubeOps) == 0 && len(h.KubeWatches) == 0 {
		return "the history has no Kubernetes operation or watch"
	}
	return what
}
