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
	// withModel gives an evidence function the model its check reads.
	withModel := func(f func(*history.History, *model.Model) check.Evidence) check.Evidencer {
		return func(h *history.History) check.Evidence { return f(h, p.modelOf(h)) }
	}
	return []check.Check{
		{Name: NameRVFormat, Guarantee: ErrRVFormat, Profiles: check.ForKubernetes, Severity: check.Order, Run: CheckRVFormat,
			Evidence: evRVFormat},
		{Name: NameRVOrder, Guarantee: ErrRVOrder, Profiles: check.ForKubernetes, Severity: check.Order, Run: CheckRVOrder,
			Evidence: evRVOrder},
		{Name: NameWatchOrdered, Guarantee: ErrWatchOrdered, Profiles: check.ForKubernetes, Severity: check.Order, Run: on(checkWatchOrdered),
			Evidence: withModel(evWatchOrdered)},
		{Name: NameWatchFromRV, Guarantee: ErrWatchFromRV, Profiles: check.ForKubernetes, Severity: check.Data, Run: on(checkWatchFromRV),
			Evidence: withModel(evWatchFromRV)},
		{Name: NameWatchAgreement, Guarantee: ErrWatchAgreement, Profiles: check.ForKubernetes, Severity: check.Data, Run: on(checkWatchAgreement),
			Evidence: withModel(evWatchAgreement)},
		{Name: NameWatchResume, Guarantee: ErrWatchResume, Profiles: check.ForKubernetes, Severity: check.Data, Run: on(checkWatchResume),
			Evidence: withModel(evWatchResume)},
		{Name: NameWatchExpired, Guarantee: ErrWatchExpired, Profiles: check.ForKubernetes, Severity: check.Order, Run: on(checkWatchExpired),
			Evidence: withModel(evWatchExpired)},
		{Name: NameWatchInitialState, Guarantee: ErrWatchInitialState, Profiles: check.ForKubernetes, Severity: check.Data, Run: on(checkWatchInitialState),
			Evidence: withModel(evWatchInitialState)},
		{Name: NameWatchSelector, Guarantee: ErrWatchSelector, Profiles: check.ForKubernetes, Severity: check.Data, Run: on(checkWatchSelector),
			Evidence: withModel(evWatchSelector)},
		{Name: NameWatchDeletedRV, Guarantee: ErrWatchDeletedRV, Profiles: check.ForKubernetes, Severity: check.Order, Run: on(checkWatchDeletedRV),
			Evidence: withModel(evWatchDeletedRV)},
		{Name: NameWatchTimeout, Guarantee: ErrWatchTimeout, Profiles: check.ForKubernetes, Severity: check.Liveness, Run: CheckWatchTimeout,
			Evidence: evWatchTimeout},
		{Name: NameWatchlistInitial, Guarantee: ErrWatchlistInitialEvents, Profiles: check.ForKubernetes, Severity: check.Data, Run: on(checkWatchlistInitialEvents),
			Evidence: withModel(evWatchlistInitial)},
		{Name: NameWatchlistValidation, Guarantee: ErrWatchlistValidation, Profiles: check.ForKubernetes, Severity: check.Order, Run: CheckWatchlistValidation,
			Evidence: evWatchlistValidation},
		{Name: NameConsistentRead, Guarantee: ErrConsistentRead, Profiles: check.ForKubernetes, Severity: check.Data, Run: on(checkConsistentRead),
			Evidence: evConsistentRead},
		{Name: NameListExact, Guarantee: ErrListExact, Profiles: check.ForKubernetes, Severity: check.Data, Run: on(checkListExact),
			Evidence: evListExact},
		{Name: NameListNotOlderThan, Guarantee: ErrListNotOlderThan, Profiles: check.ForKubernetes, Severity: check.Data, Run: on(checkListNotOlderThan),
			Evidence: evListNotOlderThan},
		{Name: NameFutureRV, Guarantee: ErrFutureRV, Profiles: check.ForKubernetes, Severity: check.Data, Run: on(checkFutureRV),
			Evidence: withModel(evFutureRV)},
		{Name: NamePagination, Guarantee: ErrPagination, Profiles: check.ForKubernetes, Severity: check.Data, Run: on(checkPagination),
			Evidence: evPagination},
		{Name: NameContinueExpired, Guarantee: ErrContinueExpired, Profiles: check.ForKubernetes, Severity: check.Order, Run: CheckContinueExpired,
			Evidence: evContinueExpired},
		{Name: NameOptimisticConcurrency, Guarantee: ErrOptimisticConcurrency, Profiles: check.ForKubernetes, Severity: check.Data, Run: on(checkOptimisticConcurrency),
			Evidence: withModel(evOptimisticConcurrency)},
		{Name: NameWritePaths, Guarantee: ErrWritePaths, Profiles: check.ForKubernetes, Severity: check.Data, Run: on(checkWritePaths),
			Evidence: evWritePaths},
		{Name: NameLinearizable, Guarantee: ErrLinearizable, Profiles: check.ForKubernetes, Severity: check.Data, Run: on(checkLinearizable),
			Evidence: withModel(evLinearizable)},
		{Name: NameBookmarks, Guarantee: ErrBookmarks, Profiles: check.ForKubernetes, Severity: check.Order, Should: true, Run: on(checkBookmarks),
			Evidence: withModel(evBookmarks)},
		{Name: NameStaleReadBound, Guarantee: ErrStaleReadBound, Profiles: check.ForKubernetes, Severity: check.Data, Should: true, Run: on(checkStaleReadBound),
			Evidence: evStaleReadBound},
		{Name: NameCacheAgreesWithEtcd, Guarantee: ErrCacheAgreesWithEtcd, Profiles: check.ForKubernetes, Severity: check.Data, Should: true, Run: lazy(checkCacheAgreesWithEtcd),
			Evidence: evCacheAgreesWithEtcd},
		{Name: NameRecovery, Guarantee: ErrRecovery, Profiles: check.ForKubernetes, Severity: check.Liveness, Should: true, Run: lazy(checkRecovery),
			Evidence: withModel(evRecovery)},
	}
}

// kubeSkipReason says why a Kubernetes check has nothing to judge.
func kubeSkipReason(h *history.History, what string) string {
	if len(h.KubeOps) == 0 && len(h.KubeWatches) == 0 {
		return "the history has no Kubernetes operation or watch"
	}
	return what
}
