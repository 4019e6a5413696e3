package linearizable

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// This file holds the state of the kv/linearizable model: the etcd store as
// the workload sees it, value-typed and cheap to copy.
//
// Revisions are kept relative to the store revision at the start of the
// run (the base), which the history does not record: the prefix is fresh,
// but the cluster's revision is not. The base becomes known at the first
// step that carries a header revision; until then the model only narrows
// the bounds the base must lie in. The compact revision is likewise unknown
// at the start and kept as bounds [compactLo, compactHi].

// keyspace is what the model knows about a history before the search: the
// keys that can ever exist (every key some put names), the values written,
// and the revisions that acknowledged writes occupy. It is built once and
// never changed, so Step may read it and stay pure.
type keyspace struct {
	keys     []string // sorted
	index    map[string]int32
	values   []string
	valueIdx map[string]int32
	// writer maps a value to the id of the operation that wrote it.
	writer map[string]int64
	// taken maps the absolute revisions of acknowledged writes to their
	// operations: a write whose outcome is unknown cannot have been applied
	// at one of them.
	taken map[int64]int64
	// horizon is the highest revision any response shows (a header
	// revision of an answered request, a watch event's): a write applied
	// above it is invisible, as if linearized after the end.
	horizon int64
	// quiet holds, per key, the revisions at which no write of unknown
	// outcome can have touched it (see kvquiet.go).
	quiet [][]span
	// pins holds what watches saw written at (revision, key).
	pins map[revKeyIdx]int32
	// pinWatch names the watch each pin was taken from.
	pinWatch map[revKeyIdx]int64
	// leases are the lease ids the history names (puts, compares, lease
	// operations and calls), index 0 standing for no lease; dynamic[i]
	// is the bit number + 1 a lease has in kvState.leaseKnown/leaseLive,
	// 0 for one that lives through the history, -1 for one that never
	// exists in it (indexLeases)
	// has, 0 for a lease granted by a call and never revoked by an
	// operation, which lives through the whole history.
	leases   []int64
	leaseIdx map[int64]int32
	dynamic  []int32
	// leaseKeys lists, by lease index, the keys some put attaches to it.
	leaseKeys map[int32][]int32
	// grantedHere holds the bits of the tracked leases known not to exist
	// at the history's start (see indexLeases).
	grantedHere leaseBits
	// ignoreValue holds the keys some put with ignore_value may rewrite:
	// a value seen on them does not date the write that made it.
	ignoreValue map[string]bool
	// noVersions: the target documents that it keeps no versions, so a
	// returned version of 0 is not compared (history.LimitationNoVersions).
	noVersions bool
	// evidence holds what proves each quiet span, for explanations.
	evidence map[int32][]evidence
	// prefix is stripped from keys in descriptions.
	prefix string
}

