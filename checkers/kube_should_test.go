package checkers

import (
	"testing"
	"time"

	"github.com/vigil-suite/vigil/history"
)

func TestKubeBookmarks(t *testing.T) {
	s := int(time.Second)
	runKubeCases(t, CheckKubeBookmarks, ErrKubeBookmarks, []kcase{
		{name: "kube/bookmarks - a bookmark after the last event - pass", want: Pass, build: func(b *kb) {
			baseWrites(b)
			fullWatch(b, 1)
		}},
		{name: "kube/bookmarks - periodic, and just before the timeout - pass", want: Pass, build: func(b *kb) {
			b.watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true, TimeoutSeconds: 150})
			b.bookmark(1, 60*s, 10, false)
			b.bookmark(1, 120*s, 11, false)
			b.bookmark(1, 148*s, 12, false)
			b.end(1, 150*s, history.EndServer, nil)
		}},
		{name: "kube/bookmarks - a bookmark on a watch that did not allow them - fail", want: Fail, watch: 1, rev: 21,
			msg: "did not allow bookmarks", build: func(b *kb) {
				b.watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.bookmark(1, 95, 21, false)
			}},
		{name: "kube/bookmarks - a bookmark below the last event - fail", want: Fail, watch: 1, rev: 14,
			msg: "BOOKMARK at RV 14 after an event at RV 15", build: func(b *kb) {
				baseWrites(b)
				b.watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true})
				b.ev(1, 51, history.KubeModified, a15)
				b.bookmark(1, 52, 14, false)
			}},
		{name: "kube/bookmarks - a bookmark carrying an object - fail", want: Fail, watch: 1, msg: "carrying object a",
			build: func(b *kb) {
				b.watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true})
				o := a15
				b.add(history.Record{KubeEvent: &history.KubeEvent{Watch: 1, Time: 20, Type: history.KubeBookmark, Object: &o}})
			}},
		{name: "kube/bookmarks - none for two minutes - fail", want: Fail, watch: 1, msg: "went 120s without one",
			build: func(b *kb) {
				b.watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true})
				b.end(1, 120*s, history.EndClient, nil)
			}},
		{name: "kube/bookmarks - none before the timeout - fail", want: Fail, watch: 1, msg: "without a bookmark in its last",
			build: func(b *kb) {
				b.watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9", AllowBookmarks: true, TimeoutSeconds: 10})
				b.bookmark(1, 1*s, 10, false)
				b.end(1, 10*s+s/10, history.EndServer, nil)
			}},
		{name: "kube/bookmarks - bookmarks not asked for - skipped", want: Skipped, build: func(b *kb) {
			baseWrites(b)
			selWatch(b, 2)
		}},
	})
}

// etcdWatch records vigil's etcd watch of the API server's keys with
// one response per change: name, revision, "PUT"/"DELETE", value.
func (b *kb) etcdWatch(id int64, from int64, changes ...etcdEv) {
	p := b.h.Meta.Prefix
	b.add(history.Record{Watch: &history.Watch{ID: id, Client: 50, Request: history.WatchRequest{Key: p, End: p[:len(p)-1] + "0",
		StartRevision: from, ProgressNotify: true}}})
	b.add(history.Record{WatchResponse: &history.WatchResponse{Watch: id, Time: 1, Revision: from - 1, Created: true}})
	for i, c := range changes {
		ev := history.Event{Type: history.EventPut, KV: history.KV{Key: p + c.name, Value: c.value, ModRevision: c.rev,
			CreateRevision: c.create}}
		if c.del {
			ev = history.Event{Type: history.EventDelete, KV: history.KV{Key: p + c.name, ModRevision: c.rev}}
		}
		ev.IsCreate = !c.del && c.create == c.rev
		b.add(history.Record{WatchResponse: &history.WatchResponse{Watch: id, Time: time.Duration(10 + i), Revision: c.rev,
			Events: []history.Event{ev}}})
	}
}

type etcdEv struct {
	name        string
	rev, create int64
	value       string
	del         bool
}

func etcdBase() []etcdEv {
	return []etcdEv{{"a", 10, 10, "v:a1", false}, {"b", 12, 12, "v:b1", false}, {"a", 15, 10, "v:a2", false},
		{"b", 18, 0, "", true}, {"a", 20, 10, "v:a3", false}}
}

