package kubeprobes

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	. "github.com/onsi/gomega"
	"github.com/vigil-suite/vigil/checkers/kube"
	"github.com/vigil-suite/vigil/suites/conformance"
)

// Probes lists every Kubernetes-API probe behaviour, in the order they
// run; each runs once per resource. Expectations follow the API's
// documented contract (the resourceVersion semantics of the API concepts
// page and the apimachinery validation); where built-in and custom
// resources legitimately differ, the probe branches on k.Custom and says
// why.
func Probes() []Probe {
	var out []Probe
	for _, family := range [][]Probe{getProbes(), listProbes(), writeProbes(), watchProbes(),
		collectionProbes(), patchProbes(), applyProbes(), finalizerProbes(), dryRunProbes(), statusProbes()} {
		out = append(out, family...)
	}
	return out
}

func kp(name, title string, checks []string, run func(k *K)) Probe {
	return Probe{Info: conformance.Info{Name: name, Title: title, Checks: checks}, Run: run}
}

var (
	labelsX = map[string]string{"app": "x"}
	labelsY = map[string]string{"app": "y"}
)

func getProbes() []Probe {
	return []Probe{
		kp("kube-get/rv-unset", "a get without resourceVersion does not return the object as last written",
			[]string{kube.NameLinearizable, kube.NameConsistentRead}, func(k *K) {
				c := k.Create("a", "v1", nil)
				u := k.Update("a", "v2", c.RV(), nil)
				g := k.Get("a", nil)
				k.Expect(g.Code).To(Equal(http.StatusOK))
				k.Expect(g.Value()).To(Equal("v2"))
				k.Expect(g.RV()).To(Equal(u.RV()), "the get's resourceVersion is the update's")
				k.Expect(g.Metadata.UID).To(Equal(c.Metadata.UID), "the uid stays the create's")
			}),
		kp("kube-get/rv-not-older-than", "a get with resourceVersion returns an object older than that version",
			[]string{kube.NameStaleReadBound}, func(k *K) {
				c := k.Create("a", "v1", nil)
				u := k.Update("a", "v2", c.RV(), nil)
				g := k.Get("a", Q("resourceVersion", u.RV()))
				k.Expect(g.Code).To(Equal(http.StatusOK))
				k.Expect(g.RV()).To(Equal(u.RV()), "not older than the update, and nothing newer exists")
				k.Expect(g.Value()).To(Equal("v2"))
			}),
		kp("kube-get/not-found", "a get of a missing object does not answer 404 NotFound naming it",
			nil, func(k *K) {
				g := k.Get("missing", nil)
				k.Expect(g.Code).To(Equal(http.StatusNotFound))
				k.Expect(g.Kind).To(Equal("Status"))
				k.Expect(g.Reason).To(Equal("NotFound"))
			}),
		kp("kube-get/after-delete", "a get after an acknowledged delete still returns the object",
			[]string{kube.NameLinearizable}, func(k *K) {
				k.Create("a", "v1", nil)
				d := k.Delete("a", nil)
				k.Expect(d.Code).To(Equal(http.StatusOK))
				k.Expect(k.Get("a", nil).Code).To(Equal(http.StatusNotFound))
			}),
		kp("kube-get/uid-stable", "an update changes the object's uid or creation time",
			nil, func(k *K) {
				c := k.Create("a", "v1", nil)
				u := k.Update("a", "v2", c.RV(), nil)
				k.Expect(u.Metadata.UID).To(Equal(c.Metadata.UID))
				k.Expect(u.Metadata.CreationTimestamp).To(Equal(c.Metadata.CreationTimestamp))
				k.Expect(k.RVNum(u.RV())).To(BeNumerically(">", k.RVNum(c.RV())), "an update raises the resourceVersion")
			}),
	}
}

