package checkers

import (
	"testing"

	"github.com/vigil-suite/vigil/history"
)

func TestKVRevisionMonotonic(t *testing.T) {
	runKVCases(t, CheckKVRevisionMonotonic, ErrKVRevisionMonotonic, []kvCase{
		{name: "kv/revision-monotonic - sequential writes and reads of two clients - pass", want: Pass, build: func(b *hb) {
			b.put(1, 0, 10, "a", "1.1", 11)
			b.get(2, 12, 20, "a", 11, kv("a", "1.1", 11, 11, 1))
			b.put(2, 21, 30, "b", "2.1", 12)
			b.get(1, 31, 40, "b", 12, kv("b", "2.1", 12, 12, 1))
		}},
		{name: "kv/revision-monotonic - overlapping writes commit in either order - pass", want: Pass, build: func(b *hb) {
			b.put(1, 0, 30, "a", "1.1", 12)
			b.put(2, 5, 20, "b", "2.1", 11)
			b.get(3, 10, 25, "a", 11)
		}},
		{name: "kv/revision-monotonic - stale serializable read and status are not judged here - pass", want: Pass, build: func(b *hb) {
			b.put(1, 0, 10, "a", "1.1", 11)
			b.put(1, 11, 20, "a", "1.2", 12)
			b.sget(1, 21, 30, "a", 11, kv("a", "1.1", 11, 11, 1))
			b.status("m2", 1, 31, 35, 10)
		}},
		{name: "kv/revision-monotonic - failed compare-and-swap keeps the revision - pass", want: Pass, build: func(b *hb) {
			b.put(1, 0, 10, "a", "1.1", 11)
			b.cas(2, 11, 20, "a", 5, "2.1", false, 11, kv("a", "1.1", 11, 11, 1))
		}},
		{name: "kv/revision-monotonic - gap explained by a write of unknown outcome - pass", want: Pass, build: func(b *hb) {
			b.put(1, 0, 10, "a", "1.1", 11)
			b.putFail(2, 5, 50, "b", "2.1")
			b.put(1, 20, 30, "a", "1.2", 13)
		}},
		{name: "kv/revision-monotonic - gap on an external cluster is not judged - pass", want: Pass, build: func(b *hb) {
			b.h.Meta.Target.Fixture = "external"
			b.put(1, 0, 10, "a", "1.1", 11)
			b.put(1, 20, 30, "a", "1.2", 15)
		}},
		{name: "kv/revision-monotonic - client's read goes below its own previous write - fail", want: Fail,
			client: 1, rev: 11, key: "a", op: 2, msg: "its own previous operation 2", build: func(b *hb) {
				b.put(1, 0, 10, "a", "1.1", 11)
				b.put(1, 11, 20, "a", "1.2", 12)
				b.get(1, 21, 30, "a", 11, kv("a", "1.1", 11, 11, 1))
			}},
		{name: "kv/revision-monotonic - write does not exceed a revision another client saw before it - fail", want: Fail,
			client: 2, rev: 12, key: "b", op: 2, msg: "created revision 12", build: func(b *hb) {
				b.put(1, 0, 10, "a", "1.1", 11)
				b.get(3, 11, 15, "a", 12)
				b.put(2, 20, 30, "b", "2.1", 12)
				b.put(1, 5, 9, "c", "1.0", 10)
			}},
		{name: "kv/revision-monotonic - two writes acknowledged at one revision - fail", want: Fail,
			client: 2, rev: 11, key: "b", op: 1, msg: "both acknowledged as creating revision 11", build: func(b *hb) {
				b.put(1, 0, 10, "a", "1.1", 11)
				b.put(2, 2, 12, "b", "2.1", 11)
			}},
		{name: "kv/revision-monotonic - a write jumps the revision by two - fail", want: Fail,
			client: 1, rev: 12, key: "a", op: 2, msg: "increased the revision by more than one", build: func(b *hb) {
				b.put(1, 0, 10, "a", "1.1", 11)
				b.put(1, 20, 30, "a", "1.2", 13)
				b.putFail(2, 31, 40, "b", "2.1") // called too late to fill revision 12
			}},
		{name: "kv/revision-monotonic - no write nor linearizable read - skipped", want: Skipped, build: func(b *hb) {
			b.sget(1, 0, 10, "a", 5)
		}},
	})
}

