// Package kv holds the checks of the etcd KV API other than
// linearizability: revision monotonicity, serializable reads and the
// session guarantees a client expects of them, compaction, the members'
// agreement on every revision and their end-of-run convergence.
package kv

import "github.com/vigil-suite/vigil/checkers/check"

// Names of the checks of this package, as reports and result.json spell them.
const (
	NameCompaction        = "kv/compaction"
	NameConvergence       = "kv/convergence"
	NameMemberAgreement   = "kv/member-agreement"
	NameRevisionMonotonic = "kv/revision-monotonic"
	NameSerializableSane  = "kv/serializable-sane"
	NameReadYourWrites    = "kv/read-your-writes"
	NameMonotonicReads    = "kv/monotonic-reads"
)

// Guarantees, one sentinel per check; a Violation wraps the one it breaks.
var (
	ErrRevisionMonotonic = check.Guarantee(NameRevisionMonotonic, "the store revision never decreases in what one "+
		"client observes over time, and every committed write increases it by exactly one per txn")
	ErrSerializableSane = check.Guarantee(NameSerializableSane, "serializable reads may be stale, but never return a "+
		"value that was never written, never a revision above the store's, and never go backwards on one member session")
	ErrCompaction = check.Guarantee(NameCompaction, "a read at a compacted revision fails with ErrCompacted; "+
		"a read at a future revision fails, it never returns data")
	ErrReadYourWrites = check.Guarantee(NameReadYourWrites, "a client's serializable read after its own "+
		"acknowledged put of a key does not return that key older than the put (SHOULD: etcd keeps it on one member)")
	ErrMonotonicReads = check.Guarantee(NameMonotonicReads, "a client's serializable read does not return a key "+
		"older than an earlier read of the same client returned it (SHOULD: etcd keeps it on one member)")
	ErrMemberAgreement = check.Guarantee(NameMemberAgreement, "answers about one revision are the same on every member: "+
		"HashKV at a revision with the same compact revision, and reads of the same keys at a revision")
	ErrConvergence = check.Guarantee(NameConvergence, "at the end, with faults healed, every member has the same "+
		"revision, compact revision and HashKV")
)

// Checks returns the KV checks in report order, the SHOULD lines last.
func Checks() []check.Check {
	return []check.Check{
		{Name: NameRevisionMonotonic, Guarantee: ErrRevisionMonotonic, Profiles: check.ForKubernetes, Severity: check.Order, Run: CheckRevisionMonotonic, Evidence: linearizableOps},
		{Name: NameSerializableSane, Guarantee: ErrSerializableSane, Profiles: check.EtcdOnly, Severity: check.Data, Run: CheckSerializableSane, Evidence: serializableReads},
		{Name: NameCompaction, Guarantee: ErrCompaction, Profiles: check.ForKubernetes, Severity: check.Data, Run: CheckCompaction, Evidence: compactionOps},
		{Name: NameMemberAgreement, Guarantee: ErrMemberAgreement, Profiles: check.EtcdOnly, Severity: check.Data, Run: CheckMemberAgreement, Evidence: memberAnswers},
		{Name: NameConvergence, Guarantee: ErrConvergence, Profiles: check.EtcdOnly, Severity: check.Data, Run: CheckConvergence, Evidence: memberReads},
		{Name: NameReadYourWrites, Guarantee: ErrReadYourWrites, Profiles: check.EtcdOnly, Should: true, Severity: check.Data, Run: CheckReadYourWrites, Evidence: serializableReads},
		{Name: NameMonotonicReads, Guarantee: ErrMonotonicReads, Profiles: check.EtcdOnly, Should: true, Severity: check.Data, Run: CheckMonotonicReads, Evidence: serializableReads},
	}
}