// span returns the indexes [lo, hi) of the known keys in the range
// [key, end); an empty end means the single key, "\x00" means every key
// from key on.
func (ks *keyspace) span(key, end string) (int32, int32) {
	lo := int32(sort.SearchStrings(ks.keys, key))
	switch end {
	case "":
		if int(lo) < len(ks.keys) && ks.keys[lo] == key {
			return lo, lo + 1
		}
		return lo, lo
	case "\x00":
		return lo, int32(len(ks.keys))
	}
	hi := int32(sort.SearchStrings(ks.keys, end))
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

func (ks *keyspace) short(key string) string { return facts.ShortKey(ks.prefix, key) }

// writes calls f for every key an operation of a path may change: a put's
// key, a delete's range, the keys a put ever attached to a revoke's lease.
func (ks *keyspace) writes(r *history.Request, f func(k int32)) {
	switch r.Kind {
	case history.OpPut, history.OpDelete:
		lo, hi := ks.span(r.Key, r.End)
		for k := lo; k < hi; k++ {
			f(k)
		}
	case history.OpLeaseRevoke:
		for _, k := range ks.leaseKeys[ks.leaseIdx[r.Lease]] {
			f(k)
		}
	}
}

// kvEntry is one key. create == 0 means the key does not exist. Revisions
// are relative to the base; value indexes keyspace.values, lease
// keyspace.leases (0: no lease).
type kvEntry struct {
	value, create, mod, version, lease int32
}

const chunkSize = 16

// kvChunk holds chunkSize consecutive keys. Chunks are shared between
// states and never written once published: a step copies the chunks it
// changes (copy on write), so a state copy costs a slice header.
type kvChunk [chunkSize]kvEntry

// kvState is the model's state. It is a value: copying it and changing the
// copy through a writer leaves the original untouched.
type kvState struct {
	chunks []*kvChunk // nil chunk: no key of it exists
	khash  uint64     // XOR of entryHash over the keys, kept up to date by writer
	rev    int32      // revisions since the start of the run
	ended  bool       // the synthetic end of history has been linearized

	base           int64 // absolute revision at the start; 0 while unknown
	baseLo, baseHi int64 // bounds on base while it is unknown

	compactLo, compactHi int64 // bounds on the compact revision (absolute)

	// leaseKnown and leaseLive hold, by keyspace.dynamic bit, whether a
	// tracked lease's existence is known yet (a lease granted before the
	// history, in an earlier segment, is not until a request shows it) and
	// whether it exists.
	leaseKnown, leaseLive leaseBits
}

// leaseBits is a set of tracked leases, by bit number, shared between
// states and never written once published: set returns a copy (leases
// change far less often than keys, so copying the words is cheap).
type leaseBits []uint64

func newLeaseBits(n int) leaseBits { return make(leaseBits, (n+63)/64) }

func (b leaseBits) has(n int32) bool { return b[n/64]&(1<<(n%64)) != 0 }

// set returns b with bit n on or off, copied when it changes.
func (b leaseBits) set(n int32, on bool) leaseBits {
	if b.has(n) == on {
		return b
	}
	c := slices.Clone(b)
	c[n/64] ^= 1 << (n % 64)
	return c
}

func initialState(ks *keyspace) kvState {
	return kvState{
		chunks:     make([]*kvChunk, (len(ks.keys)+chunkSize-1)/chunkSize),
		baseLo:     1,
		baseHi:     math.MaxInt64,
		compactHi:  math.MaxInt64,
		leaseKnown: ks.grantedHere,
		leaseLive:  newLeaseBits(len(ks.grantedHere) * 64),
	}
}

func (s *kvState) get(i int32) kvEntry {
	c := s.chunks[i/chunkSize]
	if c == nil {
		return kvEntry{}
	}
	return c[i%chunkSize]
}

// abs turns a relative revision into an absolute one; the base must be known.
func (s *kvState) abs(rel int32) int64 { return s.base + int64(rel) }

// current is the absolute store revision; the base must be known.
func (s *kvState) current() int64 { return s.abs(s.rev) }

// revIs requires base+rel == abs, fixing the base if it is still unknown.
func (s *kvState) revIs(rel int32, abs int64) bool {
	if s.base != 0 {
		return s.abs(rel) == abs
	}
	b := abs - int64(rel)
	if b < max(1, s.baseLo) || b > s.baseHi {
		return false
	}
	s.base = b
	return true
}

// revAtLeast requires the current revision to be >= n.
func (s *kvState) revAtLeast(n int64) bool {
	if s.base != 0 {
		return s.current() >= n
	}
	s.baseLo = max(s.baseLo, n-int64(s.rev))
	return s.baseLo <= s.baseHi
}

// revAtMost requires the current revision to be <= n.
func (s *kvState) revAtMost(n int64) bool {
	if s.base != 0 {
		return s.current() <= n
	}
	s.baseHi = min(s.baseHi, n-int64(s.rev))
	return max(1, s.baseLo) <= s.baseHi
}

// compactAtMost requires the compact revision to be <= n.
func (s *kvState) compactAtMost(n int64) bool {
	s.compactHi = min(s.compactHi, n)
	return s.compactLo <= s.compactHi
}

// compactAtLeast requires the compact revision to be >= n (and so the
// current revision too).
func (s *kvState) compactAtLeast(n int64) bool {
	s.compactLo = max(s.compactLo, n)
	return s.compactLo <= s.compactHi && s.revAtLeast(s.compactLo)
}

// writer changes a copy of a state, copying each shared chunk it touches
// once. Use one writer per step.
type writer struct {
	s        *kvState
	ownTop   bool
	ownedIdx []int32
}

func (w *writer) set(i int32, e kvEntry) {
	s := w.s
	old := s.get(i)
	if old == e {
		return
	}
	if !w.ownTop {
		s.chunks = append([]*kvChunk(nil), s.chunks...)
		w.ownTop = true
	}
	ci := i / chunkSize
	owned := false
	for _, o := range w.ownedIdx {
		if o == ci {
			owned = true
			break
		}
	}
	if !owned {
		c := new(kvChunk)
		if s.chunks[ci] != nil {
			*c = *s.chunks[ci]
		}
		s.chunks[ci] = c
		w.ownedIdx = append(w.ownedIdx, ci)
	}
	s.chunks[ci][i%chunkSize] = e
	s.khash ^= entryHash(i, old) ^ entryHash(i, e)
}

// mix is the splitmix64 finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func entryHash(i int32, e kvEntry) uint64 {
	if e.create == 0 {
		return 0
	}
	h := mix(uint64(uint32(i)) | uint64(uint32(e.value))<<32)
	h = mix(h ^ (uint64(uint32(e.create)) | uint64(uint32(e.mod))<<32))
	return mix(h ^ (uint64(uint32(e.version)) | uint64(uint32(e.lease))<<32))
}

