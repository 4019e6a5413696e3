package kv

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func TestKVRevisionMonotonic(t *testing.T) {
	histbuild.RunKVCases(t, CheckRevisionMonotonic, ErrRevisionMonotonic, []histbuild.KvCase{
		{Name: "kv/revision-monotonic - sequential writes and reads of two clients - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			b.Put(1, 0, 10, "a", "1.1", 11)
			b.Get(2, 12, 20, "a", 11, histbuild.Kv("a", "1.1", 11, 11, 1))
			b.Put(2, 21, 30, "b", "2.1", 12)
			b.Get(1, 31, 40, "b", 12, histbuild.Kv("b", "2.1", 12, 12, 1))
		}},
		{Name: "kv/revision-monotonic - overlapping writes commit in either order - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			b.Put(1, 0, 30, "a", "1.1", 12)
			b.Put(2, 5, 20, "b", "2.1", 11)
			b.Get(3, 10, 25, "a", 11)
		}},
		{Name: "kv/revision-monotonic - stale serializable read and status are not judged here - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			b.Put(1, 0, 10, "a", "1.1", 11)
			b.Put(1, 11, 20, "a", "1.2", 12)
			b.Sget(1, 21, 30, "a", 11, histbuild.Kv("a", "1.1", 11, 11, 1))
			b.Status("m2", 1, 31, 35, 10)
		}},
		{Name: "kv/revision-monotonic - failed compare-and-swap keeps the revision - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			b.Put(1, 0, 10, "a", "1.1", 11)
			b.Cas(2, 11, 20, "a", 5, "2.1", false, 11, histbuild.Kv("a", "1.1", 11, 11, 1))
		}},
		{Name: "kv/revision-monotonic - gap explained by a write of unknown outcome - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			b.Put(1, 0, 10, "a", "1.1", 11)
			b.PutFail(2, 5, 50, "b", "2.1")
			b.Put(1, 20, 30, "a", "1.2", 13)
		}},
		{Name: "kv/revision-monotonic - gap on an external cluster is not judged - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			b.H.Meta.Target.Fixture = "external"
			b.Put(1, 0, 10, "a", "1.1", 11)
			b.Put(1, 20, 30, "a", "1.2", 15)
		}},
		{Name: "kv/revision-monotonic - client's read goes below its own previous write - fail", Want: check.Fail,
			Client: 1, Rev: 11, Key: "a", Op: 2, Msg: "its own previous operation 2", Build: func(b *histbuild.Builder) {
				b.Put(1, 0, 10, "a", "1.1", 11)
				b.Put(1, 11, 20, "a", "1.2", 12)
				b.Get(1, 21, 30, "a", 11, histbuild.Kv("a", "1.1", 11, 11, 1))
			}},
		{Name: "kv/revision-monotonic - write does not exceed a revision another client saw before it - fail", Want: check.Fail,
			Client: 2, Rev: 12, Key: "b", Op: 2, Msg: "created revision 12", Build: func(b *histbuild.Builder) {
				b.Put(1, 0, 10, "a", "1.1", 11)
				b.Get(3, 11, 15, "a", 12)
				b.Put(2, 20, 30, "b", "2.1", 12)
				b.Put(1, 5, 9, "c", "1.0", 10)
			}},
		{Name: "kv/revision-monotonic - two writes acknowledged at one revision - fail", Want: check.Fail,
			Client: 2, Rev: 11, Key: "b", Op: 1, Msg: "both acknowledged as creating revision 11", Build: func(b *histbuild.Builder) {
				b.Put(1, 0, 10, "a", "1.1", 11)
				b.Put(2, 2, 12, "b", "2.1", 11)
			}},
		{Name: "kv/revision-monotonic - a write jumps the revision by two - fail", Want: check.Fail,
			Client: 1, Rev: 12, Key: "a", Op: 2, Msg: "increased the revision by more than one", Build: func(b *histbuild.Builder) {
				b.Put(1, 0, 10, "a", "1.1", 11)
				b.Put(1, 20, 30, "a", "1.2", 13)
				b.PutFail(2, 31, 40, "b", "2.1") // called too late to fill revision 12
			}},
		{Name: "kv/revision-monotonic - no write nor linearizable read - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {
			b.Sget(1, 0, 10, "a", 5)
		}},
	})
}

