package linearizable

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vigil-suite/vigil/history"
)

// checkRange compares a range response with the state, as etcd's
// executeRange answers it (etcdserver/txn/txn.go): the keys of the range
// that exist (only the first limit+1 by key when neither an order nor a
// filter is asked for), less those outside the revision filters, sorted
// as asked, cut at the limit (more says whether it cut); count is every
// key of the range before the filters; a count-only range answers the
// count alone.
// Keys that tie on the sort target may come in any order (etcd sorts with
// sort.Sort, which is not stable), and where the limit cuts through such
// a tie, any of them may be the ones returned.
func (m kvModel) checkRange(s *kvState, r *history.Request, resp *history.Response, ex bool) *mismatch {
	lo, hi := m.ks.span(r.Key, r.End)
	var all []int32
	for k := lo; k < hi; k++ {
		if s.get(k).create != 0 {
			all = append(all, k)
		}
	}
	count := int64(len(all))
	what := m.rangeWhat(r)
	var want []int32
	more := false
	order, by := effectiveSort(r)
	if !r.CountOnly {
		if s.base == 0 && filtered(r) {
			return nil // the filters need the start revision; a header fixes it before any range is checked
		}
		want = all
		if r.SortOrder == "" && !filtered(r) && r.Limit > 0 && int64(len(want)) > r.Limit+1 {
			// etcd fetches all keys only for an order asked for or a
			// filter; else the first limit+1 by key, which a target other
			// than the key then sorts (executeRange).
			want = want[:r.Limit+1]
		}
		want = m.filter(s, r, want)
		m.sortKeys(s, want, order, by)
		if r.Limit > 0 && int64(len(want)) > r.Limit {
			more = true
		}
	}
	if mm := m.compareSorted(s, what, want, resp.KVs, r.Limit, r.KeysOnly, order != "" && by != history.SortByKey, by, ex); mm != nil {
		return mm
	}
	if resp.Count != count || resp.More != more {
		return no(ex, func() *mismatch {
			return &mismatch{msg: fmt.Sprintf("%s: count %d, more %v; the store has %d matching keys (more %v)",
				what, resp.Count, resp.More, count, more),
				want: fmt.Sprintf("count=%d more=%v", count, more), got: fmt.Sprintf("count=%d more=%v", resp.Count, resp.More)}
		})
	}
	return nil
}

