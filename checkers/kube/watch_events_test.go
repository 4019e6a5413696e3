package kube

import (
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func TestKubeWatchExpired(t *testing.T) {
	histbuild.RunKubeCases(t, CheckWatchExpired, ErrWatchExpired, []histbuild.Kcase{
		{Name: "kube/watch-expired - HTTP 200 with ERROR 410 Expired, then the end - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.CompactEtcd(92, 93, 19)
			b.Watch(1, 5, 100, history.KubeWatchRequest{ResourceVersion: "9"})
			b.ErrEv(1, 101, 410, "Expired")
			b.End(1, 102, history.EndServer, nil)
		}},
		{Name: "kube/watch-expired - a compacted RV served in full from the cache - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.CompactEtcd(92, 93, 19)
			histbuild.FullWatch(b, 1)
			b.Add(history.Record{KubeWatch: &history.KubeWatch{ID: 2, Client: 6, Call: 100, Request: history.KubeWatchRequest{ResourceVersion: "9"}}})
			for i, o := range []history.Object{histbuild.A10, histbuild.B12, histbuild.A15} {
				b.Ev(2, 101+i, []string{history.KubeAdded, history.KubeAdded, history.KubeModified}[i], o)
			}
			b.Ev(2, 104, history.KubeDeleted, histbuild.B18)
		}},
		{Name: "kube/watch-expired - refused with HTTP 410 - fail", Want: check.Fail, Watch: 1, Msg: "refused with HTTP 410",
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(1, 5, 100, history.KubeWatchRequest{ResourceVersion: "9"})
				b.End(1, 101, history.EndError, &history.KubeStatus{Code: 410, Reason: "Gone"})
			}},
		{Name: "kube/watch-expired - an event after the ERROR - fail", Want: check.Fail, Watch: 1, Msg: "after its ERROR event",
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(1, 5, 100, history.KubeWatchRequest{ResourceVersion: "9"})
				b.ErrEv(1, 101, 410, "Expired")
				b.Ev(1, 102, history.KubeModified, histbuild.A20)
			}},
		{Name: "kube/watch-expired - ERROR 410 with another reason - fail", Want: check.Fail, Watch: 1, Msg: `reason "Gone"`,
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(1, 5, 100, history.KubeWatchRequest{ResourceVersion: "9"})
				b.ErrEv(1, 101, 410, "Gone")
			}},
		{Name: "kube/watch-expired - a watch below the compaction started silently later - fail", Want: check.Fail, Watch: 1, Key: "a",
			Rev: 10, Msg: "started silently later", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.CompactEtcd(92, 93, 19)
				b.Watch(1, 5, 100, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Ev(1, 101, history.KubeModified, histbuild.A20)
			}},
		{Name: "kube/watch-expired - nothing expired - skipped", Want: check.Skipped, Build: healthyKube},
	})
}