func TestKVSerializableSane(t *testing.T) {
	runKVCases(t, CheckKVSerializableSane, ErrKVSerializableSane, []kvCase{
		{name: "kv/serializable-sane - stale read of an older value - pass", want: Pass, build: func(b *hb) {
			b.put(1, 0, 10, "a", "1.1", 11)
			b.put(1, 11, 20, "a", "1.2", 12)
			b.on("m2", b.sget(2, 21, 30, "a", 11, kv("a", "1.1", 11, 11, 1)))
		}},
		{name: "kv/serializable-sane - value of a write of unknown outcome - pass", want: Pass, build: func(b *hb) {
			b.put(1, 0, 10, "a", "1.1", 11)
			b.putFail(1, 11, 20, "a", "1.2")
			b.sget(2, 21, 30, "a", 12, kv("a", "1.2", 11, 12, 2))
		}},
		{name: "kv/serializable-sane - lower header after a member restart or on another member - pass", want: Pass,
			build: func(b *hb) {
				b.put(1, 0, 10, "a", "1.1", 11)
				b.put(1, 11, 20, "a", "1.2", 12)
				b.on("m1", b.sget(2, 21, 30, "a", 12, kv("a", "1.2", 11, 12, 2)))
				b.fault("kill-follower", 31, 40)
				b.on("m1", b.sget(2, 41, 50, "a", 11, kv("a", "1.1", 11, 11, 1)))
				b.on("m2", b.sget(2, 51, 60, "a", 10))
			}},
		{name: "kv/serializable-sane - a failed request ends the member session - pass", want: Pass, build: func(b *hb) {
			b.put(1, 0, 10, "a", "1.1", 11)
			b.put(1, 11, 20, "a", "1.2", 12)
			b.on("m1", b.sget(2, 21, 30, "a", 12, kv("a", "1.2", 11, 12, 2)))
			b.on("m1", b.op(2, 31, 40, history.Request{Kind: history.OpRange, Key: k("a")}, nil, history.ErrUnknown))
			b.on("m1", b.sget(2, 41, 50, "a", 11, kv("a", "1.1", 11, 11, 1)))
		}},
		{name: "kv/serializable-sane - header within writes still in flight - pass", want: Pass, build: func(b *hb) {
			b.put(1, 0, 10, "a", "1.1", 11)
			b.putFail(3, 12, 100, "b", "3.1")
			b.sget(2, 15, 30, "a", 12, kv("a", "1.1", 11, 11, 1))
		}},
		{name: "kv/serializable-sane - value no put wrote - fail", want: Fail, client: 2, rev: 11, key: "a", op: 2,
			msg: "a value no put of the history wrote", build: func(b *hb) {
				b.put(1, 0, 10, "a", "1.1", 11)
				b.sget(2, 11, 20, "a", 11, kv("a", "9.9", 11, 11, 1))
			}},
		{name: "kv/serializable-sane - value at another revision than its write's - fail", want: Fail, client: 2, rev: 12,
			key: "a", op: 1, msg: "operation 1 wrote that value at revision 11", build: func(b *hb) {
				b.put(1, 0, 10, "a", "1.1", 11)
				b.put(1, 11, 20, "b", "1.2", 12)
				b.sget(2, 21, 30, "a", 12, kv("a", "1.1", 11, 12, 1))
			}},
		{name: "kv/serializable-sane - mod revision above the header - fail", want: Fail, client: 2, rev: 12, key: "a",
			msg: "above its own header revision", build: func(b *hb) {
				b.put(1, 0, 10, "a", "1.1", 11)
				b.put(1, 11, 20, "a", "1.2", 12)
				b.sget(2, 21, 30, "a", 11, kv("a", "1.2", 11, 12, 2))
			}},
		{name: "kv/serializable-sane - header above the store's revision - fail", want: Fail, client: 2, rev: 20, op: 1,
			msg: "above the store's revision when it returned: at most 11", build: func(b *hb) {
				b.put(1, 0, 10, "a", "1.1", 11)
				b.sget(2, 11, 20, "a", 20, kv("a", "1.1", 11, 11, 1))
				b.put(1, 30, 40, "a", "1.2", 12)
			}},
		{name: "kv/serializable-sane - member session goes backwards - fail", want: Fail, client: 2, rev: 11, key: "a", op: 3,
			msg: "the member's state went backwards", build: func(b *hb) {
				b.put(1, 0, 10, "a", "1.1", 11)
				b.put(1, 11, 20, "a", "1.2", 12)
				b.on("m1", b.sget(2, 21, 30, "a", 12, kv("a", "1.2", 11, 12, 2)))
				b.fault("pause-follower", 31, 40) // a pause keeps the member's state
				b.on("m1", b.sget(2, 41, 50, "a", 11, kv("a", "1.1", 11, 11, 1)))
			}},
		{name: "kv/serializable-sane - no serializable read - skipped", want: Skipped, build: func(b *hb) {
			b.put(1, 0, 10, "a", "1.1", 11)
			b.get(1, 11, 20, "a", 11, kv("a", "1.1", 11, 11, 1))
		}},
	})
}

