package linearizable

import (
	"errors"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

// Short constructors for the grammar's requests, keys given short.
func put(k, v string) history.Request {
	return history.Request{Kind: history.OpPut, Key: histbuild.K(k), Value: v}
}
func get(k string) history.Request {
	return history.Request{Kind: history.OpRange, Key: histbuild.K(k)}
}
func all() history.Request {
	return history.Request{Kind: history.OpRange, Key: histbuild.TestPrefix, End: "/p0"}
}
func cmpInt(k, target, result string, n int64) history.Compare {
	return history.Compare{Key: histbuild.K(k), Target: target, Result: result, Int: n}
}
func txn(cmps []history.Compare, then, els []history.Request) history.Request {
	return history.Request{Kind: history.OpTxn, Compares: cmps, Success: then, Failure: els}
}
func resp(rev int64, kvs ...history.KV) *history.Response {
	return &history.Response{Revision: rev, KVs: kvs, Count: int64(len(kvs))}
}

// TestGrammarProductions holds, for each production of the etcd API's
// grammar the model judges, a history it must accept and one it must
// reject, named "production - situation - pass|fail".
func TestGrammarProductions(t *testing.T) {
	kv := histbuild.Kv
	cases := []struct {
		name  string
		build func(b *histbuild.Builder) int64 // the operation a violation must name first (0 on pass)
		want  check.Verdict
		msg   string
	}{
		// Nested txns: compares on the path are evaluated on the store
		// before the request; a range after a put of the same txn sees it.
		{name: "nested txn - inner failure branch puts and reads it back - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				inner := txn([]history.Compare{cmpInt("a", history.CompareVersion, ">", 5)},
					[]history.Request{put("x", "x1")}, []history.Request{put("y", "y1"), get("y")})
				b.Op(1, 20, 30, txn([]history.Compare{cmpInt("a", history.CompareMod, "=", 11)}, []history.Request{inner}, nil),
					&history.Response{Revision: 12, Succeeded: true, Responses: []history.Response{{Succeeded: false,
						Responses: []history.Response{{Revision: 12}, {Revision: 12, KVs: []history.KV{kv("y", "y1", 12, 12, 1)}, Count: 1}}}}}, "")
				b.Get(2, 40, 50, "x", 12)
				return 0
			}},
		{name: "nested txn - inner compare answered the wrong way - fail", want: check.Fail, msg: "nested 1 deep",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				inner := txn([]history.Compare{cmpInt("a", history.CompareVersion, "=", 1)},
					[]history.Request{put("x", "x1")}, []history.Request{put("y", "y1")})
				return b.Op(1, 20, 30, txn(nil, []history.Request{inner}, nil),
					&history.Response{Revision: 12, Succeeded: true, Responses: []history.Response{{Succeeded: false,
						Responses: []history.Response{{Revision: 12}}}}}, "")
			}},
		{name: "nested txn of unknown outcome applied on the path its compares choose - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				inner := txn([]history.Compare{cmpInt("a", history.CompareVersion, "=", 1)},
					[]history.Request{put("x", "x1")}, []history.Request{put("y", "y1")})
				b.Op(1, 20, 30, txn(nil, []history.Request{inner}, nil), nil, history.ErrUnknown)
				b.Get(2, 40, 50, "x", 12, kv("x", "x1", 12, 12, 1))
				return 0
			}},
		{name: "nested txn of unknown outcome seen on the path its compares rule out - fail", want: check.Fail, msg: "another branch",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				inner := txn([]history.Compare{cmpInt("a", history.CompareVersion, "=", 1)},
					[]history.Request{put("x", "x1")}, []history.Request{put("y", "y1")})
				id := b.Op(1, 20, 30, txn(nil, []history.Request{inner}, nil), nil, history.ErrUnknown)
				b.Get(2, 40, 50, "y", 12, kv("y", "y1", 12, 12, 1))
				return id
			}},
		// Several compares, and compares over a range of keys.
		{name: "multi-compare and range compare - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "b", "w1", 12)
				rng := history.Compare{Key: histbuild.K("a"), End: histbuild.K("c"), Target: history.CompareVersion, Result: "=", Int: 1}
				b.Op(1, 40, 50, txn([]history.Compare{rng, cmpInt("b", history.CompareCreate, ">", 11)}, []history.Request{put("c", "x1")}, nil),
					&history.Response{Revision: 13, Succeeded: true, Responses: []history.Response{{Revision: 13}}}, "")
				// Over a range where no key exists, a value compare fails and a
				// version compare compares 0.
				none := history.Compare{Key: histbuild.K("m"), End: histbuild.K("n"), Target: history.CompareVersion, Result: "=", Int: 0}
				b.Op(1, 60, 70, txn([]history.Compare{none}, nil, nil), &history.Response{Revision: 13, Succeeded: true}, "")
				return 0
			}},
		{name: "range compare succeeded though one key of the range fails it - fail", want: check.Fail, msg: "compares evaluate to false",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "b", "w1", 12)
				b.Put(1, 40, 50, "b", "w2", 13)
				rng := history.Compare{Key: histbuild.K("a"), End: histbuild.K("c"), Target: history.CompareVersion, Result: "=", Int: 1}
				return b.Op(1, 60, 70, txn([]history.Compare{rng}, []history.Request{put("c", "x1")}, nil),
					&history.Response{Revision: 14, Succeeded: true, Responses: []history.Response{{Revision: 14}}}, "")
			}},
		{name: "txn of serializable ranges alone answers from one member's state: a stale answer - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "a", "v2", 12)
				r := get("a")
				r.Serializable = true
				b.Op(2, 40, 50, txn(nil, []history.Request{r}, nil), &history.Response{Revision: 11, Succeeded: true,
					Responses: []history.Response{{Revision: 11, KVs: []history.KV{kv("a", "v1", 11, 11, 1)}, Count: 1}}}, "")
				b.Op(2, 60, 70, txn([]history.Compare{cmpInt("a", history.CompareVersion, "=", 1)}, nil, nil),
					&history.Response{Revision: 11, Succeeded: true}, "")
				return 0
			}},
		{name: "txn with a linearizable range answers a stale state - fail", want: check.Fail, msg: "written by operation 2",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "a", "v2", 12)
				return b.Op(2, 40, 50, txn(nil, []history.Request{get("a")}, nil), &history.Response{Revision: 11, Succeeded: true,
					Responses: []history.Response{{Revision: 11, KVs: []history.KV{kv("a", "v1", 11, 11, 1)}, Count: 1}}}, "")
			}},
		// Sorted and filtered ranges; count before the filters; ties in
		// any order.
		{name: "range sorted by version with a tie cut by the limit - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "b", "w1", 12)
				b.Put(1, 40, 50, "b", "w2", 13)
				b.Put(1, 60, 70, "c", "x1", 14)
				r := all()
				r.SortOrder, r.SortTarget, r.Limit = history.SortDescend, history.SortByVersion, 2
				b.Op(2, 80, 90, r, &history.Response{Revision: 14, Count: 3, More: true,
					KVs: []history.KV{kv("b", "w2", 12, 13, 2), kv("c", "x1", 14, 14, 1)}}, "")
				r.SortOrder, r.SortTarget, r.Limit = "", history.SortByMod, 0
				r.MinModRevision = 12
				b.Op(2, 100, 110, r, &history.Response{Revision: 14, Count: 3,
					KVs: []history.KV{kv("b", "w2", 12, 13, 2), kv("c", "x1", 14, 14, 1)}}, "")
				return 0
			}},
		{name: "range sorted descending by value in the wrong order - fail", want: check.Fail, msg: "sorted descend by value",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "b", "w1", 12)
				r := all()
				r.SortOrder, r.SortTarget = history.SortDescend, history.SortByValue
				return b.Op(2, 40, 50, r, &history.Response{Revision: 12, Count: 2,
					KVs: []history.KV{kv("a", "v1", 11, 11, 1), kv("b", "w1", 12, 12, 1)}}, "")
			}},
		{name: "filtered range returns a key outside its filter - fail", want: check.Fail, msg: "filtered",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "b", "w1", 12)
				r := all()
				r.MaxCreateRevision = 11
				return b.Op(2, 40, 50, r, &history.Response{Revision: 12, Count: 2,
					KVs: []history.KV{kv("a", "v1", 11, 11, 1), kv("b", "w1", 12, 12, 1)}}, "")
			}},
		// count_only with a limit: the count of all keys, no key, more false.
		{name: "count only with a limit - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "b", "w1", 12)
				r := all()
				r.CountOnly, r.Limit = true, 1
				b.Op(2, 40, 50, r, &history.Response{Revision: 12, Count: 2}, "")
				return 0
			}},
		{name: "count only with a limit answers more - fail", want: check.Fail, msg: "more",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "b", "w1", 12)
				r := all()
				r.CountOnly, r.Limit = true, 1
				return b.Op(2, 40, 50, r, &history.Response{Revision: 12, Count: 2, More: true}, "")
			}},
		// ignore_value: keeps the value, bumps version and mod; on a
		// missing key it fails with key-not-found and takes no revision.
		{name: "put with ignore_value keeps the value, fails on a missing key - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Op(1, 20, 30, history.Request{Kind: history.OpPut, Key: histbuild.K("a"), IgnoreValue: true}, resp(12), "")
				b.Op(1, 40, 50, history.Request{Kind: history.OpPut, Key: histbuild.K("z"), IgnoreValue: true}, nil, history.ErrKeyNotFound)
				b.Get(2, 60, 70, "a", 12, kv("a", "v1", 11, 12, 2))
				b.Get(2, 80, 90, "z", 12)
				return 0
			}},
		{name: "put with ignore_value refused as key-not-found on a key that exists - fail", want: check.Fail, msg: "key-not-found",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				return b.Op(1, 20, 30, history.Request{Kind: history.OpPut, Key: histbuild.K("a"), IgnoreValue: true}, nil, history.ErrKeyNotFound)
			}},
		{name: "put with ignore_lease answered on a missing key - fail", want: check.Fail, msg: "key-not-found",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				return b.Op(1, 20, 30, history.Request{Kind: history.OpPut, Key: histbuild.K("z"), Value: "z1", IgnoreLease: true}, resp(12), "")
			}},
		// Leases: a revoke deletes the keys attached, in one revision;
		// a put to a revoked lease fails; compares read the lease.
		{name: "lease granted, attached, compared, revoked with its key - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Op(1, 20, 30, history.Request{Kind: history.OpLeaseGrant, TTL: 600}, &history.Response{Revision: 11, Lease: 77, TTL: 600}, "")
				b.Op(1, 40, 50, history.Request{Kind: history.OpPut, Key: histbuild.K("l"), Value: "l1", Lease: 77}, resp(12), "")
				b.Op(2, 60, 70, txn([]history.Compare{cmpInt("l", history.CompareLease, "=", 77)}, nil, nil),
					&history.Response{Revision: 12, Succeeded: true}, "")
				b.Op(1, 80, 90, history.Request{Kind: history.OpLeaseRevoke, Lease: 77}, resp(13), "")
				b.Get(2, 100, 110, "l", 13)
				b.Op(1, 120, 130, history.Request{Kind: history.OpPut, Key: histbuild.K("m"), Value: "m1", Lease: 77}, nil, history.ErrLeaseNotFound)
				b.Op(1, 140, 150, history.Request{Kind: history.OpLeaseRevoke, Lease: 77}, nil, history.ErrLeaseNotFound)
				return 0
			}},
		{name: "key read after the revoke of its lease - fail", want: check.Fail, msg: "does not exist in the store",
			build: func(b *histbuild.Builder) int64 {
				b.Op(1, 20, 30, history.Request{Kind: history.OpLeaseGrant, TTL: 600}, &history.Response{Revision: 10, Lease: 77, TTL: 600}, "")
				b.Op(1, 40, 50, history.Request{Kind: history.OpPut, Key: histbuild.K("l"), Value: "l1", Lease: 77}, resp(11), "")
				b.Op(1, 80, 90, history.Request{Kind: history.OpLeaseRevoke, Lease: 77}, resp(12), "")
				return b.Get(2, 100, 110, "l", 12, kv("l", "l1", 11, 11, 1))
			}},
		{name: "put to a live lease refused as lease-not-found - fail", want: check.Fail, msg: "lease-not-found",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Op(1, 20, 30, history.Request{Kind: history.OpLeaseGrant, TTL: 600}, &history.Response{Revision: 11, Lease: 77, TTL: 600}, "")
				return b.Op(1, 40, 50, history.Request{Kind: history.OpPut, Key: histbuild.K("l"), Value: "l1", Lease: 77}, nil, history.ErrLeaseNotFound)
			}},
		{name: "compare on lease answered as if the key had none - fail", want: check.Fail, msg: "compares evaluate",
			build: func(b *histbuild.Builder) int64 {
				b.Op(1, 20, 30, history.Request{Kind: history.OpLeaseGrant, TTL: 600}, &history.Response{Revision: 10, Lease: 77, TTL: 600}, "")
				b.Op(1, 40, 50, history.Request{Kind: history.OpPut, Key: histbuild.K("l"), Value: "l1", Lease: 77}, resp(11), "")
				// A txn of no request at all is served from one member's
				// state (etcd's IsTxnSerializable): one that puts is not.
				return b.Op(2, 60, 70, txn([]history.Compare{cmpInt("l", history.CompareLease, "=", 0)}, []history.Request{put("m", "m1")}, nil),
					&history.Response{Revision: 12, Succeeded: true, Responses: []history.Response{{Revision: 12}}}, "")
			}},
		{name: "a put without ignore_lease detaches the key: the revoke leaves it - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Op(1, 20, 30, history.Request{Kind: history.OpLeaseGrant, TTL: 600}, &history.Response{Revision: 10, Lease: 77, TTL: 600}, "")
				b.Op(1, 40, 50, history.Request{Kind: history.OpPut, Key: histbuild.K("l"), Value: "l1", Lease: 77}, resp(11), "")
				b.Op(1, 60, 70, history.Request{Kind: history.OpPut, Key: histbuild.K("l"), IgnoreValue: true}, resp(12), "")
				b.Op(1, 80, 90, history.Request{Kind: history.OpLeaseRevoke, Lease: 77}, resp(12), "")
				b.Get(2, 100, 110, "l", 12, kv("l", "l1", 11, 12, 2))
				return 0
			}},
		{name: "put to a lease nothing granted refused as lease-not-found - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Op(1, 20, 30, history.Request{Kind: history.OpPut, Key: histbuild.K("l"), Value: "l1", Lease: 999}, nil, history.ErrLeaseNotFound)
				b.Get(2, 40, 50, "l", 11)
				return 0
			}},
		{name: "put to a lease nothing granted answered at the run's start - fail", want: check.Fail, msg: "lease-not-found",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				return b.Op(1, 20, 30, history.Request{Kind: history.OpPut, Key: histbuild.K("l"), Value: "l1", Lease: 999}, resp(12), "")
			}},
		{name: "put to a lease granted in an earlier segment answered - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.H.Meta.Segment = &history.Segment{Index: 2}
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Op(1, 20, 30, history.Request{Kind: history.OpPut, Key: histbuild.K("l"), Value: "l1", Lease: 999}, resp(12), "")
				b.Op(1, 40, 50, history.Request{Kind: history.OpPut, Key: histbuild.K("m"), Value: "m1", Lease: 999}, resp(13), "")
				return 0
			}},
		{name: "lease granted in an earlier segment both found and missing with no revoke between - fail", want: check.Fail, msg: "lease-not-found",
			build: func(b *histbuild.Builder) int64 {
				b.H.Meta.Segment = &history.Segment{Index: 2}
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Op(1, 20, 30, history.Request{Kind: history.OpPut, Key: histbuild.K("l"), Value: "l1", Lease: 999}, resp(12), "")
				return b.Op(1, 40, 50, history.Request{Kind: history.OpPut, Key: histbuild.K("m"), Value: "m1", Lease: 999}, nil, history.ErrLeaseNotFound)
			}},
		// A compaction of unknown outcome that a window applied early
		// may instead go after a txn that reads below it: the search goes
		// back to that window (found on etcd v3.7.3, seed 4 of make sweep).
		{name: "txn reading at the compact revision, a compaction of unknown outcome above it - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "a", "v2", 12)
				b.Put(1, 40, 50, "a", "v3", 13)
				b.Op(3, 60, 1000, history.Request{Kind: history.OpCompact, Revision: 13}, nil, history.ErrUnknown)
				b.Compact(2, 100, 110, 12, 13, "")
				b.Compact(2, 200, 210, 12, 0, history.ErrCompacted)
				r := get("a")
				r.Revision = 12
				b.Op(1, 300, 310, txn(nil, []history.Request{{Kind: history.OpDelete, Key: histbuild.K("a")}, r}, nil),
					&history.Response{Revision: 14, Succeeded: true, Responses: []history.Response{{Revision: 14, Deleted: 1},
						{Revision: 14, KVs: []history.KV{kv("a", "v2", 11, 12, 2)}, Count: 1}}}, "")
				return 0
			}},
		{name: "txn reading below an acknowledged compaction answered - fail", want: check.Fail, msg: "compacted",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "a", "v2", 12)
				b.Put(1, 40, 50, "a", "v3", 13)
				b.Compact(2, 100, 110, 13, 13, "")
				r := get("a")
				r.Revision = 12
				return b.Op(1, 300, 310, txn(nil, []history.Request{{Kind: history.OpDelete, Key: histbuild.K("a")}, r}, nil),
					&history.Response{Revision: 14, Succeeded: true, Responses: []history.Response{{Revision: 14, Deleted: 1},
						{Revision: 14, KVs: []history.KV{kv("a", "v2", 11, 12, 2)}, Count: 1}}}, "")
			}},
		// A write seen applied by a watch alone, on a key whose values do
		// not date their writes (a put keeping its value names it), takes
		// a revision above every answered request at the end of a history
		// (a run judged while it goes on: make sweep seed 6 at its 10 s cut).
		{name: "write seen applied above every answer, its revision undated - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Created(w, 1, 10)
				b.Op(1, 0, 5, history.Request{Kind: history.OpPut, Key: histbuild.K("b"), IgnoreValue: true}, nil, history.ErrKeyNotFound)
				b.Put(1, 10, 20, "a", "v1", 11)
				b.Events(w, 21, histbuild.PutEv("a", "v1", 11, 11, 1))
				b.PutFail(2, 30, 60, "b", "w1")
				b.Events(w, 50, histbuild.PutEv("b", "w1", 12, 12, 1))
				return 0
			}},
		{name: "write seen applied, undated, in a free revision before the next acknowledged write - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Created(w, 1, 10)
				b.Op(1, 0, 5, history.Request{Kind: history.OpPut, Key: histbuild.K("b"), IgnoreValue: true}, nil, history.ErrKeyNotFound)
				b.Put(1, 10, 20, "a", "v1", 11)
				b.Events(w, 21, histbuild.PutEv("a", "v1", 11, 11, 1))
				b.PutFail(2, 30, 60, "b", "w1")
				b.Get(3, 35, 45, "a", 11, kv("a", "v1", 11, 11, 1))
				b.Events(w, 50, histbuild.PutEv("b", "w1", 12, 12, 1))
				b.Put(1, 70, 80, "a", "v2", 13)
				b.Events(w, 81, histbuild.PutEv("a", "v2", 11, 13, 2))
				return 0
			}},
		{name: "write seen applied above every answer, where the watch saw another write - fail", want: check.Fail,
			build: func(b *histbuild.Builder) int64 {
				w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Created(w, 1, 10)
				b.Put(1, 10, 20, "a", "v1", 11)
				b.Events(w, 21, histbuild.PutEv("a", "v1", 11, 11, 1))
				id := b.PutFail(2, 30, 60, "b", "w1")
				b.Events(w, 50, histbuild.PutEv("c", "z1", 12, 12, 1))
				b.Get(3, 70, 80, "b", 12, histbuild.Kv("b", "w1", 12, 12, 1))
				return id
			}},
		// A txn whose range fails fails whole: nothing of it is applied.
		{name: "txn whose range is in the future fails whole - pass", want: check.Pass,
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				r := get("a")
				r.Revision = 12 // the txn's own revision: still the future when it is checked
				b.Op(1, 20, 30, txn(nil, []history.Request{put("b", "w1"), r}, nil), nil, history.ErrFutureRevision)
				b.Get(2, 40, 50, "b", 11)
				return 0
			}},
		{name: "txn that failed on its future range was applied all the same - fail", want: check.Fail, msg: "written by operation 2",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				r := get("a")
				r.Revision = 50
				b.Op(1, 20, 30, txn(nil, []history.Request{put("b", "w1"), r}, nil), nil, history.ErrFutureRevision)
				return b.Get(2, 40, 50, "b", 12, kv("b", "w1", 12, 12, 1))
			}},
		{name: "txn answered though its range reads below the compaction - fail", want: check.Fail, msg: "compacted",
			build: func(b *histbuild.Builder) int64 {
				b.Put(1, 0, 10, "a", "v1", 11)
				b.Put(1, 20, 30, "a", "v2", 12)
				b.Compact(1, 40, 50, 12, 12, "")
				r := get("a")
				r.Revision = 11
				return b.Op(1, 60, 70, txn(nil, []history.Request{put("b", "w1"), r}, nil),
					&history.Response{Revision: 13, Succeeded: true, Responses: []history.Response{{Revision: 13}, {Revision: 13}}}, "")
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := histbuild.New()
			id := c.build(b)
			r := Check(b.H, check.DefaultConfig())
			if r.Verdict != c.want {
				t.Fatalf("verdict %s (%s), want %s; violations %+v", r.Verdict, r.Reason, c.want, r.Violations)
			}
			if c.want != check.Fail {
				return
			}
			v := r.Violations[0]
			if !errors.Is(v, Err) {
				t.Errorf("violation does not wrap Err: %v", v)
			}
			if len(v.Operations) == 0 || v.Operations[0] != id {
				t.Errorf("violation names operations %v, want %d first: %s", v.Operations, id, v.Message)
			}
			if !strings.Contains(v.Message, c.msg) {
				t.Errorf("message %q lacks %q", v.Message, c.msg)
			}
		})
	}
}
