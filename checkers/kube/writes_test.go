package kube

import (
	"slices"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func TestKubeOptimisticConcurrency(t *testing.T) {
	race := func(b *histbuild.KubeBuilder, codes ...int) {
		b.Create(1, 0, 10, histbuild.A10)
		for i, code := range codes {
			v := histbuild.KobjOf("a", "v:r"+string(rune('0'+i)), 15, "g=a")
			if code == 200 {
				b.Update(2+i, 20, 30+i, 10, v)
			} else {
				b.UpdateRefused(2+i, 20, 30+i, 10, v, code)
			}
		}
	}
	histbuild.RunKubeCases(t, CheckOptimisticConcurrency, ErrOptimisticConcurrency, []histbuild.Kcase{
		{Name: "kube/optimistic-concurrency - updates on top of what they read - pass", Want: check.Pass, Build: healthyKube},
		{Name: "kube/optimistic-concurrency - a race with one winner - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			race(b, 409, 200, 409)
		}},
		{Name: "kube/optimistic-concurrency - a stale update refused 409 - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.UpdateRefused(2, 100, 110, 10, histbuild.KobjOf("a", "v:late", 0), 409)
		}},
		{Name: "kube/optimistic-concurrency - a stale precondition accepted - fail", Want: check.Fail, Key: "a", Rev: 10, Op: 2,
			Msg: "overwrote a write it never saw", Build: func(b *histbuild.KubeBuilder) {
				b.Create(1, 0, 10, histbuild.A10)
				b.Update(1, 40, 50, 10, histbuild.A15)
				b.Update(2, 60, 70, 10, histbuild.KobjOf("a", "v:lost", 17, "g=a"))
			}},
		{Name: "kube/optimistic-concurrency - two winners from one RV - fail", Want: check.Fail, Key: "a", Rev: 10,
			Msg: "both succeeded with precondition RV 10", Any: true, Build: func(b *histbuild.KubeBuilder) {
				b.Create(1, 0, 10, histbuild.A10)
				b.Update(2, 20, 30, 10, histbuild.KobjOf("a", "v:x", 15, "g=a"))
				b.Update(3, 40, 50, 10, histbuild.KobjOf("a", "v:y", 17, "g=a"))
			}},
		{Name: "kube/optimistic-concurrency - a race nobody won - fail", Want: check.Fail, Key: "a", Rev: 10,
			Msg: "none of 3 concurrent updates", Build: func(b *histbuild.KubeBuilder) { race(b, 409, 409, 409) }},
		{Name: "kube/optimistic-concurrency - a stale uid accepted - fail", Want: check.Fail, Key: "a", Msg: "uid precondition uid-old",
			Build: func(b *histbuild.KubeBuilder) {
				b.Create(1, 0, 10, histbuild.A10)
				body := histbuild.KobjOf("a", "v:u", 10)
				body.UID = "uid-old"
				b.Op(2, 20, 30, history.KubeRequest{Verb: history.KubeUpdate, Name: "a", Object: &body},
					&history.KubeResponse{Code: 200, Object: ptr(histbuild.KobjOf("a", "v:u", 15))}, nil, "")
			}},
		{Name: "kube/optimistic-concurrency - no precondition - skipped", Want: check.Skipped, Build: func(b *histbuild.KubeBuilder) {
			b.Create(1, 0, 10, histbuild.A10)
		}},
	})
}

func ptr[T any](v T) *T { return &v }