func listProbes() []Probe {
	return []Probe{
		kp("kube-list/rv-unset", "a list without resourceVersion misses an acknowledged write or reports an older list resourceVersion",
			[]string{kube.NameConsistentRead, kube.NameLinearizable}, func(k *K) {
				k.Create("a", "v1", nil)
				b := k.Create("b", "v1", nil)
				l := k.List(nil)
				k.Expect(l.Code).To(Equal(http.StatusOK))
				k.Expect(l.Names()).To(Equal([]string{"a", "b"}), "every object, sorted by name")
				k.Expect(k.RVNum(l.RV())).To(BeNumerically(">=", k.RVNum(b.RV())), "the list's resourceVersion is not older than the last write")
			}),
		kp("kube-list/rv-zero", "a list with resourceVersion=0 returns items newer than its own resourceVersion",
			[]string{kube.NameRVOrder}, func(k *K) {
				k.Create("a", "v1", nil)
				l := k.List(Q("resourceVersion", "0"))
				k.Expect(l.Code).To(Equal(http.StatusOK))
				for _, it := range l.Items {
					k.Expect(k.RVNum(it.RV())).To(BeNumerically("<=", k.RVNum(l.RV())), "item %s is newer than the list", it.Metadata.Name)
				}
			}),
		kp("kube-list/not-older-than", "a list with resourceVersionMatch=NotOlderThan returns a state older than asked",
			[]string{kube.NameListNotOlderThan}, func(k *K) {
				k.Create("a", "v1", nil)
				b := k.Create("b", "v1", nil)
				l := k.List(Q("resourceVersion", b.RV(), "resourceVersionMatch", "NotOlderThan"))
				k.Expect(l.Code).To(Equal(http.StatusOK))
				k.Expect(k.RVNum(l.RV())).To(BeNumerically(">=", k.RVNum(b.RV())))
				k.Expect(l.Names()).To(Equal([]string{"a", "b"}))
			}),
		kp("kube-list/exact", "a list with resourceVersionMatch=Exact does not return the state at exactly that resourceVersion",
			[]string{kube.NameListExact}, func(k *K) {
				a := k.Create("a", "v1", nil)
				k.Update("a", "v2", a.RV(), nil)
				k.Create("b", "v1", nil)
				l := k.List(Q("resourceVersion", a.RV(), "resourceVersionMatch", "Exact"))
				k.Expect(l.Code).To(Equal(http.StatusOK), "%s %s", l.Reason, l.Message)
				k.Expect(l.RV()).To(Equal(a.RV()), "the list is at the resourceVersion asked")
				k.Expect(l.Names()).To(Equal([]string{"a"}))
				k.Expect(l.Items[0].Value()).To(Equal("v1"), "a as it was then")
			}),
		kp("kube-list/exact-needs-rv", "resourceVersionMatch=Exact without a resourceVersion is accepted instead of refused as invalid",
			[]string{kube.NameListExact}, func(k *K) {
				l := k.List(Q("resourceVersionMatch", "Exact"))
				k.Expect(l.Code).To(Equal(http.StatusUnprocessableEntity), "%s", l.Message)
				k.Expect(l.Reason).To(Equal("Invalid"))
			}),
		kp("kube-list/exact-zero-invalid", "resourceVersionMatch=Exact with resourceVersion=0 is accepted instead of refused as invalid",
			[]string{kube.NameListExact}, func(k *K) {
				l := k.List(Q("resourceVersion", "0", "resourceVersionMatch", "Exact"))
				k.Expect(l.Code).To(Equal(http.StatusUnprocessableEntity), "%s", l.Message)
				k.Expect(l.Reason).To(Equal("Invalid"))
			}),
		kp("kube-list/paging", "a paginated list does not return every object exactly once, at one resourceVersion, with a correct remaining count",
			[]string{kube.NamePagination}, func(k *K) {
				for _, n := range []string{"a", "b", "c", "d", "e"} {
					k.Create(n, "v1", nil)
				}
				p1 := k.List(Q("limit", "2"))
				k.Expect(p1.Code).To(Equal(http.StatusOK))
				k.Expect(p1.Names()).To(Equal([]string{"a", "b"}))
				k.Expect(p1.Metadata.Continue).NotTo(BeEmpty())
				k.Expect(p1.Metadata.RemainingItemCount).NotTo(BeNil())
				k.Expect(*p1.Metadata.RemainingItemCount).To(BeEquivalentTo(3))
				p2 := k.List(Q("limit", "2", "continue", p1.Metadata.Continue))
				k.Expect(p2.Names()).To(Equal([]string{"c", "d"}))
				k.Expect(p2.RV()).To(Equal(p1.RV()), "every page is at the first page's resourceVersion")
				p3 := k.List(Q("limit", "2", "continue", p2.Metadata.Continue))
				k.Expect(p3.Names()).To(Equal([]string{"e"}))
				k.Expect(p3.Metadata.Continue).To(BeEmpty(), "the last page has no continue token")
				k.Expect(p3.RV()).To(Equal(p1.RV()))
			}),
		kp("kube-list/paging-snapshot", "the later pages of a paginated list show writes made after its first page",
			[]string{kube.NamePagination}, func(k *K) {
				a := k.Create("a", "v1", nil)
				k.Create("b", "v1", nil)
				c := k.Create("c", "v1", nil)
				p1 := k.List(Q("limit", "1"))
				k.Expect(p1.Names()).To(Equal([]string{"a"}))
				k.Update("a", "v2", a.RV(), nil)
				k.Update("c", "v2", c.RV(), nil)
				k.Create("bb", "v1", nil)
				p2 := k.List(Q("limit", "5", "continue", p1.Metadata.Continue))
				k.Expect(p2.Code).To(Equal(http.StatusOK))
				k.Expect(p2.Names()).To(Equal([]string{"b", "c"}), "the snapshot of the first page: no bb")
				k.Expect(p2.Items[1].Value()).To(Equal("v1"), "c as of the first page")
			}),
		kp("kube-list/limit-covers-all", "a list whose limit covers every object still sends a continue token or remaining count",
			[]string{kube.NamePagination}, func(k *K) {
				k.Create("a", "v1", nil)
				k.Create("b", "v1", nil)
				l := k.List(Q("limit", "5"))
				k.Expect(l.Names()).To(Equal([]string{"a", "b"}))
				k.Expect(l.Metadata.Continue).To(BeEmpty())
				k.Expect(l.Metadata.RemainingItemCount).To(BeNil())
			}),
		kp("kube-list/continue-expired", "a continue token of a compacted resourceVersion neither goes on at its snapshot nor is refused with 410 Expired and an inconsistent-continue token",
			[]string{kube.NameContinueExpired, kube.NamePagination}, func(k *K) {
				k.Create("a", "v1", nil)
				b := k.Create("b", "v1", nil)
				k.Create("c", "v1", nil)
				p1 := k.List(Q("limit", "1"))
				k.Expect(p1.Metadata.Continue).NotTo(BeEmpty())
				k.Update("b", "v2", b.RV(), nil)
				k.Create("d", "v1", nil) // so the compaction passes the first page's revision
				k.Compact("")
				p2 := k.List(Q("limit", "1", "continue", p1.Metadata.Continue))
				if p2.Code == http.StatusOK {
					k.Branch("the snapshot is kept")
					// A server may keep the snapshot past the storage's
					// compaction (the watch cache does): then the page is
					// the snapshot's.
					k.Expect(p2.RV()).To(Equal(p1.RV()), "the page is at the first page's resourceVersion")
					k.Expect(p2.Names()).To(Equal([]string{"b"}))
					k.Expect(p2.Items[0].Value()).To(Equal("v1"), "b as of the first page")
					return
				}
				k.Branch("the snapshot is expired")
				k.Expect(p2.Code).To(Equal(http.StatusGone), "%s", p2.Message)
				k.Expect(p2.Reason).To(Equal("Expired"))
				k.Expect(p2.Metadata.Continue).NotTo(BeEmpty(), "the Status carries a token to go on inconsistently")
				p3 := k.List(Q("limit", "5", "continue", p2.Metadata.Continue))
				k.Expect(p3.Code).To(Equal(http.StatusOK))
				k.Expect(p3.Names()).To(Equal([]string{"b", "c", "d"}), "the rest, as of now")
				k.Expect(p3.Items[0].Value()).To(Equal("v2"))
			}),
		kp("kube-list/label-selector", "a list with a label selector returns objects that do not match it",
			[]string{kube.NameWatchSelector}, func(k *K) {
				k.Create("a", "v1", labelsX)
				k.Create("b", "v1", labelsY)
				k.Create("c", "v1", nil)
				l := k.List(Q("labelSelector", "app=x"))
				k.Expect(l.Names()).To(Equal([]string{"a"}))
				l = k.List(Q("labelSelector", "app"))
				k.Expect(l.Names()).To(Equal([]string{"a", "b"}))
				l = k.List(Q("labelSelector", "app!=x"))
				k.Expect(l.Names()).To(Equal([]string{"b", "c"}), "!= also matches objects without the label")
			}),
		kp("kube-list/field-selector", "a list with a metadata.name field selector returns other objects",
			nil, func(k *K) {
				k.Create("a", "v1", nil)
				k.Create("b", "v1", nil)
				l := k.List(Q("fieldSelector", "metadata.name=b"))
				k.Expect(l.Code).To(Equal(http.StatusOK), "%s", l.Message)
				k.Expect(l.Names()).To(Equal([]string{"b"}))
			}),
		kp("kube-list/future-rv", "a list at a resourceVersion the server has not reached does not answer 504 with ResourceVersionTooLarge",
			[]string{kube.NameFutureRV}, func(k *K) {
				a := k.Create("a", "v1", nil)
				future := k.RVNum(a.RV()) + 1000000
				l := k.List(Q("resourceVersion", itoa(future), "resourceVersionMatch", "NotOlderThan"))
				k.Expect(l.Code).To(Equal(http.StatusGatewayTimeout), "%s", l.Message)
				k.Expect(l.Reason).To(Equal("Timeout"))
				k.Expect(l.Causes()).To(ContainElement("ResourceVersionTooLarge"))
			}),
	}
}

