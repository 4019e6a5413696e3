package grammar

import (
	"fmt"
	"slices"
	"strings"
)

// The workload shapes: each is one weighting of the same grammar. The
// names are the workload's (--workload).
const (
	ShapeDefault     = "default"
	ShapeWriteHeavy  = "write-heavy"
	ShapeChurn       = "churn"
	ShapeKubeLike    = "kube-like"
	ShapeDeleteHeavy = "delete-heavy"
	ShapeFutureWatch = "future-watch"
)

// Weights is one weighting of the grammar: for each field, the weight of
// each class (0: never drawn), with overrides for the requests inside a
// txn. Weights are relative within a field.
type Weights struct {
	Shape string
	w     [numFields][]int
	inTxn [numFields][]int // nil: as w
}

// weight is class c of field f's weight, inside a txn or not.
func (ws *Weights) weight(f, c int, inTxn bool) int {
	if inTxn && ws.inTxn[f] != nil {
		return ws.inTxn[f][c]
	}
	return ws.w[f][c]
}

// set gives field f's classes the weights named; the others get 0.
func (ws *Weights) set(f int, by map[string]int) {
	ws.w[f] = weights(f, by)
}

func (ws *Weights) setTxn(f int, by map[string]int) {
	ws.inTxn[f] = weights(f, by)
}

func weights(f int, by map[string]int) []int {
	out := make([]int, len(fields[f].classes))
	for cl, n := range by {
		out[class(f, cl)] = n
	}
	return out
}

// plain makes field f always its plainest class.
func (ws *Weights) plain(f int) { ws.set(f, map[string]int{fields[f].plain: 1}) }

// For is the weighting of a workload shape ("" is the default).
func For(shape string) (*Weights, error) {
	switch shape {
	case "", ShapeDefault:
		return defaultWeights(), nil
	case ShapeFutureWatch:
		ws := defaultWeights()
		ws.Shape = shape
		ws.set(fWatchStart, map[string]int{"future": 1})
		return ws, nil
	case ShapeWriteHeavy:
		return simple(shape, map[string]int{KindPut: 1}), nil
	case ShapeChurn:
		return simple(shape, map[string]int{KindPut: 1, KindDelete: 1}), nil
	case ShapeDeleteHeavy:
		ws := simple(shape, map[string]int{KindDelete: 45, KindPut: 30, KindRange: 25})
		ws.set(fRangeSpan, map[string]int{"key": 15, "prefix": 10})
		return ws, nil
	case ShapeKubeLike:
		return kubeLike(), nil
	}
	return nil, fmt.Errorf("unknown workload %q; workloads: %s", shape,
		strings.Join([]string{ShapeDefault, ShapeWriteHeavy, ShapeChurn, ShapeKubeLike, ShapeDeleteHeavy, ShapeFutureWatch}, ", "))
}

// MustFor is For of a shape known to exist.
func MustFor(shape string) *Weights {
	ws, err := For(shape)
	if err != nil {
		panic(err)
	}
	return ws
}

