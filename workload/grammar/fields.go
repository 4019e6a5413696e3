package grammar

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/vigil-suite/vigil/history"
)

// The fields of the requests: each drawn from its classes, with a value
// the class and what the client knows give.

// The key classes, in keyClasses' order.
const (
	kAny = iota
	kPresent
	kAbsent
	kDeleted
	kLeased
	kBoundary
	kFocus
)

// keyIs reports whether key number i is of key class c.
func (g *Gen) keyIs(c, i int) bool {
	s := g.k.st[i]
	switch c {
	case kAny:
		return true
	case kPresent:
		return s.known && s.present
	case kAbsent:
		return s.known && !s.present
	case kDeleted:
		return i == g.k.deleted
	case kLeased:
		return s.known && s.present && s.lease != 0
	case kBoundary:
		return i == 0 || i == len(g.k.keys)-1
	case kFocus:
		return g.k.keys[i] == g.focus
	}
	return false
}

// key draws a key by field f's classes among those use accepts (nil:
// all), and returns its index.
func (g *Gen) key(f int, inTxn bool, use func(string) bool) (int, bool) {
	fits := func(c, i int) bool { return g.keyIs(c, i) && (use == nil || use(g.k.keys[i])) }
	c := g.draw(f, inTxn, func(c int) bool {
		if c == kFocus && !inTxn {
			return false
		}
		for i := range g.k.keys {
			if fits(c, i) {
				return true
			}
		}
		return false
	})
	if c < 0 {
		return 0, false
	}
	n := 0
	for i := range g.k.keys {
		if fits(c, i) {
			n++
		}
	}
	if n == 0 {
		return 0, false // a forced class with no key
	}
	p := g.rng.IntN(n)
	for i := range g.k.keys {
		if fits(c, i) {
			if p == 0 {
				return i, true
			}
			p--
		}
	}
	return 0, false
}

// span draws a range's extent: one key, an interval from a key to a later
// one (or to just past the key when it is the last), from a key to the
// end of the run's keys, the run's whole prefix, or an empty range (its
// end at or before its key).
func (g *Gen) span(spanF, keyF int, inTxn bool, use func(string) bool) (key, end string, ok bool) {
	c := g.draw(spanF, inTxn, nil)
	if c < 0 {
		return "", "", false
	}
	cl := fields[spanF].classes[c]
	if cl == "prefix" {
		return g.cfg.Prefix, history.PrefixEnd(g.cfg.Prefix), true
	}
	if cl != "key" {
		use = nil
	}
	i, ok := g.key(keyF, inTxn, use)
	if !ok {
		return "", "", false
	}
	key, n := g.k.keys[i], len(g.k.keys)
	switch cl {
	case "interval":
		if i == n-1 {
			return key, key + "\x00", true
		}
		return key, g.k.keys[i+1+g.rng.IntN(n-1-i)], true
	case "from":
		return key, history.PrefixEnd(g.cfg.Prefix), true
	case "empty":
		return key, g.k.keys[g.rng.IntN(i+1)], true
	}
	return key, "", true
}

// The revision classes' values. A past revision lies above both the
// floor and the compact revision; the compact revision and the one below
// it are read only where the store was compacted in the run (or before,
// as HashKV said); a future one is far ahead of the head.
const futureAhead = 1000

func (g *Gen) revOK(c int) bool {
	r := g.rev
	switch revClasses[c] {
	case "head":
		return r.Head >= r.Floor && r.Head > 0
	case "past":
		return r.Head-1 >= max(r.Floor, r.Compact+1)
	case "compact":
		return r.Compact >= r.Floor && r.Compact > 0
	case "below-compact":
		return r.Compact >= 2
	case "future":
		return r.Head > 0
	}
	return true
}

func (g *Gen) revValue(cl string) int64 {
	r := g.rev
	switch cl {
	case "head":
		return r.Head
	case "past":
		lo := max(r.Floor, r.Compact+1)
		return lo + g.rng.Int64N(r.Head-lo)
	case "compact":
		return r.Compact
	case "below-compact":
		return r.Compact - 1
	case "future":
		return r.Head + futureAhead
	}
	return 0
}

// presentIn counts the keys the client believes present in [key, end).
func (g *Gen) presentIn(key, end string) int {
	n := 0
	for i, k := range g.k.keys {
		if s := g.k.st[i]; s.known && s.present && inSpan(k, key, end) {
			n++
		}
	}
	return n
}