func writeProbes() []Probe {
	return []Probe{
		kp("kube-write/create-exists", "a create of an existing name is not refused with 409 AlreadyExists",
			[]string{kube.NameOptimisticConcurrency}, func(k *K) {
				k.Create("a", "v1", nil)
				r := k.Call("CREATE", http.MethodPost, "", nil, k.Obj("a", "v2", "", nil))
				k.Expect(r.Code).To(Equal(http.StatusConflict))
				k.Expect(r.Reason).To(Equal("AlreadyExists"))
				k.Expect(k.Get("a", nil).Value()).To(Equal("v1"), "the object is unchanged")
			}),
		kp("kube-write/update-stale-rv", "an update with a stale resourceVersion is not refused with 409 Conflict",
			[]string{kube.NameOptimisticConcurrency}, func(k *K) {
				c := k.Create("a", "v1", nil)
				k.Update("a", "v2", c.RV(), nil)
				r := k.Call("UPDATE", http.MethodPut, "a", nil, k.Obj("a", "v3", c.RV(), nil))
				k.Expect(r.Code).To(Equal(http.StatusConflict))
				k.Expect(r.Reason).To(Equal("Conflict"))
				k.Expect(k.Get("a", nil).Value()).To(Equal("v2"))
			}),
		kp("kube-write/update-missing", "an update of a missing object does not answer 404 NotFound",
			nil, func(k *K) {
				r := k.Call("UPDATE", http.MethodPut, "a", nil, k.Obj("a", "v1", "1", nil))
				k.Expect(r.Code).To(Equal(http.StatusNotFound))
			}),
		kp("kube-write/update-unconditional", "an update without resourceVersion is not handled as the resource's strategy says",
			[]string{kube.NameOptimisticConcurrency}, func(k *K) {
				k.Create("a", "v1", nil)
				r := k.Call("UPDATE", http.MethodPut, "a", nil, k.Obj("a", "v2", "", nil))
				if k.Custom {
					// Custom resources refuse unconditional updates: their
					// strategy requires metadata.resourceVersion.
					k.Expect(r.Code).To(Equal(http.StatusUnprocessableEntity), "%s", r.Message)
					k.Expect(k.Get("a", nil).Value()).To(Equal("v1"))
					return
				}
				k.Expect(r.Code).To(Equal(http.StatusOK), "%s", r.Message)
				k.Expect(k.Get("a", nil).Value()).To(Equal("v2"))
			}),
		kp("kube-write/noop-update", "an update that changes nothing changes the resourceVersion",
			[]string{kube.NameRVOrder}, func(k *K) {
				c := k.Create("a", "v1", nil)
				u := k.Update("a", "v1", c.RV(), nil)
				k.Expect(u.RV()).To(Equal(c.RV()), "no change, no new version")
			}),
		kp("kube-write/delete-precondition-rv", "a delete with a stale resourceVersion precondition is not refused with 409 Conflict",
			[]string{kube.NameOptimisticConcurrency}, func(k *K) {
				c := k.Create("a", "v1", nil)
				u := k.Update("a", "v2", c.RV(), nil)
				d := k.Delete("a", map[string]any{"preconditions": map[string]any{"resourceVersion": c.RV()}})
				k.Expect(d.Code).To(Equal(http.StatusConflict))
				k.Expect(k.Get("a", nil).Code).To(Equal(http.StatusOK), "still there")
				d = k.Delete("a", map[string]any{"preconditions": map[string]any{"resourceVersion": u.RV()}})
				k.Expect(d.Code).To(Equal(http.StatusOK))
				k.Expect(k.Get("a", nil).Code).To(Equal(http.StatusNotFound))
			}),
		kp("kube-write/delete-precondition-uid", "a delete with another object's uid as precondition is not refused with 409 Conflict",
			[]string{kube.NameOptimisticConcurrency}, func(k *K) {
				c := k.Create("a", "v1", nil)
				k.Expect(k.Delete("a", nil).Code).To(Equal(http.StatusOK))
				k.Create("a", "v2", nil)
				d := k.Delete("a", map[string]any{"preconditions": map[string]any{"uid": c.Metadata.UID}})
				k.Expect(d.Code).To(Equal(http.StatusConflict))
				k.Expect(k.Get("a", nil).Value()).To(Equal("v2"))
			}),
		kp("kube-write/delete-missing", "a delete of a missing object does not answer 404 NotFound",
			nil, func(k *K) {
				d := k.Delete("a", nil)
				k.Expect(d.Code).To(Equal(http.StatusNotFound))
				k.Expect(d.Reason).To(Equal("NotFound"))
			}),
		kp("kube-write/recreate", "an object deleted and created again keeps its old uid or resourceVersion",
			[]string{kube.NameRVOrder}, func(k *K) {
				c := k.Create("a", "v1", nil)
				k.Expect(k.Delete("a", nil).Code).To(Equal(http.StatusOK))
				r := k.Create("a", "v2", nil)
				k.Expect(r.Metadata.UID).NotTo(Equal(c.Metadata.UID))
				k.Expect(k.RVNum(r.RV())).To(BeNumerically(">", k.RVNum(c.RV())))
			}),
		kp("kube-write/invalid-name", "a create with an invalid name is not refused with 422 Invalid",
			nil, func(k *K) {
				r := k.Call("CREATE", http.MethodPost, "", nil, k.Obj("Not_A_Name", "v1", "", nil))
				k.Expect(r.Code).To(Equal(http.StatusUnprocessableEntity))
				k.Expect(r.Reason).To(Equal("Invalid"))
			}),
		kp("kube-write/rv-order", "resourceVersions of successive writes do not increase",
			[]string{kube.NameRVOrder}, func(k *K) {
				last := int64(0)
				for _, n := range []string{"a", "b", "c"} {
					o := k.Create(n, "v1", nil)
					k.Expect(k.RVNum(o.RV())).To(BeNumerically(">", last))
					last = k.RVNum(o.RV())
				}
			}),
	}
}

