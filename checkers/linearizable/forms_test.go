package linearizable

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

// The model's rules for the request forms beyond plain gets and puts: a
// count-only range answers the count of the keys and none of them; a
// put's or a delete's prev_kv is the key as it was before the write.
// Each rule has a history that must pass and one that must fail.
func TestLinearizableForms(t *testing.T) {
	prefix := history.Request{Kind: history.OpRange, Key: histbuild.TestPrefix, End: history.PrefixEnd(histbuild.TestPrefix)}
	countOnly := prefix
	countOnly.CountOnly = true
	two := func(b *histbuild.Builder) {
		b.Put(1, 0, 10, "a", "1.1", 11)
		b.Put(1, 20, 30, "b", "1.2", 12)
	}
	putPrev := func(b *histbuild.Builder, prev ...history.KV) int64 {
		return b.Op(2, 40, 50, history.Request{Kind: history.OpPut, Key: histbuild.K("a"), Value: "2.1", PrevKV: true},
			&history.Response{Revision: 13, PrevKVs: prev}, "")
	}
	delPrev := func(b *histbuild.Builder, deleted int64, prev ...history.KV) int64 {
		return b.Op(2, 40, 50, history.Request{Kind: history.OpDelete, Key: histbuild.K("a"), PrevKV: true},
			&history.Response{Revision: 13, Deleted: deleted, PrevKVs: prev}, "")
	}
	runOpCases(t, []opCase{
		{"count-only range: the count, no keys - pass", func(b *histbuild.Builder) int64 {
			two(b)
			b.Op(2, 40, 50, countOnly, &history.Response{Revision: 12, Count: 2}, "")
			return 0
		}, check.Pass, ""},
		{"count-only range: a wrong count - fail", func(b *histbuild.Builder) int64 {
			two(b)
			return b.Op(2, 40, 50, countOnly, &history.Response{Revision: 12, Count: 1}, "")
		}, check.Fail, "count 1"},
		{"count-only range: keys returned - fail", func(b *histbuild.Builder) int64 {
			two(b)
			return b.Op(2, 40, 50, countOnly, &history.Response{Revision: 12, Count: 2,
				KVs: []history.KV{histbuild.Kv("a", "1.1", 11, 11, 1)}}, "")
		}, check.Fail, "count only"},
		{"count-only range: more set - fail", func(b *histbuild.Builder) int64 {
			two(b)
			return b.Op(2, 40, 50, countOnly, &history.Response{Revision: 12, Count: 2, More: true}, "")
		}, check.Fail, "more true"},
		{"count-only range proves no key absent - pass", func(b *histbuild.Builder) int64 {
			// The count says nothing of which keys: a later read of a is judged
			// from the writes alone.
			two(b)
			b.Op(2, 40, 50, countOnly, &history.Response{Revision: 12, Count: 2}, "")
			b.Get(3, 60, 70, "a", 12, histbuild.Kv("a", "1.1", 11, 11, 1))
			return 0
		}, check.Pass, ""},
		{"put prev_kv: the value before the put - pass", func(b *histbuild.Builder) int64 {
			two(b)
			putPrev(b, histbuild.Kv("a", "1.1", 11, 11, 1))
			return 0
		}, check.Pass, ""},
		{"put prev_kv: another value - fail", func(b *histbuild.Builder) int64 {
			two(b)
			return putPrev(b, histbuild.Kv("a", "1.2", 11, 11, 1))
		}, check.Fail, "prev_kv of put"},
		{"put prev_kv: absent though the key existed - fail", func(b *histbuild.Builder) int64 {
			two(b)
			return putPrev(b)
		}, check.Fail, "prev_kv of put"},
		{"delete prev_kv: the deleted key - pass", func(b *histbuild.Builder) int64 {
			two(b)
			delPrev(b, 1, histbuild.Kv("a", "1.1", 11, 11, 1))
			return 0
		}, check.Pass, ""},
		{"delete prev_kv: another value - fail", func(b *histbuild.Builder) int64 {
			two(b)
			return delPrev(b, 1, histbuild.Kv("a", "9.9", 11, 11, 1))
		}, check.Fail, "prev_kvs of delete"},
	})
}
