package kv

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// readGroup is the answered ranges of the same keys, with the same
// options, at one revision.
type readGroup struct {
	rev int64
	ops []*history.Operation
}

func (g *readGroup) members() []string {
	var out []string
	for _, o := range g.ops {
		if !slices.Contains(out, o.Member) {
			out = append(out, o.Member)
		}
	}
	return out
}

func (g *readGroup) differs() bool {
	for _, o := range g.ops[1:] {
		if !sameData(o.Response, g.ops[0].Response) {
			return true
		}
	}
	return false
}

func sameData(a, b *history.Response) bool {
	return a.Count == b.Count && a.More == b.More && slices.Equal(a.KVs, b.KVs)
}

// rangeGroups groups the answered ranges at a revision (Request.Revision
// > 0), by revision first.
func rangeGroups(h *history.History) []*readGroup {
	by := map[string]*readGroup{}
	var out []*readGroup
	for i := range h.Operations {
		o := &h.Operations[i]
		q := o.Request
		if q.Kind != history.OpRange || q.Revision <= 0 || o.Failed() || o.Member == "" {
			continue
		}
		k := fmt.Sprintf("%q %q %d %d %t %t %s %s %d %d %d %d", q.Key, q.End, q.Revision, q.Limit, q.KeysOnly, q.CountOnly,
			q.SortOrder, q.SortTarget, q.MinModRevision, q.MaxModRevision, q.MinCreateRevision, q.MaxCreateRevision)
		g := by[k]
		if g == nil {
			g = &readGroup{rev: q.Revision}
			by[k] = g
			out = append(out, g)
		}
		g.ops = append(g.ops, o)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].rev < out[j].rev })
	return out
}

// readViolation reports reads of one range at one revision that returned
// different data, citing the writes of the values that differ, then one
// read per answer.
func readViolation(h *history.History, g *readGroup, writers *writerIndex) check.Violation {
	prefix := h.Meta.Prefix
	type answer struct {
		op      *history.Operation
		members []string
	}
	var answers []*answer
	for _, o := range g.ops {
		i := slices.IndexFunc(answers, func(a *answer) bool { return sameData(a.op.Response, o.Response) })
		if i < 0 {
			answers = append(answers, &answer{op: o})
			i = len(answers) - 1
		}
		if !slices.Contains(answers[i].members, o.Member) {
			answers[i].members = append(answers[i].members, o.Member)
		}
	}
	var keys []string
	for _, a := range answers[1:] {
		_, ks := diffKVs(answers[0].op.Response.KVs, a.op.Response.KVs)
		for _, k := range ks {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	var parts, got []string
	var cite []int64
	for _, a := range answers {
		s := fmt.Sprintf("%s (operation %d): %s", strings.Join(a.members, ", "), a.op.ID, holdsText(prefix, a.op.Response.KVs, keys))
		if len(keys) == 0 {
			s = fmt.Sprintf("%s (operation %d): count %d, more %t", strings.Join(a.members, ", "), a.op.ID,
				a.op.Response.Count, a.op.Response.More)
		}
		parts = append(parts, s)
		got = append(got, s)
		for _, kv := range a.op.Response.KVs {
			if slices.Contains(keys, kv.Key) {
				for _, w := range writers.of(kv) {
					cite = append(cite, w.ID)
				}
			}
		}
	}
	for _, a := range answers {
		cite = append(cite, a.op.ID)
	}
	q := &g.ops[0].Request
	v := check.Violation{Guarantee: ErrMemberAgreement, Revision: g.rev, Client: g.ops[0].Client,
		Message: fmt.Sprintf("reads of %s differ from member to member: %s", readText(prefix, q), strings.Join(parts, "; ")),
		Want:    fmt.Sprintf("the same data at revision %d from every member", g.rev), Got: strings.Join(got, "; "),
		Operations: dedup(cite)}
	if len(keys) > 0 {
		v.Key = keys[0]
	}
	return v
}

// readText names a read for messages, the run's whole prefix in words.
func readText(prefix string, q *history.Request) string {
	if q.Key == prefix && q.End == history.PrefixEnd(prefix) {
		return fmt.Sprintf("every key under the prefix at revision %d", q.Revision)
	}
	return rangeText(prefix, q)
}
