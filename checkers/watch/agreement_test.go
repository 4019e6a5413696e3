package watch

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func TestWatchAgreement(t *testing.T) {
	a11, b11 := histbuild.PutEv("a", "1.1", 11, 11, 1), histbuild.PutEv("b", "1.1b", 11, 11, 1)
	a12, d13, b14 := histbuild.PutEv("a", "1.2", 11, 12, 2), histbuild.DelEv("a", 13), histbuild.PutEv("b", "1.4", 11, 14, 2)
	histbuild.RunWatchCases(t, CheckAgreement, ErrAgreement, []histbuild.WatchCase{
		{Name: "watch/agreement - same events on overlapping watches of different shapes - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			w1 := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Events(w1, 10, a11, b11)
			b.Events(w1, 20, a12)
			b.Events(w1, 30, d13)
			b.Events(w1, 40, b14)
			w2 := b.Watch(2, 9, 0, history.WatchRequest{Key: histbuild.K("a")}) // single key
			b.Events(w2, 10, a11)
			b.Events(w2, 20, a12)
			b.Events(w2, 30, d13)
			w3 := b.Watch(3, 9, 0, history.WatchRequest{Key: histbuild.TestPrefix, End: "/p0", NoDelete: true})
			b.Events(w3, 10, a11, b11)
			b.Events(w3, 20, a12)
			b.Events(w3, 40, b14)
			w4 := b.Watch(4, 9, 0, histbuild.PrefixWatch()) // started later: its span begins at 13
			b.Events(w4, 30, d13)
			b.Events(w4, 40, b14)
		}},
		{Name: "watch/agreement - a watch that stopped early is held only to its span - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			w1 := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Events(w1, 10, a11, b11)
			b.Events(w1, 20, a12)
			w2 := b.Watch(2, 9, 0, histbuild.PrefixWatch())
			b.Events(w2, 10, a11, b11)
			b.End(w2, 15, history.EndError)
		}},
		{Name: "watch/agreement - another value at one revision - fail", Want: check.Fail, Watch: 2, Rev: 12, Key: "a",
			Msg: "PUT \"9.9\" where watch 1 delivered PUT \"1.2\"", Build: func(b *histbuild.Builder) {
				w1 := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Events(w1, 10, a11, b11)
				b.Events(w1, 20, a12)
				w2 := b.Watch(2, 9, 0, histbuild.PrefixWatch())
				b.Events(w2, 10, a11, b11)
				b.Events(w2, 20, histbuild.PutEv("a", "9.9", 11, 12, 2))
			}},
		{Name: "watch/agreement - a change inside the span is missing - fail", Want: check.Fail, Watch: 2, Rev: 12, Key: "a",
			Msg: "nothing, though watch 1 delivered PUT \"1.2\"", Build: func(b *histbuild.Builder) {
				w1 := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Events(w1, 10, a11, b11)
				b.Events(w1, 20, a12)
				b.Events(w1, 30, d13)
				w2 := b.Watch(2, 9, 0, history.WatchRequest{Key: histbuild.K("a")})
				b.Events(w2, 10, a11)
				b.Events(w2, 30, d13)
			}},
		{Name: "watch/agreement - events of one revision in another order - fail", Want: check.Fail, Watch: 2, Rev: 11, Key: "a",
			Msg: "in another order than watch 1's", Build: func(b *histbuild.Builder) {
				w1 := b.Watch(1, 9, 0, histbuild.PrefixWatch())
				b.Events(w1, 10, a11, b11)
				w2 := b.Watch(2, 9, 0, histbuild.PrefixWatch())
				b.Events(w2, 10, b11, a11)
			}},
		{Name: "watch/agreement - one watch - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {
			w1 := b.Watch(1, 9, 0, histbuild.PrefixWatch())
			b.Events(w1, 10, a11, b11)
		}},
	})
}
