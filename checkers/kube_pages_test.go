package checkers

import (
	"testing"

	"github.com/vigil-suite/vigil/history"
)

func TestKubePagination(t *testing.T) {
	first := func(b *kb) {
		baseWrites(b)
		fullWatch(b, 9)
		b.list(2, 100, 101, history.KubeRequest{Limit: 1}, 16, "t1", a15)
	}
	runKubeCases(t, CheckKubePagination, ErrKubePagination, []kcase{
		{name: "kube/pagination - two pages at one RV, then an empty page - pass", want: Pass, build: func(b *kb) {
			first(b)
			b.list(2, 102, 103, history.KubeRequest{Limit: 1, Continue: "t1"}, 16, "t2", b12)
			b.list(2, 104, 105, history.KubeRequest{Limit: 1, Continue: "t2"}, 16, "")
		}},
		{name: "kube/pagination - a page at another RV - fail", want: Fail, op: 7, msg: "carries RV 21, not the first page's 16",
			build: func(b *kb) {
				first(b)
				b.list(2, 102, 103, history.KubeRequest{Limit: 1, Continue: "t1"}, 21, "")
			}},
		{name: "kube/pagination - an object on two pages - fail", want: Fail, key: "a", msg: "a appears twice",
			build: func(b *kb) {
				first(b)
				b.list(2, 102, 103, history.KubeRequest{Limit: 2, Continue: "t1"}, 16, "", b12, a15)
			}},
		{name: "kube/pagination - the list ended without an object - fail", want: Fail, key: "b", msg: "b is missing",
			build: func(b *kb) {
				first(b)
				b.list(2, 102, 103, history.KubeRequest{Limit: 1, Continue: "t1"}, 16, "")
			}},
		{name: "kube/pagination - a page above the limit - fail", want: Fail, op: 7, msg: "above the limit 1",
			build: func(b *kb) {
				baseWrites(b)
				fullWatch(b, 9)
				b.list(2, 100, 101, history.KubeRequest{Limit: 1}, 16, "t1", a15)
				b.list(2, 102, 103, history.KubeRequest{Limit: 1, Continue: "t1"}, 16, "", b12, kobjOf("c", "v:c", 3))
			}},
		{name: "kube/pagination - no limit - skipped", want: Skipped, build: healthyKube},
	})
}

func TestKubeContinueExpired(t *testing.T) {
	c30 := kobjOf("c", "v:c1", 30)
	three := func(b *kb) {
		baseWrites(b)
		b.create(1, 92, 95, c30)
		b.list(2, 100, 101, history.KubeRequest{Limit: 1}, 31, "t1", a20)
	}
	expired := func(b *kb, fresh string) {
		b.listStatus(2, 102, 103, history.KubeRequest{Limit: 1, Continue: "t1"},
			history.KubeStatus{Code: 410, Reason: "Expired", Continue: fresh})
	}
	runKubeCases(t, CheckKubeContinueExpired, ErrKubeContinueExpired, []kcase{
		{name: "kube/continue-expired - 410 with a fresh token that resumes after a - pass", want: Pass, build: func(b *kb) {
			three(b)
			expired(b, "fresh")
			b.list(2, 104, 105, history.KubeRequest{Limit: 1, Continue: "fresh"}, 40, "t3", c30)
			b.list(2, 106, 107, history.KubeRequest{Limit: 1, Continue: "t3"}, 40, "")
		}},
		{name: "kube/continue-expired - 410 without a fresh token - fail", want: Fail, op: 8, msg: "without a fresh continue token",
			build: func(b *kb) {
				three(b)
				expired(b, "")
			}},
		{name: "kube/continue-expired - 410 Gone - fail", want: Fail, op: 8, msg: "not 410 Expired", build: func(b *kb) {
			three(b)
			b.listStatus(2, 102, 103, history.KubeRequest{Limit: 1, Continue: "t1"}, history.KubeStatus{Code: 410, Reason: "Gone",
				Continue: "fresh"})
		}},
		{name: "kube/continue-expired - the fresh token starts over - fail", want: Fail, key: "a", op: 9,
			msg: "returned a, not after a", build: func(b *kb) {
				three(b)
				expired(b, "fresh")
				b.list(2, 104, 105, history.KubeRequest{Limit: 5, Continue: "fresh"}, 40, "", a20, c30)
			}},
		{name: "kube/continue-expired - no expired token - skipped", want: Skipped, build: healthyKube},
	})
}