func TestKubeWatchInitialState(t *testing.T) {
	state := func(b *histbuild.KubeBuilder, rv string) {
		histbuild.BaseWrites(b)
		histbuild.FullWatch(b, 9)
		b.Watch(1, 5, 55, history.KubeWatchRequest{ResourceVersion: rv})
	}
	histbuild.RunKubeCases(t, CheckWatchInitialState, ErrWatchInitialState, []histbuild.Kcase{
		{Name: "kube/watch-initial-state - the state at 16, then the changes - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			state(b, "0")
			b.Ev(1, 56, history.KubeAdded, histbuild.A15)
			b.Ev(1, 56, history.KubeAdded, histbuild.B12)
			b.Ev(1, 71, history.KubeDeleted, histbuild.B18)
			b.Ev(1, 91, history.KubeModified, histbuild.A20)
		}},
		{Name: "kube/watch-initial-state - a state turned into a streaming list (end bookmark) - pass", Want: check.Pass,
			Build: func(b *histbuild.KubeBuilder) {
				state(b, "")
				b.Ev(1, 56, history.KubeAdded, histbuild.B12)
				b.Ev(1, 56, history.KubeAdded, histbuild.A15)
				b.Bookmark(1, 56, 17, true)
				b.Ev(1, 71, history.KubeDeleted, histbuild.B18)
			}},
		{Name: "kube/watch-initial-state - an object missing from the state - fail", Want: check.Fail, Watch: 1, Key: "a",
			Msg: "a is missing", Build: func(b *histbuild.KubeBuilder) {
				state(b, "0")
				b.Ev(1, 56, history.KubeAdded, histbuild.B12)
				b.Ev(1, 71, history.KubeDeleted, histbuild.B18)
			}},
		{Name: "kube/watch-initial-state - items from two moments - fail", Want: check.Fail, Watch: 1, Key: "b", Rev: 12,
			Msg: "not one state", Build: func(b *histbuild.KubeBuilder) {
				state(b, "0")
				b.Ev(1, 56, history.KubeAdded, histbuild.A20)
				b.Ev(1, 56, history.KubeAdded, histbuild.B12)
			}},
		{Name: "kube/watch-initial-state - a later event at the state's RV - fail", Want: check.Fail, Watch: 1, Key: "b", Rev: 12,
			Msg: "must have an RV above the state's", Build: func(b *histbuild.KubeBuilder) {
				state(b, "0")
				b.Ev(1, 56, history.KubeAdded, histbuild.A15)
				b.Ev(1, 56, history.KubeAdded, histbuild.B12)
				b.Ev(1, 57, history.KubeAdded, histbuild.B12)
			}},
		{Name: "kube/watch-initial-state - no such watch - skipped", Want: check.Skipped, Build: healthyKube},
	})
}

func TestKubeWatchSelector(t *testing.T) {
	histbuild.RunKubeCases(t, CheckWatchSelector, ErrWatchSelector, []histbuild.Kcase{
		{Name: "kube/watch-selector - enter, stay, leave - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			histbuild.FullWatch(b, 1)
			histbuild.SelWatch(b, 2)
		}},
		{Name: "kube/watch-selector - leaving delivered as MODIFIED - fail", Want: check.Fail, Watch: 2, Key: "a", Rev: 20,
			Msg: "do not match", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(2, 6, 1, history.KubeWatchRequest{ResourceVersion: "9", LabelSelector: "g=a"})
				b.Ev(2, 11, history.KubeAdded, histbuild.A10)
				b.Ev(2, 51, history.KubeModified, histbuild.A15)
				b.Ev(2, 91, history.KubeModified, histbuild.A20)
			}},
		{Name: "kube/watch-selector - leaving delivered with the matching state but as MODIFIED - fail", Want: check.Fail, Watch: 2,
			Key: "a", Rev: 20, Msg: "made it stop matching", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(2, 6, 1, history.KubeWatchRequest{ResourceVersion: "9", LabelSelector: "g=a"})
				b.Ev(2, 11, history.KubeAdded, histbuild.A10)
				b.Ev(2, 51, history.KubeModified, histbuild.A15)
				b.Ev(2, 91, history.KubeModified, histbuild.A20del)
			}},
		{Name: "kube/watch-selector - leaving not delivered - fail", Want: check.Fail, Watch: 2, Key: "a", Rev: 20,
			Msg: "did not deliver DELETED", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(2, 6, 1, history.KubeWatchRequest{ResourceVersion: "9", LabelSelector: "g=a", AllowBookmarks: true})
				b.Ev(2, 11, history.KubeAdded, histbuild.A10)
				b.Ev(2, 51, history.KubeModified, histbuild.A15)
				b.Bookmark(2, 95, 21, false)
			}},
		{Name: "kube/watch-selector - leaving not delivered, but an unplaced update may have left first - pass", Want: check.Pass,
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.UpdateLost(3, 55, 95, 0, histbuild.KobjOf("a", "v:ax", 0, "g=x"))
				b.Watch(2, 6, 1, history.KubeWatchRequest{ResourceVersion: "9", LabelSelector: "g=a", AllowBookmarks: true})
				b.Ev(2, 11, history.KubeAdded, histbuild.A10)
				b.Ev(2, 51, history.KubeModified, histbuild.A15)
				b.Bookmark(2, 95, 21, false)
			}},
		{Name: "kube/watch-selector - a non-matching object is not silent - fail", Want: check.Fail, Watch: 2, Key: "b", Rev: 12,
			Msg: "do not match", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(2, 6, 1, history.KubeWatchRequest{ResourceVersion: "9", LabelSelector: "g=a"})
				b.Ev(2, 11, history.KubeAdded, histbuild.A10)
				b.Ev(2, 31, history.KubeAdded, histbuild.B12)
			}},
		{Name: "kube/watch-selector - no selector - skipped", Want: check.Skipped, Build: func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			histbuild.FullWatch(b, 1)
		}},
	})
}