func TestKVSerializableSane(t *testing.T) {
	histbuild.RunKVCases(t, CheckSerializableSane, ErrSerializableSane, []histbuild.KvCase{
		{Name: "kv/serializable-sane - stale read of an older value - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			b.Put(1, 0, 10, "a", "1.1", 11)
			b.Put(1, 11, 20, "a", "1.2", 12)
			b.On("m2", b.Sget(2, 21, 30, "a", 11, histbuild.Kv("a", "1.1", 11, 11, 1)))
		}},
		{Name: "kv/serializable-sane - value of a write of unknown outcome - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			b.Put(1, 0, 10, "a", "1.1", 11)
			b.PutFail(1, 11, 20, "a", "1.2")
			b.Sget(2, 21, 30, "a", 12, histbuild.Kv("a", "1.2", 11, 12, 2))
		}},
		{Name: "kv/serializable-sane - lower header after a member restart or on another member - pass", Want: check.Pass,
			Excused: map[string]int{"member_restart": 1},
			Build: func(b *histbuild.Builder) {
				b.Put(1, 0, 10, "a", "1.1", 11)
				b.Put(1, 11, 20, "a", "1.2", 12)
				b.On("m1", b.Sget(2, 21, 30, "a", 12, histbuild.Kv("a", "1.2", 11, 12, 2)))
				b.Fault("kill-follower", 31, 40)
				b.On("m1", b.Sget(2, 41, 50, "a", 11, histbuild.Kv("a", "1.1", 11, 11, 1)))
				b.On("m2", b.Sget(2, 51, 60, "a", 10))
			}},
		{Name: "kv/serializable-sane - a failed request ends the member session - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			b.Put(1, 0, 10, "a", "1.1", 11)
			b.Put(1, 11, 20, "a", "1.2", 12)
			b.On("m1", b.Sget(2, 21, 30, "a", 12, histbuild.Kv("a", "1.2", 11, 12, 2)))
			b.On("m1", b.Op(2, 31, 40, history.Request{Kind: history.OpRange, Key: histbuild.K("a")}, nil, history.ErrUnknown))
			b.On("m1", b.Sget(2, 41, 50, "a", 11, histbuild.Kv("a", "1.1", 11, 11, 1)))
		}},
		{Name: "kv/serializable-sane - header within writes still in flight - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			b.Put(1, 0, 10, "a", "1.1", 11)
			b.PutFail(3, 12, 100, "b", "3.1")
			b.Sget(2, 15, 30, "a", 12, histbuild.Kv("a", "1.1", 11, 11, 1))
		}},
		{Name: "kv/serializable-sane - value no put wrote - fail", Want: check.Fail, Client: 2, Rev: 11, Key: "a", Op: 2,
			Msg: "a value no put of the history wrote", Build: func(b *histbuild.Builder) {
				b.Put(1, 0, 10, "a", "1.1", 11)
				b.Sget(2, 11, 20, "a", 11, histbuild.Kv("a", "9.9", 11, 11, 1))
			}},
		{Name: "kv/serializable-sane - value at another revision than its write's - fail", Want: check.Fail, Client: 2, Rev: 12,
			Key: "a", Op: 1, Msg: "operation 1 wrote that value at revision 11", Build: func(b *histbuild.Builder) {
				b.Put(1, 0, 10, "a", "1.1", 11)
				b.Put(1, 11, 20, "b", "1.2", 12)
				b.Sget(2, 21, 30, "a", 12, histbuild.Kv("a", "1.1", 11, 12, 1))
			}},
		{Name: "kv/serializable-sane - mod revision above the header - fail", Want: check.Fail, Client: 2, Rev: 12, Key: "a",
			Msg: "above its own header revision", Build: func(b *histbuild.Builder) {
				b.Put(1, 0, 10, "a", "1.1", 11)
				b.Put(1, 11, 20, "a", "1.2", 12)
				b.Sget(2, 21, 30, "a", 11, histbuild.Kv("a", "1.2", 11, 12, 2))
			}},
		{Name: "kv/serializable-sane - header above the store's revision - fail", Want: check.Fail, Client: 2, Rev: 20, Op: 1,
			Msg: "above the store's revision when it returned: at most 11", Build: func(b *histbuild.Builder) {
				b.Put(1, 0, 10, "a", "1.1", 11)
				b.Sget(2, 11, 20, "a", 20, histbuild.Kv("a", "1.1", 11, 11, 1))
				b.Put(1, 30, 40, "a", "1.2", 12)
			}},
		{Name: "kv/serializable-sane - member session goes backwards - fail", Want: check.Fail, Client: 2, Rev: 11, Key: "a", Op: 3,
			Msg: "the member's state went backwards", Build: func(b *histbuild.Builder) {
				b.Put(1, 0, 10, "a", "1.1", 11)
				b.Put(1, 11, 20, "a", "1.2", 12)
				b.On("m1", b.Sget(2, 21, 30, "a", 12, histbuild.Kv("a", "1.2", 11, 12, 2)))
				b.Fault("pause-follower", 31, 40) // a pause keeps the member's state
				b.On("m1", b.Sget(2, 41, 50, "a", 11, histbuild.Kv("a", "1.1", 11, 11, 1)))
			}},
		{Name: "kv/serializable-sane - no serializable read - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {
			b.Put(1, 0, 10, "a", "1.1", 11)
			b.Get(1, 11, 20, "a", 11, histbuild.Kv("a", "1.1", 11, 11, 1))
		}},
	})
}