func TestKVCompaction(t *testing.T) {
	// Writes at 11..14, then a compaction to 13 acknowledged at time 50.
	base := func(b *hb) {
		b.put(1, 0, 10, "a", "1.1", 11)
		b.put(1, 11, 20, "a", "1.2", 12)
		b.put(1, 21, 30, "a", "1.3", 13)
		b.put(1, 31, 40, "a", "1.4", 14)
		b.compact(9, 41, 50, 13, 14, "")
	}
	runKVCases(t, CheckKVCompaction, ErrKVCompaction, []kvCase{
		{name: "kv/compaction - read below a completed compaction fails with compacted - pass", want: Pass, build: func(b *hb) {
			base(b)
			b.getAt(2, 60, 70, "a", 12, 0, history.ErrCompacted)
			b.getAt(2, 71, 80, "a", 13, 14, "", kv("a", "1.3", 11, 13, 3)) // the compact revision itself is kept
			b.getAt(2, 81, 90, "a", 1014, 0, history.ErrFutureRevision)
		}},
		{name: "kv/compaction - read racing the compaction may return data - pass", want: Pass, build: func(b *hb) {
			base(b)
			b.getAt(2, 45, 55, "a", 12, 14, "", kv("a", "1.2", 11, 12, 2))
		}},
		{name: "kv/compaction - serializable read on a member that lags may return data - pass", want: Pass, build: func(b *hb) {
			base(b)
			b.sgetAt(2, 60, 70, "a", 12, 14, "", kv("a", "1.2", 11, 12, 2))
		}},
		{name: "kv/compaction - compaction of unknown outcome may explain compacted - pass", want: Pass, build: func(b *hb) {
			base(b)
			b.compact(9, 51, 200, 14, 0, history.ErrUnknown)
			b.getAt(2, 60, 70, "a", 13, 0, history.ErrCompacted)
		}},
		{name: "kv/compaction - read below a completed compaction returned data - fail", want: Fail, client: 2, rev: 12, key: "a",
			op: 5, msg: "compaction 5 to revision 13 was acknowledged before it was called", build: func(b *hb) {
				base(b)
				b.getAt(2, 60, 70, "a", 12, 14, "", kv("a", "1.2", 11, 12, 2))
			}},
		{name: "kv/compaction - future read returned data above its own header - fail", want: Fail, client: 2, rev: 1014, key: "a",
			msg: "its own header revision 14 is below", build: func(b *hb) {
				base(b)
				b.getAt(2, 60, 70, "a", 1014, 14, "", kv("a", "1.4", 11, 14, 4))
			}},
		{name: "kv/compaction - future read returned data with a bogus header - fail", want: Fail, client: 2, rev: 1014, key: "a",
			msg: "at most 14", build: func(b *hb) {
				base(b)
				b.sgetAt(2, 60, 70, "a", 1014, 2000, "", kv("a", "1.4", 11, 14, 4))
			}},
		{name: "kv/compaction - compacted answer with no compaction that high - fail", want: Fail, client: 2, rev: 13, key: "a",
			op: 5, msg: "no compaction above revision 13 was requested", build: func(b *hb) {
				base(b)
				b.getAt(2, 60, 70, "a", 13, 0, history.ErrCompacted)
			}},
		{name: "kv/compaction - future-revision answer for a revision the store had reached - fail", want: Fail, client: 2,
			rev: 12, key: "a", op: 4, msg: "had returned header revision 14", build: func(b *hb) {
				b.put(1, 0, 10, "a", "1.1", 11)
				b.put(1, 11, 20, "a", "1.2", 12)
				b.put(1, 21, 30, "a", "1.3", 13)
				b.put(1, 31, 40, "a", "1.4", 14)
				b.getAt(2, 41, 50, "a", 12, 0, history.ErrFutureRevision)
			}},
		{name: "kv/compaction - compaction at or below a completed one succeeded - fail", want: Fail, client: 9, rev: 12, op: 5,
			msg: "was acknowledged before it was called", build: func(b *hb) {
				base(b)
				b.compact(9, 60, 70, 12, 14, "")
			}},
		{name: "kv/compaction - nothing read at a revision, nothing compacted - skipped", want: Skipped, build: func(b *hb) {
			b.put(1, 0, 10, "a", "1.1", 11)
		}},
	})
}