func watchProbes() []Probe {
	return []Probe{
		kp("kube-watch/from-rv", "a watch from a resourceVersion does not deliver exactly the changes after it",
			[]string{kube.NameWatchFromRV}, func(k *K) {
				a := k.Create("a", "v1", nil)
				u := k.Update("a", "v2", a.RV(), nil)
				w := k.Watch(Q("resourceVersion", a.RV()))
				defer w.Close()
				ev := w.Expect("MODIFIED", "a")
				k.Expect(ev.Object.RV()).To(Equal(u.RV()))
				k.Expect(ev.Object.Value()).To(Equal("v2"))
				b := k.Create("b", "v1", nil)
				ev = w.Expect("ADDED", "b")
				k.Expect(ev.Object.RV()).To(Equal(b.RV()))
				w.Fence("fence")
			}),
		kp("kube-watch/rv-unset", "a watch without resourceVersion does not start with the current objects as ADDED and then the changes",
			[]string{kube.NameWatchInitialState}, func(k *K) {
				a := k.Create("a", "v1", nil)
				u := k.Update("a", "v2", a.RV(), nil)
				w := k.Watch(nil)
				defer w.Close()
				ev := w.Expect("ADDED", "a")
				k.Expect(ev.Object.RV()).To(Equal(u.RV()), "the current state, not a's history")
				k.Delete("a", nil)
				w.Expect("DELETED", "a")
				w.Fence("fence")
			}),
		kp("kube-watch/rv-zero", "a watch from resourceVersion 0 does not start with the objects as ADDED",
			[]string{kube.NameWatchInitialState}, func(k *K) {
				k.Create("a", "v1", nil)
				w := k.Watch(Q("resourceVersion", "0"))
				defer w.Close()
				w.Expect("ADDED", "a")
				w.Fence("fence")
			}),
		kp("kube-watch/deleted-rv", "a DELETED event does not carry the deletion's resourceVersion and the object's last state",
			[]string{kube.NameWatchDeletedRV}, func(k *K) {
				a := k.Create("a", "v1", nil)
				w := k.Watch(Q("resourceVersion", a.RV()))
				defer w.Close()
				k.Expect(k.Delete("a", nil).Code).To(Equal(http.StatusOK))
				ev := w.Expect("DELETED", "a")
				k.Expect(k.RVNum(ev.Object.RV())).To(BeNumerically(">", k.RVNum(a.RV())), "the deletion's own resourceVersion")
				k.Expect(ev.Object.Value()).To(Equal("v1"))
				f := w.Fence("fence")
				k.Expect(k.RVNum(f.Object.RV())).To(BeNumerically(">", k.RVNum(ev.Object.RV())))
			}),
		kp("kube-watch/ordered", "a watch delivers events out of resourceVersion order or not exactly the writes made",
			[]string{kube.NameWatchOrdered, kube.NameWatchAgreement}, func(k *K) {
				a := k.Create("a", "v1", nil)
				w := k.Watch(Q("resourceVersion", a.RV()))
				defer w.Close()
				var rvs []string
				rv := a.RV()
				for i := 2; i <= 6; i++ {
					rv = k.Update("a", "v"+itoa(int64(i)), rv, nil).RV()
					rvs = append(rvs, rv)
				}
				for i, want := range rvs {
					ev := w.Expect("MODIFIED", "a")
					k.Expect(ev.Object.RV()).To(Equal(want), "event %d", i+1)
				}
				w.Fence("fence")
			}),
		kp("kube-watch/label-selector", "a label-selector watch does not turn an object entering and leaving the selection into ADDED and DELETED",
			[]string{kube.NameWatchSelector}, func(k *K) {
				a := k.Create("a", "v1", nil)
				w := k.Watch(Q("resourceVersion", a.RV(), "labelSelector", "app=x"))
				defer w.Close()
				u := k.Update("a", "v2", a.RV(), labelsX)
				ev := w.Expect("ADDED", "a")
				k.Expect(ev.Object.RV()).To(Equal(u.RV()))
				u = k.Update("a", "v3", u.RV(), labelsX)
				w.Expect("MODIFIED", "a")
				u = k.Update("a", "v4", u.RV(), labelsY)
				ev = w.Expect("DELETED", "a")
				k.Expect(ev.Object.RV()).To(Equal(u.RV()), "the DELETED carries the change that took it out")
				x := k.Create("x", "v1", labelsX)
				ev = w.Expect("ADDED", "x")
				k.Expect(ev.Object.RV()).To(Equal(x.RV()))
				k.Create("fence", "", nil)
				k.Create("fence2", "", labelsX)
				w.Expect("ADDED", "fence2")
			}),
		kp("kube-watch/field-selector", "a metadata.name field-selector watch delivers events of other objects",
			[]string{kube.NameWatchSelector}, func(k *K) {
				a := k.Create("a", "v1", nil)
				w := k.Watch(Q("resourceVersion", a.RV(), "fieldSelector", "metadata.name=b"))
				defer w.Close()
				k.Expect(w.Refused).To(BeNil())
				k.Update("a", "v2", a.RV(), nil)
				b := k.Create("b", "v1", nil)
				ev := w.Expect("ADDED", "b")
				k.Expect(ev.Object.RV()).To(Equal(b.RV()))
				k.Update("b", "v2", b.RV(), nil)
				w.Expect("MODIFIED", "b")
			}),
		kp("kube-watch/resume", "a watch resumed from the last event's resourceVersion repeats or misses events",
			[]string{kube.NameWatchResume}, func(k *K) {
				a := k.Create("a", "v1", nil)
				w := k.Watch(Q("resourceVersion", a.RV()))
				u := k.Update("a", "v2", a.RV(), nil)
				ev := w.Expect("MODIFIED", "a")
				w.Close()
				k.Update("a", "v3", u.RV(), nil)
				w2 := k.Watch(Q("resourceVersion", ev.Object.RV()))
				defer w2.Close()
				ev = w2.Expect("MODIFIED", "a")
				k.Expect(ev.Object.Value()).To(Equal("v3"))
				w2.Fence("fence")
			}),
		kp("kube-watch/recreate", "a watch does not show a delete and a re-create of one name as DELETED then ADDED with a new uid",
			[]string{kube.NameWatchAgreement}, func(k *K) {
				a := k.Create("a", "v1", nil)
				w := k.Watch(Q("resourceVersion", a.RV()))
				defer w.Close()
				k.Delete("a", nil)
				b := k.Create("a", "v2", nil)
				w.Expect("DELETED", "a")
				ev := w.Expect("ADDED", "a")
				k.Expect(ev.Object.Metadata.UID).To(Equal(b.Metadata.UID))
				k.Expect(ev.Object.Metadata.UID).NotTo(Equal(a.Metadata.UID))
			}),
		kp("kube-watch/too-old", "a watch from a resourceVersion older than the server keeps is neither refused with 410 Expired nor given exactly the later changes",
			[]string{kube.NameWatchExpired, kube.NameWatchFromRV}, func(k *K) {
				k.Create("a", "v1", nil)
				k.Compact("")
				// Revision 1 is the empty store etcd starts with, older than
				// any compaction. A server that still holds the history
				// from there (a watch cache filled from the start) may
				// serve it: then exactly the probe's writes come.
				k.Branch("to serve the history from revision 1 or expire it")
				w := k.Watch(Q("resourceVersion", "1"))
				defer w.Close()
				ev := expiredOrFirst(k, w)
				if ev == nil {
					return
				}
				k.Expect(ev.Type + " " + ev.Object.Metadata.Name).To(Equal("ADDED a"))
				w.Fence("fence")
			}),
		kp("kube-watch/compaction-edge", "a watch from the resourceVersion just below the storage's compaction neither delivers the next change nor is refused with 410 Expired",
			[]string{kube.NameWatchExpired, kube.NameWatchFromRV}, func(k *K) {
				a := k.Create("a", "v1", nil)
				u := k.Update("a", "v2", a.RV(), nil)
				// Compacted at the update: a's first version is gone, the
				// update is kept. A watch from the create asks for the
				// update: the server may deliver it or call the
				// resourceVersion expired.
				k.Compact(u.RV())
				k.Branch("to deliver the update or expire the resourceVersion")
				w := k.Watch(Q("resourceVersion", a.RV()))
				defer w.Close()
				ev := expiredOrFirst(k, w)
				if ev == nil {
					return
				}
				k.Expect(ev.Type).To(Equal("MODIFIED"))
				k.Expect(ev.Object.RV()).To(Equal(u.RV()))
				w.Fence("fence")
			}),
		kp("kube-watch/timeout", "a watch with timeoutSeconds is not ended cleanly by the server near that time",
			[]string{kube.NameWatchTimeout}, func(k *K) {
				a := k.Create("a", "v1", nil)
				w := k.Watch(Q("resourceVersion", a.RV(), "timeoutSeconds", "1"))
				defer w.Close()
				w.Ends(6 * time.Second) // the 1 s asked, and room for a loaded machine
			}),
		kp("kube-watch/bookmarks", "a BOOKMARK carries a resourceVersion older than an event already delivered or is followed by an event not newer than it",
			[]string{kube.NameBookmarks}, func(k *K) {
				a := k.Create("a", "v1", nil)
				w := k.Watch(Q("resourceVersion", a.RV(), "allowWatchBookmarks", "true", "timeoutSeconds", "3"))
				defer w.Close()
				u := k.Update("a", "v2", a.RV(), nil)
				w.Expect("MODIFIED", "a")
				last := k.RVNum(u.RV())
				for range 100 {
					ev, ended := w.next(5 * time.Second)
					if ended || ev == nil {
						break
					}
					if ev.Type == "BOOKMARK" {
						k.Expect(k.RVNum(ev.Object.RV())).To(BeNumerically(">=", last), "a bookmark older than an event delivered")
						k.Expect(ev.Object.Metadata.Name).To(BeEmpty(), "a bookmark carries no object")
					} else {
						k.Expect(k.RVNum(ev.Object.RV())).To(BeNumerically(">", last), "an event not newer than what came before")
					}
					last = k.RVNum(ev.Object.RV())
				}
			}),
		kp("kube-watch/initial-events", "a watch with sendInitialEvents does not send the objects, then a BOOKMARK marked initial-events-end, then the changes",
			[]string{kube.NameWatchlistInitial}, func(k *K) {
				k.Create("a", "v1", nil)
				b := k.Create("b", "v1", nil)
				w := k.Watch(Q("sendInitialEvents", "true", "resourceVersionMatch", "NotOlderThan", "allowWatchBookmarks", "true"))
				defer w.Close()
				if w.Refused != nil {
					k.Skip("the server refused sendInitialEvents (" + itoa(int64(w.Refused.Code)) + " " + w.Refused.Reason + "): streaming lists are off")
				}
				names := map[string]bool{}
				for range 2 {
					ev := w.NextNonBookmark(10 * time.Second)
					k.Expect(ev).NotTo(BeNil())
					k.Expect(ev.Type).To(Equal("ADDED"))
					names[ev.Object.Metadata.Name] = true
				}
				k.Expect(names).To(HaveKey("a"))
				k.Expect(names).To(HaveKey("b"))
				var end *KEvent
				for range 100 {
					ev := w.Next(10 * time.Second)
					k.Expect(ev).NotTo(BeNil(), "no initial-events-end bookmark")
					k.Expect(ev.Type).To(Equal("BOOKMARK"), "only bookmarks between the initial events and their end")
					if ev.Object.Metadata.Annotations["k8s.io/initial-events-end"] == "true" {
						end = ev
						break
					}
				}
				k.Expect(end).NotTo(BeNil())
				k.Expect(k.RVNum(end.Object.RV())).To(BeNumerically(">=", k.RVNum(b.RV())), "the end is not older than the last write")
				w.Fence("fence")
			}),
		kp("kube-watch/rvmatch-needs-initial-events", "a watch with resourceVersionMatch but without sendInitialEvents is accepted instead of refused as invalid",
			[]string{kube.NameWatchlistValidation}, func(k *K) {
				expectWatchInvalid(k, Q("resourceVersionMatch", "NotOlderThan"))
			}),
		kp("kube-watch/initial-events-needs-not-older-than", "a watch with sendInitialEvents and resourceVersionMatch=Exact is accepted instead of refused as invalid",
			[]string{kube.NameWatchlistValidation}, func(k *K) {
				expectWatchInvalid(k, Q("sendInitialEvents", "true", "resourceVersionMatch", "Exact", "resourceVersion", "1", "allowWatchBookmarks", "true"))
			}),
	}
}