func TestKVCompaction(t *testing.T) {
	// Writes at 11..14, then a compaction to 13 acknowledged at time 50.
	base := func(b *histbuild.Builder) {
		b.Put(1, 0, 10, "a", "1.1", 11)
		b.Put(1, 11, 20, "a", "1.2", 12)
		b.Put(1, 21, 30, "a", "1.3", 13)
		b.Put(1, 31, 40, "a", "1.4", 14)
		b.Compact(9, 41, 50, 13, 14, "")
	}
	histbuild.RunKVCases(t, CheckCompaction, ErrCompaction, []histbuild.KvCase{
		{Name: "kv/compaction - read below a completed compaction fails with compacted - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			base(b)
			b.GetAt(2, 60, 70, "a", 12, 0, history.ErrCompacted)
			b.GetAt(2, 71, 80, "a", 13, 14, "", histbuild.Kv("a", "1.3", 11, 13, 3)) // the compact revision itself is kept
			b.GetAt(2, 81, 90, "a", 1014, 0, history.ErrFutureRevision)
		}},
		{Name: "kv/compaction - read racing the compaction may return data - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			base(b)
			b.GetAt(2, 45, 55, "a", 12, 14, "", histbuild.Kv("a", "1.2", 11, 12, 2))
		}},
		{Name: "kv/compaction - serializable read on a member that lags may return data - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			base(b)
			b.SgetAt(2, 60, 70, "a", 12, 14, "", histbuild.Kv("a", "1.2", 11, 12, 2))
		}},
		{Name: "kv/compaction - compaction of unknown outcome may explain compacted - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			base(b)
			b.Compact(9, 51, 200, 14, 0, history.ErrUnknown)
			b.GetAt(2, 60, 70, "a", 13, 0, history.ErrCompacted)
		}},
		{Name: "kv/compaction - read below a completed compaction returned data - fail", Want: check.Fail, Client: 2, Rev: 12, Key: "a",
			Op: 5, Msg: "compaction 5 to revision 13 was acknowledged before it was called", Build: func(b *histbuild.Builder) {
				base(b)
				b.GetAt(2, 60, 70, "a", 12, 14, "", histbuild.Kv("a", "1.2", 11, 12, 2))
			}},
		{Name: "kv/compaction - future read returned data above its own header - fail", Want: check.Fail, Client: 2, Rev: 1014, Key: "a",
			Msg: "its own header revision 14 is below", Build: func(b *histbuild.Builder) {
				base(b)
				b.GetAt(2, 60, 70, "a", 1014, 14, "", histbuild.Kv("a", "1.4", 11, 14, 4))
			}},
		{Name: "kv/compaction - future read returned data with a bogus header - fail", Want: check.Fail, Client: 2, Rev: 1014, Key: "a",
			Msg: "at most 14", Build: func(b *histbuild.Builder) {
				base(b)
				b.SgetAt(2, 60, 70, "a", 1014, 2000, "", histbuild.Kv("a", "1.4", 11, 14, 4))
			}},
		{Name: "kv/compaction - compacted answer with no compaction that high - fail", Want: check.Fail, Client: 2, Rev: 13, Key: "a",
			Op: 5, Msg: "no compaction above revision 13 was requested", Build: func(b *histbuild.Builder) {
				base(b)
				b.GetAt(2, 60, 70, "a", 13, 0, history.ErrCompacted)
			}},
		{Name: "kv/compaction - future-revision answer for a revision the store had reached - fail", Want: check.Fail, Client: 2,
			Rev: 12, Key: "a", Op: 4, Msg: "had returned header revision 14", Build: func(b *histbuild.Builder) {
				b.Put(1, 0, 10, "a", "1.1", 11)
				b.Put(1, 11, 20, "a", "1.2", 12)
				b.Put(1, 21, 30, "a", "1.3", 13)
				b.Put(1, 31, 40, "a", "1.4", 14)
				b.GetAt(2, 41, 50, "a", 12, 0, history.ErrFutureRevision)
			}},
		{Name: "kv/compaction - compaction at or below a completed one succeeded - fail", Want: check.Fail, Client: 9, Rev: 12, Op: 5,
			Msg: "was acknowledged before it was called", Build: func(b *histbuild.Builder) {
				base(b)
				b.Compact(9, 60, 70, 12, 14, "")
			}},
		{Name: "kv/compaction - nothing read at a revision, nothing compacted - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {
			b.Put(1, 0, 10, "a", "1.1", 11)
		}},
	})
}