func (m kvModel) rangeWhat(r *history.Request) string {
	what := "range " + m.ks.short(r.Key)
	if r.End != "" {
		what += ".." + m.ks.short(r.End)
	}
	if r.CountOnly {
		what += " (count only)"
	}
	if r.SortOrder != "" || r.SortTarget != "" {
		what += fmt.Sprintf(" (sorted %s by %s)", orDefault(r.SortOrder, "none"), orDefault(r.SortTarget, "key"))
	}
	if filtered(r) {
		what += " (filtered)"
	}
	return what
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func filtered(r *history.Request) bool {
	return r.MinModRevision != 0 || r.MaxModRevision != 0 || r.MinCreateRevision != 0 || r.MaxCreateRevision != 0
}

// effectiveSort is the sort etcd applies: a target other than the key
// with no order sorts ascending; the key ascending, or no order at all, is
// the store's own order (by key), returned as "".
func effectiveSort(r *history.Request) (order, by string) {
	by = orDefault(r.SortTarget, history.SortByKey)
	order = r.SortOrder
	switch {
	case by != history.SortByKey && order == "":
		order = history.SortAscend
	case by == history.SortByKey && order == history.SortAscend:
		order = ""
	}
	return order, by
}

// filter keeps the keys inside the range's revision filters (0: no bound).
func (m kvModel) filter(s *kvState, r *history.Request, keys []int32) []int32 {
	if !filtered(r) {
		return keys
	}
	out := make([]int32, 0, len(keys))
	for _, k := range keys {
		e := s.get(k)
		mod, create := s.abs(e.mod), s.abs(e.create)
		if r.MaxModRevision != 0 && mod > r.MaxModRevision || r.MinModRevision != 0 && mod < r.MinModRevision ||
			r.MaxCreateRevision != 0 && create > r.MaxCreateRevision || r.MinCreateRevision != 0 && create < r.MinCreateRevision {
			continue
		}
		out = append(out, k)
	}
	return out
}

// sortKey compares two keys on a sort target.
func (m kvModel) sortKey(s *kvState, a, b int32, by string) int {
	ea, eb := s.get(a), s.get(b)
	switch by {
	case history.SortByVersion:
		return cmp64(int64(ea.version), int64(eb.version))
	case history.SortByCreate:
		return cmp64(int64(ea.create), int64(eb.create))
	case history.SortByMod:
		return cmp64(int64(ea.mod), int64(eb.mod))
	case history.SortByValue:
		return strings.Compare(m.ks.values[ea.value], m.ks.values[eb.value])
	}
	return cmp64(int64(a), int64(b)) // the keyspace is sorted by key
}

func (m kvModel) sortKeys(s *kvState, keys []int32, order, by string) {
	if order == "" {
		return
	}
	sort.SliceStable(keys, func(i, j int) bool {
		c := m.sortKey(s, keys[i], keys[j], by)
		if order == history.SortDescend {
			return c > 0
		}
		return c < 0
	})
}

// compareSorted compares a response's keys with want, cut at limit, where
// with ties keys of equal sort key may come in any order and, at the cut,
// any of them may be the ones returned.
func (m kvModel) compareSorted(s *kvState, what string, want []int32, got []history.KV, limit int64, keysOnly, ties bool, by string, ex bool) *mismatch {
	n := len(want)
	if limit > 0 && int64(n) > limit {
		n = int(limit)
	}
	if !ties {
		return m.compareKVs(s, what, want[:n], got, keysOnly, ex)
	}
	if len(got) != n {
		return no(ex, func() *mismatch {
			return &mismatch{msg: fmt.Sprintf("%s: the response has %d keys, the store %d", what, len(got), n),
				want: fmt.Sprintf("%d keys", n), got: fmt.Sprintf("%d keys", len(got))}
		})
	}
	for gs := 0; gs < n; {
		ge := gs + 1
		for ge < len(want) && m.sortKey(s, want[gs], want[ge], by) == 0 {
			ge++
		}
		members := map[string]int32{}
		for _, k := range want[gs:ge] {
			members[m.ks.keys[k]] = k
		}
		for j := gs; j < min(ge, n); j++ {
			k, ok := members[got[j].Key]
			if !ok {
				return no(ex, func() *mismatch {
					names := make([]string, 0, ge-gs)
					for _, k := range want[gs:ge] {
						names = append(names, m.ks.short(m.ks.keys[k]))
					}
					has := names[0]
					if len(names) > 1 {
						has = fmt.Sprintf("one of %s (equal by %s)", strings.Join(names, ", "), by)
					}
					return &mismatch{msg: fmt.Sprintf("%s: at position %d the store has %s, the response has %s",
						what, j, has, m.ks.short(got[j].Key)), key: got[j].Key,
						want: strings.Join(names, " | "), got: got[j].Key}
				})
			}
			delete(members, got[j].Key)
			if mm := m.compareKVs(s, what, []int32{k}, got[j:j+1], keysOnly, ex); mm != nil {
				return mm
			}
		}
		gs = ge
	}
	return nil
}

// compareKVs compares returned key-values with the model's entries want,
// position by position.
func (m kvModel) compareKVs(s *kvState, what string, want []int32, got []history.KV, keysOnly, ex bool) *mismatch {
	for j := 0; j < max(len(want), len(got)); j++ {
		var w *history.KV
		var we kvEntry
		if j < len(want) {
			we = s.get(want[j])
			kv := history.KV{Key: m.ks.keys[want[j]], Value: m.ks.values[we.value],
				CreateRevision: s.abs(we.create), ModRevision: s.abs(we.mod), Version: int64(we.version)}
			if keysOnly {
				kv.Value = ""
			}
			if m.ks.noVersions && j < len(got) && got[j].Version == 0 {
				kv.Version = 0 // documented: the target keeps no versions
			}
			w = &kv
		}
		var g *history.KV
		if j < len(got) {
			g = &got[j]
		}
		if w != nil && g != nil && *w == *g {
			continue
		}
		return no(ex, func() *mismatch { return m.kvMismatch(s, what, w, g, we) })
	}
	return nil
}

func (m kvModel) kvMismatch(s *kvState, what string, want, got *history.KV, we kvEntry) *mismatch {
	mm := &mismatch{want: kvText(want), got: kvText(got)}
	switch {
	case want != nil && got != nil && want.Key != got.Key:
		mm.key = got.Key
		mm.msg = fmt.Sprintf("%s: the store's next key is %s = %s, the response has %s = %s",
			what, m.ks.short(want.Key), mm.want, m.ks.short(got.Key), mm.got)
	case want != nil:
		mm.key = want.Key
		mm.msg = fmt.Sprintf("%s: key %s is %s in the store, the response has %s", what, m.ks.short(want.Key), mm.want, mm.got)
	default:
		mm.key = got.Key
		mm.msg = fmt.Sprintf("%s: key %s does not exist in the store, the response has %s", what, m.ks.short(got.Key), mm.got)
	}
	if want != nil {
		if id, ok := m.ks.writer[m.ks.values[we.value]]; ok {
			mm.cites = id
			mm.msg += fmt.Sprintf(" (the store's value was written by operation %d)", id)
		}
	}
	if got != nil && got.Value != "" {
		if id, ok := m.ks.writer[got.Value]; !ok {
			mm.msg += fmt.Sprintf("; no operation ever wrote %q", got.Value)
		} else if want == nil || got.Value != want.Value {
			mm.msg += fmt.Sprintf("; the response's value was written by operation %d", id)
			if mm.cites == 0 {
				mm.cites = id
			}
		}
	}
	return mm
}
