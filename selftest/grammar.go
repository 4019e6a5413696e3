package selftest

import (
	"fmt"
	"slices"

	"github.com/vigil-suite/vigil/checkers/linearizable"
	"github.com/vigil-suite/vigil/history"
)

// grammarKinds corrupt answers to requests of the grammar that only its
// fuller model judges: a nested txn, a sorted range, a count-only range, a
// put that keeps its value. A history recorded before the grammar has no
// place for them.
func grammarKinds() []Kind {
	return []Kind{
		{Name: "nested-txn-other-branch", Owner: linearizable.Name, sites: nestedTxns, apply: flipNested},
		{Name: "sorted-range-swap", Owner: linearizable.Name, sites: sortedRanges, apply: swapSorted},
		{Name: "count-only-miscount", Owner: linearizable.Name, sites: countOnly, apply: miscount},
		{Name: "kept-value-missing-key", Owner: linearizable.Name, sites: keptValuePuts, apply: missingKey},
	}
}

// nestedTxns are answered txns whose taken branch holds a txn with
// compares, answered itself: site.kv is its index in the branch.
func nestedTxns(h *history.History) []site {
	var out []site
	for i := range h.Operations {
		o := &h.Operations[i]
		if o.Failed() || o.Request.Kind != history.OpTxn {
			continue
		}
		br := o.Request.Branch(o.Response.Succeeded)
		for j := range br {
			if br[j].Kind == history.OpTxn && len(br[j].Compares) > 0 && j < len(o.Response.Responses) {
				out = append(out, site{op: i, kv: j})
			}
		}
	}
	return out
}

// flipNested answers the nested txn as if its compares had gone the
// other way (the responses of its branch left as they were).
func flipNested(h *history.History, s site) string {
	o := mutableOp(h, s.op)
	o.Response.Responses = slices.Clone(o.Response.Responses)
	in := &o.Response.Responses[s.kv]
	in.Succeeded = !in.Succeeded
	return fmt.Sprintf("operation %d: its nested txn %d answered succeeded=%v", o.ID, s.kv, in.Succeeded)
}

// sortedRanges are answered ranges at the current revision sorted by
// something else than the key, with two neighbours that differ on it.
func sortedRanges(h *history.History) []site {
	var out []site
	for i := range h.Operations {
		o := &h.Operations[i]
		r := &o.Request
		if o.Failed() || r.Kind != history.OpRange || r.Serializable || r.Revision != 0 || r.KeysOnly && r.SortTarget == history.SortByValue {
			continue
		}
		if r.SortTarget == "" || r.SortTarget == history.SortByKey {
			continue
		}
		kvs := o.Response.KVs
		for k := 1; k < len(kvs); k++ {
			if sortKey(kvs[k-1], r.SortTarget) != sortKey(kvs[k], r.SortTarget) {
				out = append(out, site{op: i, kv: k})
				break
			}
		}
	}
	return out
}

func sortKey(kv history.KV, by string) string {
	switch by {
	case history.SortByVersion:
		return fmt.Sprint(kv.Version)
	case history.SortByCreate:
		return fmt.Sprint(kv.CreateRevision)
	case history.SortByMod:
		return fmt.Sprint(kv.ModRevision)
	}
	return kv.Value
}

func swapSorted(h *history.History, s site) string {
	o := mutableOp(h, s.op)
	kvs := o.Response.KVs
	kvs[s.kv-1], kvs[s.kv] = kvs[s.kv], kvs[s.kv-1]
	return fmt.Sprintf("operation %d: sorted by %s, keys %s and %s swapped", o.ID, o.Request.SortTarget, kvs[s.kv].Key, kvs[s.kv-1].Key)
}

// countOnly are answered count-only ranges at the current revision.
var countOnly = opsWhere(func(o *history.Operation) bool {
	return !o.Failed() && o.Request.Kind == history.OpRange && o.Request.CountOnly && !o.Request.Serializable && o.Request.Revision == 0
})

func miscount(h *history.History, s site) string {
	o := mutableOp(h, s.op)
	o.Response.Count++
	return fmt.Sprintf("operation %d: count %d instead of %d", o.ID, o.Response.Count, o.Response.Count-1)
}

// keptValuePuts are answered puts that keep their value: their key
// existed.
var keptValuePuts = opsWhere(func(o *history.Operation) bool {
	return !o.Failed() && o.Request.Kind == history.OpPut && o.Request.IgnoreValue
})

// missingKey answers such a put with key-not-found, as if its key did not
// exist.
func missingKey(h *history.History, s site) string {
	o := &h.Operations[s.op]
	o.Response, o.Code, o.Error = nil, history.ErrKeyNotFound, "etcdserver: key not found"
	return fmt.Sprintf("operation %d: put of %s keeping its value answered key-not-found", o.ID, o.Request.Key)
}
