package kv

import (
	"fmt"
	"sort"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// Session guarantees of serializable reads, judged on the data they
// return. etcd promises strict serializability for linearizable requests
// only; a serializable read is answered from the member's own state and
// may be stale. On one member that state only moves forward, and a write
// returns once the member that took it applied it, so a client that stays
// on one member reads its own writes and never reads backwards. Across
// members (a client that fails over, a load balancer in front of several)
// nothing promises either. Both checks are therefore SHOULD lines, and
// each violation names the members involved, so a reader can tell a
// topology that gives the guarantees up from a member that breaks them.
//
// Only what a read returned is judged: a key it does not return may have
// been deleted (by anyone, or by a lease) in between, and a read at a
// revision (Request.Revision > 0) asks for the past on purpose. A member
// that may have restarted between the two answers (a fault overlapping
// them) serves what it replayed, which may be older: not judged, counted
// as excused_member_restart.

// sessionSeen is the newest state of one key a client knows of: the
// revision it was written (read-your-writes) or read (monotonic reads) at,
// and by which operation.
type sessionSeen struct {
	rev int64
	op  *history.Operation
}

// CheckReadYourWrites is kv/read-your-writes: a client's serializable read
// called after its own write of a key was acknowledged at revision R never
// returns that key at a mod revision below R.
func CheckReadYourWrites(h *history.History, cfg check.Config) check.Result {
	return checkSession(h, cfg, true)
}

// CheckMonotonicReads is kv/monotonic-reads: a client's serializable read
// called after an earlier read of the same client returned a key at mod
// revision M never returns that key at a mod revision below M.
func CheckMonotonicReads(h *history.History, cfg check.Config) check.Result {
	return checkSession(h, cfg, false)
}

// checkSession walks each client's operations. For read-your-writes
// (writes) what the client knows comes from its acknowledged writes, for
// monotonic reads from its reads.
func checkSession(h *history.History, cfg check.Config, writes bool) check.Result {
	name, guarantee := NameMonotonicReads, ErrMonotonicReads
	if writes {
		name, guarantee = NameReadYourWrites, ErrReadYourWrites
	}
	col := check.NewCollector(cfg)
	figures := map[string]float64{}
	byClient := map[int][]*history.Operation{}
	for i := range h.Operations {
		o := &h.Operations[i]
		if !o.Failed() {
			byClient[o.Client] = append(byClient[o.Client], o)
		}
	}
	clients := make([]int, 0, len(byClient))
	for c := range byClient {
		clients = append(clients, c)
	}
	sort.Ints(clients)
	for _, c := range clients {
		ops := byClient[c]
		// What the client knows becomes usable once the operation that
		// taught it returned: learn in return order, judge in call order.
		learnOrder := append([]*history.Operation(nil), ops...)
		sort.SliceStable(learnOrder, func(i, j int) bool { return learnOrder[i].Return < learnOrder[j].Return })
		sort.SliceStable(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
		known := map[string]sessionSeen{}
		next := 0
		for _, o := range ops {
			for next < len(learnOrder) && learnOrder[next].Return < o.Call {
				learn(known, learnOrder[next], writes)
				next++
			}
			if !isSerializableRead(o) {
				continue
			}
			figures["serializable_reads"]++
			if o.Request.Revision > 0 {
				continue
			}
			for _, kv := range o.Response.KVs {
				s, ok := known[kv.Key]
				if !ok {
					continue
				}
				if s.op.Member == o.Member && o.Member != "" && facts.RestartBetween(h.Faults, s.op.Call, o.Return) {
					// A restarted member serves from what it replayed,
					// which may be behind what it served before.
					figures["excused_member_restart"]++
					continue
				}
				figures["keys_judged"]++
				if kv.ModRevision >= s.rev {
					continue
				}
				if s.op.Member != o.Member {
					figures["violations_across_members"]++
				}
				col.Add(sessionViolation(h, guarantee, o, kv, s, writes))
			}
		}
	}
	if figures["serializable_reads"] == 0 {
		return noSerializableRead(name, h, figures)
	}
	if figures["keys_judged"] == 0 {
		seen := "read"
		if writes {
			seen = "written"
		}
		return check.Skip(name, "no serializable read of the latest revision returned a key its client had "+seen+
			" before calling it", figures)
	}
	r := col.Result(name, figures)
	r.Judged, r.Excused = int(figures["keys_judged"]), map[string]int{"member_restart": int(figures["excused_member_restart"])}
	return r
}

// learn records what an acknowledged operation showed its client: the
// keys it put (writes) or the keys a read at the latest revision returned.
func learn(known map[string]sessionSeen, o *history.Operation, writes bool) {
	note := func(key string, rev int64) {
		if rev > known[key].rev {
			known[key] = sessionSeen{rev: rev, op: o}
		}
	}
	if writes {
		for _, key := range putKeys(o) {
			note(key, o.Response.Revision)
		}
		return
	}
	if o.Request.Kind == history.OpRange && o.Request.Revision == 0 {
		for _, kv := range o.Response.KVs {
			note(kv.Key, kv.ModRevision)
		}
	}
}

// putKeys are the keys an acknowledged put, or the path an acknowledged
// txn took, wrote at the response's revision.
func putKeys(o *history.Operation) []string {
	var keys []string
	history.Executed(&o.Request, o.Response, func(r *history.Request, _ *history.Response) {
		if r.Kind == history.OpPut {
			keys = append(keys, r.Key)
		}
	})
	return keys
}

func sessionViolation(h *history.History, guarantee error, o *history.Operation, kv history.KV, s sessionSeen, writes bool) check.Violation {
	key := facts.ShortKey(h.Meta.Prefix, kv.Key)
	what := fmt.Sprintf("its %s %d had returned %s at mod revision %d", s.op.Request.Kind, s.op.ID, key, s.rev)
	if writes {
		what = fmt.Sprintf("its own %s %d acknowledged %s at revision %d", s.op.Request.Kind, s.op.ID, key, s.rev)
	}
	where := fmt.Sprintf("on member %s, the one that answered the earlier operation", o.Member)
	if o.Member != s.op.Member {
		where = fmt.Sprintf("on member %s, another than the one that answered the earlier operation (%s): across members", o.Member, s.op.Member)
	}
	return check.Violation{
		Guarantee: guarantee,
		Message: fmt.Sprintf("client %d's serializable range %d (%s) returned %s at mod revision %d (%q), "+
			"but %s before it was called", o.Client, o.ID, where, key, kv.ModRevision, kv.Value, what),
		Client: o.Client, Key: kv.Key, Revision: kv.ModRevision,
		Want: fmt.Sprintf("mod revision >= %d", s.rev), Got: fmt.Sprint(kv.ModRevision),
		Operations: []int64{s.op.ID, o.ID},
	}
}

// noSerializableRead is the verdict of a check of serializable reads that
// got none: skipped when the target refused them or the run sent none,
// unknown when the run sent some and none was answered.
func noSerializableRead(name string, h *history.History, figures map[string]float64) check.Result {
	if why, refused := h.Meta.Refuses["serializable"]; refused {
		return check.Skip(name, "the target refuses serializable reads ("+why+"), so the workload sent none", figures)
	}
	sent := 0
	for i := range h.Operations {
		if o := &h.Operations[i]; o.Request.Kind == history.OpRange && o.Request.Serializable {
			sent++
		}
	}
	if sent > 0 {
		return check.Inconclusive(name, fmt.Sprintf("the run sent %d serializable reads and none was answered", sent), figures)
	}
	return check.Skip(name, "the run sent no serializable read", figures)
}
