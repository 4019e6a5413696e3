package kube

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func TestKubeRVFormat(t *testing.T) {
	histbuild.RunKubeCases(t, CheckRVFormat, ErrRVFormat, []histbuild.Kcase{
		{Name: "kube/rv-format - decimal RVs, updates above their precondition - pass", Want: check.Pass, Build: healthyKube},
		{Name: "kube/rv-format - a list item with a leading zero - fail", Want: check.Fail, Key: "a", Msg: `"015"`, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			bad := histbuild.A15
			bad.ResourceVersion = "015"
			b.List(2, 55, 58, history.KubeRequest{}, 16, "", bad, histbuild.B12)
		}},
		{Name: "kube/rv-format - a bookmark with a non-numeric RV - fail", Want: check.Fail, Watch: 1, Msg: `"abc"`, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true})
			b.Add(history.Record{KubeEvent: &history.KubeEvent{Watch: 1, Time: 20, Type: history.KubeBookmark,
				Object: &history.Object{ResourceVersion: "abc"}}})
		}},
		{Name: "kube/rv-format - an update acknowledged at an RV not above its precondition - fail", Want: check.Fail, Key: "a", Rev: 9,
			Msg: "not above it", Build: func(b *histbuild.KubeBuilder) {
				b.Create(1, 0, 10, histbuild.A10)
				b.Update(1, 40, 50, 10, histbuild.KobjOf("a", "v:a2", 9, "g=a"))
			}},
		{Name: "kube/rv-format - an update that purges answers the RV it replaced - pass", Want: check.Pass,
			Build: func(b *histbuild.KubeBuilder) {
				fin := []string{"vigil.dev/hold"}
				b.Create(1, 0, 10, cr("a", "v:a1", "", 10, 1, fin))
				marked := terminating(cr("a", "v:a1", "", 15, 2, fin))
				b.Op(1, 20, 30, history.KubeRequest{Verb: history.KubeDelete, Name: "a"}, &history.KubeResponse{Code: 200, Object: &marked}, nil, "")
				req := cr("a", "v:a2", "", 15, 2, nil)
				answer := terminating(cr("a", "v:a2", "", 15, 3, nil))
				b.Op(1, 40, 50, history.KubeRequest{Verb: history.KubeUpdate, Name: "a", Object: &req}, &history.KubeResponse{Code: 200, Object: &answer}, nil, "")
			}},
		{Name: "kube/rv-format - nothing recorded - skipped", Want: check.Skipped, Build: func(b *histbuild.KubeBuilder) {}},
	})
}

func TestKubeRVOrder(t *testing.T) {
	histbuild.RunKubeCases(t, CheckRVOrder, ErrRVOrder, []histbuild.Kcase{
		{Name: "kube/rv-order - RVs follow real time - pass", Want: check.Pass, Build: histbuild.BaseWrites},
		{Name: "kube/rv-order - concurrent writes in either order - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			b.Create(1, 0, 30, histbuild.A10)
			b.Create(2, 5, 20, histbuild.KobjOf("c", "v:c1", 8))
		}},
		{Name: "kube/rv-order - a later write got a lower RV - fail", Want: check.Fail, Key: "c", Rev: 8, Op: 1,
			Msg: "called after operation 1", Build: func(b *histbuild.KubeBuilder) {
				b.Create(1, 0, 10, histbuild.A10)
				b.Create(2, 20, 30, histbuild.KobjOf("c", "v:c1", 8))
			}},
		{Name: "kube/rv-order - two writes share an RV - fail", Want: check.Fail, Key: "c", Rev: 10, Msg: "both acknowledged at RV 10",
			Build: func(b *histbuild.KubeBuilder) {
				b.Create(1, 0, 10, histbuild.A10)
				b.Create(2, 0, 10, histbuild.KobjOf("c", "v:c1", 10))
			}},
		{Name: "kube/rv-order - one write - skipped", Want: check.Skipped, Build: func(b *histbuild.KubeBuilder) { b.Create(1, 0, 10, histbuild.A10) }},
	})
}

