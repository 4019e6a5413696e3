package kv

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// taker names the request that took a revision, and what each member
// holds there: text for the message, the operations (the request first),
// the request's client and the first key it wrote.
type taker struct {
	text   string
	ops    []int64
	client int
	key    string
}

// nameTaker finds the request that took revision r. The reads of each
// member at r and r-1 show what it applied at r; the value a put wrote
// names its request (every write's values are unique). Without them, the
// write acknowledged at r names it; without one, the writes that failed
// (of unknown outcome, or with a definite error a member may not have
// kept to) and may have taken it are listed.
func nameTaker(h *history.History, r int64, writers *writerIndex) taker {
	prefix := h.Meta.Prefix
	classes := changeClasses(h, r)
	var named []*history.Operation
	for _, c := range classes {
		for _, kv := range c.changes {
			if kv.ModRevision != r {
				continue
			}
			for _, o := range writers.of(kv) {
				if !slices.Contains(c.by, o) {
					c.by = append(c.by, o)
				}
				if !slices.Contains(named, o) {
					named = append(named, o)
				}
			}
		}
	}
	var ackedOnly []*history.Operation
	for _, o := range ackedAt(h, r) {
		if !slices.Contains(named, o) {
			named = append(named, o)
			ackedOnly = append(ackedOnly, o)
		}
	}
	var parts []string
	switch {
	case len(named) > 0:
		parts = append(parts, fmt.Sprintf("revision %d was taken by operation %d (%s)", r, named[0].ID, describeOp(prefix, named[0])))
	default:
		cands := mayHaveTaken(h, r)
		if len(cands) == 0 {
			parts = append(parts, fmt.Sprintf("no request of this history was acknowledged at %d or may have taken it "+
				"(a request of another client, or of an earlier segment)", r))
			break
		}
		var cs []string
		for _, o := range cands {
			cs = append(cs, fmt.Sprintf("operation %d (%s)", o.ID, describeOp(prefix, o)))
		}
		parts = append(parts, fmt.Sprintf("no request of this history was acknowledged at %d; it may have been taken by %s",
			r, strings.Join(cs, " or ")))
		named = cands
	}
	for _, c := range classes {
		ms, keys := strings.Join(c.members, ", "), changedKeys(classes)
		switch {
		case len(c.changes) == 0:
			parts = append(parts, fmt.Sprintf("%s %s nothing new at %d: %s, as at %d", ms, verb(c.members, "holds", "hold"), r,
				holdsText(prefix, c.before, keys), r-1))
		case len(c.by) == 0:
			parts = append(parts, fmt.Sprintf("%s %s at %d what no request of this history wrote: %s", ms,
				verb(c.members, "holds", "hold"), r, holdsText(prefix, c.at, keys)))
		default:
			var by []string
			for _, o := range c.by {
				if o == named[0] {
					by = append(by, fmt.Sprintf("operation %d", o.ID))
				} else {
					by = append(by, fmt.Sprintf("operation %d (%s)", o.ID, describeOp(prefix, o)))
				}
			}
			parts = append(parts, fmt.Sprintf("%s %s what %s wrote at %d: %s", ms, verb(c.members, "holds", "hold"),
				strings.Join(by, " and "), r, holdsText(prefix, c.at, keys)))
		}
	}
	for _, o := range ackedOnly {
		if o != named[0] {
			parts = append(parts, fmt.Sprintf("operation %d (%s) was acknowledged at %d too", o.ID, describeOp(prefix, o), r))
		}
	}
	var t taker
	for _, o := range named {
		t.ops = append(t.ops, o.ID)
	}
	if len(named) > 0 {
		t.client = named[0].Client
		named[0].Request.Writes(func(w *history.Request, _ bool) {
			if t.key == "" {
				t.key = w.Key
			}
		})
	}
	for _, c := range classes {
		t.ops = append(t.ops, c.beforeOp.ID, c.atOp.ID)
	}
	t.text = strings.Join(parts, "; ")
	return t
}

