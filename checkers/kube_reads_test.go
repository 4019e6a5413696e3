package checkers

import (
	"testing"

	"github.com/vigil-suite/vigil/history"
)

func TestKubeConsistentRead(t *testing.T) {
	runKubeCases(t, CheckKubeConsistentRead, ErrKubeConsistentRead, []kcase{
		{name: "kube/consistent-read - lists and gets see prior writes - pass", want: Pass, build: healthyKube},
		{name: "kube/consistent-read - a delete no watch placed may lie before the list - pass", want: Pass, build: func(b *kb) {
			baseWrites(b)
			b.list(2, 72, 75, history.KubeRequest{}, 19, "", a15) // b's delete (60-70) lies in RVs 16..19
		}},
		{name: "kube/consistent-read - a list before a delete no watch placed misses its object - fail", want: Fail, key: "b",
			msg: "b is missing", build: func(b *kb) {
				baseWrites(b)
				b.list(2, 55, 58, history.KubeRequest{}, 16, "", a15) // b's delete (60-70) came after: RVs 17..19
			}},
		{name: "kube/consistent-read - a list below a prior write's RV - fail", want: Fail, rev: 13, op: 3,
			msg: "below RV 15 of operation 3", build: func(b *kb) {
				baseWrites(b)
				b.list(2, 55, 58, history.KubeRequest{}, 13, "", a10, b12)
			}},
		{name: "kube/consistent-read - a get returns the state a prior update replaced - fail", want: Fail, key: "a", rev: 15,
			op: 5, msg: "changed it at RV 20", build: func(b *kb) {
				baseWrites(b)
				b.get(2, 100, 110, "a", "", &a15)
			}},
		{name: "kube/consistent-read - a get of an object deleted before, by a delete no watch placed - fail", want: Fail,
			key: "b", op: 4, msg: "deleted it after that", build: func(b *kb) {
				baseWrites(b)
				b.get(2, 100, 110, "b", "", &b12)
			}},
		{name: "kube/consistent-read - 404 for an object that exists - fail", want: Fail, key: "a", msg: "answered 404",
			build: func(b *kb) {
				baseWrites(b)
				b.get(2, 100, 110, "a", "", nil)
			}},
		{name: "kube/consistent-read - a list missing an object - fail", want: Fail, key: "b", msg: "b is missing",
			build: func(b *kb) {
				baseWrites(b)
				fullWatch(b, 9) // places b's deletion at 18
				b.list(2, 55, 58, history.KubeRequest{}, 16, "", a15)
			}},
		{name: "kube/consistent-read - no consistent read - skipped", want: Skipped, build: baseWrites},
	})
}

func TestKubeListExact(t *testing.T) {
	exact := history.KubeRequest{ResourceVersion: "16", ResourceVersionMatch: "Exact"}
	runKubeCases(t, CheckKubeListExact, ErrKubeListExact, []kcase{
		{name: "kube/list-exact - the state at 16 - pass", want: Pass, build: func(b *kb) {
			baseWrites(b)
			b.list(2, 100, 110, exact, 16, "", a15, b12)
			b.listStatus(2, 120, 130, history.KubeRequest{ResourceVersion: "3", ResourceVersionMatch: "Exact"},
				history.KubeStatus{Code: 410, Reason: "Expired"})
		}},
		{name: "kube/list-exact - the legacy form (RV and limit) at its RV - pass", want: Pass, build: func(b *kb) {
			baseWrites(b)
			b.list(2, 100, 110, history.KubeRequest{ResourceVersion: "13", Limit: 5}, 13, "", a10, b12)
		}},
		{name: "kube/list-exact - answered at another RV - fail", want: Fail, rev: 20, msg: "answered at RV 20",
			build: func(b *kb) {
				baseWrites(b)
				b.list(2, 100, 110, exact, 20, "", a20)
			}},
		{name: "kube/list-exact - at the asked RV but a newer state - fail", want: Fail, key: "a", rev: 20,
			msg: "newer than the state at RV 16", build: func(b *kb) {
				baseWrites(b)
				b.list(2, 100, 110, exact, 16, "", a20, b12)
			}},
		{name: "kube/list-exact - only 410 answers - skipped", want: Skipped, build: func(b *kb) {
			b.listStatus(2, 120, 130, exact, history.KubeStatus{Code: 410, Reason: "Expired"})
		}},
	})
}

