package availability

import (
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func TestRunAvailability(t *testing.T) {
	s := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	// ok and lost add an answered and an unanswered call ending at t seconds.
	ok := func(b *histbuild.Builder, t float64) {
		b.H.Operations = append(b.H.Operations, history.Operation{Call: s(t) - 1000, Return: s(t), Response: &history.Response{}})
	}
	lost := func(b *histbuild.Builder, t float64) {
		b.H.Operations = append(b.H.Operations, history.Operation{Call: s(t) - s(1), Return: s(t), Code: history.ErrUnknown, Error: "deadline"})
	}
	final := func(b *histbuild.Builder, t float64) { b.Mark(history.MarkFinalWrite, int(s(t)), 0, 1) }
	fault := func(b *histbuild.Builder, from, to float64) {
		b.H.Faults = append(b.H.Faults, history.Fault{Name: "kill-leader", Start: s(from), End: s(to)})
	}
	histbuild.RunWatchCases(t, Check, Err, []histbuild.WatchCase{
		{Name: "run/availability - answers throughout - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			for t := 1.0; t < 20; t++ {
				ok(b, t)
			}
			final(b, 20)
		}},
		{Name: "run/availability - an outage inside a fault, answering soon after it healed - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			ok(b, 1)
			fault(b, 2, 12)
			for t := 3.0; t < 14; t++ {
				lost(b, t)
			}
			ok(b, 14)
			final(b, 15)
		}},
		{Name: "run/availability - answering again just within the bound after the heal - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			ok(b, 1)
			fault(b, 2, 5)
			lost(b, 20)
			ok(b, 34.9)
			final(b, 36)
		}},
		{Name: "run/availability - answering again just past the bound after the heal - fail", Want: check.Fail,
			Msg: "30.1s after the faults around it (kill-leader) healed", Build: func(b *histbuild.Builder) {
				ok(b, 1)
				fault(b, 2, 5)
				lost(b, 20)
				ok(b, 35.1)
				final(b, 36)
			}},
		{Name: "run/availability - a long outage with no fault - fail", Want: check.Fail, Msg: "unavailable from t=1.0s to t=40.0s", Build: func(b *histbuild.Builder) {
			ok(b, 1)
			lost(b, 10)
			lost(b, 39)
			ok(b, 40)
			final(b, 41)
		}},
		{Name: "run/availability - a long pause with nobody asking is no outage - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			ok(b, 1)
			ok(b, 60)
			final(b, 61)
		}},
		{Name: "run/availability - the system died and the final write never succeeded - fail", Want: check.Fail,
			Msg: "unavailable since t=8.0s", Build: func(b *histbuild.Builder) {
				for t := 1.0; t <= 8; t++ {
					ok(b, t)
				}
				for t := 9.0; t < 60; t += 5 {
					lost(b, t)
				}
			}},
		// --fail-fast stops a run: the calls then in flight were canceled
		// by vigil, and no final write follows.
		{Name: "run/availability - stopped by --fail-fast, its last calls canceled - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			for t := 1.0; t <= 8; t++ {
				ok(b, t)
			}
			b.Mark(history.MarkStopped, int(s(8.5)), 0, 0)
			lost(b, 9)
			lost(b, 9.1)
		}},
		{Name: "run/availability - stopped by --fail-fast after an outage past the bound - fail", Want: check.Fail,
			Msg: "unavailable from t=8.0s", Build: func(b *histbuild.Builder) {
				for t := 1.0; t <= 8; t++ {
					ok(b, t)
				}
				for t := 9.0; t < 60; t += 5 {
					lost(b, t)
				}
				b.Mark(history.MarkStopped, int(s(59)), 0, 0)
			}},
		{Name: "run/availability - cut short with nothing unanswered - unknown", Want: check.Unknown, Build: func(b *histbuild.Builder) {
			ok(b, 1)
			ok(b, 2)
		}},
		{Name: "run/availability - never answered - fail", Want: check.Fail, Msg: "never answered", Build: func(b *histbuild.Builder) {
			lost(b, 1)
			lost(b, 2)
		}},
		{Name: "run/availability - no call - skipped", Want: check.Skipped, Build: func(b *histbuild.Builder) {}},
		{Name: "run/availability - the final write succeeded, no read after it did - fail", Want: check.Fail,
			Msg: "none of the 2 linearizable reads after it did", Build: func(b *histbuild.Builder) {
				ok(b, 1)
				final(b, 2)
				b.Op(1, int(s(3)), int(s(4)), history.Request{Kind: history.OpRange, Key: histbuild.K(history.FinalKey)}, nil, history.ErrUnknown)
				b.Op(1, int(s(5)), int(s(6)), history.Request{Kind: history.OpRange, Key: histbuild.K(history.FinalKey)}, nil, history.ErrUnknown)
			}},
		{Name: "run/availability - the final write and a read after it succeeded - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			ok(b, 1)
			final(b, 2)
			b.Op(1, int(s(3)), int(s(4)), history.Request{Kind: history.OpRange, Key: histbuild.K(history.FinalKey)}, nil, history.ErrUnknown)
			b.Op(1, int(s(5)), int(s(6)), history.Request{Kind: history.OpRange, Key: histbuild.K(history.FinalKey)}, &history.Response{Revision: 2}, "")
		}},
	})
}
