package checkers

import (
	"testing"
	"time"

	"github.com/vigil-suite/vigil/history"
)

func TestRunAvailability(t *testing.T) {
	s := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	// ok and lost add an answered and an unanswered call ending at t seconds.
	ok := func(b *hb, t float64) {
		b.h.Operations = append(b.h.Operations, history.Operation{Call: s(t) - 1000, Return: s(t), Response: &history.Response{}})
	}
	lost := func(b *hb, t float64) {
		b.h.Operations = append(b.h.Operations, history.Operation{Call: s(t) - s(1), Return: s(t), Code: history.ErrUnknown, Error: "deadline"})
	}
	final := func(b *hb, t float64) { b.mark(history.MarkFinalWrite, int(s(t)), 0, 1) }
	fault := func(b *hb, from, to float64) {
		b.h.Faults = append(b.h.Faults, history.Fault{Name: "kill-leader", Start: s(from), End: s(to)})
	}
	runWatchCases(t, CheckRunAvailability, ErrRunAvailability, []watchCase{
		{name: "run/availability - answers throughout - pass", want: Pass, build: func(b *hb) {
			for t := 1.0; t < 20; t++ {
				ok(b, t)
			}
			final(b, 20)
		}},
		{name: "run/availability - an outage inside a fault, answering soon after it healed - pass", want: Pass, build: func(b *hb) {
			ok(b, 1)
			fault(b, 2, 12)
			for t := 3.0; t < 14; t++ {
				lost(b, t)
			}
			ok(b, 14)
			final(b, 15)
		}},
		{name: "run/availability - answering again just within the bound after the heal - pass", want: Pass, build: func(b *hb) {
			ok(b, 1)
			fault(b, 2, 5)
			lost(b, 20)
			ok(b, 34.9)
			final(b, 36)
		}},
		{name: "run/availability - answering again just past the bound after the heal - fail", want: Fail,
			msg: "30.1s after the faults around it (kill-leader) healed", build: func(b *hb) {
				ok(b, 1)
				fault(b, 2, 5)
				lost(b, 20)
				ok(b, 35.1)
				final(b, 36)
			}},
		{name: "run/availability - a long outage with no fault - fail", want: Fail, msg: "unavailable from t=1.0s to t=40.0s", build: func(b *hb) {
			ok(b, 1)
			lost(b, 10)
			lost(b, 39)
			ok(b, 40)
			final(b, 41)
		}},
		{name: "run/availability - a long pause with nobody asking is no outage - pass", want: Pass, build: func(b *hb) {
			ok(b, 1)
			ok(b, 60)
			final(b, 61)
		}},
		{name: "run/availability - the system died and the final write never succeeded - fail", want: Fail,
			msg: "unavailable since t=8.0s", build: func(b *hb) {
				for t := 1.0; t <= 8; t++ {
					ok(b, t)
				}
				for t := 9.0; t < 60; t += 5 {
					lost(b, t)
				}
			}},
		{name: "run/availability - cut short with nothing unanswered - unknown", want: Unknown, build: func(b *hb) {
			ok(b, 1)
			ok(b, 2)
		}},
		{name: "run/availability - never answered - fail", want: Fail, msg: "never answered", build: func(b *hb) {
			lost(b, 1)
			lost(b, 2)
		}},
		{name: "run/availability - no call - skipped", want: Skipped, build: func(b *hb) {}},
	})
}
