package kv

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// CheckSerializableSane is kv/serializable-sane. For every acknowledged
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
func CheckSerializableSane(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	written := facts.PossibleWrites(h)
	bounds := facts.NewRevBounds(h)
	figures := map[string]float64{}

	// Sessions walk every operation of a client in return order.
	type session struct {
		member string
		best   *history.Operation
	}
	sessions := map[int]*session{}
	excused := 0
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
		var restartedBelow int64 // the session's best revision, when only a restart excuses going below it
		if s != nil && (s.member != o.Member || o.Member == "" || facts.RestartBetween(h.Faults, s.best.Call, o.Return)) {
			if s.member == o.Member && o.Member != "" {
				restartedBelow = s.best.Response.Revision
			}
			s = nil // a new session: another member, an unrecorded one, or one that may have restarted
		}
		if isSerializableRead(o) {
			figures["serializable_reads"]++
			if o.Response.Revision < restartedBelow {
				excused++
			}
			judgeSerializable(h, o, written, bounds, col)
			if s != nil && o.Response.Revision < s.best.Response.Revision {
				col.Add(check.Violation{
					Guarantee: ErrSerializableSane,
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
		return noSerializableRead(NameSerializableSane, h, figures)
	}
	r := col.Result(NameSerializableSane, figures)
	r.Judged, r.Excused = int(figures["serializable_reads"])-excused, map[string]int{"member_restart": excused}
	return r
}

func isSerializableRead(o *history.Operation) bool {
	return o.Request.Kind == history.OpRange && o.Request.Serializable && !o.Failed()
}

func judgeSerializable(h *history.History, o *history.Operation, written map[facts.KeyValue]facts.WrittenValue,
	bounds *facts.RevBounds, col *check.Collector) {
	prefix := h.Meta.Prefix
	head := o.Response.Revision
	base := check.Violation{Guarantee: ErrSerializableSane, Client: o.Client, Key: o.Request.Key, Operations: []int64{o.ID}}
	what := fmt.Sprintf("client %d's serializable range %d of %s on member %s (header revision %d)",
		o.Client, o.ID, rangeText(prefix, &o.Request), o.Member, head)
	for _, kv := range o.Response.KVs {
		if kv.ModRevision > head {
			v := base
			v.Message = fmt.Sprintf("%s returned %s with mod revision %d, above its own header revision",
				what, facts.ShortKey(prefix, kv.Key), kv.ModRevision)
			v.Key, v.Revision, v.Want, v.Got = kv.Key, kv.ModRevision, fmt.Sprintf("<= %d", head), fmt.Sprint(kv.ModRevision)
			col.Add(v)
		}
		if o.Request.KeysOnly || !strings.HasPrefix(kv.Key, prefix) {
			continue
		}
		w, ok := written[facts.KeyValue{Key: kv.Key, Value: kv.Value}]
		switch {
		case !ok:
			v := base
			v.Message = fmt.Sprintf("%s returned %s = %q at mod revision %d, a value no put of the history wrote to that key",
				what, facts.ShortKey(prefix, kv.Key), kv.Value, kv.ModRevision)
			v.Key, v.Revision, v.Want, v.Got = kv.Key, kv.ModRevision, "a value some put wrote", fmt.Sprintf("%q", kv.Value)
			col.Add(v)
		case w.Rev != 0 && w.Rev != kv.ModRevision:
			v := base
			v.Message = fmt.Sprintf("%s returned %s = %q at mod revision %d, but operation %d wrote that value at revision %d",
				what, facts.ShortKey(prefix, kv.Key), kv.Value, kv.ModRevision, w.Op, w.Rev)
			v.Key, v.Revision, v.Want, v.Got = kv.Key, kv.ModRevision, fmt.Sprint(w.Rev), fmt.Sprint(kv.ModRevision)
			v.Operations = []int64{w.Op, o.ID}
			col.Add(v)
		}
	}
	if ceil, from, Inconclusive, ok := bounds.AtMost(o.Return, o.ID); ok && head > ceil {
		v := base
		v.Message = fmt.Sprintf("%s is above the store's revision when it returned: at most %d (operation %d, called by then, "+
			"reported %d, and %d writes of unknown outcome were called by then)", what, ceil, from.Op, from.Rev, Inconclusive)
		v.Revision, v.Want, v.Got = head, fmt.Sprintf("<= %d", ceil), fmt.Sprint(head)
		v.Operations = []int64{from.Op, o.ID}
		col.Add(v)
	}
}

// rangeText names a requested key or range for messages.
func rangeText(prefix string, r *history.Request) string {
	s := facts.ShortKey(prefix, r.Key)
	if r.End != "" {
		s = fmt.Sprintf("[%s, %s)", s, facts.ShortKey(prefix, r.End))
	}
	if r.Revision > 0 {
		s += fmt.Sprintf(" at revision %d", r.Revision)
	}
	return s
}