func TestKubeWatchDeletedRV(t *testing.T) {
	b16 := histbuild.KobjOf("b", "v:b2", 16, "g=b")
	twoStates := func(b *histbuild.KubeBuilder) {
		b.Create(1, 0, 10, histbuild.A10)
		b.Create(1, 20, 30, histbuild.B12)
		b.Update(1, 40, 50, 12, b16)
		b.Del(1, 60, 70, "b", 16)
	}
	histbuild.RunKubeCases(t, CheckWatchDeletedRV, ErrWatchDeletedRV, []histbuild.Kcase{
		{Name: "kube/watch-deleted-rv - last state at the deletion's RV, and a selector's leaving - pass", Want: check.Pass,
			Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				histbuild.FullWatch(b, 1)
				histbuild.SelWatch(b, 2)
			}},
		{Name: "kube/watch-deleted-rv - DELETED at the RV of the last update - fail", Want: check.Fail, Watch: 1, Key: "b", Rev: 12,
			Msg: "RV 12 is create operation 2", Build: func(b *histbuild.KubeBuilder) {
				histbuild.BaseWrites(b)
				b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Ev(1, 31, history.KubeAdded, histbuild.B12)
				b.Ev(1, 71, history.KubeDeleted, histbuild.B12)
			}},
		{Name: "kube/watch-deleted-rv - DELETED carries an older state - fail", Want: check.Fail, Watch: 1, Key: "b", Rev: 18,
			Msg: `last state before RV 18 was "v:b2"`, Build: func(b *histbuild.KubeBuilder) {
				twoStates(b)
				b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Ev(1, 31, history.KubeAdded, histbuild.B12)
				b.Ev(1, 51, history.KubeModified, b16)
				b.Ev(1, 71, history.KubeDeleted, histbuild.KobjOf("b", "v:b1", 18, "g=b"))
			}},
		{Name: "kube/watch-deleted-rv - no DELETED event - skipped", Want: check.Skipped, Build: histbuild.BaseWrites},
	})
}

