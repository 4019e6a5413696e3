package kube

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func TestKubePagination(t *testing.T) {
	first := func(b *histbuild.KubeBuilder) {
		histbuild.BaseWrites(b)
		histbuild.FullWatch(b, 9)
		b.List(2, 100, 101, history.KubeRequest{Limit: 1}, 16, "t1", histbuild.A15)
	}
	histbuild.RunKubeCases(t, CheckPagination, ErrPagination, []histbuild.Kcase{
		{Name: "kube/pagination - two pages at one RV, then an empty page - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			first(b)
			b.List(2, 102, 103, history.KubeRequest{Limit: 1, Continue: "t1"}, 16, "t2", histbuild.B12)
			b.List(2, 104, 105, history.KubeRequest{Limit: 1, Continue: "t2"}, 16, "")
		}},
		{Name: "kube/pagination - a page at another RV - fail", Want: check.Fail, Op: 7, Msg: "carries RV 21, not the first page's 16",
			Build: func(b *histbuild.KubeBuilder) {
				first(b)
				b.List(2, 102, 103, history.KubeRequest{Limit: 1, Continue: "t1"}, 21, "")
			}},
		{Name: "kube/pagination - an object on two pages - fail", Want: check.Fail, Key: "a", Msg: "a appears twice",
			Build: func(b *histbuild.KubeBuilder) {
				first(b)
				b.List(2, 102, 103, history.KubeRequest{Limit: 2, Continue: "t1"}, 16, "", histbuild.B12, histbuild.A15)
			}},
		{Name: "kube/pagination - the list ended without an object - fail", Want: check.Fail, Key: "b", Msg: "b is missing",
			Build: func(b *histbuild.KubeBuilder) {
				first(b)
				b.List(2, 102, 103, history.KubeRequest{Limit: 1, Continue: "t1"}, 16, "")
			}},
		{Name: "kube/pagination - a page above the limit - fail", Want: check.Fail, Op: 7, Msg: "above the limit 1",
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				histbuild.FullWatch(b, 9)
				b.List(2, 100, 101, history.KubeRequest{Limit: 1}, 16, "t1", histbuild.A15)
				b.List(2, 102, 103, history.KubeRequest{Limit: 1, Continue: "t1"}, 16, "", histbuild.B12, histbuild.KobjOf("c", "v:c", 3))
			}},
		{Name: "kube/pagination - no limit - skipped", Want: check.Skipped, Build: healthyKube},
	})
}

func TestKubeContinueExpired(t *testing.T) {
	c30 := histbuild.KobjOf("c", "v:c1", 30)
	three := func(b *histbuild.KubeBuilder) {
		histbuild.BaseWrites(b)
		b.Create(1, 92, 95, c30)
		b.List(2, 100, 101, history.KubeRequest{Limit: 1}, 31, "t1", histbuild.A20)
	}
	expired := func(b *histbuild.KubeBuilder, fresh string) {
		b.ListStatus(2, 102, 103, history.KubeRequest{Limit: 1, Continue: "t1"},
			history.KubeStatus{Code: 410, Reason: "Expired", Continue: fresh})
	}
	histbuild.RunKubeCases(t, CheckContinueExpired, ErrContinueExpired, []histbuild.Kcase{
		{Name: "kube/continue-expired - 410 with a fresh token that resumes after a - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			three(b)
			expired(b, "fresh")
			b.List(2, 104, 105, history.KubeRequest{Limit: 1, Continue: "fresh"}, 40, "t3", c30)
			b.List(2, 106, 107, history.KubeRequest{Limit: 1, Continue: "t3"}, 40, "")
		}},
		{Name: "kube/continue-expired - 410 without a fresh token - fail", Want: check.Fail, Op: 8, Msg: "without a fresh continue token",
			Build: func(b *histbuild.KubeBuilder) {
				three(b)
				expired(b, "")
			}},
		{Name: "kube/continue-expired - 410 Gone - fail", Want: check.Fail, Op: 8, Msg: "not 410 Expired", Build: func(b *histbuild.KubeBuilder) {
			three(b)
			b.ListStatus(2, 102, 103, history.KubeRequest{Limit: 1, Continue: "t1"}, history.KubeStatus{Code: 410, Reason: "Gone",
				Continue: "fresh"})
		}},
		{Name: "kube/continue-expired - the fresh token starts over - fail", Want: check.Fail, Key: "a", Op: 9,
			Msg: "returned a, not after a", Build: func(b *histbuild.KubeBuilder) {
				three(b)
				expired(b, "fresh")
				b.List(2, 104, 105, history.KubeRequest{Limit: 5, Continue: "fresh"}, 40, "", histbuild.A20, c30)
			}},
		{Name: "kube/continue-expired - no expired token - skipped", Want: check.Skipped, Build: healthyKube},
	})
}
