package grammar

import (
	"slices"
	"strings"

	"github.com/vigil-suite/vigil/history"
)

// sim is a small sequential store for the generator's tests: enough of
// etcd's behaviour that a client's knowledge evolves as in a run (keys
// come and go, leases are granted and revoked, compactions happen). It
// is no model of etcd: the checkers judge the real one.
type sim struct {
	kvs     map[string]history.KV
	leaseOf map[string]int64
	rev     int64
	compact int64
	leases  map[int64]bool
	nextID  int64
}

func newSim() *sim {
	return &sim{kvs: map[string]history.KV{}, leaseOf: map[string]int64{}, rev: 10, leases: map[int64]bool{}, nextID: 1000}
}

func (s *sim) revisions() Revisions { return Revisions{Head: s.rev, Compact: s.compact, Floor: 5} }

// do answers a request: a response, or an error code.
func (s *sim) do(r *history.Request) (*history.Response, history.ErrorCode) {
	switch r.Kind {
	case history.OpRange:
		if r.Revision > s.rev {
			return nil, history.ErrFutureRevision
		}
		if r.Revision > 0 && r.Revision < s.compact {
			return nil, history.ErrCompacted
		}
		resp := &history.Response{Revision: s.rev}
		for _, k := range s.sorted() {
			if inSpan(k, r.Key, r.End) {
				resp.KVs = append(resp.KVs, s.kvs[k])
			}
		}
		if r.Limit > 0 && int64(len(resp.KVs)) > r.Limit {
			resp.KVs, resp.More = resp.KVs[:r.Limit], true
		}
		return resp, ""
	case history.OpPut, history.OpDelete:
		if code := s.check(r); code != "" {
			return nil, code
		}
		s.rev++
		s.apply(r)
		return &history.Response{Revision: s.rev}, ""
	case history.OpTxn:
		if invalidTxn(r) {
			return nil, history.ErrInvalid
		}
		var code history.ErrorCode
		r.Walk(func(q *history.Request) bool {
			if q.Kind == history.OpRange && q.Revision > 0 && q.Revision < s.compact {
				code = history.ErrCompacted
			}
			if q.Kind == history.OpRange && q.Revision > s.rev {
				code = history.ErrFutureRevision
			}
			return true
		})
		if code != "" {
			return nil, code
		}
		wrote := false
		s.rev++ // the txn's writes take the next revision, if any
		resp := s.txn(r, &wrote)
		if !wrote {
			s.rev--
		}
		resp.Revision = s.rev
		return resp, ""
	case history.OpLeaseGrant:
		id := r.Lease
		if id == 0 {
			s.nextID++
			id = s.nextID
		}
		s.leases[id] = true
		return &history.Response{Revision: s.rev, Lease: id, TTL: r.TTL}, ""
	case history.OpLeaseRevoke:
		if !s.leases[r.Lease] {
			return nil, history.ErrLeaseNotFound
		}
		delete(s.leases, r.Lease)
		any := false
		for k, id := range s.leaseOf {
			if id == r.Lease {
				delete(s.kvs, k)
				delete(s.leaseOf, k)
				any = true
			}
		}
		if any {
			s.rev++
		}
		return &history.Response{Revision: s.rev}, ""
	case history.OpCompact:
		if r.Revision <= s.compact {
			return nil, history.ErrCompacted
		}
		if r.Revision > s.rev {
			return nil, history.ErrFutureRevision
		}
		s.compact = r.Revision
		return &history.Response{Revision: s.rev}, ""
	}
	return &history.Response{Revision: s.rev}, ""
}