func (g *Gen) rangeReq(inTxn bool) (history.Request, bool) {
	key, end, ok := g.span(fRangeSpan, fRangeKey, inTxn, nil)
	if !ok {
		return history.Request{}, false
	}
	r := history.Request{Kind: history.OpRange, Key: key, End: end}
	c := g.draw(fRangeRevision, inTxn, g.revOK)
	if c < 0 {
		return r, false
	}
	r.Revision = g.revValue(revClasses[c])
	count := g.presentIn(key, end)
	c = g.draw(fRangeLimit, inTxn, func(c int) bool {
		switch c {
		case 2:
			return count >= 3
		case 3:
			return count >= 2
		case 4:
			return count >= 1
		}
		return true
	})
	switch c {
	case -1:
		return r, false
	case 1:
		r.Limit = 1
	case 2:
		r.Limit = 2 + g.rng.Int64N(int64(count-2))
	case 3:
		r.Limit = int64(count)
	case 4:
		r.Limit = int64(count) + 1 + g.rng.Int64N(3)
	}
	if c = g.draw(fRangeSort, inTxn, nil); c < 0 {
		return r, false
	}
	if c > 0 {
		order, target, _ := strings.Cut(fields[fRangeSort].classes[c], "/")
		if order != "none" {
			r.SortOrder = order
		}
		r.SortTarget = target
	}
	for _, b := range []struct {
		f   int
		set *bool
	}{{fRangeSerializable, &r.Serializable}, {fRangeKeysOnly, &r.KeysOnly}, {fRangeCountOnly, &r.CountOnly}} {
		c := g.draw(b.f, inTxn, nil)
		if c < 0 {
			return r, false
		}
		*b.set = c == 1
	}
	for _, b := range []struct {
		f   int
		set *int64
	}{{fRangeMinMod, &r.MinModRevision}, {fRangeMaxMod, &r.MaxModRevision},
		{fRangeMinCreate, &r.MinCreateRevision}, {fRangeMaxCreate, &r.MaxCreateRevision}} {
		c := g.draw(b.f, inTxn, func(c int) bool { return c == 0 || g.rev.Head >= 2 })
		if c < 0 {
			return r, false
		}
		switch filterClasses[c] {
		case "past":
			*b.set = 1 + g.rng.Int64N(g.rev.Head-1)
		case "head":
			*b.set = g.rev.Head
		case "future":
			*b.set = g.rev.Head + futureAhead
		}
	}
	return r, true
}

// value is the next put's value: unique in the run, it names its write.
func (g *Gen) value() string {
	g.puts++
	if g.puts == 1 {
		return fmt.Sprintf("%s.%d", g.cfg.Client, g.Seq)
	}
	return fmt.Sprintf("%s.%d.%d", g.cfg.Client, g.Seq, g.puts-1)
}

// put draws a put; p, inside a txn, is the writes of the path so far: the
// key must be new to it.
func (g *Gen) put(inTxn bool, p *path) (history.Request, bool) {
	var use func(string) bool
	if p != nil {
		use = p.canPut
	}
	i, ok := g.key(fPutKey, inTxn, use)
	if !ok {
		return history.Request{}, false
	}
	r := history.Request{Kind: history.OpPut, Key: g.k.keys[i]}
	var cs [3]int
	for j, f := range []int{fPutPrevKV, fPutIgnoreValue, fPutIgnoreLease} {
		if cs[j] = g.draw(f, inTxn, nil); cs[j] < 0 {
			return r, false
		}
	}
	r.PrevKV, r.IgnoreValue, r.IgnoreLease = cs[0] == 1, cs[1] == 1, cs[2] == 1
	// etcd refuses a lease beside ignore_lease, as a value beside
	// ignore_value: both are left empty.
	c := g.draw(fPutLease, inTxn, func(c int) bool {
		switch {
		case c == 0:
			return true
		case r.IgnoreLease:
			return false
		case c == 1:
			return g.cfg.Leases.hasLive(false, 0)
		case c == 2:
			return g.cfg.Leases.hasRevoked()
		}
		return true
	})
	switch c {
	case -1:
		return r, false
	case 1:
		x := g.cfg.Leases.pickLive(g.rng, false, 0)
		if x == nil {
			return r, false
		}
		r.Lease = x.id
		g.attach = append(g.attach, leaseKey{x.id, r.Key})
	case 2:
		r.Lease, _ = g.cfg.Leases.pickRevoked(g.rng)
	case 3:
		r.Lease = neverLease(g.rng)
	}
	if !r.IgnoreValue {
		r.Value = g.value()
	}
	if p != nil {
		p.addPut(r.Key)
	}
	return r, true
}

// neverLease is a lease id no server grants: etcd chooses positive ids
// only (it clears the sign bit), and vigil grants no other.
func neverLease(rng *rand.Rand) int64 { return -1 - rng.Int64N(1<<40) }

// del draws a delete; p as for put.
func (g *Gen) del(inTxn bool, p *path) (history.Request, bool) {
	var use func(string) bool
	if p != nil {
		use = func(k string) bool { return p.canDelete(k, "") }
	}
	key, end, ok := g.span(fDeleteSpan, fDeleteKey, inTxn, use)
	if !ok || p != nil && !p.canDelete(key, end) {
		return history.Request{}, false
	}
	r := history.Request{Kind: history.OpDelete, Key: key, End: end}
	c := g.draw(fDeletePrevKV, inTxn, nil)
	if c < 0 {
		return r, false
	}
	r.PrevKV = c == 1
	if p != nil {
		p.addDelete(key, end)
	}
	return r, true
}

// leaseOf draws a lease of field f's classes: live (for a revoke, one
// granted by an operation; attached: one with keys), revoked (a revoke
// was acknowledged), never granted.
func (g *Gen) leaseOf(f int, revoke bool) (int64, bool) {
	attached := 0
	c := g.draw(f, false, func(c int) bool {
		switch cl := fields[f].classes[c]; cl {
		case "live", "attached":
			a := 0
			if revoke {
				a = -1
				if cl == "attached" {
					a = 1
				}
			}
			return g.cfg.Leases.hasLive(revoke, a)
		case "revoked":
			return g.cfg.Leases.hasRevoked()
		}
		return true
	})
	if c < 0 {
		return 0, false
	}
	switch cl := fields[f].classes[c]; cl {
	case "live", "attached":
		if revoke {
			attached = -1
			if cl == "attached" {
				attached = 1
			}
		}
		x := g.cfg.Leases.pickLive(g.rng, revoke, attached)
		if x == nil {
			return 0, false
		}
		if revoke {
			g.revoke = x
		}
		return x.id, true
	case "revoked":
		return g.cfg.Leases.pickRevoked(g.rng)
	}
	return neverLease(g.rng), true
}
