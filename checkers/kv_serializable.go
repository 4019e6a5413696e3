package checkers

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vigil-suite/vigil/history"
)

// writtenValue is what the history says about one (key, value) a put may
// have written: the revision it was written at when an acknowledged write
// proves it (0 when unknown: the write's outcome is unknown, or several
// puts tried the same value).
type writtenValue struct {
	rev int64
	op  int64
}

type keyValue struct{ key, value string }

// possibleWrites maps every (key, value) a put may have written to what is
// known of it: puts of acknowledged writes that took effect (a put, or a
// put in the branch a txn took) and every put of a write of unknown
// outcome (either branch). A put in the branch a txn did not take wrote
// nothing.
func possibleWrites(h *history.History) map[keyValue]writtenValue {
	out := map[keyValue]writtenValue{}
	add := func(r *history.Request, rev, op int64) {
		kv := keyValue{r.Key, r.Value}
		if old, dup := out[kv]; dup {
			out[kv] = writtenValue{op: old.op} // ambiguous: revision unknown
			return
		}
		out[kv] = writtenValue{rev: rev, op: op}
	}
	for i := range h.Operations {
		o := &h.Operations[i]
		if o.Failed() && (o.Code == history.ErrCompacted || o.Code == history.ErrFutureRevision) {
			continue
		}
		rev := int64(0)
		if !o.Failed() {
			rev = o.Response.Revision
		}
		switch o.Request.Kind {
		case history.OpPut:
			add(&o.Request, rev, o.ID)
		case history.OpTxn:
			for _, br := range []struct {
				reqs    []history.Request
				success bool
			}{{o.Request.Success, true}, {o.Request.Failure, false}} {
				if !o.Failed() && o.Response.Succeeded != br.success {
					continue
				}
				for j := range br.reqs {
					if br.reqs[j].Kind == history.OpPut {
						add(&br.reqs[j], rev, o.ID)
					}
				}
			}
		}
	}
	return out
}

// CheckKVSerializableSane is kv/serializable-sane. For every acknowledged
// serializable range:
//   - every key-value it returns (under the run's prefix, keys-only reads
//     aside) was possibly written by a put of the history, and when an
//     acknowledged write proves that put's revision, the returned mod
//     revision is that one;
//   - no returned mod revision is above the read's header revision;
//   - the header revision is not above the store's revision when the read
//     returned: at most the highest header of an acknowledged linearizable
//     operation called by then plus one for each write of unknown outcome
//     called by then (only when the workload is the only writer);
//   - on one member session (one client's successive operations on one
//     member, with no failed operation of that client and no fault that
//     may restart a member in between) the header revision never goes
//     below what an earlier operation of the session reported: every
//     answer of the session reflects that member's applied state.
func CheckKVSerializableSane(h *history.History, cfg Config) Result {
	col := newCollector(cfg)
	written := possibleWrites(h)
	bounds := newRevBounds(h)
	figures := map[string]float64{}

	// Sessions walk every operation of a client in return order.
	type session struct {
		member string
		best   *history.Operation
	}
	sessions := map[int]*session{}
	order := make([]*history.Operation, len(h.Operations))
	for i := range h.Operations {
		order[i] = &h.Operations[i]
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].Return < order[j].Return })
	for _, o := range order {
		s := sessions[o.Client]
		if o.Failed() {
			delete(sessions, o.Client)
			continue
		}
		if s != nil && (s.member != o.Member || o.Member == "" || restartBetween(h.Faults, s.best.Call, o.Return)) {
			s = nil // a new session: another member, an unrecorded one, or one that may have restarted
		}
		if isSerializableRead(o) {
			figures["serializable_reads"]++
			judgeSerializable(h, o, written, bounds, col)
			if s != nil && o.Response.Revision < s.best.Response.Revision {
				col.add(Violation{
					Guarantee: ErrKVSerializableSane,
					Message: fmt.Sprintf("client %d's serializable range %d of %s on member %s reported header revision %d, "+
						"but operation %d of the same member session had reported %d: the member's state went backwards",
						o.Client, o.ID, rangeText(h.Meta.Prefix, &o.Request), o.Member, o.Response.Revision,
						s.best.ID, s.best.Response.Revision),
					Client: o.Client, Key: o.Request.Key, Revision: o.Response.Revision,
					Want: fmt.Sprintf(">= %d", s.best.Response.Revision), Got: fmt.Sprint(o.Response.Revision),
					Operations: []int64{s.best.ID, o.ID},
				})
			}
		}
		if s == nil {
			s = &session{member: o.Member, best: o}
			sessions[o.Client] = s
		} else if o.Response.Revision >= s.best.Response.Revision {
			s.best = o
		}
	}
	if figures["serializable_reads"] == 0 {
		if why, refused := h.Meta.Refuses["serializable"]; refused {
			return skipped(NameKVSerializableSane, "the target refuses serializable reads ("+why+"), so the workload sent none", figures)
		}
		return skipped(NameKVSerializableSane, "no acknowledged serializable read", figures)
	}
	return col.result(NameKVSerializableSane, figures)
}

