package checkers

import (
	"testing"

	"github.com/vigil-suite/vigil/history"
)

func TestKubeOptimisticConcurrency(t *testing.T) {
	race := func(b *kb, codes ...int) {
		b.create(1, 0, 10, a10)
		for i, code := range codes {
			v := kobjOf("a", "v:r"+string(rune('0'+i)), 15, "g=a")
			if code == 200 {
				b.update(2+i, 20, 30+i, 10, v)
			} else {
				b.updateRefused(2+i, 20, 30+i, 10, v, code)
			}
		}
	}
	runKubeCases(t, CheckKubeOptimisticConcurrency, ErrKubeOptimisticConcurrency, []kcase{
		{name: "kube/optimistic-concurrency - updates on top of what they read - pass", want: Pass, build: healthyKube},
		{name: "kube/optimistic-concurrency - a race with one winner - pass", want: Pass, build: func(b *kb) {
			race(b, 409, 200, 409)
		}},
		{name: "kube/optimistic-concurrency - a stale update refused 409 - pass", want: Pass, build: func(b *kb) {
			baseWrites(b)
			b.updateRefused(2, 100, 110, 10, kobjOf("a", "v:late", 0), 409)
		}},
		{name: "kube/optimistic-concurrency - a stale precondition accepted - fail", want: Fail, key: "a", rev: 10, op: 2,
			msg: "overwrote a write it never saw", build: func(b *kb) {
				b.create(1, 0, 10, a10)
				b.update(1, 40, 50, 10, a15)
				b.update(2, 60, 70, 10, kobjOf("a", "v:lost", 17, "g=a"))
			}},
		{name: "kube/optimistic-concurrency - two winners from one RV - fail", want: Fail, key: "a", rev: 10,
			msg: "both succeeded with precondition RV 10", any: true, build: func(b *kb) {
				b.create(1, 0, 10, a10)
				b.update(2, 20, 30, 10, kobjOf("a", "v:x", 15, "g=a"))
				b.update(3, 40, 50, 10, kobjOf("a", "v:y", 17, "g=a"))
			}},
		{name: "kube/optimistic-concurrency - a race nobody won - fail", want: Fail, key: "a", rev: 10,
			msg: "none of 3 concurrent updates", build: func(b *kb) { race(b, 409, 409, 409) }},
		{name: "kube/optimistic-concurrency - a stale uid accepted - fail", want: Fail, key: "a", msg: "uid precondition uid-old",
			build: func(b *kb) {
				b.create(1, 0, 10, a10)
				body := kobjOf("a", "v:u", 10)
				body.UID = "uid-old"
				b.op(2, 20, 30, history.KubeRequest{Verb: history.KubeUpdate, Name: "a", Object: &body},
					&history.KubeResponse{Code: 200, Object: ptr(kobjOf("a", "v:u", 15))}, nil, "")
			}},
		{name: "kube/optimistic-concurrency - no precondition - skipped", want: Skipped, build: func(b *kb) {
			b.create(1, 0, 10, a10)
		}},
	})
}

func ptr[T any](v T) *T { return &v }

func TestKubeLinearizable(t *testing.T) {
	runKubeCases(t, CheckKubeLinearizable, ErrKubeLinearizable, []kcase{
		{name: "kube/linearizable - the base history - pass", want: Pass, build: healthyKube},
		{name: "kube/linearizable - a lost update placed by a later read - pass", want: Pass, build: func(b *kb) {
			b.create(1, 0, 10, a10)
			b.updateLost(1, 20, 30, 10, kobjOf("a", "v:maybe", 0, "g=a"))
			b.get(2, 40, 50, "a", "", ptr(kobjOf("a", "v:maybe", 13, "g=a")))
			b.update(1, 60, 70, 13, a15)
		}},
		{name: "kube/linearizable - a read overlapping a write may see either - pass", want: Pass, build: func(b *kb) {
			b.create(1, 0, 10, a10)
			b.update(1, 20, 40, 10, a15)
			b.get(2, 25, 30, "a", "", &a10)
			b.get(3, 26, 31, "a", "", &a15)
		}},
		{name: "kube/linearizable - a stale read after an acknowledged update - fail", want: Fail, key: "a", rev: 10, op: 3,
			msg: "changed it at RV 15", build: func(b *kb) {
				b.create(1, 0, 10, a10)
				b.update(1, 20, 30, 10, a15)
				b.get(2, 40, 50, "a", "", &a10)
			}},
		{name: "kube/linearizable - a read from the future - fail", want: Fail, key: "a", rev: 15, op: 3,
			msg: "the highest RV its answer can reflect", build: func(b *kb) {
				b.create(1, 0, 10, a10)
				b.get(2, 11, 12, "a", "", &a15)
				b.update(1, 20, 30, 10, a15)
			}},
		{name: "kube/linearizable - a read sees a write a read before it did not - fail", want: Fail, key: "a", rev: 10,
			msg: "at or below 15", build: func(b *kb) {
				b.create(1, 0, 10, a10)
				b.update(1, 20, 100, 10, a15)
				b.get(2, 30, 40, "a", "", &a15)
				b.get(3, 50, 60, "a", "", &a10)
			}},
		{name: "kube/linearizable - a list outside its window - fail", want: Fail, rev: 21, op: 5, msg: "answered at RV 21",
			build: func(b *kb) {
				baseWrites(b)
				b.list(2, 55, 58, history.KubeRequest{}, 21, "", a20)
			}},
		{name: "kube/linearizable - a create over an existing object - fail", want: Fail, key: "a", rev: 15,
			msg: "but it existed then", build: func(b *kb) {
				b.create(1, 0, 10, a10)
				b.create(2, 20, 30, kobjOf("a", "v:dup", 15))
			}},
		{name: "kube/linearizable - 409 though the precondition held throughout - fail", want: Fail, key: "a", rev: 10,
			msg: "was at RV 10", build: func(b *kb) {
				b.create(1, 0, 10, a10)
				b.updateRefused(2, 20, 30, 10, kobjOf("a", "v:no", 0), 409)
				b.get(3, 40, 50, "a", "", &a10)
			}},
		{name: "kube/linearizable - a write called after another returned took an earlier RV - fail", want: Fail, key: "a",
			rev: 9, msg: "yet it took effect at RV 9", build: func(b *kb) {
				b.create(1, 0, 10, kobjOf("c", "v:c", 10))
				b.create(2, 20, 30, kobjOf("a", "v:a", 9))
			}},
		{name: "kube/linearizable - nothing - skipped", want: Skipped, build: func(b *kb) {}},
	})
}

// A stale consistent list is one violation: it must not serve as a bound
// for the reads before it, which would put the blame on them too.
func TestKubeLinearizableStaleListBlamesOnlyItself(t *testing.T) {
	b := newKB()
	b.create(1, 0, 10, a10)
	b.update(1, 20, 30, 10, a15)
	b.get(2, 40, 50, "a", "", &a15)
	stale := b.list(3, 60, 70, history.KubeRequest{}, 10, "", a10)
	for _, run := range []func(*history.History, Config) Result{CheckKubeLinearizable, CheckKubeConsistentRead} {
		r := run(b.h, DefaultConfig())
		if r.Verdict != Fail || len(r.Violations) != 1 || !containsOp(r.Violations[0].Operations, stale) {
			t.Errorf("%s: %s with %d violation(s), want one naming the stale list (operation %d): %s",
				r.Name, r.Verdict, len(r.Violations), stale, violationTexts(r.Violations))
		}
	}
}