// expectWatchInvalid: the server refuses a watch with these parameters as
// 422 Invalid.
func expectWatchInvalid(k *K, q url.Values) {
	w := k.Watch(q)
	defer w.Close()
	k.Expect(w.Refused).NotTo(BeNil(), "the watch was accepted")
	k.Expect(w.Refused.Code).To(Equal(http.StatusUnprocessableEntity))
	k.Expect(w.Refused.Reason).To(Equal("Invalid"))
}

// expiredOrFirst reads how a watch from an old resourceVersion began: nil
// when the server expired it (an HTTP 410, or a first ERROR frame with a
// 410 Expired Status), else its first event, which the caller judges.
func expiredOrFirst(k *K, w *KWatch) *KEvent {
	if w.Refused != nil {
		k.Expect(w.Refused.Code).To(Equal(http.StatusGone), "%s", w.Refused.Message)
		return nil
	}
	ev := w.Next(10 * time.Second)
	k.Expect(ev).NotTo(BeNil(), "neither a 410 nor an event")
	if ev.Type != "ERROR" {
		return ev
	}
	k.Expect(ev.Object.Reason).To(Equal("Expired"), "the ERROR event (code %d): %s", ev.Object.Code, ev.Object.Message)
	k.Expect(ev.Object.Code).To(Equal(http.StatusGone), "%s", ev.Object.Message)
	return nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
