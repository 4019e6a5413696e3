package checkers

import (
	"testing"

	"github.com/vigil-suite/vigil/history"
)

func TestWatchAgreement(t *testing.T) {
	a11, b11 := putEv("a", "1.1", 11, 11, 1), putEv("b", "1.1b", 11, 11, 1)
	a12, d13, b14 := putEv("a", "1.2", 11, 12, 2), delEv("a", 13), putEv("b", "1.4", 11, 14, 2)
	runWatchCases(t, CheckWatchAgreement, ErrWatchAgreement, []watchCase{
		{name: "watch/agreement - same events on overlapping watches of different shapes - pass", want: Pass, build: func(b *hb) {
			w1 := b.watch(1, 9, 0, prefixWatch())
			b.events(w1, 10, a11, b11)
			b.events(w1, 20, a12)
			b.events(w1, 30, d13)
			b.events(w1, 40, b14)
			w2 := b.watch(2, 9, 0, history.WatchRequest{Key: k("a")}) // single key
			b.events(w2, 10, a11)
			b.events(w2, 20, a12)
			b.events(w2, 30, d13)
			w3 := b.watch(3, 9, 0, history.WatchRequest{Key: testPrefix, End: "/p0", NoDelete: true})
			b.events(w3, 10, a11, b11)
			b.events(w3, 20, a12)
			b.events(w3, 40, b14)
			w4 := b.watch(4, 9, 0, prefixWatch()) // started later: its span begins at 13
			b.events(w4, 30, d13)
			b.events(w4, 40, b14)
		}},
		{name: "watch/agreement - a watch that stopped early is held only to its span - pass", want: Pass, build: func(b *hb) {
			w1 := b.watch(1, 9, 0, prefixWatch())
			b.events(w1, 10, a11, b11)
			b.events(w1, 20, a12)
			w2 := b.watch(2, 9, 0, prefixWatch())
			b.events(w2, 10, a11, b11)
			b.end(w2, 15, history.EndError)
		}},
		{name: "watch/agreement - another value at one revision - fail", want: Fail, watch: 2, rev: 12, key: "a",
			msg: "PUT \"9.9\" where watch 1 delivered PUT \"1.2\"", build: func(b *hb) {
				w1 := b.watch(1, 9, 0, prefixWatch())
				b.events(w1, 10, a11, b11)
				b.events(w1, 20, a12)
				w2 := b.watch(2, 9, 0, prefixWatch())
				b.events(w2, 10, a11, b11)
				b.events(w2, 20, putEv("a", "9.9", 11, 12, 2))
			}},
		{name: "watch/agreement - a change inside the span is missing - fail", want: Fail, watch: 2, rev: 12, key: "a",
			msg: "nothing, though watch 1 delivered PUT \"1.2\"", build: func(b *hb) {
				w1 := b.watch(1, 9, 0, prefixWatch())
				b.events(w1, 10, a11, b11)
				b.events(w1, 20, a12)
				b.events(w1, 30, d13)
				w2 := b.watch(2, 9, 0, history.WatchRequest{Key: k("a")})
				b.events(w2, 10, a11)
				b.events(w2, 30, d13)
			}},
		{name: "watch/agreement - events of one revision in another order - fail", want: Fail, watch: 2, rev: 11, key: "a",
			msg: "in another order than watch 1's", build: func(b *hb) {
				w1 := b.watch(1, 9, 0, prefixWatch())
				b.events(w1, 10, a11, b11)
				w2 := b.watch(2, 9, 0, prefixWatch())
				b.events(w2, 10, b11, a11)
			}},
		{name: "watch/agreement - one watch - skipped", want: Skipped, build: func(b *hb) {
			w1 := b.watch(1, 9, 0, prefixWatch())
			b.events(w1, 10, a11, b11)
		}},
	})
}