func TestKubeWatchOrdered(t *testing.T) {
	histbuild.RunKubeCases(t, CheckWatchOrdered, ErrWatchOrdered, []histbuild.Kcase{
		{Name: "kube/watch-ordered - increasing RVs - pass", Want: check.Pass, Build: healthyKube},
		{Name: "kube/watch-ordered - an initial state in key order, not RV order - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.Watch(1, 5, 55, history.KubeWatchRequest{ResourceVersion: "0"})
			b.Ev(1, 56, history.KubeAdded, histbuild.A15)
			b.Ev(1, 56, history.KubeAdded, histbuild.B12)
			b.Ev(1, 71, history.KubeDeleted, histbuild.B18)
		}},
		{Name: "kube/watch-ordered - two events swapped - fail", Want: check.Fail, Watch: 1, Key: "a", Rev: 15, Msg: "did not increase",
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Ev(1, 11, history.KubeAdded, histbuild.A10)
				b.Ev(1, 31, history.KubeAdded, histbuild.B12)
				b.Ev(1, 71, history.KubeDeleted, histbuild.B18)
				b.Ev(1, 72, history.KubeModified, histbuild.A15)
			}},
		{Name: "kube/watch-ordered - the same RV twice - fail", Want: check.Fail, Watch: 1, Rev: 12, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
			b.Ev(1, 31, history.KubeAdded, histbuild.B12)
			b.Ev(1, 32, history.KubeAdded, histbuild.B12)
		}},
		{Name: "kube/watch-ordered - no event - skipped", Want: check.Skipped, Build: histbuild.BaseWrites},
	})
}

