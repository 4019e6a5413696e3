package workload

import (
	"fmt"
	"math/rand/v2"

	"github.com/vigil-suite/vigil/history"
)

// gen is what a form needs to make one request: the keys and value of
// this request, what the client knows of the store, and a lease.
type gen struct {
	rng    *rand.Rand
	prefix string
	// key is the request's key; other a second, different key (for txns
	// that write two); value is unique in the run.
	key, other, value string
	modRev            map[string]int64  // key -> mod revision last seen (0: absent)
	vals              map[string]string // key -> value last seen
	head, floor       int64             // highest revision seen; lowest that may be read
	lease             int64             // a granted lease with keys allowed; 0: none yet
	// probe: asking the target what it serves, with each form's plainest request.
	probe bool
}

// kvForm is one form of KV request the default mix sends.
type kvForm struct {
	// name is history.FormOf of what make returns (a test holds them equal).
	name string
	// share is the form's percentage of the default mix.
	share int
	// repl, for a write, is the form that takes its share when the target
	// refuses it: the Kubernetes storage layer's txn forms, which servers
	// built for Kubernetes (kine) serve when they refuse plain ones.
	repl string
	make func(g *gen) history.Request
}

// The Kubernetes storage layer's forms: a create, an update and a delete,
// each conditional on the key's mod revision; and its list pages.
const (
	formKubeCreate = "txn-mod"
	formKubeUpdate = "txn-mod-else-read"
	formKubeDelete = "txn-mod-delete-else-read"
	formKubeList   = "range-interval-limit-rev"
	// formFinal is the final write: a put and a delete in one txn.
	formFinal = "txn-multi"
)

// defaultMix is every KV form the workload sends, with its share of the
// default shape. Each is asked for once before the run (probe.go); the
// ones the target refuses are left out or replaced (mixFor).
var defaultMix = []kvForm{
	{"put", 12, formKubeUpdate, func(g *gen) history.Request {
		return history.Request{Kind: history.OpPut, Key: g.key, Value: g.value}
	}},
	{"put-prev-kv", 5, formKubeUpdate, func(g *gen) history.Request {
		return history.Request{Kind: history.OpPut, Key: g.key, Value: g.value, PrevKV: true}
	}},
	// Before a lease is granted (or where grants are refused) a plain put.
	{"put-lease", 5, formKubeUpdate, func(g *gen) history.Request {
		return history.Request{Kind: history.OpPut, Key: g.key, Value: g.value, Lease: g.lease}
	}},
	{"delete", 4, formKubeDelete, func(g *gen) history.Request {
		return history.Request{Kind: history.OpDelete, Key: g.key}
	}},
	{"delete-prev-kv", 3, formKubeDelete, func(g *gen) history.Request {
		return history.Request{Kind: history.OpDelete, Key: g.key, PrevKV: true}
	}},
	{"range", 12, "", func(g *gen) history.Request {
		return history.Request{Kind: history.OpRange, Key: g.key}
	}},
	{"range-serializable", 8, "", func(g *gen) history.Request {
		return history.Request{Kind: history.OpRange, Key: g.key, Serializable: true}
	}},
	{"range-prefix", 3, "", func(g *gen) history.Request {
		return history.Request{Kind: history.OpRange, Key: g.prefix, End: history.PrefixEnd(g.prefix)}
	}},
	{"range-prefix-limit", 5, "", func(g *gen) history.Request {
		return history.Request{Kind: history.OpRange, Key: g.prefix, End: history.PrefixEnd(g.prefix), Limit: int64(1 + g.rng.IntN(5))}
	}},
	// A read at a past revision (sometimes compacted: then ErrCompacted),
	// and one in four from the future, which must fail, never return data.
	{"range-rev", 4, "", func(g *gen) history.Request {
		if !g.probe && g.rng.IntN(4) == 0 {
			return history.Request{Kind: history.OpRange, Key: g.key, Revision: g.head + 1000}
		}
		return history.Request{Kind: history.OpRange, Key: g.key, Revision: max(g.floor, g.head-int64(1+g.rng.IntN(400)))}
	}},
	{"range-prefix-keys-only", 3, "", func(g *gen) history.Request {
		return history.Request{Kind: history.OpRange, Key: g.prefix, End: history.PrefixEnd(g.prefix), KeysOnly: true}
	}},
	{"range-prefix-count-only", 3, "", func(g *gen) history.Request {
		return history.Request{Kind: history.OpRange, Key: g.prefix, End: history.PrefixEnd(g.prefix), CountOnly: true}
	}},
	// Compare-and-swap on the mod revision this client last saw: some
	// succeed, some fail and read the key.
	{formKubeUpdate, 12, "", kubeUpdate},
	{"txn-version-else-read", 3, formKubeUpdate, func(g *gen) history.Request {
		return casTxn(g, history.Compare{Key: g.key, Target: "version", Result: ">", Int: 0}) // exists
	}},
	{"txn-create-else-read", 3, formKubeUpdate, func(g *gen) history.Request {
		return casTxn(g, history.Compare{Key: g.key, Target: "create", Result: "=", Int: 0}) // absent
	}},
	{"txn-value-else-read", 3, formKubeUpdate, func(g *gen) history.Request {
		return casTxn(g, history.Compare{Key: g.key, Target: "value", Result: "=", Value: g.vals[g.key]})
	}},
	// Two writes at one revision, so one revision carries several events.
	{"txn-mod-multi-else-read", 4, formKubeUpdate, func(g *gen) history.Request {
		second := history.Request{Kind: history.OpPut, Key: g.other, Value: g.value + "b"}
		if g.rng.IntN(2) == 0 {
			second = history.Request{Kind: history.OpDelete, Key: g.other}
		}
		r := kubeUpdate(g)
		r.Success = append(r.Success, second)
		return r
	}},
	{formKubeCreate, 2, "", kubeCreate},
	{formKubeDelete, 3, "", kubeDelete},
	{formKubeList, 3, "", kubeList},
}

