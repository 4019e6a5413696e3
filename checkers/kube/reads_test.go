package kube

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func TestKubeConsistentRead(t *testing.T) {
	histbuild.RunKubeCases(t, CheckConsistentRead, ErrConsistentRead, []histbuild.Kcase{
		{Name: "kube/consistent-read - lists and gets see prior writes - pass", Want: check.Pass, Build: healthyKube},
		{Name: "kube/consistent-read - a delete no watch placed may lie before the list - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.List(2, 72, 75, history.KubeRequest{}, 19, "", histbuild.A15) // b's delete (60-70) lies in RVs 16..19
		}},
		{Name: "kube/consistent-read - a list before a delete no watch placed misses its object - fail", Want: check.Fail, Key: "b",
			Msg: "b is missing", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.List(2, 55, 58, history.KubeRequest{}, 16, "", histbuild.A15) // b's delete (60-70) came after: RVs 17..19
			}},
		{Name: "kube/consistent-read - a list may miss an object a delete of unknown outcome may have removed - pass",
			Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Op(2, 91, 92, history.KubeRequest{Verb: history.KubeDelete, Name: "a"}, nil, nil, "context deadline exceeded")
				b.List(2, 95, 98, history.KubeRequest{}, 21, "")
			}},
		{Name: "kube/consistent-read - a delete whose connection was refused was never sent - fail", Want: check.Fail, Key: "a",
			Msg: "a is missing", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Op(2, 91, 92, history.KubeRequest{Verb: history.KubeDelete, Name: "a"}, nil, nil,
					`Delete "https://127.0.0.1:1/api/v1/namespaces/n/configmaps/a": dial tcp 127.0.0.1:1: connect: connection refused`)
				b.List(2, 95, 98, history.KubeRequest{}, 21, "")
			}},
		{Name: "kube/consistent-read - a list below a prior write's RV - fail", Want: check.Fail, Rev: 13, Op: 3,
			Msg: "below RV 15 of operation 3", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.List(2, 55, 58, history.KubeRequest{}, 13, "", histbuild.A10, histbuild.B12)
			}},
		{Name: "kube/consistent-read - a get returns the state a prior update replaced - fail", Want: check.Fail, Key: "a", Rev: 15,
			Op: 5, Msg: "changed it at RV 20", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Get(2, 100, 110, "a", "", &histbuild.A15)
			}},
		{Name: "kube/consistent-read - a get of an object deleted before, by a delete no watch placed - fail", Want: check.Fail,
			Key: "b", Op: 4, Msg: "deleted it after that", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Get(2, 100, 110, "b", "", &histbuild.B12)
			}},
		{Name: "kube/consistent-read - 404 for an object that exists - fail", Want: check.Fail, Key: "a", Msg: "answered 404",
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Get(2, 100, 110, "a", "", nil)
			}},
		{Name: "kube/consistent-read - a list missing an object - fail", Want: check.Fail, Key: "b", Msg: "b is missing",
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				histbuild.FullWatch(b, 9) // places b's deletion at 18
				b.List(2, 55, 58, history.KubeRequest{}, 16, "", histbuild.A15)
			}},
		{Name: "kube/consistent-read - no consistent read - skipped", Want: check.Skipped, Build: histbuild.BaseWrites},
	})
}

func TestKubeListExact(t *testing.T) {
	exact := history.KubeRequest{ResourceVersion: "16", ResourceVersionMatch: "Exact"}
	histbuild.RunKubeCases(t, CheckListExact, ErrListExact, []histbuild.Kcase{
		{Name: "kube/list-exact - the state at 16 - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.List(2, 100, 110, exact, 16, "", histbuild.A15, histbuild.B12)
			b.ListStatus(2, 120, 130, history.KubeRequest{ResourceVersion: "3", ResourceVersionMatch: "Exact"},
				history.KubeStatus{Code: 410, Reason: "Expired"})
		}},
		{Name: "kube/list-exact - the legacy form (RV and limit) at its RV - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.List(2, 100, 110, history.KubeRequest{ResourceVersion: "13", Limit: 5}, 13, "", histbuild.A10, histbuild.B12)
		}},
		{Name: "kube/list-exact - answered at another RV - fail", Want: check.Fail, Rev: 20, Msg: "answered at RV 20",
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.List(2, 100, 110, exact, 20, "", histbuild.A20)
			}},
		{Name: "kube/list-exact - at the asked RV but a newer state - fail", Want: check.Fail, Key: "a", Rev: 20,
			Msg: "newer than the state at RV 16", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.List(2, 100, 110, exact, 16, "", histbuild.A20, histbuild.B12)
			}},
		{Name: "kube/list-exact - only 410 answers - skipped", Want: check.Skipped, Build: func(b *histbuild.KubeBuilder) {
			b.ListStatus(2, 120, 130, exact, history.KubeStatus{Code: 410, Reason: "Expired"})
		}},
	})
}