func TestKubeWatchFromRV(t *testing.T) {
	histbuild.RunKubeCases(t, CheckWatchFromRV, ErrWatchFromRV, []histbuild.Kcase{
		{Name: "kube/watch-from-rv - everything delivered - pass", Want: check.Pass, Build: healthyKube},
		{Name: "kube/watch-from-rv - a watch from 12 starts after it - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.Watch(1, 5, 35, history.KubeWatchRequest{ResourceVersion: "12"})
			b.Ev(1, 51, history.KubeModified, histbuild.A15)
			b.Ev(1, 71, history.KubeDeleted, histbuild.B18)
			b.Ev(1, 91, history.KubeModified, histbuild.A20)
		}},
		{Name: "kube/watch-from-rv - a selector watch may not owe a change an unplaced update may have made leave - pass",
			Want: check.Pass, Excused: map[string]int{"undetermined": 1}, Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.UpdateLost(3, 55, 95, 0, histbuild.KobjOf("a", "v:ax", 0, "g=x"))
				b.Watch(2, 6, 1, history.KubeWatchRequest{ResourceVersion: "9", LabelSelector: "g=a", AllowBookmarks: true})
				b.Ev(2, 11, history.KubeAdded, histbuild.A10)
				b.Ev(2, 51, history.KubeModified, histbuild.A15)
				b.Bookmark(2, 95, 21, false)
			}},
		{Name: "kube/watch-from-rv - a selector watch delivers a deletion no watch without one placed - pass", Want: check.Pass,
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(2, 6, 35, history.KubeWatchRequest{ResourceVersion: "12", LabelSelector: "g=b"})
				b.Ev(2, 71, history.KubeDeleted, histbuild.B18)
				b.Ev(2, 91, history.KubeAdded, histbuild.A20)
			}},
		{Name: "kube/watch-from-rv - a selector watch delivers a deletion after the delete's span - fail", Want: check.Fail,
			Watch: 2, Key: "b", Rev: 22, Msg: "no delete of it can have made that change", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(2, 6, 35, history.KubeWatchRequest{ResourceVersion: "12", LabelSelector: "g=b"})
				b.Ev(2, 91, history.KubeAdded, histbuild.A20)
				b.Ev(2, 93, history.KubeDeleted, histbuild.KobjOf("b", "v:b1", 22, "g=b"))
			}},
		{Name: "kube/watch-from-rv - a dropped MODIFIED - fail", Want: check.Fail, Watch: 1, Key: "a", Rev: 15, Op: 3,
			Msg: "missed the change of a at RV 15", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Ev(1, 11, history.KubeAdded, histbuild.A10)
				b.Ev(1, 31, history.KubeAdded, histbuild.B12)
				b.Ev(1, 71, history.KubeDeleted, histbuild.B18)
				b.Ev(1, 91, history.KubeModified, histbuild.A20)
			}},
		{Name: "kube/watch-from-rv - an event at the start RV - fail", Want: check.Fail, Watch: 1, Key: "b", Rev: 12,
			Msg: "at or below the RV it started from", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(1, 5, 35, history.KubeWatchRequest{ResourceVersion: "12"})
				b.Ev(1, 36, history.KubeAdded, histbuild.B12)
				b.Ev(1, 51, history.KubeModified, histbuild.A15)
			}},
		{Name: "kube/watch-from-rv - a synthetic ADDED for an update - fail", Want: check.Fail, Watch: 1, Key: "a", Rev: 15,
			Msg: "a synthetic ADDED", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(1, 5, 35, history.KubeWatchRequest{ResourceVersion: "14"})
				b.Ev(1, 51, history.KubeAdded, histbuild.A15)
			}},
		{Name: "kube/watch-from-rv - another value at a write's RV - fail", Want: check.Fail, Watch: 1, Key: "a", Rev: 15, Op: 3,
			Msg: `but update operation 3 (client 1) wrote "v:a2" at RV 15`, Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(1, 5, 35, history.KubeWatchRequest{ResourceVersion: "14"})
				b.Ev(1, 51, history.KubeModified, histbuild.KobjOf("a", "v:ghost", 15, "g=a"))
			}},
		{Name: "kube/watch-from-rv - a value nobody wrote - fail", Want: check.Fail, Watch: 1, Key: "a", Rev: 16,
			Msg: "nobody wrote that value", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(1, 5, 35, history.KubeWatchRequest{ResourceVersion: "15"})
				b.Ev(1, 51, history.KubeModified, histbuild.KobjOf("a", "v:ghost", 16, "g=a"))
			}},
		{Name: "kube/watch-from-rv - an acknowledged delete no watch delivered - fail", Want: check.Fail, Watch: 1, Key: "b", Op: 4,
			Msg: "missed the deletion of b", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true})
				b.Ev(1, 11, history.KubeAdded, histbuild.A10)
				b.Ev(1, 31, history.KubeAdded, histbuild.B12)
				b.Ev(1, 51, history.KubeModified, histbuild.A15)
				b.Ev(1, 91, history.KubeModified, histbuild.A20)
				b.Bookmark(1, 95, 21, false)
			}},
		{Name: "kube/watch-from-rv - the last watch open at the final write never delivered it - fail", Want: check.Fail, Watch: 1,
			Key: "a", Rev: 20, Msg: "must reach it", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Mark(history.MarkFinalWrite, 95, 5, 20)
				b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Ev(1, 11, history.KubeAdded, histbuild.A10)
				b.Ev(1, 31, history.KubeAdded, histbuild.B12)
				b.Ev(1, 51, history.KubeModified, histbuild.A15)
				b.Ev(1, 71, history.KubeDeleted, histbuild.B18)
				b.End(1, 300, history.EndClient, nil)
			}},
		{Name: "kube/watch-from-rv - a watch from \"0\" open at the final write never delivered it - fail", Want: check.Fail,
			Watch: 1, Key: "a", Rev: 20, Msg: "must reach it", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				histbuild.FullWatch(b, 9)
				b.Mark(history.MarkFinalWrite, 95, 5, 20)
				b.Watch(1, 5, 55, history.KubeWatchRequest{ResourceVersion: "0"})
				b.Ev(1, 56, history.KubeAdded, histbuild.A15)
				b.Ev(1, 56, history.KubeAdded, histbuild.B12)
				b.Ev(1, 71, history.KubeDeleted, histbuild.B18)
				b.End(1, 300, history.EndClient, nil)
			}},
		{Name: "kube/watch-from-rv - a watch the server ended before the final write - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.Mark(history.MarkFinalWrite, 95, 5, 20)
			b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
			b.Ev(1, 11, history.KubeAdded, histbuild.A10)
			b.End(1, 300, history.EndServer, nil)
		}},
		{Name: "kube/watch-from-rv - no watch - skipped", Want: check.Skipped, Build: histbuild.BaseWrites},
	})
}