func casTxn(g *gen, cmp history.Compare) history.Request {
	return history.Request{Kind: history.OpTxn, Compares: []history.Compare{cmp},
		Success: []history.Request{{Kind: history.OpPut, Key: g.key, Value: g.value}},
		Failure: []history.Request{{Kind: history.OpRange, Key: g.key}}}
}

// kubeCreate creates the key only if it does not exist, with no read in
// the else branch, as the storage layer sends it.
func kubeCreate(g *gen) history.Request {
	return history.Request{Kind: history.OpTxn,
		Compares: []history.Compare{{Key: g.key, Target: "mod", Result: "=", Int: 0}},
		Success:  []history.Request{{Kind: history.OpPut, Key: g.key, Value: g.value}}}
}

// kubeUpdate updates from the revision this client last saw.
func kubeUpdate(g *gen) history.Request {
	return casTxn(g, history.Compare{Key: g.key, Target: "mod", Result: "=", Int: g.modRev[g.key]})
}

// kubeDelete deletes with a precondition on the revision.
func kubeDelete(g *gen) history.Request {
	return history.Request{Kind: history.OpTxn,
		Compares: []history.Compare{{Key: g.key, Target: "mod", Result: "=", Int: g.modRev[g.key]}},
		Success:  []history.Request{{Kind: history.OpDelete, Key: g.key}},
		Failure:  []history.Request{{Kind: history.OpRange, Key: g.key}}}
}

// kubeList is a list page: from the request's key on, at a recent
// revision pinned as a continue token pins it.
func kubeList(g *gen) history.Request {
	return history.Request{Kind: history.OpRange, Key: g.key, End: history.PrefixEnd(g.prefix),
		Limit: int64(1 + g.rng.IntN(4)), Revision: max(g.floor, g.head-int64(g.rng.IntN(5)))}
}

// finalWrite is the final write's form: it puts one key and deletes
// another in one revision, so watches filtering puts or deletes out see
// an event too.
func finalWrite(put, del, value string) history.Request {
	return history.Request{Kind: history.OpTxn, Success: []history.Request{
		{Kind: history.OpPut, Key: put, Value: value}, {Kind: history.OpDelete, Key: del}}}
}

// weighted is one entry of a mix: a form and its share.
type weighted struct {
	form  *kvForm
	share int
}

// mixFor is the default mix for a target that refuses the forms in
// refused: each refused form is left out, a refused write's share going
// to its replacement when the target serves that.
func mixFor(refused map[string]string) []weighted {
	byName := map[string]*kvForm{}
	for i := range defaultMix {
		byName[defaultMix[i].name] = &defaultMix[i]
	}
	shares := map[string]int{}
	for _, f := range defaultMix {
		switch _, no := refused[f.name]; {
		case !no:
			shares[f.name] += f.share
		case f.repl != "":
			if _, replNo := refused[f.repl]; !replNo {
				shares[f.repl] += f.share
			}
		}
	}
	var mix []weighted
	for i := range defaultMix { // in the table's order, so a seed replays
		if s := shares[defaultMix[i].name]; s > 0 {
			mix = append(mix, weighted{byName[defaultMix[i].name], s})
		}
	}
	return mix
}

// pick draws a form from mix by its shares.
func pick(mix []weighted, rng *rand.Rand) *kvForm {
	total := 0
	for _, m := range mix {
		total += m.share
	}
	p := rng.IntN(max(total, 1))
	for _, m := range mix {
		if p < m.share {
			return m.form
		}
		p -= m.share
	}
	panic(fmt.Sprintf("pick: %d beyond a mix of %d", p, total))
}

// Forms lists every form the workload may send and the probe asks for:
// the default mix's KV forms, the final write, HashKV, compaction (asked
// by the run's first one), the lease calls, progress requests and each
// watch option.
func Forms() []string {
	var out []string
	for _, f := range defaultMix {
		out = append(out, f.name)
	}
	out = append(out, formFinal, history.CapHashKV, string(history.OpCompact), string(history.CallLeaseGrant),
		string(history.CallLeaseKeepAlive), string(history.CallLeaseRevoke), string(history.CallProgress))
	for _, o := range watchOptions {
		out = append(out, o.form)
	}
	return out
}
