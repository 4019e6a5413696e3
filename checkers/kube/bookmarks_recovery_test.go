package kube

import (
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func TestKubeBookmarks(t *testing.T) {
	s := int(time.Second)
	histbuild.RunKubeCases(t, CheckBookmarks, ErrBookmarks, []histbuild.Kcase{
		{Name: "kube/bookmarks - a bookmark after the last event - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			histbuild.FullWatch(b, 1)
		}},
		{Name: "kube/bookmarks - periodic, and just before the timeout - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true, TimeoutSeconds: 150})
			b.Bookmark(1, 60*s, 10, false)
			b.Bookmark(1, 120*s, 11, false)
			b.Bookmark(1, 148*s, 12, false)
			b.End(1, 150*s, history.EndServer, nil)
		}},
		{Name: "kube/bookmarks - a bookmark on a watch that did not allow them - fail", Want: check.Fail, Watch: 1, Rev: 21,
			Msg: "did not allow bookmarks", Build: func(b *histbuild.KubeBuilder) {
				b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Bookmark(1, 95, 21, false)
			}},
		{Name: "kube/bookmarks - a bookmark below the last event - fail", Want: check.Fail, Watch: 1, Rev: 14,
			Msg: "BOOKMARK at RV 14 after an event at RV 15", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true})
				b.Ev(1, 51, history.KubeModified, histbuild.A15)
				b.Bookmark(1, 52, 14, false)
			}},
		{Name: "kube/bookmarks - a bookmark carrying an object - fail", Want: check.Fail, Watch: 1, Msg: "carrying object a",
			Build: func(b *histbuild.KubeBuilder) {
				b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true})
				o := histbuild.A15
				b.Add(history.Record{KubeEvent: &history.KubeEvent{Watch: 1, Time: 20, Type: history.KubeBookmark, Object: &o}})
			}},
		{Name: "kube/bookmarks - none for two minutes - fail", Want: check.Fail, Watch: 1, Msg: "went 120s without one",
			Build: func(b *histbuild.KubeBuilder) {
				b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true})
				b.End(1, 120*s, history.EndClient, nil)
			}},
		{Name: "kube/bookmarks - none before the timeout - fail", Want: check.Fail, Watch: 1, Msg: "without a bookmark in its last",
			Build: func(b *histbuild.KubeBuilder) {
				b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true, TimeoutSeconds: 10})
				b.Bookmark(1, 1*s, 10, false)
				b.End(1, 10*s+s/10, history.EndServer, nil)
			}},
		{Name: "kube/bookmarks - bookmarks not asked for - skipped", Want: check.Skipped, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			histbuild.SelWatch(b, 2)
		}},
	})
}

func TestKubeCacheAgreesWithEtcd(t *testing.T) {
	histbuild.RunKubeCases(t, CheckCacheAgreesWithEtcd, ErrCacheAgreesWithEtcd, []histbuild.Kcase{
		{Name: "kube/cache-agrees-with-etcd - the API server served what etcd committed - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			healthyKube(b)
			b.EtcdWatch(100, 5, histbuild.EtcdBase()...)
		}},
		{Name: "kube/cache-agrees-with-etcd - a watch event at a revision etcd gave another object - fail", Want: check.Fail,
			Watch: 1, Key: "a", Rev: 12, Msg: "etcd's change at revision 12 is a ADDED of b", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.EtcdWatch(100, 5, histbuild.EtcdBase()...)
				b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Ev(1, 11, history.KubeAdded, histbuild.A10)
				b.Ev(1, 31, history.KubeModified, histbuild.KobjOf("a", "v:a2", 12, "g=a"))
			}},
		{Name: "kube/cache-agrees-with-etcd - a watch missed a change etcd committed - fail", Want: check.Fail, Watch: 1, Key: "b",
			Rev: 18, Msg: "etcd committed a DELETED of b at revision 18", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.EtcdWatch(100, 5, histbuild.EtcdBase()...)
				b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Ev(1, 11, history.KubeAdded, histbuild.A10)
				b.Ev(1, 31, history.KubeAdded, histbuild.B12)
				b.Ev(1, 51, history.KubeModified, histbuild.A15)
				b.Ev(1, 91, history.KubeModified, histbuild.A20)
			}},
		{Name: "kube/cache-agrees-with-etcd - a list without an object etcd held - fail", Want: check.Fail, Key: "b", Rev: 16,
			Msg: "without b, which etcd held then", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.EtcdWatch(100, 5, histbuild.EtcdBase()...)
				b.List(2, 55, 58, history.KubeRequest{}, 16, "", histbuild.A15)
			}},
		{Name: "kube/cache-agrees-with-etcd - no etcd watch (external) - skipped", Want: check.Skipped, Build: healthyKube},
	})
}

func TestKubeRecovery(t *testing.T) {
	s := int(time.Second)
	writes := func(b *histbuild.KubeBuilder) {
		b.Create(1, 0, 1*s, histbuild.A10)
		b.Create(1, 30*s, 31*s, histbuild.B12)
		b.Update(1, 40*s, 41*s, 10, histbuild.A15)
	}
	histbuild.RunKubeCases(t, CheckRecovery, ErrRecovery, []histbuild.Kcase{
		{Name: "kube/recovery - a watch keeps delivering after the fault heals - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			writes(b)
			b.Fault(1, "kill-leader", 10*s, 20*s, "m0")
			b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9"})
			b.Ev(1, 2*s, history.KubeAdded, histbuild.A10)
			b.Ev(1, 32*s, history.KubeAdded, histbuild.B12)
			b.Ev(1, 42*s, history.KubeModified, histbuild.A15)
			b.End(1, 60*s, history.EndClient, nil)
		}},
		{Name: "kube/recovery - a watch fails with 429 during the fault - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			writes(b)
			b.Fault(1, "kill-apiserver", 10*s, 20*s, "kube-0")
			b.Watch(1, 5, 12*s, history.KubeWatchRequest{ResourceVersion: "10"})
			b.End(1, 12*s, history.EndError, &history.KubeStatus{Code: 429, Reason: "TooManyRequests"})
		}},
		{Name: "kube/recovery - a watch silently stopped after the fault - fail", Want: check.Fail, Watch: 1, Key: "a", Rev: 15,
			Msg: "silently stopped", Build: func(b *histbuild.KubeBuilder) {
				writes(b)
				b.Fault(1, "kill-leader", 10*s, 20*s, "m0")
				b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Ev(1, 2*s, history.KubeAdded, histbuild.A10)
				b.End(1, 60*s, history.EndClient, nil)
			}},
		{Name: "kube/recovery - a watch failed with 500 during the fault - fail", Want: check.Fail, Watch: 1, Msg: "failed with 500",
			Build: func(b *histbuild.KubeBuilder) {
				writes(b)
				b.Fault(1, "kill-leader", 10*s, 20*s, "m0")
				b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Ev(1, 2*s, history.KubeAdded, histbuild.A10)
				b.ErrEv(1, 12*s, 500, "InternalError")
				b.End(1, 12*s, history.EndServer, nil)
			}},
		{Name: "kube/recovery - no fault - skipped", Want: check.Skipped, Build: healthyKube},
	})
}
