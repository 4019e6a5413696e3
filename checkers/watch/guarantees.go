// Package watch holds the checks of etcd watches: ordered, unique,
// reliable, filtered, atomic, resumable, bookmarkable, prev_kv, is-create,
// agreement between watches, cancel reasons and liveness.
package watch

import "github.com/vigil-suite/vigil/checkers/check"

// Names of the checks of this package, as reports and result.json spell them.
const (
	NameAgreement           = "watch/agreement"
	NameAtomic              = "watch/atomic"
	NameBookmarkable        = "watch/bookmarkable"
	NameCancelReason        = "watch/cancel-reason"
	NameFilter              = "watch/filter"
	NameIsCreate            = "watch/is-create"
	NameLiveness            = "watch/liveness"
	NameOrdered             = "watch/ordered"
	NamePrevKV              = "watch/prev-kv"
	NamePrevKVAtCreation    = "watch/prev-kv-at-creation"
	NameProgressBeforeStart = "watch/progress-before-start"
	NameReliable            = "watch/reliable"
	NameResumable           = "watch/resumable"
	NameUnique              = "watch/unique"
)

// Guarantees, one sentinel per check; a Violation wraps the one it breaks.
var (
	ErrOrdered  = check.Guarantee(NameOrdered, "event revisions never decrease within a watch")
	ErrUnique   = check.Guarantee(NameUnique, "no (revision, key) is delivered twice on one watch")
	ErrReliable = check.Guarantee(NameReliable, "between the first and last revision a watch observed, "+
		"it delivered every committed change in its range")
	ErrLiveness = check.Guarantee(NameLiveness, "every watch open at the final write reaches the final revision")
	ErrFilter   = check.Guarantee(NameFilter, "every event is inside the watched key or prefix and passes "+
		"the requested event-type filters")
	ErrAtomic    = check.Guarantee(NameAtomic, "all events of one revision (one txn) arrive in one response")
	ErrResumable = check.Guarantee(NameResumable, "a watch started at revision R delivers first the first "+
		"matching change at revision >= R; a watch started below the compact revision fails with ErrCompacted "+
		"carrying the compact revision, and is never silently started later")
	ErrBookmarkable = check.Guarantee(NameBookmarkable, "after a progress notification at revision P no event "+
		"with revision <= P arrives; progress revisions never decrease and are >= the last event's")
	ErrPrevKV = check.Guarantee(NamePrevKV, "when prev_kv was requested, it equals the key's value just "+
		"before the event (it may be absent only when that revision is compacted)")
	ErrPrevKVAtCreation = check.Guarantee(NamePrevKVAtCreation, "prev_kv is not missing from the first "+
		"events of a new watch (etcd's watch server can send a change that races the creation without it)")
	ErrIsCreate  = check.Guarantee(NameIsCreate, "an event is a create exactly when the key did not exist before it")
	ErrAgreement = check.Guarantee(NameAgreement, "watches whose ranges and revisions overlap saw the same "+
		"events in the same order")
	ErrCancelReason = check.Guarantee(NameCancelReason, "a watch ended by the server carries a cancel reason "+
		"or an error; a stream never just stops while the client still waits")
	ErrProgressBeforeStart = check.Guarantee(NameProgressBeforeStart, "a watch that asked to start at revision S "+
		"gets no progress notification below S-1 (etcd #20221)")
)

// Checks returns the watch checks in report order, the SHOULD lines last.
func Checks() []check.Check {
	return []check.Check{
		{Name: NameOrdered, Guarantee: ErrOrdered, Profiles: check.ForKubernetes, Severity: check.Order, Run: CheckOrdered, Evidence: watchEvents},
		{Name: NameUnique, Guarantee: ErrUnique, Profiles: check.ForKubernetes, Severity: check.Order, Run: CheckUnique, Evidence: watchEvents},
		{Name: NameReliable, Guarantee: ErrReliable, Profiles: check.ForKubernetes, Severity: check.Data, Run: CheckReliable, Evidence: observedRevisions},
		{Name: NameFilter, Guarantee: ErrFilter, Profiles: check.ForKubernetes, Severity: check.Data, Run: CheckFilter, Evidence: watchEvents},
		{Name: NameAtomic, Guarantee: ErrAtomic, Profiles: check.EtcdOnly, Severity: check.Order, Run: CheckAtomic, Evidence: multiKeyTxns},
		{Name: NameResumable, Guarantee: ErrResumable, Profiles: check.ForKubernetes, Severity: check.Data, Run: CheckResumable, Evidence: startedWatches},
		{Name: NameBookmarkable, Guarantee: ErrBookmarkable, Profiles: check.ForKubernetes, Severity: check.Order, Run: CheckBookmarkable, Evidence: progressAnswers},
		{Name: NamePrevKV, Guarantee: ErrPrevKV, Profiles: check.ForKubernetes, Severity: check.Data, Run: CheckPrevKV, Evidence: prevKVEvents},
		{Name: NameIsCreate, Guarantee: ErrIsCreate, Profiles: check.ForKubernetes, Severity: check.Order, Run: CheckIsCreate, Evidence: watchEvents},
		{Name: NameAgreement, Guarantee: ErrAgreement, Profiles: check.ForKubernetes, Severity: check.Data, Run: CheckAgreement, Evidence: comparedWatches},
		{Name: NameCancelReason, Guarantee: ErrCancelReason, Profiles: check.ForKubernetes, Severity: check.Liveness, Run: CheckCancelReason, Evidence: endedWatches},
		{Name: NameLiveness, Guarantee: ErrLiveness, Profiles: check.ForKubernetes, Severity: check.Liveness, Should: true, Run: CheckLiveness, Evidence: finalReach},
		{Name: NamePrevKVAtCreation, Guarantee: ErrPrevKVAtCreation, Profiles: check.ForKubernetes, Severity: check.Data, Should: true, Run: CheckPrevKVAtCreation, Evidence: prevKVEvents},
		{Name: NameProgressBeforeStart, Guarantee: ErrProgressBeforeStart, Profiles: check.EtcdOnly, Severity: check.Order, Should: true, Run: CheckProgressBeforeStart, Evidence: progressFromStart},
	}
}