// hashState satisfies porcupine's invariant: equal states (stateEqual) have
// equal hashes, since it reads only fields stateEqual compares and khash is
// a function of the entries.
func hashState(s kvState) uint64 {
	h := s.khash
	h = mix(h ^ uint64(uint32(s.rev)))
	h = mix(h ^ uint64(s.base))
	h = mix(h ^ uint64(s.compactLo) ^ uint64(s.compactHi)<<1)
	h = mix(h ^ uint64(s.baseLo) ^ uint64(s.baseHi)<<1)
	for i := range s.leaseKnown {
		h = mix(h ^ s.leaseKnown[i] ^ s.leaseLive[i]<<1)
	}
	if s.ended {
		h = mix(h ^ 1)
	}
	return h
}

func stateEqual(a, b kvState) bool {
	if a.rev != b.rev || a.ended != b.ended || a.base != b.base || a.baseLo != b.baseLo ||
		a.baseHi != b.baseHi || a.compactLo != b.compactLo || a.compactHi != b.compactHi ||
		a.khash != b.khash || len(a.chunks) != len(b.chunks) || !slices.Equal(a.leaseKnown, b.leaseKnown) ||
		!slices.Equal(a.leaseLive, b.leaseLive) {
		return false
	}
	for i := range a.chunks {
		ca, cb := a.chunks[i], b.chunks[i]
		switch {
		case ca == cb:
		case ca == nil:
			if *cb != (kvChunk{}) {
				return false
			}
		case cb == nil:
			if *ca != (kvChunk{}) {
				return false
			}
		case *ca != *cb:
			return false
		}
	}
	return true
}

// describe renders a state for people: revision, compact bounds and every
// existing key with its value and revisions.
func (ks *keyspace) describe(s kvState) string {
	var b strings.Builder
	b.WriteString(ks.describeRev(s))
	b.WriteString(" {")
	n := 0
	for i := range ks.keys {
		e := s.get(int32(i))
		if e.create == 0 {
			continue
		}
		if n > 0 {
			b.WriteString(", ")
		}
		n++
		fmt.Fprintf(&b, "%s=%s", ks.short(ks.keys[i]), ks.kvString(s, e))
	}
	b.WriteString("}")
	return b.String()
}

// describeRev renders only the revision and compaction of a state.
func (ks *keyspace) describeRev(s kvState) string {
	var b strings.Builder
	if s.base != 0 {
		fmt.Fprintf(&b, "rev %d", s.current())
	} else {
		fmt.Fprintf(&b, "rev start+%d", s.rev)
	}
	switch {
	case s.compactLo == s.compactHi:
		fmt.Fprintf(&b, ", compacted %d", s.compactLo)
	case s.compactLo > 0:
		fmt.Fprintf(&b, ", compacted >= %d", s.compactLo)
	}
	return b.String()
}

// kvString renders an entry as value@mod (create, version).
func (ks *keyspace) kvString(s kvState, e kvEntry) string {
	if e.create == 0 {
		return "<absent>"
	}
	lease := ""
	if e.lease != 0 {
		lease = fmt.Sprintf(", lease %d", ks.leases[e.lease])
	}
	return fmt.Sprintf("%q@%s (created %s, version %d%s)", ks.values[e.value],
		s.revString(e.mod), s.revString(e.create), e.version, lease)
}

// leaseState says whether lease index l exists in s: live, and known
// (false while a lease granted before the history has not shown which).
func (ks *keyspace) leaseState(s *kvState, l int32) (live, known bool) {
	switch bit := ks.dynamic[l] - 1; {
	case bit == -2:
		return false, true // nothing grants it, every put found it missing
	case bit < 0:
		return l != 0, true // granted by a call, never revoked: it lives; no lease: none
	default:
		return s.leaseLive.has(bit), s.leaseKnown.has(bit)
	}
}

// setLease records in s that lease index l exists or not.
func (ks *keyspace) setLease(s *kvState, l int32, live bool) {
	bit := ks.dynamic[l] - 1
	if bit < 0 {
		return
	}
	s.leaseKnown = s.leaseKnown.set(bit, true)
	s.leaseLive = s.leaseLive.set(bit, live)
}

func (s *kvState) revString(rel int32) string {
	if s.base == 0 {
		return fmt.Sprintf("start+%d", rel)
	}
	return fmt.Sprint(s.abs(rel))
}
