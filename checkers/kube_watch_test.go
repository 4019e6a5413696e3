package checkers

import (
	"testing"

	"github.com/vigil-suite/vigil/history"
)

func TestKubeRVFormat(t *testing.T) {
	runKubeCases(t, CheckKubeRVFormat, ErrKubeRVFormat, []kcase{
		{name: "kube/rv-format - decimal RVs, updates above their precondition - pass", want: Pass, build: healthyKube},
		{name: "kube/rv-format - a list item with a leading zero - fail", want: Fail, key: "a", msg: `"015"`, build: func(b *kb) {
			baseWrites(b)
			bad := a15
			bad.ResourceVersion = "015"
			b.list(2, 55, 58, history.KubeRequest{}, 16, "", bad, b12)
		}},
		{name: "kube/rv-format - a bookmark with a non-numeric RV - fail", want: Fail, watch: 1, msg: `"abc"`, build: func(b *kb) {
			baseWrites(b)
			b.watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true})
			b.add(history.Record{KubeEvent: &history.KubeEvent{Watch: 1, Time: 20, Type: history.KubeBookmark,
				Object: &history.Object{ResourceVersion: "abc"}}})
		}},
		{name: "kube/rv-format - an update acknowledged at an RV not above its precondition - fail", want: Fail, key: "a", rev: 9,
			msg: "not above it", build: func(b *kb) {
				b.create(1, 0, 10, a10)
				b.update(1, 40, 50, 10, kobjOf("a", "v:a2", 9, "g=a"))
			}},
		{name: "kube/rv-format - nothing recorded - skipped", want: Skipped, build: func(b *kb) {}},
	})
}

func TestKubeRVOrder(t *testing.T) {
	runKubeCases(t, CheckKubeRVOrder, ErrKubeRVOrder, []kcase{
		{name: "kube/rv-order - RVs follow real time - pass", want: Pass, build: baseWrites},
		{name: "kube/rv-order - concurrent writes in either order - pass", want: Pass, build: func(b *kb) {
			b.create(1, 0, 30, a10)
			b.create(2, 5, 20, kobjOf("c", "v:c1", 8))
		}},
		{name: "kube/rv-order - a later write got a lower RV - fail", want: Fail, key: "c", rev: 8, op: 1,
			msg: "called after operation 1", build: func(b *kb) {
				b.create(1, 0, 10, a10)
				b.create(2, 20, 30, kobjOf("c", "v:c1", 8))
			}},
		{name: "kube/rv-order - two writes share an RV - fail", want: Fail, key: "c", rev: 10, msg: "both acknowledged at RV 10",
			build: func(b *kb) {
				b.create(1, 0, 10, a10)
				b.create(2, 0, 10, kobjOf("c", "v:c1", 10))
			}},
		{name: "kube/rv-order - one write - skipped", want: Skipped, build: func(b *kb) { b.create(1, 0, 10, a10) }},
	})
}

func TestKubeWatchOrdered(t *testing.T) {
	runKubeCases(t, CheckKubeWatchOrdered, ErrKubeWatchOrdered, []kcase{
		{name: "kube/watch-ordered - increasing RVs - pass", want: Pass, build: healthyKube},
		{name: "kube/watch-ordered - an initial state in key order, not RV order - pass", want: Pass, build: func(b *kb) {
			baseWrites(b)
			b.watch(1, 5, 55, history.KubeWatchRequest{ResourceVersion: "0"})
			b.ev(1, 56, history.KubeAdded, a15)
			b.ev(1, 56, history.KubeAdded, b12)
			b.ev(1, 71, history.KubeDeleted, b18)
		}},
		{name: "kube/watch-ordered - two events swapped - fail", want: Fail, watch: 1, key: "a", rev: 15, msg: "did not increase",
			build: func(b *kb) {
				baseWrites(b)
				b.watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.ev(1, 11, history.KubeAdded, a10)
				b.ev(1, 31, history.KubeAdded, b12)
				b.ev(1, 71, history.KubeDeleted, b18)
				b.ev(1, 72, history.KubeModified, a15)
			}},
		{name: "kube/watch-ordered - the same RV twice - fail", want: Fail, watch: 1, rev: 12, build: func(b *kb) {
			baseWrites(b)
			b.watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
			b.ev(1, 31, history.KubeAdded, b12)
			b.ev(1, 32, history.KubeAdded, b12)
		}},
		{name: "kube/watch-ordered - no event - skipped", want: Skipped, build: baseWrites},
	})
}