func (s *sim) sorted() []string {
	var ks []string
	for k := range s.kvs {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func (s *sim) check(r *history.Request) history.ErrorCode {
	if r.Kind != history.OpPut {
		return ""
	}
	if r.Lease != 0 && !s.leases[r.Lease] {
		return history.ErrLeaseNotFound
	}
	if _, ok := s.kvs[r.Key]; !ok && (r.IgnoreValue || r.IgnoreLease) {
		return history.ErrKeyNotFound
	}
	return ""
}

func (s *sim) apply(r *history.Request) {
	switch r.Kind {
	case history.OpPut:
		old, ok := s.kvs[r.Key]
		kv := history.KV{Key: r.Key, Value: r.Value, CreateRevision: s.rev, ModRevision: s.rev, Version: 1}
		if ok {
			kv.CreateRevision, kv.Version = old.CreateRevision, old.Version+1
			if r.IgnoreValue {
				kv.Value = old.Value
			}
		}
		s.kvs[r.Key] = kv
		if !r.IgnoreLease {
			s.leaseOf[r.Key] = r.Lease
		}
	case history.OpDelete:
		for k := range s.kvs {
			if inSpan(k, r.Key, r.End) {
				delete(s.kvs, k)
				delete(s.leaseOf, k)
			}
		}
	}
}

// txn evaluates the compares roughly (equality on the first key) and
// applies the branch taken.
func (s *sim) txn(r *history.Request, wrote *bool) *history.Response {
	ok := true
	for _, c := range r.Compares {
		kv := s.kvs[c.Key]
		var v int64
		switch c.Target {
		case "mod":
			v = kv.ModRevision
		case "create":
			v = kv.CreateRevision
		case "version":
			v = kv.Version
		case "lease":
			v = s.leaseOf[c.Key]
		}
		eq := v == c.Int
		if c.Target == "value" {
			eq = kv.Value == c.Value
		}
		switch c.Result {
		case "=":
			ok = ok && eq
		case "!=":
			ok = ok && !eq
		}
	}
	resp := &history.Response{Succeeded: ok}
	for i := range r.Branch(ok) {
		q := &r.Branch(ok)[i]
		switch q.Kind {
		case history.OpTxn:
			resp.Responses = append(resp.Responses, *s.txn(q, wrote))
		case history.OpRange:
			rr, _ := s.do(q)
			if rr == nil {
				rr = &history.Response{}
			}
			resp.Responses = append(resp.Responses, *rr)
		default:
			if s.check(q) == "" {
				*wrote = true
				s.apply(q)
			}
			resp.Responses = append(resp.Responses, history.Response{})
		}
	}
	return resp
}

// invalidTxn is etcd's check of a txn's lists (etcdserver's
// checkIntervals, as its code reads): within one list, a put of a key
// another put of the list, or of a txn it holds, puts too, or that a
// delete of the list (or of a txn it holds) covers.
func invalidTxn(r *history.Request) bool {
	_, _, bad := checkList(r.Success)
	if !bad {
		_, _, bad = checkList(r.Failure)
	}
	return bad
}

func checkList(reqs []history.Request) (map[string]bool, [][2]string, bool) {
	var dels [][2]string
	covered := func(k string) bool {
		for _, d := range dels {
			if k >= d[0] && (k < d[1]) {
				return true
			}
		}
		return false
	}
	for _, q := range reqs {
		if q.Kind == history.OpDelete {
			end := q.End
			if end == "" {
				end = q.Key + "\x00"
			}
			dels = append(dels, [2]string{q.Key, end})
		}
	}
	puts := map[string]bool{}
	for _, q := range reqs {
		if q.Kind != history.OpTxn {
			continue
		}
		pt, dt, bad := checkList(q.Success)
		if bad {
			return nil, nil, true
		}
		pe, de, bad := checkList(q.Failure)
		if bad {
			return nil, nil, true
		}
		for k := range pt {
			if puts[k] || covered(k) {
				return nil, nil, true
			}
			puts[k] = true
		}
		for k := range pe {
			if puts[k] && !pt[k] || covered(k) {
				return nil, nil, true
			}
			puts[k] = true
		}
		dels = append(dels, dt...)
		dels = append(dels, de...)
	}
	for _, q := range reqs {
		if q.Kind != history.OpPut {
			continue
		}
		if puts[q.Key] || covered(q.Key) {
			return nil, nil, true
		}
		puts[q.Key] = true
	}
	return puts, dels, false
}

// paths lists the writes of every path through a txn: one branch of each
// txn on the way.
func paths(r *history.Request) [][]history.Request {
	if r.Kind != history.OpTxn {
		if r.Kind == history.OpPut || r.Kind == history.OpDelete {
			return [][]history.Request{{*r}}
		}
		return [][]history.Request{nil}
	}
	var out [][]history.Request
	for _, br := range [][]history.Request{r.Success, r.Failure} {
		acc := [][]history.Request{nil}
		for i := range br {
			var next [][]history.Request
			for _, sub := range paths(&br[i]) {
				for _, a := range acc {
					next = append(next, append(slices.Clone(a), sub...))
				}
			}
			acc = next
			if len(acc) > 64 {
				acc = acc[:64] // enough paths to judge; a txn has few
			}
		}
		out = append(out, acc...)
	}
	return out
}

// overlaps reports whether two writes of one path touch a key in common.
func overlaps(a, b history.Request) bool {
	ia, ib := writeSpan(a), writeSpan(b)
	return ia[0] < ib[1] && ib[0] < ia[1]
}

func writeSpan(r history.Request) [2]string {
	if r.Kind == history.OpPut || r.End == "" {
		return [2]string{r.Key, r.Key + "\x00"}
	}
	if strings.Compare(r.End, r.Key) <= 0 {
		return [2]string{r.End, r.Key + "\x00"}
	}
	return [2]string{r.Key, r.End}
}
