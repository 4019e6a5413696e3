package kv

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// CheckConvergence is kv/convergence. After the final write, with the
// faults healed, the workload asks every member for its Status and its
// HashKV. For each member it takes the last acknowledged answer of each
// kind called after the final-write mark, and requires:
//   - every member's Status revision is the same;
//   - every member's HashKV header revision and compact revision are the
//     same;
//   - members whose HashKV hashed the same revision report the same hash.
//
// A member whose every request after the mark failed cannot be judged: if
// nothing disagrees, the verdict is unknown naming it, never pass. The
// member comparer's own requests (history.IsMemberCompare) are
// kv/member-agreement's: its last round follows these reads and may ask
// about other revisions.
func CheckConvergence(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	figures := map[string]float64{}
	mark, ok := h.Mark(history.MarkFinalWrite)
	if !ok {
		why := "the history has no final-write mark (the run was cut short)"
		if h.NotLast() {
			why = "only the run's last segment has the final write"
		}
		return check.Skip(NameConvergence, why, figures)
	}
	status, hash := map[string]*history.Operation{}, map[string]*history.Operation{}
	asked := map[string]bool{}
	for i := range h.Operations {
		o := &h.Operations[i]
		if !convergenceRead(o, mark) {
			continue
		}
		asked[o.Member] = true
		if o.Failed() {
			continue
		}
		last := status
		if o.Request.Kind == history.OpHashKV {
			last = hash
		}
		if p := last[o.Member]; p == nil || o.Return > p.Return {
			last[o.Member] = o
		}
	}
	if len(asked) == 0 {
		return check.Skip(NameConvergence, "no Status or HashKV request after the final write (an older or interrupted run)", figures)
	}
	members := sortedMembers(asked)
	figures["members"] = float64(len(members))
	var silent []string
	for _, m := range members {
		if status[m] == nil && hash[m] == nil {
			silent = append(silent, m)
		}
	}
	compare := func(field string, ops map[string]*history.Operation, value func(*history.Operation) int64) {
		groups := map[int64][]string{}
		var ids []int64
		for _, m := range sortedMembers(ops) {
			v := value(ops[m])
			groups[v] = append(groups[v], m)
			ids = append(ids, ops[m].ID)
		}
		if len(groups) < 2 {
			return
		}
		var parts []string
		var vals []int64
		for v := range groups {
			vals = append(vals, v)
		}
		sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
		for _, v := range vals {
			parts = append(parts, fmt.Sprintf("%s on %s", fmtValue(field, v), strings.Join(groups[v], ", ")))
		}
		first := ops[groups[vals[0]][0]]
		col.Add(check.Violation{
			Guarantee: ErrConvergence,
			Message: fmt.Sprintf("after the final write (revision %d) the members disagree on their %s: %s",
				mark.Revision, field, strings.Join(parts, "; ")),
			Client: first.Client, Revision: mark.Revision,
			Want: "the same on every member", Got: strings.Join(parts, "; "), Operations: ids,
		})
	}
	compare("revision (Status)", status, func(o *history.Operation) int64 { return o.Response.Revision })
	compare("revision (HashKV header)", hash, func(o *history.Operation) int64 { return o.Response.Revision })
	compare("compact revision (HashKV)", hash, func(o *history.Operation) int64 { return o.Response.CompactRevision })
	byRev := map[int64]map[string]*history.Operation{}
	for m, o := range hash {
		if byRev[o.Request.Revision] == nil {
			byRev[o.Request.Revision] = map[string]*history.Operation{}
		}
		byRev[o.Request.Revision][m] = o
	}
	revs := make([]int64, 0, len(byRev))
	for r := range byRev {
		revs = append(revs, r)
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i] < revs[j] })
	for _, r := range revs {
		compare(fmt.Sprintf("HashKV hash at revision %d", r), byRev[r], func(o *history.Operation) int64 { return int64(o.Response.Hash) })
	}
	figures["status_answers"], figures["hashkv_answers"] = float64(len(status)), float64(len(hash))
	r := col.Result(NameConvergence, figures)
	if r.Verdict != check.Pass {
		return r
	}
	if len(silent) > 0 {
		r.Verdict = check.Unknown
		r.Reason = fmt.Sprintf("members %s answered no Status or HashKV request after the final write, "+
			"so their convergence is not shown", strings.Join(silent, ", "))
		return r
	}
	if len(members) < 2 {
		why := "only one member answered after the final write: nothing to compare"
		if refusal, refused := h.Meta.Refuses["hashkv"]; refused {
			why += "; and the target refuses HashKV (" + refusal + "), so no hashes were compared"
		}
		return check.Skip(NameConvergence, why, figures)
	}
	return r
}

// convergenceRead: a Status or HashKV called after the final write, other
// than the member comparer's.
func convergenceRead(o *history.Operation, mark history.Mark) bool {
	return o.Call >= mark.Time && (o.Request.Kind == history.OpStatus || o.Request.Kind == history.OpHashKV) &&
		!history.IsMemberCompare(o)
}

func sortedMembers[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func fmtValue(field string, v int64) string {
	if strings.Contains(field, "hash ") || strings.HasPrefix(field, "HashKV hash") {
		return fmt.Sprintf("%#x", uint32(v))
	}
	return fmt.Sprint(v)
}