func TestKubeWatchFromRV(t *testing.T) {
	runKubeCases(t, CheckKubeWatchFromRV, ErrKubeWatchFromRV, []kcase{
		{name: "kube/watch-from-rv - everything delivered - pass", want: Pass, build: healthyKube},
		{name: "kube/watch-from-rv - a watch from 12 starts after it - pass", want: Pass, build: func(b *kb) {
			baseWrites(b)
			b.watch(1, 5, 35, history.KubeWatchRequest{ResourceVersion: "12"})
			b.ev(1, 51, history.KubeModified, a15)
			b.ev(1, 71, history.KubeDeleted, b18)
			b.ev(1, 91, history.KubeModified, a20)
		}},
		{name: "kube/watch-from-rv - a dropped MODIFIED - fail", want: Fail, watch: 1, key: "a", rev: 15, op: 3,
			msg: "missed the change of a at RV 15", build: func(b *kb) {
				baseWrites(b)
				b.watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.ev(1, 11, history.KubeAdded, a10)
				b.ev(1, 31, history.KubeAdded, b12)
				b.ev(1, 71, history.KubeDeleted, b18)
				b.ev(1, 91, history.KubeModified, a20)
			}},
		{name: "kube/watch-from-rv - an event at the start RV - fail", want: Fail, watch: 1, key: "b", rev: 12,
			msg: "at or below the RV it started from", build: func(b *kb) {
				baseWrites(b)
				b.watch(1, 5, 35, history.KubeWatchRequest{ResourceVersion: "12"})
				b.ev(1, 36, history.KubeAdded, b12)
				b.ev(1, 51, history.KubeModified, a15)
			}},
		{name: "kube/watch-from-rv - a synthetic ADDED for an update - fail", want: Fail, watch: 1, key: "a", rev: 15,
			msg: "a synthetic ADDED", build: func(b *kb) {
				baseWrites(b)
				b.watch(1, 5, 35, history.KubeWatchRequest{ResourceVersion: "14"})
				b.ev(1, 51, history.KubeAdded, a15)
			}},
		{name: "kube/watch-from-rv - another value at a write's RV - fail", want: Fail, watch: 1, key: "a", rev: 15, op: 3,
			msg: `but update operation 3 (client 1) wrote "v:a2" at RV 15`, build: func(b *kb) {
				baseWrites(b)
				b.watch(1, 5, 35, history.KubeWatchRequest{ResourceVersion: "14"})
				b.ev(1, 51, history.KubeModified, kobjOf("a", "v:ghost", 15, "g=a"))
			}},
		{name: "kube/watch-from-rv - a value nobody wrote - fail", want: Fail, watch: 1, key: "a", rev: 16,
			msg: "nobody wrote that value", build: func(b *kb) {
				baseWrites(b)
				b.watch(1, 5, 35, history.KubeWatchRequest{ResourceVersion: "15"})
				b.ev(1, 51, history.KubeModified, kobjOf("a", "v:ghost", 16, "g=a"))
			}},
		{name: "kube/watch-from-rv - an acknowledged delete no watch delivered - fail", want: Fail, watch: 1, key: "b", op: 4,
			msg: "missed the deletion of b", build: func(b *kb) {
				baseWrites(b)
				b.watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true})
				b.ev(1, 11, history.KubeAdded, a10)
				b.ev(1, 31, history.KubeAdded, b12)
				b.ev(1, 51, history.KubeModified, a15)
				b.ev(1, 91, history.KubeModified, a20)
				b.bookmark(1, 95, 21, false)
			}},
		{name: "kube/watch-from-rv - the last watch open at the final write never delivered it - fail", want: Fail, watch: 1,
			key: "a", rev: 20, msg: "must reach it", build: func(b *kb) {
				baseWrites(b)
				b.mark(history.MarkFinalWrite, 95, 5, 20)
				b.watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.ev(1, 11, history.KubeAdded, a10)
				b.ev(1, 31, history.KubeAdded, b12)
				b.ev(1, 51, history.KubeModified, a15)
				b.ev(1, 71, history.KubeDeleted, b18)
				b.end(1, 300, history.EndClient, nil)
			}},
		{name: "kube/watch-from-rv - a watch from \"0\" open at the final write never delivered it - fail", want: Fail,
			watch: 1, key: "a", rev: 20, msg: "must reach it", build: func(b *kb) {
				baseWrites(b)
				fullWatch(b, 9)
				b.mark(history.MarkFinalWrite, 95, 5, 20)
				b.watch(1, 5, 55, history.KubeWatchRequest{ResourceVersion: "0"})
				b.ev(1, 56, history.KubeAdded, a15)
				b.ev(1, 56, history.KubeAdded, b12)
				b.ev(1, 71, history.KubeDeleted, b18)
				b.end(1, 300, history.EndClient, nil)
			}},
		{name: "kube/watch-from-rv - a watch the server ended before the final write - pass", want: Pass, build: func(b *kb) {
			baseWrites(b)
			b.mark(history.MarkFinalWrite, 95, 5, 20)
			b.watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
			b.ev(1, 11, history.KubeAdded, a10)
			b.end(1, 300, history.EndServer, nil)
		}},
		{name: "kube/watch-from-rv - no watch - skipped", want: Skipped, build: baseWrites},
	})
}

