package grammar

import (
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/vigil-suite/vigil/history"
)

// Revisions is what every client of the run knows of the store's
// revisions: the highest header revision seen (Head), the revision of
// the last acknowledged compaction (Compact, 0: none known) and the
// lowest revision the run may read or compact (Floor: history written
// before the run is not the run's to judge).
type Revisions struct {
	Head, Compact, Floor int64
}

// keyState is what one client believes of one key, from the answers it
// got: whether it exists, and its revisions, version, value and lease.
type keyState struct {
	known, present bool
	mod, create    int64
	version, lease int64
	value          string
}

// knowledge is one client's belief about the run's keys. It is only a
// belief (other clients write too): value classes use it, no rule of
// soundness rests on it.
type knowledge struct {
	keys    []string // the run's keys, sorted
	idx     map[string]int
	st      []keyState
	deleted int // the key this client last deleted; -1: none
}

func newKnowledge(keys []string) *knowledge {
	k := &knowledge{keys: keys, idx: make(map[string]int, len(keys)), st: make([]keyState, len(keys)), deleted: -1}
	for i, key := range keys {
		k.idx[key] = i
	}
	return k
}

func (k *knowledge) state(key string) keyState {
	if i, ok := k.idx[key]; ok {
		return k.st[i]
	}
	return keyState{}
}

// forget drops what the client believed of the keys in [key, end) (end
// "": key alone): a write of unknown outcome may have changed them.
func (k *knowledge) forget(key, end string) {
	for i, kk := range k.keys {
		if inSpan(kk, key, end) {
			k.st[i] = keyState{}
		}
	}
}

// inSpan reports whether k lies in [key, end) (end "": k == key).
func inSpan(k, key, end string) bool {
	if end == "" {
		return k == key
	}
	return k >= key && k < end
}

// learn updates the belief from an answered request. rev is the
// revision of the whole request (a txn's, whose inner answers may carry
// none).
func (k *knowledge) learn(req *history.Request, resp *history.Response, rev int64) {
	history.Executed(req, resp, func(r *history.Request, rr *history.Response) {
		switch r.Kind {
		case history.OpRange:
			k.learnRange(r, rr)
		case history.OpPut:
			i, ok := k.idx[r.Key]
			if !ok {
				return
			}
			s := k.st[i]
			n := keyState{known: true, present: true, mod: rev, create: rev, version: 1, value: r.Value, lease: r.Lease}
			if s.known && s.present {
				n.create, n.version = s.create, s.version+1
				if r.IgnoreValue {
					n.value = s.value
				}
				if r.IgnoreLease {
					n.lease = s.lease
				}
			} else if r.IgnoreValue || r.IgnoreLease {
				n = keyState{} // it existed after all: what it held is unknown
			}
			k.st[i] = n
		case history.OpDelete:
			for i, kk := range k.keys {
				if inSpan(kk, r.Key, r.End) {
					k.st[i] = keyState{known: true}
					if r.End == "" {
						k.deleted = i
					}
				}
			}
		}
	})
}

// learnRange learns from a read of the present: each key returned, and,
// for a read that returns every key of its span (no limit, filter or
// count only), the absence of the others.
func (k *knowledge) learnRange(r *history.Request, resp *history.Response) {
	if resp == nil || r.Revision != 0 || r.CountOnly {
		return
	}
	whole := r.Limit == 0 && r.MinModRevision == 0 && r.MaxModRevision == 0 && r.MinCreateRevision == 0 && r.MaxCreateRevision == 0
	if whole {
		for i, kk := range k.keys {
			if inSpan(kk, r.Key, r.End) {
				k.st[i] = keyState{known: true}
			}
		}
	}
	for _, kv := range resp.KVs {
		i, ok := k.idx[kv.Key]
		if !ok {
			continue
		}
		s := keyState{known: true, present: true, mod: kv.ModRevision, create: kv.CreateRevision, version: kv.Version, value: kv.Value}
		old := k.st[i]
		if old.known && old.present && old.mod == kv.ModRevision {
			s.lease = old.lease // the answer carries no lease: keep what this client attached
		}
		if r.KeysOnly {
			s.value = old.value
		}
		k.st[i] = s
	}
}

// Leases are the leases of the run, shared by its clients: those granted
// and not revoked (live), each with the keys puts attached to it, and
// those whose revoke was acknowledged. A lease whose grant or revoke had
// an unknown outcome is in neither: it is never used again.
type Leases struct {
	mu      sync.Mutex
	live    []*lease
	revoked []int64
}

type lease struct {
	id int64
	// op: granted by a lease-grant operation, so a revoke operation may
	// take it (with its keys); the workload's background leases, granted
	// by calls, are never revoked.
	op       bool
	attached map[string]bool
}

// AddBackground adds a lease the workload keeps for the whole run
// (granted by a call, never revoked): puts may attach to it.
func (l *Leases) AddBackground(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.live = append(l.live, &lease{id: id, attached: map[string]bool{}})
}

func (l *Leases) granted(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.live = append(l.live, &lease{id: id, op: true, attached: map[string]bool{}})
}

// pickLive is a live lease (opOnly: one a revoke may take; attached: one
// with keys), or nil.
func (l *Leases) pickLive(rng *rand.Rand, opOnly bool, attached int) *lease {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, x := range l.live {
		if l.fits(x, opOnly, attached) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	p := rng.IntN(n)
	for _, x := range l.live {
		if l.fits(x, opOnly, attached) {
			if p == 0 {
				return x
			}
			p--
		}
	}
	return nil
}

// fits: attached is -1 for a lease with no key, 1 with some, 0 either.
func (l *Leases) fits(x *lease, opOnly bool, attached int) bool {
	if opOnly && !x.op {
		return false
	}
	switch attached {
	case 1:
		return len(x.attached) > 0
	case -1:
		return len(x.attached) == 0
	}
	return true
}

func (l *Leases) hasLive(opOnly bool, attached int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, x := range l.live {
		if l.fits(x, opOnly, attached) {
			return true
		}
	}
	return false
}

func (l *Leases) pickRevoked(rng *rand.Rand) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.revoked) == 0 {
		return 0, false
	}
	return l.revoked[rng.IntN(len(l.revoked))], true
}

func (l *Leases) hasRevoked() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.revoked) > 0
}

// take removes a lease from the live ones as its revoke is sent: no other
// client draws it as live meanwhile (one that drew it already may still
// use it: a race the API answers).
func (l *Leases) take(x *lease) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.live = slices.DeleteFunc(l.live, func(y *lease) bool { return y == x })
}

func (l *Leases) revokedOK(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.revoked = append(l.revoked, id)
}

// attach notes that a put (whatever its outcome) may have attached key
// to the lease id.
func (l *Leases) attach(id int64, key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, x := range l.live {
		if x.id == id {
			x.attached[key] = true
			return
		}
	}
}

// attachedKeys are the keys puts may have attached to x.
func (l *Leases) attachedKeys(x *lease) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for k := range x.attached {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// liveID is a live lease other than not (for a compare's "other" lease).
func (l *Leases) liveID(rng *rand.Rand, not int64) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []int64
	for _, x := range l.live {
		if x.id != not {
			ids = append(ids, x.id)
		}
	}
	if len(ids) == 0 {
		return 0, false
	}
	return ids[rng.IntN(len(ids))], true
}