func TestKubeCacheAgreesWithEtcd(t *testing.T) {
	runKubeCases(t, CheckKubeCacheAgreesWithEtcd, ErrKubeCacheAgreesWithEtcd, []kcase{
		{name: "kube/cache-agrees-with-etcd - the API server served what etcd committed - pass", want: Pass, build: func(b *kb) {
			healthyKube(b)
			b.etcdWatch(100, 5, etcdBase()...)
		}},
		{name: "kube/cache-agrees-with-etcd - a watch event at a revision etcd gave another object - fail", want: Fail,
			watch: 1, key: "a", rev: 12, msg: "etcd's change at revision 12 is a ADDED of b", build: func(b *kb) {
				baseWrites(b)
				b.etcdWatch(100, 5, etcdBase()...)
				b.watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.ev(1, 11, history.KubeAdded, a10)
				b.ev(1, 31, history.KubeModified, kobjOf("a", "v:a2", 12, "g=a"))
			}},
		{name: "kube/cache-agrees-with-etcd - a watch missed a change etcd committed - fail", want: Fail, watch: 1, key: "b",
			rev: 18, msg: "etcd committed a DELETED of b at revision 18", build: func(b *kb) {
				baseWrites(b)
				b.etcdWatch(100, 5, etcdBase()...)
				b.watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.ev(1, 11, history.KubeAdded, a10)
				b.ev(1, 31, history.KubeAdded, b12)
				b.ev(1, 51, history.KubeModified, a15)
				b.ev(1, 91, history.KubeModified, a20)
			}},
		{name: "kube/cache-agrees-with-etcd - a list without an object etcd held - fail", want: Fail, key: "b", rev: 16,
			msg: "without b, which etcd held then", build: func(b *kb) {
				baseWrites(b)
				b.etcdWatch(100, 5, etcdBase()...)
				b.list(2, 55, 58, history.KubeRequest{}, 16, "", a15)
			}},
		{name: "kube/cache-agrees-with-etcd - no etcd watch (external) - skipped", want: Skipped, build: healthyKube},
	})
}

func TestKubeRecovery(t *testing.T) {
	s := int(time.Second)
	writes := func(b *kb) {
		b.create(1, 0, 1*s, a10)
		b.create(1, 30*s, 31*s, b12)
		b.update(1, 40*s, 41*s, 10, a15)
	}
	runKubeCases(t, CheckKubeRecovery, ErrKubeRecovery, []kcase{
		{name: "kube/recovery - a watch keeps delivering after the fault heals - pass", want: Pass, build: func(b *kb) {
			writes(b)
			b.fault(1, "kill-leader", 10*s, 20*s, "m0")
			b.watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9"})
			b.ev(1, 2*s, history.KubeAdded, a10)
			b.ev(1, 32*s, history.KubeAdded, b12)
			b.ev(1, 42*s, history.KubeModified, a15)
			b.end(1, 60*s, history.EndClient, nil)
		}},
		{name: "kube/recovery - a watch fails with 429 during the fault - pass", want: Pass, build: func(b *kb) {
			writes(b)
			b.fault(1, "kill-apiserver", 10*s, 20*s, "kube-0")
			b.watch(1, 5, 12*s, history.KubeWatchRequest{ResourceVersion: "10"})
			b.end(1, 12*s, history.EndError, &history.KubeStatus{Code: 429, Reason: "TooManyRequests"})
		}},
		{name: "kube/recovery - a watch silently stopped after the fault - fail", want: Fail, watch: 1, key: "a", rev: 15,
			msg: "silently stopped", build: func(b *kb) {
				writes(b)
				b.fault(1, "kill-leader", 10*s, 20*s, "m0")
				b.watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9"})
				b.ev(1, 2*s, history.KubeAdded, a10)
				b.end(1, 60*s, history.EndClient, nil)
			}},
		{name: "kube/recovery - a watch failed with 500 during the fault - fail", want: Fail, watch: 1, msg: "failed with 500",
			build: func(b *kb) {
				writes(b)
				b.fault(1, "kill-leader", 10*s, 20*s, "m0")
				b.watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9"})
				b.ev(1, 2*s, history.KubeAdded, a10)
				b.errEv(1, 12*s, 500, "InternalError")
				b.end(1, 12*s, history.EndServer, nil)
			}},
		{name: "kube/recovery - no fault - skipped", want: Skipped, build: healthyKube},
	})
}