func TestKubeWatchAgreement(t *testing.T) {
	runKubeCases(t, CheckKubeWatchAgreement, ErrKubeWatchAgreement, []kcase{
		{name: "kube/watch-agreement - two full watches and a late one - pass", want: Pass, build: func(b *kb) {
			baseWrites(b)
			fullWatch(b, 1)
			fullWatch(b, 2)
			b.watch(3, 7, 35, history.KubeWatchRequest{ResourceVersion: "12"})
			b.ev(3, 51, history.KubeModified, a15)
			b.ev(3, 71, history.KubeDeleted, b18)
		}},
		{name: "kube/watch-agreement - another value at one RV - fail", want: Fail, watch: 2, key: "a", rev: 15,
			msg: "where watch 1 (client 5, same selector) delivered MODIFIED a", build: func(b *kb) {
				baseWrites(b)
				fullWatch(b, 1)
				b.watch(2, 7, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.ev(2, 11, history.KubeAdded, a10)
				b.ev(2, 31, history.KubeAdded, b12)
				b.ev(2, 51, history.KubeModified, kobjOf("a", "v:other", 15, "g=a"))
				b.ev(2, 71, history.KubeDeleted, b18)
				b.ev(2, 91, history.KubeModified, a20)
			}},
		{name: "kube/watch-agreement - one watch skipped a change the other delivered - fail", want: Fail, watch: 2, key: "b",
			rev: 18, msg: "delivered nothing at RV 18", build: func(b *kb) {
				baseWrites(b)
				fullWatch(b, 1)
				b.watch(2, 7, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.ev(2, 11, history.KubeAdded, a10)
				b.ev(2, 31, history.KubeAdded, b12)
				b.ev(2, 51, history.KubeModified, a15)
				b.ev(2, 91, history.KubeModified, a20)
			}},
		{name: "kube/watch-agreement - different selectors are not compared - skipped", want: Skipped, build: func(b *kb) {
			baseWrites(b)
			fullWatch(b, 1)
			selWatch(b, 2)
		}},
	})
}

func TestKubeWatchResume(t *testing.T) {
	first := func(b *kb) {
		baseWrites(b)
		fullWatch(b, 9) // places b's deletion at 18
		b.watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
		b.ev(1, 11, history.KubeAdded, a10)
		b.ev(1, 31, history.KubeAdded, b12)
		b.ev(1, 51, history.KubeModified, a15)
		b.end(1, 55, history.EndError, nil)
	}
	runKubeCases(t, CheckKubeWatchResume, ErrKubeWatchResume, []kcase{
		{name: "kube/watch-resume - no gap, no duplicate - pass", want: Pass, build: func(b *kb) {
			first(b)
			b.resume(2, 1, 5, 56, history.KubeWatchRequest{ResourceVersion: "15"})
			b.ev(2, 71, history.KubeDeleted, b18)
			b.ev(2, 91, history.KubeModified, a20)
		}},
		{name: "kube/watch-resume - answered 410 - pass", want: Pass, build: func(b *kb) {
			first(b)
			b.resume(2, 1, 5, 56, history.KubeWatchRequest{ResourceVersion: "15"})
			b.errEv(2, 57, 410, "Expired")
			b.end(2, 58, history.EndServer, nil)
		}},
		{name: "kube/watch-resume - the last event again - fail", want: Fail, watch: 2, key: "a", rev: 15, msg: "again",
			build: func(b *kb) {
				first(b)
				b.resume(2, 1, 5, 56, history.KubeWatchRequest{ResourceVersion: "15"})
				b.ev(2, 57, history.KubeModified, a15)
				b.ev(2, 71, history.KubeDeleted, b18)
			}},
		{name: "kube/watch-resume - a change lost between the watches - fail", want: Fail, watch: 2, key: "b", rev: 18,
			msg: "reached neither", build: func(b *kb) {
				first(b)
				b.resume(2, 1, 5, 56, history.KubeWatchRequest{ResourceVersion: "15"})
				b.ev(2, 91, history.KubeModified, a20)
			}},
		{name: "kube/watch-resume - resumed from another RV (harness) - skipped", want: Skipped, build: func(b *kb) {
			first(b)
			b.resume(2, 1, 5, 56, history.KubeWatchRequest{ResourceVersion: "10"})
		}},
	})
}
