// Package kv holds the checks of the etcd KV API other than
// linearizability: revision monotonicity, serializable reads, compaction
// and end-of-run convergence of the members.
package kv

import "github.com/vigil-suite/vigil/checkers/check"

// Names of the checks of this package, as reports and result.json spell them.
const (
	NameCompaction        = "kv/compaction"
	NameConvergence       = "kv/convergence"
	NameRevisionMonotonic = "kv/revision-monotonic"
	NameSerializableSane  = "kv/serializable-sane"
)

// Guarantees, one sentinel per check; a Violation wraps the one it breaks.
var (
	ErrRevisionMonotonic = check.Guarantee(NameRevisionMonotonic, "the store revision never decreases in what one "+
		"client observes over time, and every committed write increases it by exactly one per txn")
	ErrSerializableSane = check.Guarantee(NameSerializableSane, "serializable reads may be stale, but never return a "+
		"value that was never written, never a revision above the store's, and never go backwards on one member session")
	ErrCompaction = check.Guarantee(NameCompaction, "a read at a compacted revision fails with ErrCompacted; "+
		"a read at a future revision fails, it never returns data")
	ErrConvergence = check.Guarantee(NameConvergence, "at the end, with faults healed, every member has the same "+
		"revision, compact revision and HashKV")
)

// Checks returns the KV checks in report order.
func Checks() []check.Check {
	return []check.Check{
		{Name: NameRevisionMonotonic, Guarantee: ErrRevisionMonotonic, Severity: check.Order, Run: CheckRevisionMonotonic},
		{Name: NameSerializableSane, Guarantee: ErrSerializableSane, Severity: check.Data, Run: CheckSerializableSane},
		{Name: NameCompaction, Guarantee: ErrCompaction, Severity: check.Data, Run: CheckCompaction},
		{Name: NameConvergence, Guarantee: ErrConvergence, Severity: check.Data, Run: CheckConvergence},
	}
}
