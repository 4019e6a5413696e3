package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// damaging names the etcd probes that damage the store on purpose beyond
// their own keys, with what they do: a compaction drops every key's
// history below its revision (and a server that accepts one at a future
// revision may refuse every read after it), an oversized request may
// exhaust a server that accepts it, a lease revocation deletes the keys
// attached to the lease. They
// run after every other probe, so that a server they break cannot poison
// the others; TestEtcdProbesPassOnEtcd keeps this list equal to what the
// probes send on etcd (see damageOf).
//
// The list lives here rather than in each declaration so that a probe's
// declaration stays one behaviour; a new probe that compacts, revokes or
// sends over 1 MiB fails that test until it is added.
var damaging = map[string]string{
	"compaction/read-below":        damageCompacts,
	"compaction/read-at":           damageCompacts,
	"compaction/read-above":        damageCompacts,
	"compaction/keeps-latest":      damageCompacts,
	"compaction/future":            damageCompacts,
	"compaction/twice":             damageCompacts,
	"compaction/lower":             damageCompacts,
	"compaction/header":            damageCompacts,
	"compaction/no-revision":       damageCompacts,
	"compaction/watch-below":       damageCompacts,
	"compaction/watch-at":          damageCompacts,
	"watch/compacted-start-cancel": damageCompacts,
	"kv/oversized-request":         damageOversized,
	"lease/revoke-deletes-keys":    damageRevokes,
	"lease/revoke-delete-events":   damageRevokes,
	"lease/time-to-live-keys":      damageRevokes,
	"lease/attach-moves-key":       damageRevokes,
	"kv/put-ignore-lease":          damageRevokes,
	"txn/compare-lease":            damageRevokes,
}

const (
	damageCompacts  = "compacts the store"
	damageOversized = "sends a request over 1 MiB"
	damageRevokes   = "revokes a lease"
)

// oversized is the request size past which a probe counts as damaging:
// etcd refuses requests over 1.5 MiB by default; a server that accepts
// them may not survive them.
const oversized = 1 << 20

// Damage says how the probe damages the store beyond its own keys, or ""
// when it does not.
func (p EtcdProbe) Damage() string { return damaging[p.Name] }

// damageOf reads from a probe's recorded requests what it does to the
// store: the same words as Damage, joined; "" for none. A revocation
// damages when it deletes keys (the lease had a key attached) or names a
// lease the probe was not granted; revoking its own bare lease is
// cleanup.
func damageOf(steps []rawStep) string {
	var out []string
	add := func(d string) {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	granted, attached := map[string]bool{}, map[string]bool{}
	for _, s := range steps {
		switch s.call {
		case "Compact":
			add(damageCompacts)
		case "LeaseGrant":
			granted[jsonField(s.respPB, "ID")] = true
		case "Put", "Txn":
			collect(s.reqPB, "lease", attached)
		case "LeaseRevoke":
			if id := jsonField(s.reqPB, "ID"); attached[id] || !granted[id] {
				add(damageRevokes)
			}
		}
		if len(s.reqPB) > oversized {
			add(damageOversized)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// jsonField is the top-level field of a JSON object, as text.
func jsonField(msg json.RawMessage, name string) string {
	var m map[string]any
	if json.Unmarshal(msg, &m) != nil {
		return ""
	}
	return fmt.Sprint(m[name])
}

// collect adds every value of the field name, at any depth, to into.
func collect(msg json.RawMessage, name string, into map[string]bool) {
	var v any
	if json.Unmarshal(msg, &v) != nil {
		return
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k == name {
					into[fmt.Sprint(e)] = true
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
}

// runOrder is the order the probes run in: every probe that does not
// damage the store, then the damaging ones, each in declaration order.
func runOrder(probes []EtcdProbe) []EtcdProbe {
	out := make([]EtcdProbe, 0, len(probes))
	for _, damages := range []bool{false, true} {
		for _, p := range probes {
			if (p.Damage() != "") == damages {
				out = append(out, p)
			}
		}
	}
	return out
}