// defaultWeights reach every production: the shares of the request kinds
// keep close to the mix of forms the workload sent before the grammar
// (reads 38%, puts 22%, deletes 8%, txns 27%), so that the rate a client
// reaches and what the checks get to judge stay alike; the rarer classes
// of each field get a few percent each.
func defaultWeights() *Weights {
	ws := &Weights{Shape: ShapeDefault}
	ws.set(fRequest, map[string]int{KindRange: 380, KindPut: 220, KindDelete: 80, KindTxn: 270, KindHashKV: 10,
		KindLeaseGrant: 12, KindLeaseRevoke: 10, KindLeaseKeepAlive: 8, KindLeaseTTL: 8})

	ws.set(fRangeSpan, map[string]int{"key": 65, "interval": 8, "from": 7, "prefix": 15, "empty": 5})
	ws.setTxn(fRangeSpan, map[string]int{"key": 80, "interval": 5, "from": 5, "prefix": 5, "empty": 5})
	ws.set(fRangeKey, map[string]int{"any": 40, "present": 20, "absent": 10, "deleted": 8, "leased": 8, "boundary": 6})
	ws.setTxn(fRangeKey, map[string]int{"any": 15, "present": 6, "absent": 4, "deleted": 3, "leased": 3, "boundary": 2, "focus": 60})
	ws.set(fRangeRevision, map[string]int{"0": 80, "head": 5, "past": 7, "compact": 2, "below-compact": 2, "future": 4})
	// Inside a txn a read at a compacted or future revision fails the
	// whole txn: rarer there.
	ws.setTxn(fRangeRevision, map[string]int{"0": 90, "head": 3, "past": 4, "compact": 1, "below-compact": 1, "future": 1})
	ws.set(fRangeLimit, map[string]int{"0": 75, "1": 8, "below": 6, "at": 6, "above": 5})
	sorts := map[string]int{"none": 72}
	for _, s := range fields[fRangeSort].classes[1:] {
		sorts[s] = 2
	}
	ws.set(fRangeSort, sorts)
	ws.set(fRangeSerializable, map[string]int{"false": 80, "true": 20})
	ws.set(fRangeKeysOnly, map[string]int{"false": 90, "true": 10})
	ws.set(fRangeCountOnly, map[string]int{"false": 92, "true": 8})
	for _, f := range []int{fRangeMinMod, fRangeMaxMod, fRangeMinCreate, fRangeMaxCreate} {
		ws.set(f, map[string]int{"0": 96, "past": 2, "head": 1, "future": 1})
	}

	ws.set(fPutKey, map[string]int{"any": 45, "present": 15, "absent": 10, "deleted": 10, "leased": 8, "boundary": 4})
	ws.setTxn(fPutKey, map[string]int{"any": 20, "present": 5, "absent": 4, "deleted": 4, "leased": 3, "boundary": 2, "focus": 60})
	ws.set(fPutPrevKV, map[string]int{"false": 75, "true": 25})
	ws.set(fPutLease, map[string]int{"0": 75, "live": 20, "revoked": 3, "never": 2})
	ws.set(fPutIgnoreValue, map[string]int{"false": 96, "true": 4})
	ws.set(fPutIgnoreLease, map[string]int{"false": 96, "true": 4})

	ws.set(fDeleteSpan, map[string]int{"key": 85, "interval": 6, "from": 3, "prefix": 1, "empty": 5})
	ws.set(fDeleteKey, map[string]int{"any": 45, "present": 20, "absent": 10, "deleted": 8, "leased": 10, "boundary": 7})
	ws.setTxn(fDeleteKey, map[string]int{"any": 20, "present": 6, "absent": 4, "deleted": 3, "leased": 5, "boundary": 2, "focus": 60})
	ws.set(fDeletePrevKV, map[string]int{"false": 70, "true": 30})

	ws.set(fTxnCompares, map[string]int{"0": 8, "1": 60, "2": 20, "many": 12})
	ws.set(fTxnThen, map[string]int{"0": 5, "1": 62, "2": 20, "many": 12, "max": 1})
	ws.set(fTxnElse, map[string]int{"0": 45, "1": 42, "2": 9, "many": 4})
	ws.set(fTxnOp, map[string]int{"then/range": 32, "then/put": 46, "then/delete": 15, "then/txn": 7,
		"else/range": 65, "else/put": 18, "else/delete": 10, "else/txn": 7})
	ws.set(fTxnDepth, map[string]int{"1": 1, "2": 1, "3": 1})
	ws.set(fTxnWrites, map[string]int{"distinct": 98, "duplicate": 1, "overlap": 1})

	tests := map[string]int{"mod/=": 25, "version/=": 6, "create/=": 6, "value/=": 6, "lease/=": 4}
	for _, t := range fields[fCompareTest].classes {
		if tests[t] == 0 {
			tests[t] = 3
		}
	}
	ws.set(fCompareTest, tests)
	ws.set(fCompareSpan, map[string]int{"key": 85, "interval": 6, "from": 5, "prefix": 4})
	ws.set(fCompareKey, map[string]int{"any": 20, "present": 8, "absent": 6, "deleted": 2, "leased": 2, "boundary": 2, "focus": 60})
	ws.set(fCompareOperand, map[string]int{"known": 70, "zero": 15, "other": 15})

	ws.set(fHashKVRevision, map[string]int{"0": 30, "head": 15, "past": 25, "compact": 10, "below-compact": 10, "future": 10})
	ws.set(fCompactRevision, map[string]int{"past": 80, "head": 20, "compact": 40, "below-compact": 30, "future": 30})
	ws.set(fCompactPhysical, map[string]int{"false": 1, "true": 1})
	ws.set(fGrantID, map[string]int{"auto": 70, "chosen": 30})
	ws.set(fRevokeLease, map[string]int{"live": 50, "attached": 30, "revoked": 12, "never": 8})
	ws.set(fKeepAliveLease, map[string]int{"live": 80, "revoked": 12, "never": 8})
	ws.set(fTTLLease, map[string]int{"live": 80, "revoked": 12, "never": 8})
	ws.set(fTTLKeys, map[string]int{"false": 1, "true": 1})

	ws.set(fWatchStart, map[string]int{"0": 3, "head": 2, "past": 2, "compact": 2, "below-compact": 1, "future": 2, "resume": 1})
	ws.set(fWatchSpan, map[string]int{"key": 1, "prefix": 4})
	ws.set(fWatchPrevKV, map[string]int{"false": 1, "true": 1})
	ws.set(fWatchProgress, map[string]int{"false": 2, "true": 1})
	ws.set(fWatchFilter, map[string]int{"none": 4, "no_put": 1, "no_delete": 1})
	ws.set(fWatchFragment, map[string]int{"false": 5, "true": 1})
	return ws
}

