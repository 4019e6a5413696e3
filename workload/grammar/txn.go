package grammar

import (
	"slices"
	"strings"

	"github.com/vigil-suite/vigil/history"
)

// maxOps bounds the requests of one txn, nested ones and theirs
// included: etcd's default --max-txn-ops is 128 per list.
const maxOps = 128

// path is what the requests of one path through a txn (one branch of
// each txn on the way) write so far: the keys put and the ranges
// deleted. etcd refuses a txn that may put a key twice on a path, or put
// a key a delete of the path covers ("duplicate key given in txn
// request"); the generator keeps every write of a path apart, deletes
// from deletes too, unless it draws the invalid production on purpose.
type path struct {
	puts []string
	dels [][2]string // [lo, hi)
}

func (p *path) clone() *path {
	return &path{puts: slices.Clone(p.puts), dels: slices.Clone(p.dels)}
}

// merge adds q's writes: after a nested txn, a later request of the path
// must keep clear of both of its branches.
func (p *path) merge(q *path) {
	for _, k := range q.puts {
		if !slices.Contains(p.puts, k) {
			p.puts = append(p.puts, k)
		}
	}
	for _, d := range q.dels {
		if !slices.Contains(p.dels, d) {
			p.dels = append(p.dels, d)
		}
	}
}

// interval is the keys a delete of [key, end) may touch, as [lo, hi);
// an empty range (end at or before key) counts as both its ends and what
// lies between, to be safe.
func interval(key, end string) [2]string {
	switch {
	case end == "":
		return [2]string{key, key + "\x00"}
	case end <= key:
		return [2]string{end, key + "\x00"}
	}
	return [2]string{key, end}
}

func (p *path) canPut(k string) bool {
	if slices.Contains(p.puts, k) {
		return false
	}
	for _, d := range p.dels {
		if k >= d[0] && k < d[1] {
			return false
		}
	}
	return true
}

func (p *path) canDelete(key, end string) bool {
	iv := interval(key, end)
	for _, k := range p.puts {
		if k >= iv[0] && k < iv[1] {
			return false
		}
	}
	for _, d := range p.dels {
		if iv[0] < d[1] && d[0] < iv[1] {
			return false
		}
	}
	return true
}

func (p *path) addPut(k string)           { p.puts = append(p.puts, k) }
func (p *path) addDelete(key, end string) { p.dels = append(p.dels, interval(key, end)) }

// topTxn draws a txn: it has a focus, a key its compares and requests
// favour (as a compare-and-swap compares the key it writes), and may be
// made invalid on purpose (txn.writes).
func (g *Gen) topTxn() (history.Request, bool) {
	g.focus = g.k.keys[g.rng.IntN(len(g.k.keys))]
	g.budget = maxOps - 2 // room for the invalid production's two
	r, ok := g.txn(1, &path{})
	if !ok {
		return r, false
	}
	c := g.draw(fTxnWrites, false, nil)
	n := len(g.k.keys)
	switch c {
	case -1:
		return r, false
	case 1:
		// A key put twice in one list: refused as invalid, nothing applied.
		k := g.k.keys[g.rng.IntN(n)]
		r.Success = append(r.Success, history.Request{Kind: history.OpPut, Key: k, Value: g.value()},
			history.Request{Kind: history.OpPut, Key: k, Value: g.value()})
	case 2:
		// A put inside a delete of the same list: refused alike.
		i := g.rng.IntN(n)
		j := i + 1 + g.rng.IntN(n-i)
		end := history.PrefixEnd(g.cfg.Prefix)
		if j < n {
			end = g.k.keys[j]
		}
		r.Success = append(r.Success, history.Request{Kind: history.OpDelete, Key: g.k.keys[i], End: end},
			history.Request{Kind: history.OpPut, Key: g.k.keys[i+g.rng.IntN(j-i)], Value: g.value()})
	}
	return r, true
}

// txn draws a txn at depth (1: not nested) whose requests keep clear of
// what p, the path before it, writes; p gains the txn's writes.
func (g *Gen) txn(depth int, p *path) (history.Request, bool) {
	g.tags = append(g.tags, tagOf(fTxnDepth, depth-1))
	r := history.Request{Kind: history.OpTxn}
	c := g.draw(fTxnCompares, true, nil)
	if c < 0 {
		return r, false
	}
	n := c
	if c == 3 {
		n = 3 + g.rng.IntN(2)
	}
	for range n {
		cmp, ok := g.compare()
		if !ok {
			return r, false
		}
		r.Compares = append(r.Compares, cmp)
	}
	then := g.draw(fTxnThen, true, func(c int) bool { return c != 4 || depth == 1 && g.budget >= 32 })
	els := g.draw(fTxnElse, true, nil)
	if then < 0 || els < 0 {
		return r, false
	}
	counts := [2]int{then, els}
	for b, c := range counts {
		if c >= 3 { // many; or max, whose drawn requests are as many
			counts[b] = 3 + g.rng.IntN(4)
		}
	}
	branches := [2]*path{p.clone(), p.clone()}
	for b := range branches {
		for slot := 0; slot < counts[b] && g.budget > 0; slot++ {
			op, ok := g.op(depth, b, slot, branches[b])
			if !ok {
				continue
			}
			if b == 0 {
				r.Success = append(r.Success, op)
			} else {
				r.Failure = append(r.Failure, op)
			}
		}
		if b == 0 && then == 4 {
			// The largest txn: filled up to etcd's bound with plain reads
			// of its key (leaving room for its else branch), cheap to
			// serve, so that one such txn does not weigh as a hundred.
			for ; g.budget > 16; g.budget-- {
				r.Success = append(r.Success, history.Request{Kind: history.OpRange, Key: g.focus})
			}
		}
	}
	p.merge(branches[0])
	p.merge(branches[1])
	return r, true
}