func TestKubeListNotOlderThan(t *testing.T) {
	nlt := history.KubeRequest{ResourceVersion: "16", ResourceVersionMatch: "NotOlderThan"}
	histbuild.RunKubeCases(t, CheckListNotOlderThan, ErrListNotOlderThan, []histbuild.Kcase{
		{Name: "kube/list-not-older-than - at a later RV - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.List(2, 100, 110, nlt, 21, "", histbuild.A20)
			b.List(2, 100, 110, history.KubeRequest{ResourceVersion: "16"}, 16, "", histbuild.A15, histbuild.B12) // legacy, no limit
		}},
		{Name: "kube/list-not-older-than - older than asked - fail", Want: check.Fail, Rev: 13, Msg: "asked for RV 16 or newer",
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.List(2, 100, 110, nlt, 13, "", histbuild.A10, histbuild.B12)
			}},
		{Name: "kube/list-not-older-than - not the state at its RV - fail", Want: check.Fail, Key: "b", Msg: "b is missing",
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				histbuild.FullWatch(b, 9)
				b.List(2, 100, 110, nlt, 17, "", histbuild.A15)
			}},
		{Name: "kube/list-not-older-than - none - skipped", Want: check.Skipped, Build: healthyKube},
	})
}

func TestKubeFutureRV(t *testing.T) {
	future := history.KubeRequest{ResourceVersion: "1000020", ResourceVersionMatch: "NotOlderThan"}
	// proof is a consistent list after everything: the store was at 21.
	proof := func(b *histbuild.KubeBuilder) { b.List(3, 500, 510, history.KubeRequest{}, 21, "", histbuild.A20) }
	histbuild.RunKubeCases(t, CheckFutureRV, ErrFutureRV, []histbuild.Kcase{
		{Name: "kube/future-rv - 504, or no answer - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.ListStatus(2, 100, 110, future, history.KubeStatus{Code: 504, Reason: "Timeout"})
			b.Op(2, 100, 110, history.KubeRequest{Verb: history.KubeGet, Name: "a", ResourceVersion: "1000020"}, nil, nil, "timeout")
			b.Watch(1, 2, 100, history.KubeWatchRequest{ResourceVersion: "1000020"})
			b.ErrEv(1, 103, 504, "Timeout")
			proof(b)
		}},
		{Name: "kube/future-rv - data at an RV the store may have reached meanwhile - skipped", Want: check.Skipped, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.List(2, 100, 110, history.KubeRequest{ResourceVersion: "23", ResourceVersionMatch: "NotOlderThan"}, 23, "", histbuild.A20)
		}},
		{Name: "kube/future-rv - a list answered with stale data - fail", Want: check.Fail, Rev: 1000020, Op: 6, Msg: "stale data",
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.List(2, 100, 110, future, 20, "", histbuild.A20)
				proof(b)
			}},
		{Name: "kube/future-rv - a get answered with data - fail", Want: check.Fail, Key: "a", Op: 6, Msg: "answered with data",
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Get(2, 100, 110, "a", "1000020", &histbuild.A20)
				proof(b)
			}},
		{Name: "kube/future-rv - answered 410 - fail", Want: check.Fail, Rev: 1000020, Msg: "answered 410", Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.ListStatus(2, 100, 110, future, history.KubeStatus{Code: 410, Reason: "Expired"})
			proof(b)
		}},
		{Name: "kube/future-rv - a watch delivers old events - fail", Want: check.Fail, Watch: 1, Key: "a", Msg: "at or below it",
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(1, 2, 100, history.KubeWatchRequest{ResourceVersion: "1000020"})
				b.Ev(1, 101, history.KubeModified, histbuild.A20)
				proof(b)
			}},
		{Name: "kube/future-rv - no future read - skipped", Want: check.Skipped, Build: healthyKube},
	})
}

func TestKubeStaleReadBound(t *testing.T) {
	histbuild.RunKubeCases(t, CheckStaleReadBound, ErrStaleReadBound, []histbuild.Kcase{
		{Name: "kube/stale-read-bound - a get at 16 and a list at 0 - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.Get(2, 100, 110, "a", "16", &histbuild.A15)
			b.Get(2, 100, 110, "b", "19", nil)
			b.List(2, 100, 110, history.KubeRequest{ResourceVersion: "0"}, 13, "", histbuild.A10, histbuild.B12)
		}},
		{Name: "kube/stale-read-bound - a get at 16 older than 16 - fail", Want: check.Fail, Key: "a", Rev: 10,
			Msg: "changed it at RV 15, at or below 16", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Get(2, 100, 110, "a", "16", &histbuild.A10)
			}},
		{Name: "kube/stale-read-bound - a list at 0 that is no state - fail", Want: check.Fail, Key: "a",
			Msg: "changed it at RV 15, at or below RV 16", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.List(2, 100, 110, history.KubeRequest{ResourceVersion: "0"}, 16, "", histbuild.A10, histbuild.B12)
			}},
		{Name: "kube/stale-read-bound - none - skipped", Want: check.Skipped, Build: healthyKube},
	})
}