// simple is a shape of plain single-key requests of the kinds given, with
// the compactor's plain compactions and the default watchers.
func simple(shape string, kinds map[string]int) *Weights {
	ws := defaultWeights()
	ws.Shape = shape
	ws.set(fRequest, kinds)
	for f := fRangeSpan; f <= fTxnWrites; f++ {
		ws.plain(f)
		ws.inTxn[f] = nil
	}
	for _, f := range []int{fRangeKey, fPutKey, fDeleteKey} {
		ws.set(f, map[string]int{"any": 1})
	}
	ws.set(fCompactRevision, map[string]int{"past": 1})
	ws.plain(fCompactPhysical)
	return ws
}

// kubeLike is what the Kubernetes storage layer sends: creates as
// txn(mod == 0) put, updates and deletes as txn(mod == R) with a read of
// the key when the compare fails, gets, and list pages (a range from some
// key with a limit, at a pinned recent revision). Each field is drawn on
// its own, so a create may come with a read in its else branch: a form
// the storage layer does not send, served alike.
func kubeLike() *Weights {
	ws := simple(ShapeKubeLike, map[string]int{KindTxn: 65, KindRange: 35})
	ws.set(fRangeSpan, map[string]int{"key": 15, "from": 20})
	ws.setTxn(fRangeSpan, map[string]int{"key": 1})
	ws.setTxn(fRangeKey, map[string]int{"focus": 1})
	ws.set(fRangeLimit, map[string]int{"0": 15, "1": 5, "below": 5, "at": 5, "above": 5})
	ws.setTxn(fRangeLimit, map[string]int{"0": 1})
	ws.set(fRangeRevision, map[string]int{"0": 15, "head": 12, "past": 8})
	ws.setTxn(fRangeRevision, map[string]int{"0": 1})
	ws.set(fPutKey, map[string]int{"focus": 1})
	ws.set(fDeleteKey, map[string]int{"focus": 1})
	ws.set(fTxnCompares, map[string]int{"1": 1})
	ws.set(fTxnThen, map[string]int{"1": 1})
	ws.set(fTxnElse, map[string]int{"0": 25, "1": 75})
	ws.set(fTxnOp, map[string]int{"then/put": 55, "then/delete": 10, "else/range": 1})
	ws.set(fTxnDepth, map[string]int{"1": 1})
	ws.set(fCompareTest, map[string]int{"mod/=": 1})
	ws.set(fCompareSpan, map[string]int{"key": 1})
	ws.set(fCompareKey, map[string]int{"focus": 1})
	ws.set(fCompareOperand, map[string]int{"known": 4, "zero": 1})
	return ws
}