// op draws one request of a txn's branch b (0: then, 1: else).
func (g *Gen) op(depth, b, slot int, p *path) (history.Request, bool) {
	g.budget--
	mark := len(g.tags)
	first := 4 * b // the branch's classes of txn.op: range, put, delete, txn
	var c int
	if b == 0 && slot == 0 && g.forceDepth > depth {
		c = first + 3
		g.tags = append(g.tags, tagOf(fTxnOp, c))
	} else {
		c = g.draw(fTxnOp, true, func(c int) bool {
			switch c - first {
			case 0:
				return true
			case 1:
				return slices.ContainsFunc(g.k.keys, p.canPut)
			case 2:
				return slices.ContainsFunc(g.k.keys, func(k string) bool { return p.canDelete(k, "") })
			case 3:
				// A probe forcing a nested txn forces it at the top only.
				_, forced := g.force[fTxnOp]
				return depth < maxDepth && g.budget >= 4 && !(forced && depth > 1)
			}
			return false
		})
	}
	if c < 0 {
		return history.Request{}, false
	}
	var r history.Request
	var ok bool
	switch c - first {
	case 1:
		r, ok = g.put(true, p)
	case 2:
		r, ok = g.del(true, p)
	case 3:
		r, ok = g.txn(depth+1, p)
	}
	if c-first != 0 && ok {
		return r, true
	}
	// A read: drawn so, or a write that found no key it may write.
	g.tags = append(g.tags[:mark], tagOf(fTxnOp, first))
	return g.rangeReq(true)
}

// compare draws one compare of a txn: a test (target and result), over
// one key or a span, against an operand the client knows (the key's
// value of that target as last seen), zero, or another.
func (g *Gen) compare() (history.Compare, bool) {
	var cmp history.Compare
	tc := g.draw(fCompareTest, true, nil)
	sc := g.draw(fCompareSpan, true, nil)
	if tc < 0 || sc < 0 {
		return cmp, false
	}
	cmp.Target, cmp.Result, _ = strings.Cut(fields[fCompareTest].classes[tc], "/")
	span := fields[fCompareSpan].classes[sc]
	if span == "prefix" {
		cmp.Key, cmp.End = g.cfg.Prefix, history.PrefixEnd(g.cfg.Prefix)
	} else {
		i, ok := g.key(fCompareKey, true, nil)
		if !ok {
			return cmp, false
		}
		cmp.Key = g.k.keys[i]
		switch span {
		case "interval":
			if n := len(g.k.keys); i == n-1 {
				cmp.End = cmp.Key + "\x00"
			} else {
				cmp.End = g.k.keys[i+1+g.rng.IntN(n-1-i)]
			}
		case "from":
			cmp.End = history.PrefixEnd(g.cfg.Prefix)
		}
	}
	oc := g.draw(fCompareOperand, true, nil)
	if oc < 0 {
		return cmp, false
	}
	s := g.k.state(cmp.Key)
	var known int64
	switch cmp.Target {
	case history.CompareMod:
		known = s.mod
	case history.CompareCreate:
		known = s.create
	case history.CompareVersion:
		known = s.version
	case history.CompareLease:
		known = s.lease
	}
	switch oc {
	case 0:
		cmp.Int, cmp.Value = known, s.value
	case 2:
		switch cmp.Target {
		case history.CompareValue:
			cmp.Value = "none"
			for _, j := range g.rng.Perm(len(g.k.keys)) {
				if o := g.k.st[j]; o.present && o.value != s.value {
					cmp.Value = o.value
					break
				}
			}
		case history.CompareLease:
			if id, ok := g.cfg.Leases.liveID(g.rng, known); ok {
				cmp.Int = id
			} else {
				cmp.Int = neverLease(g.rng)
			}
		case history.CompareVersion:
			cmp.Int = known + 1 + g.rng.Int64N(3)
		default:
			cmp.Int = 1 + g.rng.Int64N(max(g.rev.Head, 1))
			if cmp.Int == known {
				cmp.Int++
			}
		}
	}
	if cmp.Target != history.CompareValue {
		cmp.Value = ""
	}
	return cmp, true
}