// changeClass is the members whose reads show the same change at a
// revision: the key-values that differ between their reads at r-1 and r.
type changeClass struct {
	members    []string
	changes    []history.KV // at r, keys present; a deleted key has only its Key
	changed    []string     // their keys
	at, before []history.KV
	atOp       *history.Operation
	beforeOp   *history.Operation
	signature  string
	by         []*history.Operation // the requests that wrote the values of changes
}

// changedKeys lists the keys any class changed, the ones a message shows.
func changedKeys(all []*changeClass) []string {
	var out []string
	for _, o := range all {
		for _, k := range o.changed {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// changeClasses groups the members by what their plain reads of one range
// at r-1 and r show changed at r, the largest group first.
func changeClasses(h *history.History, r int64) []*changeClass {
	type pair struct{ before, at *history.Operation }
	reads := map[string]map[string]*pair{} // member -> range -> reads
	for i := range h.Operations {
		o := &h.Operations[i]
		q := &o.Request
		if o.Request.Kind != history.OpRange || o.Failed() || o.Member == "" || (q.Revision != r && q.Revision != r-1) ||
			q.Limit > 0 || q.KeysOnly || q.CountOnly || q.MinModRevision != 0 || q.MaxModRevision != 0 ||
			q.MinCreateRevision != 0 || q.MaxCreateRevision != 0 {
			continue
		}
		if reads[o.Member] == nil {
			reads[o.Member] = map[string]*pair{}
		}
		span := q.Key + "\x00" + q.End
		p := reads[o.Member][span]
		if p == nil {
			p = &pair{}
			reads[o.Member][span] = p
		}
		// The comparer's reads at a divergence come first; else the widest.
		if q.Revision == r && (p.at == nil || history.CompareRole(o) == history.CompareDivergence) {
			p.at = o
		} else if q.Revision == r-1 && (p.before == nil || history.CompareRole(o) == history.CompareDivergence) {
			p.before = o
		}
	}
	var out []*changeClass
	for _, m := range sortedMembers(reads) {
		var best *pair
		for _, span := range sortedMembers(reads[m]) {
			p := reads[m][span]
			if p.at != nil && p.before != nil && (best == nil || len(p.at.Response.KVs)+len(p.before.Response.KVs) >
				len(best.at.Response.KVs)+len(best.before.Response.KVs)) {
				best = p
			}
		}
		if best == nil {
			continue
		}
		c := &changeClass{members: []string{m}, at: best.at.Response.KVs, before: best.before.Response.KVs,
			atOp: best.at, beforeOp: best.before}
		c.changes, c.changed = diffKVs(c.before, c.at)
		c.signature = fmt.Sprint(c.changes)
		if i := slices.IndexFunc(out, func(o *changeClass) bool { return o.signature == c.signature }); i >= 0 {
			out[i].members = append(out[i].members, m)
			continue
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].members) > len(out[j].members) })
	return out
}

// diffKVs lists what differs between two reads of one range: the key-value
// at the later one (or just the key, deleted), and the keys, sorted.
func diffKVs(before, at []history.KV) ([]history.KV, []string) {
	b := map[string]history.KV{}
	for _, kv := range before {
		b[kv.Key] = kv
	}
	a := map[string]history.KV{}
	for _, kv := range at {
		a[kv.Key] = kv
	}
	var keys []string
	for k := range b {
		keys = append(keys, k)
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []history.KV
	var changed []string
	for _, k := range keys {
		x, inB := b[k]
		y, inA := a[k]
		switch {
		case inA && (!inB || x != y):
			out = append(out, y)
		case !inA:
			out = append(out, history.KV{Key: k})
		default:
			continue
		}
		changed = append(changed, k)
	}
	return out, changed
}

// holdsText shows the given keys of a read: k003 = "v" (mod 22), k005 absent.
func holdsText(prefix string, kvs []history.KV, keys []string) string {
	var parts []string
	for _, k := range keys {
		i := slices.IndexFunc(kvs, func(kv history.KV) bool { return kv.Key == k })
		if i < 0 {
			parts = append(parts, facts.ShortKey(prefix, k)+" absent")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s = %q (mod %d)", facts.ShortKey(prefix, k), kvs[i].Value, kvs[i].ModRevision))
	}
	if len(parts) == 0 {
		return "no key changed"
	}
	return strings.Join(parts, ", ")
}

func verb(members []string, one, many string) string {
	if len(members) == 1 {
		return one
	}
	return many
}

// writerIndex maps every (key, value) a put of any request may have
// written, at any depth of a txn and whatever its outcome, to the
// requests that sent it; built on first use.
type writerIndex struct {
	h  *history.History
	by map[facts.KeyValue][]*history.Operation
}

func (x *writerIndex) of(kv history.KV) []*history.Operation {
	if x.by == nil {
		x.by = writersOf(x.h)
	}
	return x.by[facts.KeyValue{Key: kv.Key, Value: kv.Value}]
}

func writersOf(h *history.History) map[facts.KeyValue][]*history.Operation {
	out := map[facts.KeyValue][]*history.Operation{}
	for i := range h.Operations {
		o := &h.Operations[i]
		if !o.Request.Kind.IsWrite() {
			continue
		}
		o.Request.Writes(func(w *history.Request, _ bool) {
			if w.Kind == history.OpPut {
				kv := facts.KeyValue{Key: w.Key, Value: w.Value}
				if !slices.Contains(out[kv], o) {
					out[kv] = append(out[kv], o)
				}
			}
		})
	}
	return out
}

// ackedAt lists the acknowledged writes that took revision r: answered at
// header revision r, having put something or deleted something.
func ackedAt(h *history.History, r int64) []*history.Operation {
	var out []*history.Operation
	for i := range h.Operations {
		o := &h.Operations[i]
		if o.Failed() || o.Response.Revision != r || !o.Request.Kind.IsWrite() {
			continue
		}
		took := false
		history.Executed(&o.Request, o.Response, func(q *history.Request, resp *history.Response) {
			took = took || q.Kind == history.OpPut || (q.Kind == history.OpDelete && resp != nil && resp.Deleted > 0)
		})
		if took {
			out = append(out, o)
		}
	}
	return out
}

// mayHaveTaken lists the writes that failed and may have taken revision
// r: called before any answer showed a member at r or above, and, for
// those that failed with an answer (definite, applied before it if ever),
// answered after the last linearizable request called that still saw the
// store below r.
func mayHaveTaken(h *history.History, r int64) []*history.Operation {
	seen, below := time.Duration(-1), time.Duration(-1)
	for i := range h.Operations {
		o := &h.Operations[i]
		if o.Failed() {
			continue
		}
		if o.Response.Revision >= r && (seen < 0 || o.Return < seen) {
			seen = o.Return
		}
		if o.Response.Revision < r && facts.IsLinearizableOp(o) && o.Call > below {
			below = o.Call
		}
	}
	var out []*history.Operation
	for i := range h.Operations {
		o := &h.Operations[i]
		if !o.Failed() || !o.Request.Kind.IsWrite() || (seen >= 0 && o.Call >= seen) {
			continue
		}
		if o.Code != history.ErrUnknown && o.Code != history.ErrRefused && o.Return <= below {
			continue
		}
		out = append(out, o)
	}
	return out
}

// describeOp says what a write was and how it ended, in a few words.
func describeOp(prefix string, o *history.Operation) string {
	q := &o.Request
	what := fmt.Sprintf("client %d's %s", o.Client, q.Kind)
	switch q.Kind {
	case history.OpPut:
		what = fmt.Sprintf("client %d's put of %s = %q", o.Client, facts.ShortKey(prefix, q.Key), q.Value)
	case history.OpDelete:
		what = fmt.Sprintf("client %d's delete of %s", o.Client, rangeText(prefix, q))
	}
	switch {
	case !o.Failed():
		return fmt.Sprintf("%s, acknowledged at revision %d by %s", what, o.Response.Revision, memberName(o))
	case o.Code == history.ErrUnknown || o.Code == "":
		return what + ", of unknown outcome"
	}
	return fmt.Sprintf("%s, which failed with %q on %s", what, o.Code, memberName(o))
}

func memberName(o *history.Operation) string {
	if o.Member == "" {
		return "its member"
	}
	return o.Member
}