func TestKubeLinearizable(t *testing.T) {
	histbuild.RunKubeCases(t, CheckLinearizable, ErrLinearizable, []histbuild.Kcase{
		{Name: "kube/linearizable - the base history - pass", Want: check.Pass, Build: healthyKube},
		{Name: "kube/linearizable - a lost update placed by a later read - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			b.Create(1, 0, 10, histbuild.A10)
			b.UpdateLost(1, 20, 30, 10, histbuild.KobjOf("a", "v:maybe", 0, "g=a"))
			b.Get(2, 40, 50, "a", "", ptr(histbuild.KobjOf("a", "v:maybe", 13, "g=a")))
			b.Update(1, 60, 70, 13, histbuild.A15)
		}},
		{Name: "kube/linearizable - a read overlapping a write may see either - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			b.Create(1, 0, 10, histbuild.A10)
			b.Update(1, 20, 40, 10, histbuild.A15)
			b.Get(2, 25, 30, "a", "", &histbuild.A10)
			b.Get(3, 26, 31, "a", "", &histbuild.A15)
		}},
		{Name: "kube/linearizable - a stale read after an acknowledged update - fail", Want: check.Fail, Key: "a", Rev: 10, Op: 3,
			Msg: "changed it at RV 15", Build: func(b *histbuild.KubeBuilder) {
				b.Create(1, 0, 10, histbuild.A10)
				b.Update(1, 20, 30, 10, histbuild.A15)
				b.Get(2, 40, 50, "a", "", &histbuild.A10)
			}},
		{Name: "kube/linearizable - a read from the future - fail", Want: check.Fail, Key: "a", Rev: 15, Op: 3,
			Msg: "the highest RV its answer can reflect", Build: func(b *histbuild.KubeBuilder) {
				b.Create(1, 0, 10, histbuild.A10)
				b.Get(2, 11, 12, "a", "", &histbuild.A15)
				b.Update(1, 20, 30, 10, histbuild.A15)
			}},
		{Name: "kube/linearizable - a read sees a write a read before it did not - fail", Want: check.Fail, Key: "a", Rev: 10,
			Msg: "at or below 15", Build: func(b *histbuild.KubeBuilder) {
				b.Create(1, 0, 10, histbuild.A10)
				b.Update(1, 20, 100, 10, histbuild.A15)
				b.Get(2, 30, 40, "a", "", &histbuild.A15)
				b.Get(3, 50, 60, "a", "", &histbuild.A10)
			}},
		{Name: "kube/linearizable - a list outside its window - fail", Want: check.Fail, Rev: 21, Op: 5, Msg: "answered at RV 21",
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.List(2, 55, 58, history.KubeRequest{}, 21, "", histbuild.A20)
			}},
		{Name: "kube/linearizable - a create over an existing object - fail", Want: check.Fail, Key: "a", Rev: 15,
			Msg: "but it existed then", Build: func(b *histbuild.KubeBuilder) {
				b.Create(1, 0, 10, histbuild.A10)
				b.Create(2, 20, 30, histbuild.KobjOf("a", "v:dup", 15))
			}},
		{Name: "kube/linearizable - 409 though the precondition held throughout - fail", Want: check.Fail, Key: "a", Rev: 10,
			Msg: "was at RV 10", Build: func(b *histbuild.KubeBuilder) {
				b.Create(1, 0, 10, histbuild.A10)
				b.UpdateRefused(2, 20, 30, 10, histbuild.KobjOf("a", "v:no", 0), 409)
				b.Get(3, 40, 50, "a", "", &histbuild.A10)
			}},
		{Name: "kube/linearizable - a write called after another returned took an earlier RV - fail", Want: check.Fail, Key: "a",
			Rev: 9, Msg: "yet it took effect at RV 9", Build: func(b *histbuild.KubeBuilder) {
				b.Create(1, 0, 10, histbuild.KobjOf("c", "v:c", 10))
				b.Create(2, 20, 30, histbuild.KobjOf("a", "v:a", 9))
			}},
		{Name: "kube/linearizable - nothing - skipped", Want: check.Skipped, Build: func(b *histbuild.KubeBuilder) {}},
	})
}

// A stale consistent list is one violation: it must not serve as a bound
// for the reads before it, which would put the blame on them too.
func TestKubeLinearizableStaleListBlamesOnlyItself(t *testing.T) {
	b := histbuild.NewKube()
	b.Create(1, 0, 10, histbuild.A10)
	b.Update(1, 20, 30, 10, histbuild.A15)
	b.Get(2, 40, 50, "a", "", &histbuild.A15)
	stale := b.List(3, 60, 70, history.KubeRequest{}, 10, "", histbuild.A10)
	for _, run := range []func(*history.History, check.Config) check.Result{CheckLinearizable, CheckConsistentRead} {
		r := run(b.H, check.DefaultConfig())
		if r.Verdict != check.Fail || len(r.Violations) != 1 || !slices.Contains(r.Violations[0].Operations, stale) {
			t.Errorf("%s: %s with %d violation(s), want one naming the stale list (operation %d): %s",
				r.Name, r.Verdict, len(r.Violations), stale, histbuild.ViolationTexts(r.Violations))
		}
	}
}
