package linearizable

import (
	"github.com/anishathalye/porcupine"

	"github.com/vigil-suite/vigil/history"
)

// searchSet is what one porcupine search gets: the operations of a window
// of the plan, the floating writes that could take one of its revisions,
// and the synthetic end of the window, all starting from start.
type searchSet struct {
	a, b  int32
	start kvState
	ops   []*linOp // indexed like pops
	pops  []porcupine.Operation
	cands []int32 // op indexes of the floating writes included
	// excluded counts floating writes left out because an earlier window
	// applied them.
	excluded int
	// needB is where the window must end to hold every flexible operation
	// that returned before a candidate was called, and the next read that
	// shows whole each key a candidate could write (within linVerifyReach);
	// open holds the keys whose next such read lies beyond that.
	needB int32
	open  map[int32]bool
	// touched holds every key an operation of the set reads, compares or
	// changes; compactions whether any of them depends on compactions.
	touched     map[int32]bool
	compactions bool
	// class numbers the fixed operations of the window in plan order, one
	// number per revision's write and one per revision's readers (-1 for
	// the others); size counts each class.
	class map[*linOp]int32
	size  []int32
}

func (set *searchSet) add(op *linOp, pop porcupine.Operation) {
	pop.Input, pop.ClientId = op, op.client
	set.ops = append(set.ops, op)
	set.pops = append(set.pops, pop)
}

// dependsOnCompaction reports whether an operation's verdict depends on the
// compaction revision.
func dependsOnCompaction(op *linOp) bool {
	return op.mode != modeEnd && (op.req.Kind == history.OpCompact || (op.req.Kind == history.OpRange && op.req.Revision > 0))
}

// searchOutcome is how one search ended.
type searchOutcome struct {
	ok, timedOut, exhausted bool
	order                   []int // a linearization (ok)
	info                    porcupine.LinearizationInfo
	limit                   int64
}

// winState is the state of a window's search: the store, and how far the
// search got through the window's fixed operations (see searchSet.class):
// every class before cls is done, and count operations of cls.
type winState struct {
	kv         kvState
	cls, count int32
}
