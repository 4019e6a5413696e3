// Package kube holds the Kubernetes checks: resourceVersions, list and
// watch semantics, pagination, optimistic concurrency, linearizability
// of the resource and the agreement of the watch cache with etcd, over a
// model of the objects' timelines built once per history.
package kube

import "github.com/vigil-suite/vigil/checkers/check"

// Names of the Kubernetes checks, as reports and result.json spell them.
const (
	NameRVFormat              = "kube/rv-format"
	NameRVOrder               = "kube/rv-order"
	NameWatchOrdered          = "kube/watch-ordered"
	NameWatchFromRV           = "kube/watch-from-rv"
	NameWatchAgreement        = "kube/watch-agreement"
	NameWatchResume           = "kube/watch-resume"
	NameWatchExpired          = "kube/watch-expired"
	NameWatchInitialState     = "kube/watch-initial-state"
	NameWatchSelector         = "kube/watch-selector"
	NameWatchDeletedRV        = "kube/watch-deleted-rv"
	NameWatchTimeout          = "kube/watch-timeout"
	NameWatchlistInitial      = "kube/watchlist-initial-events"
	NameWatchlistValidation   = "kube/watchlist-validation"
	NameConsistentRead        = "kube/consistent-read"
	NameListExact             = "kube/list-exact"
	NameListNotOlderThan      = "kube/list-not-older-than"
	NameFutureRV              = "kube/future-rv"
	NamePagination            = "kube/pagination"
	NameContinueExpired       = "kube/continue-expired"
	NameOptimisticConcurrency = "kube/optimistic-concurrency"
	NameLinearizable          = "kube/linearizable"
	NameBookmarks             = "kube/bookmarks"
	NameStaleReadBound        = "kube/stale-read-bound"
	NameCacheAgreesWithEtcd   = "kube/cache-agrees-with-etcd"
	NameRecovery              = "kube/recovery"
	NameWritePaths            = "kube/write-paths"
)

// Guarantees, one sentinel per check (docs/checks.md words each); a
// Violation wraps the one it breaks.
var (
	ErrRVFormat = check.Guarantee(NameRVFormat, "resourceVersions are positive decimal integers, "+
		"increasing within the resource type")
	ErrRVOrder      = check.Guarantee(NameRVOrder, "the order of resourceVersions matches the real-time order of writes")
	ErrWatchOrdered = check.Guarantee(NameWatchOrdered, "within a watch, non-BOOKMARK events have strictly increasing RVs")
	ErrWatchFromRV  = check.Guarantee(NameWatchFromRV, "a watch from N delivers every matching change with RV > N, "+
		"nothing at or below N, and no synthetic ADDED events")
	ErrWatchAgreement = check.Guarantee(NameWatchAgreement, "watches started at the same RV see identical sequences")
	ErrWatchResume    = check.Guarantee(NameWatchResume, "resuming from the last RV seen gives no gap and no duplicate, or a 410")
	ErrWatchExpired   = check.Guarantee(NameWatchExpired, "a watch from a compacted RV answers HTTP 200 with an ERROR "+
		"event (Status 410, reason Expired); nothing follows an ERROR event")
	ErrWatchInitialState = check.Guarantee(NameWatchInitialState, "a watch with RV unset or \"0\" starts with ADDED "+
		"events for one state of the collection; later events have RV above that state's")
	ErrWatchSelector = check.Guarantee(NameWatchSelector, "an object leaving the selector gives DELETED, one entering "+
		"gives ADDED, non-matching objects are silent")
	ErrWatchDeletedRV = check.Guarantee(NameWatchDeletedRV, "a DELETED event carries the object's last state with "+
		"RV = the deletion's RV")
	ErrWatchTimeout           = check.Guarantee(NameWatchTimeout, "a watch ends cleanly at its timeoutSeconds")
	ErrWatchlistInitialEvents = check.Guarantee(NameWatchlistInitial, "ADDED for the state, then exactly one "+
		"BOOKMARK annotated k8s.io/initial-events-end: \"true\" whose RV >= every item's and >= the requested RV, "+
		"then only later changes")
	ErrWatchlistValidation = check.Guarantee(NameWatchlistValidation, "sendInitialEvents without "+
		"resourceVersionMatch=NotOlderThan, resourceVersionMatch on a plain watch, or RV together with continue, answer 400")
	ErrConsistentRead = check.Guarantee(NameConsistentRead, "get/list with RV unset sees every write acknowledged "+
		"before the request started, on every API server replica")
	ErrListExact = check.Guarantee(NameListExact, "list with resourceVersionMatch=Exact and RV=N returns RV == N "+
		"and the state at N, or 410")
	ErrListNotOlderThan = check.Guarantee(NameListNotOlderThan, "list NotOlderThan N returns a list RV >= N")
	ErrFutureRV         = check.Guarantee(NameFutureRV, "a future RV answers 504 (ResourceVersionTooLarge) or "+
		"waits; never stale data")
	ErrPagination = check.Guarantee(NamePagination, "all pages carry the first page's RV; their union equals the "+
		"list at that RV; no duplicates; only an empty continue ends the list")
	ErrContinueExpired = check.Guarantee(NameContinueExpired, "an expired continue token answers 410 with a fresh "+
		"inconsistent token that resumes after the last key")
	ErrOptimisticConcurrency = check.Guarantee(NameOptimisticConcurrency, "an update with a stale RV or uid "+
		"precondition answers 409 Conflict; of N concurrent updates from one RV exactly one succeeds")
	ErrLinearizable = check.Guarantee(NameLinearizable, "creates, updates, deletes and consistent reads of the "+
		"resource form a linearizable history (RV as the revision)")
	ErrBookmarks = check.Guarantee(NameBookmarks, "bookmarks come only when allowed, carry only an RV >= the last "+
		"event's, and arrive periodically (about every minute) and shortly before the timeout")
	ErrStaleReadBound = check.Guarantee(NameStaleReadBound, "RV=\"0\" and NotOlderThan reads may be stale, never "+
		"older than the requested N")
	ErrCacheAgreesWithEtcd = check.Guarantee(NameCacheAgreesWithEtcd, "what the API server's watch cache serves "+
		"equals what etcd committed at the same revision")
	ErrWritePaths = check.Guarantee(NameWritePaths, "patches, apply, status writes, finalizers, dry runs, "+
		"delete-collection and generateName do what the API documents to the state they were applied to")
	ErrRecovery = check.Guarantee(NameRecovery, "after an API server restart, an etcd leader kill or a partition, "+
		"watches resume without loss or fail with 410/429, never silently")
)