// Without is this weighting less the productions refused names: their
// weight is 0, and so is that of every request one of whose fields has no
// class left (kine refuses every class of the keep-alive's lease: no
// keep-alive is drawn), and of the classes that need a refused request
// (a revoked lease needs revokes).
func (ws *Weights) Without(refused func(production string) bool) *Weights {
	out := &Weights{Shape: ws.Shape}
	for f := range fields {
		out.w[f] = slices.Clone(ws.w[f])
		out.inTxn[f] = slices.Clone(ws.inTxn[f])
		for c := range fields[f].classes {
			if refused(tagNames[tagOf(f, c)]) {
				out.w[f][c] = 0
				if out.inTxn[f] != nil {
					out.inTxn[f][c] = 0
				}
			}
		}
	}
	kind := func(k string) int { return class(fRequest, k) }
	zero := func(f, c int) {
		out.w[f][c] = 0
		if out.inTxn[f] != nil {
			out.inTxn[f][c] = 0
		}
	}
	for range 3 { // to a fixed point: a request gone can empty another's field
		for f := range fields {
			if fields[f].derived || fields[f].prod == "request" || fields[f].prod == "compact" || fields[f].prod == "watch" {
				continue
			}
			total := 0
			for c := range fields[f].classes {
				total += out.w[f][c]
				if out.inTxn[f] != nil {
					total += out.inTxn[f][c]
				}
			}
			if total > 0 {
				continue
			}
			switch p := fields[f].prod; p {
			case "txn", "compare":
				zero(fRequest, kind(KindTxn))
			case KindRange, KindPut, KindDelete:
				zero(fRequest, kind(p))
				for _, b := range []string{"then/", "else/"} {
					zero(fTxnOp, class(fTxnOp, b+p))
				}
			default:
				zero(fRequest, kind(p))
			}
		}
		if out.w[fRequest][kind(KindLeaseRevoke)] == 0 {
			for _, f := range []int{fPutLease, fRevokeLease, fKeepAliveLease, fTTLLease} {
				zero(f, class(f, "revoked"))
			}
		}
		if out.w[fRequest][kind(KindTxn)] == 0 {
			for c := range fields[fTxnOp].classes {
				zero(fTxnOp, c)
			}
		}
	}
	return out
}

// maxDepth bounds how deep txns nest: a txn in a txn in a txn.
const maxDepth = 3

// Reachable lists the productions this weighting can draw: each class of
// weight above 0 (a field used at all), the depths nested txns reach.
func (ws *Weights) Reachable() []string {
	var out []string
	for t := range tagNames {
		if ws.reachable(Tag(t)) {
			out = append(out, tagNames[t])
		}
	}
	return out
}

func (ws *Weights) reachable(t Tag) bool {
	f := tagField[t]
	c := int(t - tagBase[f])
	kind := func(k string) bool { return ws.w[fRequest][class(fRequest, k)] > 0 }
	txn := kind(KindTxn)
	nested := ws.w[fTxnOp][class(fTxnOp, "then/txn")]+ws.w[fTxnOp][class(fTxnOp, "else/txn")] > 0
	if f == fTxnDepth {
		return txn && (c == 0 || nested)
	}
	if ws.w[f][c] == 0 && (ws.inTxn[f] == nil || ws.inTxn[f][c] == 0) {
		return false
	}
	if c == class(fRangeKey, "focus") && (f == fRangeKey || f == fPutKey || f == fDeleteKey || f == fCompareKey) && !txn {
		return false // a txn's own key
	}
	switch fields[f].prod {
	case "request", "compact", "watch":
		return true
	case "txn", "compare":
		return txn
	case KindRange:
		return kind(KindRange) || txn && ws.w[fTxnOp][class(fTxnOp, "then/range")]+ws.w[fTxnOp][class(fTxnOp, "else/range")] > 0
	case KindPut:
		return kind(KindPut) || txn && ws.w[fTxnOp][class(fTxnOp, "then/put")]+ws.w[fTxnOp][class(fTxnOp, "else/put")] > 0
	case KindDelete:
		return kind(KindDelete) || txn && ws.w[fTxnOp][class(fTxnOp, "then/delete")]+ws.w[fTxnOp][class(fTxnOp, "else/delete")] > 0
	}
	return kind(fields[f].prod)
}