func TestKubeWatchTimeout(t *testing.T) {
	s := int(time.Second)
	timed := func(b *histbuild.KubeBuilder) int64 {
		return b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9", TimeoutSeconds: 5})
	}
	histbuild.RunKubeCases(t, CheckWatchTimeout, ErrWatchTimeout, []histbuild.Kcase{
		{Name: "kube/watch-timeout - ended cleanly just after T - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			b.End(timed(b), 5*s+s/5, history.EndServer, nil)
		}},
		{Name: "kube/watch-timeout - closed cleanly well before T, no fault - fail", Want: check.Fail, Watch: 1,
			Msg: "3.00s before its timeoutSeconds=5", Build: func(b *histbuild.KubeBuilder) {
				b.End(timed(b), 2*s, history.EndServer, nil)
				b.Watch(2, 5, 0, history.KubeWatchRequest{ResourceVersion: "9", TimeoutSeconds: 5})
				b.End(2, 5*s+s/2, history.EndServer, nil)
			}},
		{Name: "kube/watch-timeout - closed cleanly within the tolerance before T - pass", Want: check.Pass,
			Build: func(b *histbuild.KubeBuilder) {
				b.End(timed(b), 5*s-int(facts.TimeoutTolerance), history.EndServer, nil)
			}},
		{Name: "kube/watch-timeout - closed cleanly just outside the tolerance before T - fail", Want: check.Fail, Watch: 1,
			Msg: "ended unexplained", Build: func(b *histbuild.KubeBuilder) {
				b.End(timed(b), 5*s-int(facts.TimeoutTolerance)-1, history.EndServer, nil)
			}},
		{Name: "kube/watch-timeout - closed cleanly early while etcd under it was paused - pass", Want: check.Pass,
			Excused: map[string]int{"fault": 1}, Build: func(b *histbuild.KubeBuilder) {
				b.Fault(1, "pause-member", 1*s, 2*s, "m0")
				b.End(timed(b), 2*s, history.EndServer, nil)
				b.Watch(2, 5, 8*s, history.KubeWatchRequest{ResourceVersion: "9", TimeoutSeconds: 5})
				b.End(2, 13*s, history.EndServer, nil)
			}},
		{Name: "kube/watch-timeout - closed cleanly early within the settle time after a fault on its server - pass",
			Want: check.Pass, Excused: map[string]int{"fault": 1}, Build: func(b *histbuild.KubeBuilder) {
				b.Fault(1, "restart-apiserver", 0, s/2, "kube-0")
				b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9", TimeoutSeconds: 15})
				b.End(1, s/2+int(facts.FaultSettle), history.EndServer, nil)
				b.Watch(2, 5, 6*s, history.KubeWatchRequest{ResourceVersion: "9", TimeoutSeconds: 5})
				b.End(2, 11*s, history.EndServer, nil)
			}},
		{Name: "kube/watch-timeout - closed cleanly early just past the settle time after a fault - fail", Want: check.Fail,
			Watch: 1, Msg: "no fault reaching its API server", Build: func(b *histbuild.KubeBuilder) {
				b.Fault(1, "restart-apiserver", 0, s/2, "kube-0")
				b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9", TimeoutSeconds: 15})
				b.End(1, s/2+int(facts.FaultSettle)+1, history.EndServer, nil)
			}},
		{Name: "kube/watch-timeout - closed cleanly early during a fault on another API server - fail", Want: check.Fail,
			Watch: 1, Msg: "ended unexplained", Build: func(b *histbuild.KubeBuilder) {
				b.Fault(1, "restart-apiserver", 1*s, 3*s, "kube-1")
				b.End(timed(b), 2*s, history.EndServer, nil)
			}},
		{Name: "kube/watch-timeout - a sabotage record excuses no early close - fail", Want: check.Fail, Watch: 1,
			Msg: "ended unexplained", Build: func(b *histbuild.KubeBuilder) {
				b.Fault(1, "sabotage:kube-quiet-end", 2*s, 2*s, "client-5", "kube-0")
				b.End(timed(b), 2*s, history.EndServer, nil)
			}},
		{Name: "kube/watch-timeout - an ERROR event before T answers the watch - skipped", Want: check.Skipped,
			Build: func(b *histbuild.KubeBuilder) {
				b.ErrEv(timed(b), 2*s, 410, "Expired")
				b.End(1, 2*s, history.EndServer, nil)
			}},
		{Name: "kube/watch-timeout - without timeoutSeconds, closed cleanly after seconds - fail", Want: check.Fail, Watch: 1,
			Msg: "no timeoutSeconds", Build: func(b *histbuild.KubeBuilder) {
				b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9"})
				b.End(1, 3*s, history.EndServer, nil)
			}},
		{Name: "kube/watch-timeout - without timeoutSeconds, closed cleanly by an external server - skipped",
			Want: check.Skipped, Build: func(b *histbuild.KubeBuilder) {
				b.H.Meta.Target.Fixture = "external"
				b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9"})
				b.End(1, 3*s, history.EndServer, nil)
			}},
		{Name: "kube/watch-timeout - without timeoutSeconds, closed cleanly by an external kube-apiserver well before the run's floor - fail",
			Want: check.Fail, Watch: 1, Msg: "so that timeout is at least", Build: func(b *histbuild.KubeBuilder) {
				b.H.Meta.Target.Fixture, b.H.Meta.Target.Version = "external", "v1.36.3"
				b.Watch(1, 5, 0, history.KubeWatchRequest{ResourceVersion: "9"})
				b.End(1, 3*s, history.EndServer, nil)
				b.Watch(2, 6, 0, history.KubeWatchRequest{ResourceVersion: "9"})
				b.End(2, 100*s, history.EndClient, nil)
			}},
		{Name: "kube/watch-timeout - broke before T (visible) - skipped", Want: check.Skipped,
			Build: func(b *histbuild.KubeBuilder) {
				b.Add(history.Record{KubeWatchEnd: &history.KubeWatchEnd{Watch: timed(b), Time: time.Duration(2 * s),
					Reason: history.EndError, Error: "unexpected EOF"}})
			}},
		{Name: "kube/watch-timeout - still open long after T - fail", Want: check.Fail, Watch: 1, Msg: "still open 20.0s",
			Build: func(b *histbuild.KubeBuilder) { b.End(timed(b), 20*s, history.EndClient, nil) }},
		{Name: "kube/watch-timeout - ended only much later - fail", Want: check.Fail, Watch: 1, Msg: "ended only 30.0s",
			Build: func(b *histbuild.KubeBuilder) { b.End(timed(b), 30*s, history.EndServer, nil) }},
		{Name: "kube/watch-timeout - broke at T instead of ending - fail", Want: check.Fail, Watch: 1, Msg: "broke 5.1s",
			Build: func(b *histbuild.KubeBuilder) {
				w := timed(b)
				b.Add(history.Record{KubeWatchEnd: &history.KubeWatchEnd{Watch: w, Time: time.Duration(5*s + s/10),
					Reason: history.EndError, Error: "unexpected EOF"}})
			}},
		{Name: "kube/watch-timeout - a fault on its server excuses it - skipped", Want: check.Skipped, Build: func(b *histbuild.KubeBuilder) {
			b.Fault(1, "pause-apiserver", 1*s, 15*s, "kube-0")
			b.End(timed(b), 20*s, history.EndClient, nil)
		}},
		// The bound for T = 5 s: T + 5 s + T/4 = 11.25 s.
		{Name: "kube/watch-timeout - ended just inside T plus the slack - pass", Want: check.Pass,
			Build: func(b *histbuild.KubeBuilder) { b.End(timed(b), 11*s, history.EndServer, nil) }},
		{Name: "kube/watch-timeout - ended just past T plus the slack - fail", Want: check.Fail, Watch: 1, Msg: "ended only 11.5s",
			Build: func(b *histbuild.KubeBuilder) { b.End(timed(b), 11*s+s/2, history.EndServer, nil) }},
		{Name: "kube/watch-timeout - a fault on another API server excuses nothing - fail", Want: check.Fail, Watch: 1,
			Excused: map[string]int{"fault": 0},
			Msg:     "still open 20.0s", Build: func(b *histbuild.KubeBuilder) {
				b.Fault(1, "pause-apiserver", 1*s, 15*s, "kube-1")
				b.End(timed(b), 20*s, history.EndClient, nil)
			}},
		{Name: "kube/watch-timeout - closed by vigil before T - skipped", Want: check.Skipped, Build: func(b *histbuild.KubeBuilder) {
			b.End(timed(b), 3*s, history.EndClient, nil)
		}},
	})
}