func TestKubeWatchAgreement(t *testing.T) {
	histbuild.RunKubeCases(t, CheckWatchAgreement, ErrWatchAgreement, []histbuild.Kcase{
		{Name: "kube/watch-agreement - two full watches and a late one - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			histbuild.FullWatch(b, 1)
			histbuild.FullWatch(b, 2)
			b.Watch(3, 7, 35, history.KubeWatchRequest{ResourceVersion: "12"})
			b.Ev(3, 51, history.KubeModified, histbuild.A15)
			b.Ev(3, 71, history.KubeDeleted, histbuild.B18)
		}},
		{Name: "kube/watch-agreement - another value at one RV - fail", Want: check.Fail, Watch: 2, Key: "a", Rev: 15,
			Msg: "where watch 1 (client 5, same selector) delivered MODIFIED a", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				histbuild.FullWatch(b, 1)
				b.Watch(2, 7, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Ev(2, 11, history.KubeAdded, histbuild.A10)
				b.Ev(2, 31, history.KubeAdded, histbuild.B12)
				b.Ev(2, 51, history.KubeModified, histbuild.KobjOf("a", "v:other", 15, "g=a"))
				b.Ev(2, 71, history.KubeDeleted, histbuild.B18)
				b.Ev(2, 91, history.KubeModified, histbuild.A20)
			}},
		{Name: "kube/watch-agreement - one watch skipped a change the other delivered - fail", Want: check.Fail, Watch: 2, Key: "b",
			Rev: 18, Msg: "delivered nothing at RV 18", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				histbuild.FullWatch(b, 1)
				b.Watch(2, 7, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Ev(2, 11, history.KubeAdded, histbuild.A10)
				b.Ev(2, 31, history.KubeAdded, histbuild.B12)
				b.Ev(2, 51, history.KubeModified, histbuild.A15)
				b.Ev(2, 91, history.KubeModified, histbuild.A20)
			}},
		{Name: "kube/watch-agreement - different selectors are not compared - skipped", Want: check.Skipped, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			histbuild.FullWatch(b, 1)
			histbuild.SelWatch(b, 2)
		}},
	})
}

func TestKubeWatchResume(t *testing.T) {
	first := func(b *histbuild.KubeBuilder) {
		histbuild.BaseWrites(b)
		histbuild.FullWatch(b, 9) // places b's deletion at 18
		b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
		b.Ev(1, 11, history.KubeAdded, histbuild.A10)
		b.Ev(1, 31, history.KubeAdded, histbuild.B12)
		b.Ev(1, 51, history.KubeModified, histbuild.A15)
		b.End(1, 55, history.EndError, nil)
	}
	histbuild.RunKubeCases(t, CheckWatchResume, ErrWatchResume, []histbuild.Kcase{
		{Name: "kube/watch-resume - no gap, no duplicate - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			first(b)
			b.Resume(2, 1, 5, 56, history.KubeWatchRequest{ResourceVersion: "15"})
			b.Ev(2, 71, history.KubeDeleted, histbuild.B18)
			b.Ev(2, 91, history.KubeModified, histbuild.A20)
		}},
		{Name: "kube/watch-resume - answered 410 - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			first(b)
			b.Resume(2, 1, 5, 56, history.KubeWatchRequest{ResourceVersion: "15"})
			b.ErrEv(2, 57, 410, "Expired")
			b.End(2, 58, history.EndServer, nil)
		}},
		{Name: "kube/watch-resume - the last event again - fail", Want: check.Fail, Watch: 2, Key: "a", Rev: 15, Msg: "again",
			Build: func(b *histbuild.KubeBuilder) {
				first(b)
				b.Resume(2, 1, 5, 56, history.KubeWatchRequest{ResourceVersion: "15"})
				b.Ev(2, 57, history.KubeModified, histbuild.A15)
				b.Ev(2, 71, history.KubeDeleted, histbuild.B18)
			}},
		{Name: "kube/watch-resume - a change lost between the watches - fail", Want: check.Fail, Watch: 2, Key: "b", Rev: 18,
			Msg: "reached neither", Build: func(b *histbuild.KubeBuilder) {
				first(b)
				b.Resume(2, 1, 5, 56, history.KubeWatchRequest{ResourceVersion: "15"})
				b.Ev(2, 91, history.KubeModified, histbuild.A20)
			}},
		{Name: "kube/watch-resume - resumed from another RV (harness) - skipped", Want: check.Skipped, Build: func(b *histbuild.KubeBuilder) {
			first(b)
			b.Resume(2, 1, 5, 56, history.KubeWatchRequest{ResourceVersion: "10"})
		}},
	})
}
