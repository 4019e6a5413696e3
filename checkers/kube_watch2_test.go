package checkers

import (
	"testing"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// compactEtcd records a compaction of the etcd under the API server.
func (b *kb) compactEtcd(call, ret int, rev int64) {
	b.add(history.Record{Op: &history.Operation{ID: 1000 + rev, Client: 99, Call: time.Duration(call), Return: time.Duration(ret),
		Request: history.Request{Kind: history.OpCompact, Revision: rev}, Response: &history.Response{Revision: rev + 5}}})
}

func TestKubeWatchExpired(t *testing.T) {
	runKubeCases(t, CheckKubeWatchExpired, ErrKubeWatchExpired, []kcase{
		{name: "kube/watch-expired - HTTP 200 with ERROR 410 Expired, then the end - pass", want: Pass, build: func(b *kb) {
			baseWrites(b)
			b.compactEtcd(92, 93, 19)
			b.watch(1, 5, 100, history.KubeWatchRequest{ResourceVersion: "9"})
			b.errEv(1, 101, 410, "Expired")
			b.end(1, 102, history.EndServer, nil)
		}},
		{name: "kube/watch-expired - a compacted RV served in full from the cache - pass", want: Pass, build: func(b *kb) {
			baseWrites(b)
			b.compactEtcd(92, 93, 19)
			fullWatch(b, 1)
			b.add(history.Record{KubeWatch: &history.KubeWatch{ID: 2, Client: 6, Call: 100, Request: history.KubeWatchRequest{ResourceVersion: "9"}}})
			for i, o := range []history.Object{a10, b12, a15} {
				b.ev(2, 101+i, []string{history.KubeAdded, history.KubeAdded, history.KubeModified}[i], o)
			}
			b.ev(2, 104, history.KubeDeleted, b18)
		}},
		{name: "kube/watch-expired - refused with HTTP 410 - fail", want: Fail, watch: 1, msg: "refused with HTTP 410",
			build: func(b *kb) {
				baseWrites(b)
				b.watch(1, 5, 100, history.KubeWatchRequest{ResourceVersion: "9"})
				b.end(1, 101, history.EndError, &history.KubeStatus{Code: 410, Reason: "Gone"})
			}},
		{name: "kube/watch-expired - an event after the ERROR - fail", want: Fail, watch: 1, msg: "after its ERROR event",
			build: func(b *kb) {
				baseWrites(b)
				b.watch(1, 5, 100, history.KubeWatchRequest{ResourceVersion: "9"})
				b.errEv(1, 101, 410, "Expired")
				b.ev(1, 102, history.KubeModified, a20)
			}},
		{name: "kube/watch-expired - ERROR 410 with another reason - fail", want: Fail, watch: 1, msg: `reason "Gone"`,
			build: func(b *kb) {
				baseWrites(b)
				b.watch(1, 5, 100, history.KubeWatchRequest{ResourceVersion: "9"})
				b.errEv(1, 101, 410, "Gone")
			}},
		{name: "kube/watch-expired - a watch below the compaction started silently later - fail", want: Fail, watch: 1, key: "a",
			rev: 10, msg: "started silently later", build: func(b *kb) {
				baseWrites(b)
				b.compactEtcd(92, 93, 19)
				b.watch(1, 5, 100, history.KubeWatchRequest{ResourceVersion: "9"})
				b.ev(1, 101, history.KubeModified, a20)
			}},
		{name: "kube/watch-expired - nothing expired - skipped", want: Skipped, build: healthyKube},
	})
}

func TestKubeWatchInitialState(t *testing.T) {
	state := func(b *kb, rv string) {
		baseWrites(b)
		fullWatch(b, 9)
		b.watch(1, 5, 55, history.KubeWatchRequest{ResourceVersion: rv})
	}
	runKubeCases(t, CheckKubeWatchInitialState, ErrKubeWatchInitialState, []kcase{
		{name: "kube/watch-initial-state - the state at 16, then the changes - pass", want: Pass, build: func(b *kb) {
			state(b, "0")
			b.ev(1, 56, history.KubeAdded, a15)
			b.ev(1, 56, history.KubeAdded, b12)
			b.ev(1, 71, history.KubeDeleted, b18)
			b.ev(1, 91, history.KubeModified, a20)
		}},
		{name: "kube/watch-initial-state - a state turned into a streaming list (end bookmark) - pass", want: Pass,
			build: func(b *kb) {
				state(b, "")
				b.ev(1, 56, history.KubeAdded, b12)
				b.ev(1, 56, history.KubeAdded, a15)
				b.bookmark(1, 56, 17, true)
				b.ev(1, 71, history.KubeDeleted, b18)
			}},
		{name: "kube/watch-initial-state - an object missing from the state - fail", want: Fail, watch: 1, key: "a",
			msg: "a is missing", build: func(b *kb) {
				state(b, "0")
				b.ev(1, 56, history.KubeAdded, b12)
				b.ev(1, 71, history.KubeDeleted, b18)
			}},
		{name: "kube/watch-initial-state - items from two moments - fail", want: Fail, watch: 1, key: "b", rev: 12,
			msg: "not one state", build: func(b *kb) {
				state(b, "0")
				b.ev(1, 56, history.KubeAdded, a20)
				b.ev(1, 56, history.KubeAdded, b12)
			}},
		{name: "kube/watch-initial-state - a later event at the state's RV - fail", want: Fail, watch: 1, key: "b", rev: 12,
			msg: "must have an RV above the state's", build: func(b *kb) {
				state(b, "0")
				b.ev(1, 56, history.KubeAdded, a15)
				b.ev(1, 56, history.KubeAdded, b12)
				b.ev(1, 57, history.KubeAdded, b12)
			}},
		{name: "kube/watch-initial-state - no such watch - skipped", want: Skipped, build: healthyKube},
	})
}

func TestKubeWatchSelector(t *testing.T) {
	runKubeCases(t, CheckKubeWatchSelector, ErrKubeWatchSelector, []kcase{
		{name: "kube/watch-selector - enter, stay, leave - pass", want: Pass, build: func(b *kb) {
			baseWrites(b)
			fullWatch(b, 1)
			selWatch(b, 2)
		}},
		{name: "kube/watch-selector - leaving delivered as MODIFIED - fail", want: Fail, watch: 2, key: "a", rev: 20,
			msg: "do not match", build: func(b *kb) {
				baseWrites(b)
				b.watch(2, 6, 1, history.KubeWatchRequest{ResourceVersion: "9", LabelSelector: "g=a"})
				b.ev(2, 11, history.KubeAdded, a10)
				b.ev(2, 51, history.KubeModified, a15)
				b.ev(2, 91, history.KubeModified, a20)
			}},
		{name: "kube/watch-selector - leaving delivered with the matching state but as MODIFIED - fail", want: Fail, watch: 2,
			key: "a", rev: 20, msg: "made it stop matching", build: func(b *kb) {
				baseWrites(b)
				b.watch(2, 6, 1, history.KubeWatchRequest{ResourceVersion: "9", LabelSelector: "g=a"})
				b.ev(2, 11, history.KubeAdded, a10)
				b.ev(2, 51, history.KubeModified, a15)
				b.ev(2, 91, history.KubeModified, a20del)
			}},
		{name: "kube/watch-selector - leaving not delivered - fail", want: Fail, watch: 2, key: "a", rev: 20,
			msg: "did not deliver DELETED", build: func(b *kb) {
				baseWrites(b)
				b.watch(2, 6, 1, history.KubeWatchRequest{ResourceVersion: "9", LabelSelector: "g=a", AllowBookmarks: true})
				b.ev(2, 11, history.KubeAdded, a10)
				b.ev(2, 51, history.KubeModified, a15)
				b.bookmark(2, 95, 21, false)
			}},
		{name: "kube/watch-selector - a non-matching object is not silent - fail", want: Fail, watch: 2, key: "b", rev: 12,
			msg: "do not match", build: func(b *kb) {
				baseWrites(b)
				b.watch(2, 6, 1, history.KubeWatchRequest{ResourceVersion: "9", LabelSelector: "g=a"})
				b.ev(2, 11, history.KubeAdded, a10)
				b.ev(2, 31, history.KubeAdded, b12)
			}},
		{name: "kube/watch-selector - no selector - skipped", want: Skipped, build: func(b *kb) {
			baseWrites(b)
			fullWatch(b, 1)
		}},
	})
}

func TestKubeWatchDeletedRV(t *testing.T) {
	b16 := kobjOf("b", "v:b2", 16, "g=b")
	twoStates := func(b *kb) {
		b.create(1, 0, 10, a10)
		b.create(1, 20, 30, b12)
		b.update(1, 40, 50, 12, b16)
		b.del(1, 60, 70, "b", 16)
	}
	runKubeCases(t, CheckKubeWatchDeletedRV, ErrKubeWatchDeletedRV, []kcase{
		{name: "kube/watch-deleted-rv - last state at the deletion's RV, and a selector's leaving - pass", want: Pass,
			build: func(b *kb) {
				baseWrites(b)
				fullWatch(b, 1)
				selWatch(b, 2)
			}},
		{name: "kube/watch-deleted-rv - DELETED at the RV of the last update - fail", want: Fail, watch: 1, key: "b", rev: 12,
			msg: "RV 12 is create operation 2", build: func(b *kb) {
				baseWrites(b)
				b.watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.ev(1, 31, history.KubeAdded, b12)
				b.ev(1, 71, history.KubeDeleted, b12)
			}},
		{name: "kube/watch-deleted-rv - DELETED carries an older state - fail", want: Fail, watch: 1, key: "b", rev: 18,
			msg: `last state before RV 18 was "v:b2"`, build: func(b *kb) {
				twoStates(b)
				b.watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.ev(1, 31, history.KubeAdded, b12)
				b.ev(1, 51, history.KubeModified, b16)
				b.ev(1, 71, history.KubeDeleted, kobjOf("b", "v:b1", 18, "g=b"))
			}},
		{name: "kube/watch-deleted-rv - no DELETED event - skipped", want: Skipped, build: baseWrites},
	})
}

func TestKubeWatchTimeout(t *testing.T) {
	s := int(time.Second)
	timed := func(b *kb) int64 {
		return b.watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9", TimeoutSeconds: 5})
	}
	runKubeCases(t, CheckKubeWatchTimeout, ErrKubeWatchTimeout, []kcase{
		{name: "kube/watch-timeout - ended cleanly just after T - pass", want: Pass, build: func(b *kb) {
			b.end(timed(b), 5*s+s/5, history.EndServer, nil)
		}},
		{name: "kube/watch-timeout - ended cleanly early (allowed) - pass", want: Pass, build: func(b *kb) {
			b.end(timed(b), 2*s, history.EndServer, nil)
			b.watch(2, 5, 0, history.KubeWatchRequest{ResourceVersion: "9", TimeoutSeconds: 5})
			b.end(2, 5*s+s/2, history.EndServer, nil)
		}},
		{name: "kube/watch-timeout - still open long after T - fail", want: Fail, watch: 1, msg: "still open 20.0s",
			build: func(b *kb) { b.end(timed(b), 20*s, history.EndClient, nil) }},
		{name: "kube/watch-timeout - ended only much later - fail", want: Fail, watch: 1, msg: "ended only 30.0s",
			build: func(b *kb) { b.end(timed(b), 30*s, history.EndServer, nil) }},
		{name: "kube/watch-timeout - broke at T instead of ending - fail", want: Fail, watch: 1, msg: "broke 5.1s",
			build: func(b *kb) {
				w := timed(b)
				b.add(history.Record{KubeWatchEnd: &history.KubeWatchEnd{Watch: w, Time: time.Duration(5*s + s/10),
					Reason: history.EndError, Error: "unexpected EOF"}})
			}},
		{name: "kube/watch-timeout - a fault on its server excuses it - skipped", want: Skipped, build: func(b *kb) {
			b.fault(1, "pause-apiserver", 1*s, 15*s, "kube-0")
			b.end(timed(b), 20*s, history.EndClient, nil)
		}},
		{name: "kube/watch-timeout - closed by vigil before T - skipped", want: Skipped, build: func(b *kb) {
			b.end(timed(b), 3*s, history.EndClient, nil)
		}},
	})
}
