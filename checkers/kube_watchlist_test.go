package checkers

import (
	"testing"

	"github.com/vigil-suite/vigil/history"
)

func streamReq(rv string) history.KubeWatchRequest {
	yes := true
	return history.KubeWatchRequest{ResourceVersion: rv, ResourceVersionMatch: "NotOlderThan", SendInitialEvents: &yes,
		AllowBookmarks: true}
}

func TestKubeWatchlistInitialEvents(t *testing.T) {
	stream := func(b *kb, rv string) {
		baseWrites(b)
		fullWatch(b, 9)
		b.watch(1, 5, 55, streamReq(rv))
	}
	runKubeCases(t, CheckKubeWatchlistInitialEvents, ErrKubeWatchlistInitialEvents, []kcase{
		{name: "kube/watchlist-initial-events - state, end bookmark, later changes - pass", want: Pass, build: func(b *kb) {
			stream(b, "")
			b.ev(1, 56, history.KubeAdded, a15)
			b.ev(1, 56, history.KubeAdded, b12)
			b.bookmark(1, 57, 16, true)
			b.ev(1, 71, history.KubeDeleted, b18)
			b.ev(1, 91, history.KubeModified, a20)
		}},
		{name: "kube/watchlist-initial-events - no end bookmark before a later change - fail", want: Fail, watch: 1,
			msg: "no BOOKMARK annotated", build: func(b *kb) {
				stream(b, "")
				b.ev(1, 56, history.KubeAdded, a15)
				b.ev(1, 56, history.KubeAdded, b12)
				b.ev(1, 71, history.KubeDeleted, b18)
			}},
		{name: "kube/watchlist-initial-events - end bookmark below the requested RV - fail", want: Fail, watch: 1, rev: 16,
			msg: "below 17", build: func(b *kb) {
				stream(b, "17")
				b.ev(1, 56, history.KubeAdded, a15)
				b.ev(1, 56, history.KubeAdded, b12)
				b.bookmark(1, 57, 16, true)
			}},
		{name: "kube/watchlist-initial-events - RV unset but the state misses an acknowledged write - fail", want: Fail,
			watch: 1, op: 3, msg: "a write acknowledged before the watch was called", build: func(b *kb) {
				stream(b, "")
				b.ev(1, 56, history.KubeAdded, a10)
				b.ev(1, 56, history.KubeAdded, b12)
				b.bookmark(1, 57, 13, true)
			}},
		{name: "kube/watchlist-initial-events - a MODIFIED among the initial events - fail", want: Fail, watch: 1,
			msg: "among its initial events", build: func(b *kb) {
				stream(b, "")
				b.ev(1, 56, history.KubeAdded, b12)
				b.ev(1, 56, history.KubeModified, a15)
				b.bookmark(1, 57, 16, true)
			}},
		{name: "kube/watchlist-initial-events - an object missing from the state - fail", want: Fail, watch: 1, key: "b",
			msg: "b is missing", build: func(b *kb) {
				stream(b, "")
				b.ev(1, 56, history.KubeAdded, a15)
				b.bookmark(1, 57, 16, true)
			}},
		{name: "kube/watchlist-initial-events - the server lacks WatchList - skipped", want: Skipped, build: func(b *kb) {
			stream(b, "")
			b.end(1, 56, history.EndError, &history.KubeStatus{Code: 422, Reason: "Invalid",
				Message: "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden " +
					"for watch unless the WatchList feature gate is enabled"})
		}},
	})
}

func TestKubeWatchlistValidation(t *testing.T) {
	yes := true
	probes := func(b *kb) {
		b.watch(1, 3, 10, history.KubeWatchRequest{SendInitialEvents: &yes, AllowBookmarks: true})
		b.end(1, 11, history.EndError, &history.KubeStatus{Code: 422, Reason: "Invalid"})
		b.watch(2, 3, 12, history.KubeWatchRequest{ResourceVersion: "5", ResourceVersionMatch: "NotOlderThan"})
		b.end(2, 13, history.EndError, &history.KubeStatus{Code: 422, Reason: "Invalid"})
	}
	runKubeCases(t, CheckKubeWatchlistValidation, ErrKubeWatchlistValidation, []kcase{
		{name: "kube/watchlist-validation - every probe refused (422, 400) - pass", want: Pass, build: func(b *kb) {
			probes(b)
			b.listStatus(3, 20, 21, history.KubeRequest{ResourceVersion: "5", Continue: "tok"},
				history.KubeStatus{Code: 400, Reason: "BadRequest"})
		}},
		{name: "kube/watchlist-validation - resourceVersionMatch on a plain watch served - fail", want: Fail, watch: 3,
			msg: "without sendInitialEvents, and was answered served", build: func(b *kb) {
				probes(b)
				baseWrites(b)
				b.watch(3, 3, 14, history.KubeWatchRequest{ResourceVersion: "9", ResourceVersionMatch: "NotOlderThan"})
				b.ev(3, 15, history.KubeAdded, a10)
			}},
		{name: "kube/watchlist-validation - RV with continue listed - fail", want: Fail, op: 1, msg: "together with continue",
			build: func(b *kb) {
				b.list(3, 20, 21, history.KubeRequest{ResourceVersion: "5", Continue: "tok"}, 5, "")
			}},
		{name: "kube/watchlist-validation - no probe - skipped", want: Skipped, build: healthyKube},
	})
}
