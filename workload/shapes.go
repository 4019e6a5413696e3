package workload

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Workload shapes: each is one weighting of the grammar (package
// grammar's For): the mix of KV requests the clients send and how the
// watchers start. Known bugs hide behind particular loads (a crash under
// a write-heavy load, a compaction landing on a delete, a watch opened at
// a future revision), so a recipe picks the shape that reaches them.
const (
	// ShapeDefault: the mix every check is exercised by (reads, writes,
	// CAS txns, past and future reads).
	ShapeDefault = "default"
	// ShapeWriteHeavy: puts only.
	ShapeWriteHeavy = "write-heavy"
	// ShapeChurn: keys created and deleted over and over (half puts, half
	// deletes), so most writes are creates or deletes.
	ShapeChurn = "churn"
	// ShapeKubeLike: what the Kubernetes storage layer sends to etcd:
	// creates as txn(mod == 0) put, updates and deletes as txn(mod == R)
	// with a read of the key when the compare fails, gets, and list pages
	// (a range from some key with a limit, at a pinned recent revision).
	ShapeKubeLike = "kube-like"
	// ShapeDeleteHeavy: deletes outnumber puts, and compaction runs at
	// least every second, so compactions land on deleted keys.
	ShapeDeleteHeavy = "delete-heavy"
	// ShapeFutureWatch: the default mix, but every watcher opens (and
	// reopens) at a revision ahead of the store's.
	ShapeFutureWatch = "future-watch"
)

// Shapes lists every workload shape, the default first.
func Shapes() []string {
	return []string{ShapeDefault, ShapeWriteHeavy, ShapeChurn, ShapeKubeLike, ShapeDeleteHeavy, ShapeFutureWatch}
}

// deleteHeavyCompactEvery bounds the compaction period of delete-heavy.
const deleteHeavyCompactEvery = time.Second

func validShape(s string) error {
	if s == "" || slices.Contains(Shapes(), s) {
		return nil
	}
	return fmt.Errorf("unknown workload %q; workloads: %s", s, strings.Join(Shapes(), ", "))
}