func isSerializableRead(o *history.Operation) bool {
	return o.Request.Kind == history.OpRange && o.Request.Serializable && !o.Failed()
}

func judgeSerializable(h *history.History, o *history.Operation, written map[keyValue]writtenValue,
	bounds *revBounds, col *collector) {
	prefix := h.Meta.Prefix
	head := o.Response.Revision
	base := Violation{Guarantee: ErrKVSerializableSane, Client: o.Client, Key: o.Request.Key, Operations: []int64{o.ID}}
	what := fmt.Sprintf("client %d's serializable range %d of %s on member %s (header revision %d)",
		o.Client, o.ID, rangeText(prefix, &o.Request), o.Member, head)
	for _, kv := range o.Response.KVs {
		if kv.ModRevision > head {
			v := base
			v.Message = fmt.Sprintf("%s returned %s with mod revision %d, above its own header revision",
				what, shortKey(prefix, kv.Key), kv.ModRevision)
			v.Key, v.Revision, v.Want, v.Got = kv.Key, kv.ModRevision, fmt.Sprintf("<= %d", head), fmt.Sprint(kv.ModRevision)
			col.add(v)
		}
		if o.Request.KeysOnly || !strings.HasPrefix(kv.Key, prefix) {
			continue
		}
		w, ok := written[keyValue{kv.Key, kv.Value}]
		switch {
		case !ok:
			v := base
			v.Message = fmt.Sprintf("%s returned %s = %q at mod revision %d, a value no put of the history wrote to that key",
				what, shortKey(prefix, kv.Key), kv.Value, kv.ModRevision)
			v.Key, v.Revision, v.Want, v.Got = kv.Key, kv.ModRevision, "a value some put wrote", fmt.Sprintf("%q", kv.Value)
			col.add(v)
		case w.rev != 0 && w.rev != kv.ModRevision:
			v := base
			v.Message = fmt.Sprintf("%s returned %s = %q at mod revision %d, but operation %d wrote that value at revision %d",
				what, shortKey(prefix, kv.Key), kv.Value, kv.ModRevision, w.op, w.rev)
			v.Key, v.Revision, v.Want, v.Got = kv.Key, kv.ModRevision, fmt.Sprint(w.rev), fmt.Sprint(kv.ModRevision)
			v.Operations = []int64{w.op, o.ID}
			col.add(v)
		}
	}
	if ceil, from, unknown, ok := bounds.atMost(o.Return, o.ID); ok && head > ceil {
		v := base
		v.Message = fmt.Sprintf("%s is above the store's revision when it returned: at most %d (operation %d, called by then, "+
			"reported %d, and %d writes of unknown outcome were called by then)", what, ceil, from.op, from.rev, unknown)
		v.Revision, v.Want, v.Got = head, fmt.Sprintf("<= %d", ceil), fmt.Sprint(head)
		v.Operations = []int64{from.op, o.ID}
		col.add(v)
	}
}

// rangeText names a requested key or range for messages.
func rangeText(prefix string, r *history.Request) string {
	s := shortKey(prefix, r.Key)
	if r.End != "" {
		s = fmt.Sprintf("[%s, %s)", s, shortKey(prefix, r.End))
	}
	if r.Revision > 0 {
		s += fmt.Sprintf(" at revision %d", r.Revision)
	}
	return s
}
