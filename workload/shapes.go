package workload

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// Workload shapes: the mix of KV requests the clients send and how the
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

// shapeRequest is the next request of a non-default shape; ok is false
// for the shapes whose KV mix is the default one.
func (w *Workload) shapeRequest(rng *rand.Rand, key, value string, modRev map[string]int64) (history.Request, bool) {
	switch w.cfg.Shape {
	case ShapeWriteHeavy:
		return history.Request{Kind: history.OpPut, Key: key, Value: value}, true
	case ShapeChurn:
		if rng.IntN(2) == 0 {
			return history.Request{Kind: history.OpDelete, Key: key}, true
		}
		return history.Request{Kind: history.OpPut, Key: key, Value: value}, true
	case ShapeDeleteHeavy:
		switch p := rng.IntN(100); {
		case p < 45:
			return history.Request{Kind: history.OpDelete, Key: key}, true
		case p < 75:
			return history.Request{Kind: history.OpPut, Key: key, Value: value}, true
		case p < 90:
			return history.Request{Kind: history.OpRange, Key: key}, true
		default:
			return history.Request{Kind: history.OpRange, Key: w.cfg.Prefix, End: prefixEnd(w.cfg.Prefix)}, true
		}
	case ShapeKubeLike:
		return w.kubeLikeRequest(rng, key, value, modRev), true
	}
	return history.Request{}, false
}

// kubeLikeRequest is one call of the Kubernetes storage layer's kind.
func (w *Workload) kubeLikeRequest(rng *rand.Rand, key, value string, modRev map[string]int64) history.Request {
	get := history.Request{Kind: history.OpRange, Key: key}
	rev, known := modRev[key]
	switch p := rng.IntN(100); {
	case p < 25 || !known && p < 50:
		// Create: only if the key does not exist; with no read in the
		// else branch, as the storage layer sends it.
		return history.Request{Kind: history.OpTxn,
			Compares: []history.Compare{{Key: key, Target: "mod", Result: "=", Int: 0}},
			Success:  []history.Request{{Kind: history.OpPut, Key: key, Value: value}}}
	case p < 55:
		// Update from the revision this client last saw.
		return history.Request{Kind: history.OpTxn,
			Compares: []history.Compare{{Key: key, Target: "mod", Result: "=", Int: rev}},
			Success:  []history.Request{{Kind: history.OpPut, Key: key, Value: value}}, Failure: []history.Request{get}}
	case p < 65:
		// Delete with a precondition on the revision.
		return history.Request{Kind: history.OpTxn,
			Compares: []history.Compare{{Key: key, Target: "mod", Result: "=", Int: rev}},
			Success:  []history.Request{{Kind: history.OpDelete, Key: key}}, Failure: []history.Request{get}}
	case p < 80:
		return get
	default:
		// A list page: from some key on, at a recent revision pinned as a
		// continue token pins it.
		from := w.key(rng.IntN(w.cfg.Keys))
		return history.Request{Kind: history.OpRange, Key: from, End: prefixEnd(w.cfg.Prefix),
			Limit: int64(1 + rng.IntN(4)), Revision: w.floor(w.Stats.StoreRevision.Load() - int64(rng.IntN(5)))}
	}
}