func TestKubeListNotOlderThan(t *testing.T) {
	nlt := history.KubeRequest{ResourceVersion: "16", ResourceVersionMatch: "NotOlderThan"}
	runKubeCases(t, CheckKubeListNotOlderThan, ErrKubeListNotOlderThan, []kcase{
		{name: "kube/list-not-older-than - at a later RV - pass", want: Pass, build: func(b *kb) {
			baseWrites(b)
			b.list(2, 100, 110, nlt, 21, "", a20)
			b.list(2, 100, 110, history.KubeRequest{ResourceVersion: "16"}, 16, "", a15, b12) // legacy, no limit
		}},
		{name: "kube/list-not-older-than - older than asked - fail", want: Fail, rev: 13, msg: "asked for RV 16 or newer",
			build: func(b *kb) {
				baseWrites(b)
				b.list(2, 100, 110, nlt, 13, "", a10, b12)
			}},
		{name: "kube/list-not-older-than - not the state at its RV - fail", want: Fail, key: "b", msg: "b is missing",
			build: func(b *kb) {
				baseWrites(b)
				fullWatch(b, 9)
				b.list(2, 100, 110, nlt, 17, "", a15)
			}},
		{name: "kube/list-not-older-than - none - skipped", want: Skipped, build: healthyKube},
	})
}

func TestKubeFutureRV(t *testing.T) {
	future := history.KubeRequest{ResourceVersion: "1000020", ResourceVersionMatch: "NotOlderThan"}
	// proof is a consistent list after everything: the store was at 21.
	proof := func(b *kb) { b.list(3, 500, 510, history.KubeRequest{}, 21, "", a20) }
	runKubeCases(t, CheckKubeFutureRV, ErrKubeFutureRV, []kcase{
		{name: "kube/future-rv - 504, or no answer - pass", want: Pass, build: func(b *kb) {
			baseWrites(b)
			b.listStatus(2, 100, 110, future, history.KubeStatus{Code: 504, Reason: "Timeout"})
			b.op(2, 100, 110, history.KubeRequest{Verb: history.KubeGet, Name: "a", ResourceVersion: "1000020"}, nil, nil, "timeout")
			b.watch(1, 2, 100, history.KubeWatchRequest{ResourceVersion: "1000020"})
			b.errEv(1, 103, 504, "Timeout")
			proof(b)
		}},
		{name: "kube/future-rv - data at an RV the store may have reached meanwhile - skipped", want: Skipped, build: func(b *kb) {
			baseWrites(b)
			b.list(2, 100, 110, history.KubeRequest{ResourceVersion: "23", ResourceVersionMatch: "NotOlderThan"}, 23, "", a20)
		}},
		{name: "kube/future-rv - a list answered with stale data - fail", want: Fail, rev: 1000020, op: 6, msg: "stale data",
			build: func(b *kb) {
				baseWrites(b)
				b.list(2, 100, 110, future, 20, "", a20)
				proof(b)
			}},
		{name: "kube/future-rv - a get answered with data - fail", want: Fail, key: "a", op: 6, msg: "answered with data",
			build: func(b *kb) {
				baseWrites(b)
				b.get(2, 100, 110, "a", "1000020", &a20)
				proof(b)
			}},
		{name: "kube/future-rv - answered 410 - fail", want: Fail, rev: 1000020, msg: "answered 410", build: func(b *kb) {
			baseWrites(b)
			b.listStatus(2, 100, 110, future, history.KubeStatus{Code: 410, Reason: "Expired"})
			proof(b)
		}},
		{name: "kube/future-rv - a watch delivers old events - fail", want: Fail, watch: 1, key: "a", msg: "at or below it",
			build: func(b *kb) {
				baseWrites(b)
				b.watch(1, 2, 100, history.KubeWatchRequest{ResourceVersion: "1000020"})
				b.ev(1, 101, history.KubeModified, a20)
				proof(b)
			}},
		{name: "kube/future-rv - no future read - skipped", want: Skipped, build: healthyKube},
	})
}

func TestKubeStaleReadBound(t *testing.T) {
	runKubeCases(t, CheckKubeStaleReadBound, ErrKubeStaleReadBound, []kcase{
		{name: "kube/stale-read-bound - a get at 16 and a list at 0 - pass", want: Pass, build: func(b *kb) {
			baseWrites(b)
			b.get(2, 100, 110, "a", "16", &a15)
			b.get(2, 100, 110, "b", "19", nil)
			b.list(2, 100, 110, history.KubeRequest{ResourceVersion: "0"}, 13, "", a10, b12)
		}},
		{name: "kube/stale-read-bound - a get at 16 older than 16 - fail", want: Fail, key: "a", rev: 10,
			msg: "changed it at RV 15, at or below 16", build: func(b *kb) {
				baseWrites(b)
				b.get(2, 100, 110, "a", "16", &a10)
			}},
		{name: "kube/stale-read-bound - a list at 0 that is no state - fail", want: Fail, key: "a",
			msg: "changed it at RV 15, at or below RV 16", build: func(b *kb) {
				baseWrites(b)
				b.list(2, 100, 110, history.KubeRequest{ResourceVersion: "0"}, 16, "", a10, b12)
			}},
		{name: "kube/stale-read-bound - none - skipped", want: Skipped, build: healthyKube},
	})
}
