package kube

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func streamReq(rv string) history.KubeWatchRequest {
	yes := true
	return history.KubeWatchRequest{ResourceVersion: rv, ResourceVersionMatch: "NotOlderThan", SendInitialEvents: &yes,
		AllowBookmarks: true}
}

func TestKubeWatchlistInitialEvents(t *testing.T) {
	stream := func(b *histbuild.KubeBuilder, rv string) {
		histbuild.BaseWrites(b)
		histbuild.FullWatch(b, 9)
		b.Watch(1, 5, 55, streamReq(rv))
	}
	histbuild.RunKubeCases(t, CheckWatchlistInitialEvents, ErrWatchlistInitialEvents, []histbuild.Kcase{
		{Name: "kube/watchlist-initial-events - state, end bookmark, later changes - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			stream(b, "")
			b.Ev(1, 56, history.KubeAdded, histbuild.A15)
			b.Ev(1, 56, history.KubeAdded, histbuild.B12)
			b.Bookmark(1, 57, 16, true)
			b.Ev(1, 71, history.KubeDeleted, histbuild.B18)
			b.Ev(1, 91, history.KubeModified, histbuild.A20)
		}},
		{Name: "kube/watchlist-initial-events - no end bookmark before a later change - fail", Want: check.Fail, Watch: 1,
			Msg: "no BOOKMARK annotated", Build: func(b *histbuild.KubeBuilder) {
				stream(b, "")
				b.Ev(1, 56, history.KubeAdded, histbuild.A15)
				b.Ev(1, 56, history.KubeAdded, histbuild.B12)
				b.Ev(1, 71, history.KubeDeleted, histbuild.B18)
			}},
		{Name: "kube/watchlist-initial-events - end bookmark below the requested RV - fail", Want: check.Fail, Watch: 1, Rev: 16,
			Msg: "below 17", Build: func(b *histbuild.KubeBuilder) {
				stream(b, "17")
				b.Ev(1, 56, history.KubeAdded, histbuild.A15)
				b.Ev(1, 56, history.KubeAdded, histbuild.B12)
				b.Bookmark(1, 57, 16, true)
			}},
		{Name: "kube/watchlist-initial-events - RV unset but the state misses an acknowledged write - fail", Want: check.Fail,
			Watch: 1, Op: 3, Msg: "a write acknowledged before the watch was called", Build: func(b *histbuild.KubeBuilder) {
				stream(b, "")
				b.Ev(1, 56, history.KubeAdded, histbuild.A10)
				b.Ev(1, 56, history.KubeAdded, histbuild.B12)
				b.Bookmark(1, 57, 13, true)
			}},
		{Name: "kube/watchlist-initial-events - a MODIFIED among the initial events - fail", Want: check.Fail, Watch: 1,
			Msg: "among its initial events", Build: func(b *histbuild.KubeBuilder) {
				stream(b, "")
				b.Ev(1, 56, history.KubeAdded, histbuild.B12)
				b.Ev(1, 56, history.KubeModified, histbuild.A15)
				b.Bookmark(1, 57, 16, true)
			}},
		{Name: "kube/watchlist-initial-events - an object missing from the state - fail", Want: check.Fail, Watch: 1, Key: "b",
			Msg: "b is missing", Build: func(b *histbuild.KubeBuilder) {
				stream(b, "")
				b.Ev(1, 56, history.KubeAdded, histbuild.A15)
				b.Bookmark(1, 57, 16, true)
			}},
		{Name: "kube/watchlist-initial-events - the server lacks WatchList - skipped", Want: check.Skipped, Build: func(b *histbuild.KubeBuilder) {
			stream(b, "")
			b.End(1, 56, history.EndError, &history.KubeStatus{Code: 422, Reason: "Invalid",
				Message: "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden " +
					"for watch unless the WatchList feature gate is enabled"})
		}},
	})
}

func TestKubeWatchlistValidation(t *testing.T) {
	yes := true
	probes := func(b *histbuild.KubeBuilder) {
		b.Watch(1, 3, 10, history.KubeWatchRequest{SendInitialEvents: &yes, AllowBookmarks: true})
		b.End(1, 11, history.EndError, &history.KubeStatus{Code: 422, Reason: "Invalid"})
		b.Watch(2, 3, 12, history.KubeWatchRequest{ResourceVersion: "5", ResourceVersionMatch: "NotOlderThan"})
		b.End(2, 13, history.EndError, &history.KubeStatus{Code: 422, Reason: "Invalid"})
	}
	histbuild.RunKubeCases(t, CheckWatchlistValidation, ErrWatchlistValidation, []histbuild.Kcase{
		{Name: "kube/watchlist-validation - every probe refused (422, 400) - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			probes(b)
			b.ListStatus(3, 20, 21, history.KubeRequest{ResourceVersion: "5", Continue: "tok"},
				history.KubeStatus{Code: 400, Reason: "BadRequest"})
		}},
		{Name: "kube/watchlist-validation - resourceVersionMatch on a plain watch served - fail", Want: check.Fail, Watch: 3,
			Msg: "without sendInitialEvents, and was answered served", Build: func(b *histbuild.KubeBuilder) {
				probes(b)
				histbuild.BaseWrites(b)
				b.Watch(3, 3, 14, history.KubeWatchRequest{ResourceVersion: "9", ResourceVersionMatch: "NotOlderThan"})
				b.Ev(3, 15, history.KubeAdded, histbuild.A10)
			}},
		{Name: "kube/watchlist-validation - RV with continue listed - fail", Want: check.Fail, Op: 1, Msg: "together with continue",
			Build: func(b *histbuild.KubeBuilder) {
				b.List(3, 20, 21, history.KubeRequest{ResourceVersion: "5", Continue: "tok"}, 5, "")
			}},
		{Name: "kube/watchlist-validation - no probe - skipped", Want: check.Skipped, Build: healthyKube},
	})
}
