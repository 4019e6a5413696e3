package kubeprobes

import (
	"net/http"
	"net/url"

	. "github.com/onsi/gomega"
	"github.com/vigil-suite/vigil/checkers/kube"
	kt "github.com/vigil-suite/vigil/targets/kube"
)

// The write paths controllers, kubectl and the API server's own
// controllers use besides create, update and delete: patches of every
// type, server-side apply, delete-collection, finalizers, dry runs, the
// status subresource and generateName. Expectations follow the API
// concepts page (patches, server-side apply, dry run, finalizers) and the
// apiserver's registry code (k8s.io/apiserver/pkg/registry/generic/registry,
// store.go), which every resource, built-in or custom, goes through.

// holdFinalizer is the finalizer the probes put on objects: a
// domain-qualified name, which the API accepts on any object and no
// controller acts on.
const holdFinalizer = "vigil.dev/hold"

// applied is the body of a server-side apply: the resource's kind, the
// name and data["value"].
func (k *K) applied(name, value string) map[string]any {
	return map[string]any{"apiVersion": apiVersionOf(k.Res), "kind": k.Res.Kind,
		"metadata": map[string]any{"name": name}, "data": map[string]string{kt.ValueKey: value}}
}

func patchProbes() []Probe {
	return []Probe{
		kp("kube-patch/json-patch", "a JSON patch whose test holds is not applied to the object as stored",
			[]string{kube.NameOptimisticConcurrency}, func(k *K) {
				c := k.Create("a", "v1", nil)
				p := k.Patch("a", "", JSONPatch, nil, []any{
					map[string]any{"op": "test", "path": "/data/value", "value": "v1"},
					map[string]any{"op": "replace", "path": "/data/value", "value": "v2"},
					map[string]any{"op": "add", "path": "/data/other", "value": "o"},
				})
				k.Expect(p.Code).To(Equal(http.StatusOK), "%s %s", p.Reason, p.Message)
				k.Expect(p.Data).To(Equal(map[string]string{kt.ValueKey: "v2", "other": "o"}))
				k.Expect(k.RVNum(p.RV())).To(BeNumerically(">", k.RVNum(c.RV())), "a patch that changes the object is a new version")
				g := k.Get("a", nil)
				k.Expect(g.Data).To(Equal(p.Data), "the get sees the patch")
				k.Expect(g.RV()).To(Equal(p.RV()))
			}),
		kp("kube-patch/json-patch-test-fails", "a JSON patch whose test op fails is not refused with 422, or changes the object",
			[]string{kube.NameOptimisticConcurrency}, func(k *K) {
				c := k.Create("a", "v1", nil)
				p := k.Patch("a", "", JSONPatch, nil, []any{
					map[string]any{"op": "test", "path": "/data/value", "value": "v0"},
					map[string]any{"op": "replace", "path": "/data/value", "value": "v2"},
				})
				k.Expect(p.Code).To(Equal(http.StatusUnprocessableEntity), "%s %s", p.Reason, p.Message)
				k.Expect(p.Reason).To(Equal("Invalid"))
				g := k.Get("a", nil)
				k.Expect(g.Value()).To(Equal("v1"), "the failed patch changed nothing")
				k.Expect(g.RV()).To(Equal(c.RV()))
			}),
		kp("kube-patch/merge", "a JSON merge patch does not set the keys it names and delete the ones it sets to null",
			[]string{kube.NameOptimisticConcurrency}, func(k *K) {
				k.Create("a", "v1", nil)
				p := k.Patch("a", "", MergePatch, nil, map[string]any{"data": map[string]any{kt.ValueKey: "v2", "other": "o"}})
				k.Expect(p.Code).To(Equal(http.StatusOK), "%s %s", p.Reason, p.Message)
				k.Expect(p.Data).To(Equal(map[string]string{kt.ValueKey: "v2", "other": "o"}))
				p = k.Patch("a", "", MergePatch, nil, map[string]any{"data": map[string]any{"other": nil}})
				k.Expect(p.Code).To(Equal(http.StatusOK), "%s %s", p.Reason, p.Message)
				k.Expect(p.Data).To(Equal(map[string]string{kt.ValueKey: "v2"}), "null deletes the key")
				g := k.Get("a", nil)
				k.Expect(g.Data).To(Equal(p.Data))
				k.Expect(g.RV()).To(Equal(p.RV()))
			}),
		kp("kube-patch/strategic", "a strategic merge patch of a ConfigMap does not merge, or one of a custom resource is not refused with 415",
			[]string{kube.NameOptimisticConcurrency}, func(k *K) {
				k.Create("a", "v1", labelsX)
				p := k.Patch("a", "", StrategicPatch, nil, map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"tier": "t"}},
					"data":     map[string]any{kt.ValueKey: "v2"}})
				if k.Custom {
					// Custom resources have no strategic merge schema: the
					// API server refuses the content type.
					k.Expect(p.Code).To(Equal(http.StatusUnsupportedMediaType), "%s %s", p.Reason, p.Message)
					k.Expect(k.Get("a", nil).Value()).To(Equal("v1"))
					return
				}
				k.Expect(p.Code).To(Equal(http.StatusOK), "%s %s", p.Reason, p.Message)
				k.Expect(p.Value()).To(Equal("v2"))
				k.Expect(p.Metadata.Labels).To(Equal(map[string]string{"app": "x", "tier": "t"}), "labels merged, not replaced")
				k.Expect(k.Get("a", nil).Value()).To(Equal("v2"))
			}),
		kp("kube-patch/stale-rv", "a patch carrying a stale metadata.resourceVersion is not refused with 409 Conflict",
			[]string{kube.NameOptimisticConcurrency}, func(k *K) {
				c := k.Create("a", "v1", nil)
				u := k.Update("a", "v2", c.RV(), nil)
				p := k.Patch("a", "", MergePatch, nil, map[string]any{
					"metadata": map[string]any{"resourceVersion": c.RV()}, "data": map[string]any{kt.ValueKey: "v3"}})
				// Refused: kube-apiserver v1.36.3 answers 422 Invalid
				// (metadata.uid is immutable), not a precondition's 409;
				// the API names neither, so either passes and the
				// transcripts compare the code.
				k.Expect(p.Code).To(BeElementOf(http.StatusConflict, http.StatusUnprocessableEntity), "%s %s", p.Reason, p.Message)
				g := k.Get("a", nil)
				k.Expect(g.Value()).To(Equal("v2"))
				k.Expect(g.RV()).To(Equal(u.RV()))
				p = k.Patch("a", "", MergePatch, nil, map[string]any{
					"metadata": map[string]any{"resourceVersion": u.RV()}, "data": map[string]any{kt.ValueKey: "v3"}})
				k.Expect(p.Code).To(Equal(http.StatusOK), "the current resourceVersion holds: %s %s", p.Reason, p.Message)
				k.Expect(p.Value()).To(Equal("v3"))
			}),
		kp("kube-patch/stale-uid", "a patch carrying another object's metadata.uid is applied",
			[]string{kube.NameOptimisticConcurrency}, func(k *K) {
				old := k.Create("a", "v1", nil)
				k.Expect(k.Delete("a", nil).Code).To(Equal(http.StatusOK))
				c := k.Create("a", "v2", nil)
				p := k.Patch("a", "", MergePatch, nil, map[string]any{
					"metadata": map[string]any{"uid": old.Metadata.UID}, "data": map[string]any{kt.ValueKey: "v3"}})
				// Refused: kube-apiserver v1.36.3 answers 422 Invalid
				// (metadata.uid is immutable), not a precondition's 409;
				// the API names neither, so either passes and the
				// transcripts compare the code.
				k.Expect(p.Code).To(BeElementOf(http.StatusConflict, http.StatusUnprocessableEntity), "%s %s", p.Reason, p.Message)
				g := k.Get("a", nil)
				k.Expect(g.Value()).To(Equal("v2"))
				k.Expect(g.RV()).To(Equal(c.RV()))
			}),
	}
}

func applyProbes() []Probe {
	return []Probe{
		kp("kube-apply/create", "a server-side apply of a missing object does not create it with 201, owned by its field manager",
			nil, func(k *K) {
				a := k.Apply("a", "mgr-a", false, k.applied("a", "v1"))
				k.Expect(a.Code).To(Equal(http.StatusCreated), "%s %s", a.Reason, a.Message)
				k.Expect(a.Value()).To(Equal("v1"))
				k.Expect(a.Managers()).To(Equal([]string{"mgr-a:Apply"}))
				g := k.Get("a", nil)
				k.Expect(g.Value()).To(Equal("v1"))
				k.Expect(g.RV()).To(Equal(a.RV()))
			}),
		kp("kube-apply/update", "a server-side apply by the owner does not change the object, or an apply that changes nothing makes a new version",
			nil, func(k *K) {
				a := k.Apply("a", "mgr-a", false, k.applied("a", "v1"))
				k.Expect(a.Code).To(Equal(http.StatusCreated), "%s %s", a.Reason, a.Message)
				u := k.Apply("a", "mgr-a", false, k.applied("a", "v2"))
				k.Expect(u.Code).To(Equal(http.StatusOK), "%s %s", u.Reason, u.Message)
				k.Expect(u.Value()).To(Equal("v2"))
				k.Expect(k.RVNum(u.RV())).To(BeNumerically(">", k.RVNum(a.RV())))
				same := k.Apply("a", "mgr-a", false, k.applied("a", "v2"))
				k.Expect(same.Code).To(Equal(http.StatusOK), "%s %s", same.Reason, same.Message)
				k.Expect(same.RV()).To(Equal(u.RV()), "the same apply again changes nothing: no new version")
				k.Expect(k.Get("a", nil).Value()).To(Equal("v2"))
			}),
		kp("kube-apply/conflict", "an apply of a field another manager owns is not refused with 409 and FieldManagerConflict causes naming the field",
			[]string{kube.NameOptimisticConcurrency}, func(k *K) {
				a := k.Apply("a", "mgr-a", false, k.applied("a", "v1"))
				k.Expect(a.Code).To(Equal(http.StatusCreated), "%s %s", a.Reason, a.Message)
				b := k.Apply("a", "mgr-b", false, k.applied("a", "v2"))
				k.Expect(b.Code).To(Equal(http.StatusConflict), "%s %s", b.Reason, b.Message)
				k.Expect(b.Reason).To(Equal("Conflict"))
				k.Expect(b.CauseFields()).To(Equal([]string{"FieldManagerConflict .data.value"}))
				g := k.Get("a", nil)
				k.Expect(g.Value()).To(Equal("v1"), "the refused apply changed nothing")
				k.Expect(g.RV()).To(Equal(a.RV()))
				k.Expect(g.Managers()).To(Equal([]string{"mgr-a:Apply"}))
			}),
		kp("kube-apply/force", "an apply with force does not take the field from its owner, or the old owner can still apply it without force",
			[]string{kube.NameOptimisticConcurrency}, func(k *K) {
				a := k.Apply("a", "mgr-a", false, k.applied("a", "v1"))
				k.Expect(a.Code).To(Equal(http.StatusCreated), "%s %s", a.Reason, a.Message)
				b := k.Apply("a", "mgr-b", true, k.applied("a", "v2"))
				k.Expect(b.Code).To(Equal(http.StatusOK), "%s %s", b.Reason, b.Message)
				k.Expect(b.Value()).To(Equal("v2"))
				k.Expect(b.Managers()).To(Equal([]string{"mgr-b:Apply"}), "mgr-a owned nothing else: its entry is gone")
				back := k.Apply("a", "mgr-a", false, k.applied("a", "v1"))
				k.Expect(back.Code).To(Equal(http.StatusConflict), "mgr-b owns the field now: %s %s", back.Reason, back.Message)
				k.Expect(back.CauseFields()).To(Equal([]string{"FieldManagerConflict .data.value"}))
				k.Expect(k.Get("a", nil).Value()).To(Equal("v2"))
			}),
	}
}

func collectionProbes() []Probe {
	return []Probe{
		kp("kube-write/delete-collection", "a delete-collection by label selector does not delete exactly the matching objects, each with its own DELETED at its own resourceVersion",
			[]string{kube.NameWatchDeletedRV, kube.NameWatchSelector}, func(k *K) {
				k.Create("a", "v1", labelsX)
				k.Create("b", "v1", labelsX)
				c := k.Create("c", "v1", labelsY)
				w := k.Watch(Q("resourceVersion", c.RV()))
				defer w.Close()
				d := k.Call("DELETECOLLECTION", http.MethodDelete, "", Q("labelSelector", "app=x"), nil)
				k.Expect(d.Code).To(Equal(http.StatusOK), "%s %s", d.Reason, d.Message)
				k.Expect(d.Names()).To(ConsistOf("a", "b"), "the answer lists the deleted objects")
				seen := map[string]int64{}
				last := k.RVNum(c.RV())
				for range 2 {
					ev := w.Expect("DELETED", "")
					rv := k.RVNum(ev.Object.RV())
					k.Expect(rv).To(BeNumerically(">", last), "each DELETED at its own, later resourceVersion")
					last = rv
					seen[ev.Object.Metadata.Name] = rv
				}
				k.Expect(seen).To(HaveKey("a"))
				k.Expect(seen).To(HaveKey("b"))
				w.Fence("fence")
				k.Expect(k.List(nil).Names()).To(Equal([]string{"c", "fence"}), "only the matching objects are gone")
			}),
		kp("kube-write/generate-name", "a create with generateName does not make a new name from the prefix, or gives two creates the same name",
			nil, func(k *K) {
				body := func() map[string]any {
					return map[string]any{"apiVersion": apiVersionOf(k.Res), "kind": k.Res.Kind,
						"metadata": map[string]any{"generateName": "gen-"}, "data": map[string]string{kt.ValueKey: "v1"}}
				}
				a := k.Call("CREATE", http.MethodPost, "", nil, body())
				k.Expect(a.Code).To(Equal(http.StatusCreated), "%s %s", a.Reason, a.Message)
				k.Expect(a.Metadata.Name).To(HavePrefix("gen-"))
				k.Expect(len(a.Metadata.Name)).To(BeNumerically(">", len("gen-")), "a suffix is added")
				k.Expect(a.Metadata.GenerateName).To(Equal("gen-"))
				b := k.Call("CREATE", http.MethodPost, "", nil, body())
				k.Expect(b.Code).To(Equal(http.StatusCreated), "%s %s", b.Reason, b.Message)
				k.Expect(b.Metadata.Name).NotTo(Equal(a.Metadata.Name))
				g := k.Get(a.Metadata.Name, nil)
				k.Expect(g.Code).To(Equal(http.StatusOK))
				k.Expect(g.Metadata.UID).To(Equal(a.Metadata.UID))
			}),
	}
}

// withFinalizer is a create body holding the probe's finalizer.
func (k *K) withFinalizer(name, value string) map[string]any {
	o := k.Obj(name, value, "", nil)
	o["metadata"].(map[string]any)["finalizers"] = []string{holdFinalizer}
	return o
}

func finalizerProbes() []Probe {
	return []Probe{
		kp("kube-finalizer/delete-marks", "a delete of an object with a finalizer removes it, or does not mark it with a deletionTimestamp seen by get and watch",
			[]string{kube.NameWatchAgreement}, func(k *K) {
				c := k.Call("CREATE", http.MethodPost, "", nil, k.withFinalizer("a", "v1"))
				k.Expect(c.Code).To(Equal(http.StatusCreated), "%s %s", c.Reason, c.Message)
				w := k.Watch(Q("resourceVersion", c.RV()))
				defer w.Close()
				d := k.Delete("a", nil)
				k.Expect(d.Code).To(Equal(http.StatusOK), "%s %s", d.Reason, d.Message)
				k.Expect(d.Metadata.DeletionTimestamp).NotTo(BeEmpty(), "the answer is the object, marked")
				ev := w.Expect("MODIFIED", "a")
				k.Expect(ev.Object.Metadata.DeletionTimestamp).NotTo(BeEmpty())
				k.Expect(ev.Object.Metadata.Finalizers).To(Equal([]string{holdFinalizer}))
				k.Expect(ev.Object.RV()).To(Equal(d.RV()))
				g := k.Get("a", nil)
				k.Expect(g.Code).To(Equal(http.StatusOK), "the object stays until its last finalizer is gone")
				k.Expect(g.Metadata.DeletionTimestamp).NotTo(BeEmpty())
				k.Expect(g.RV()).To(Equal(d.RV()))
				w.Fence("fence")
				// Let the namespace go: remove the finalizer.
				u := k.Call("UPDATE", http.MethodPut, "a", nil, k.Obj("a", "v1", g.RV(), nil))
				k.Expect(u.Code).To(Equal(http.StatusOK), "%s %s", u.Reason, u.Message)
			}),
		kp("kube-finalizer/remove-deletes", "an update removing the last finalizer of an object being deleted does not delete it, with one DELETED",
			[]string{kube.NameWatchDeletedRV}, func(k *K) {
				c := k.Call("CREATE", http.MethodPost, "", nil, k.withFinalizer("a", "v1"))
				k.Expect(c.Code).To(Equal(http.StatusCreated), "%s %s", c.Reason, c.Message)
				d := k.Delete("a", nil)
				k.Expect(d.Code).To(Equal(http.StatusOK), "%s %s", d.Reason, d.Message)
				w := k.Watch(Q("resourceVersion", d.RV()))
				defer w.Close()
				u := k.Call("UPDATE", http.MethodPut, "a", nil, k.Obj("a", "v1", d.RV(), nil))
				k.Expect(u.Code).To(Equal(http.StatusOK), "%s %s", u.Reason, u.Message)
				ev := w.Expect("DELETED", "a")
				k.Expect(k.RVNum(ev.Object.RV())).To(BeNumerically(">", k.RVNum(d.RV())))
				// The update's answer is the object without its finalizer;
				// its resourceVersion is not the deletion's (kube-apiserver
				// v1.36.3 answers the version it read), which the API does not
				// define: the transcripts compare it.
				k.Expect(u.Metadata.Finalizers).To(BeEmpty())
				k.Expect(k.Get("a", nil).Code).To(Equal(http.StatusNotFound))
				w.Fence("fence")
			}),
	}
}

// dryRun is the query of a dry run.
func dryRun() url.Values { return Q("dryRun", "All") }

// noTrace: after dry runs, a is still at rv with value, and a watch from
// w0 sees nothing before a fence.
func noTrace(k *K, w *KWatch, rv, value string) {
	g := k.Get("a", nil)
	k.Expect(g.Code).To(Equal(http.StatusOK))
	k.Expect(g.RV()).To(Equal(rv), "a dry run moved the resourceVersion")
	k.Expect(g.Value()).To(Equal(value), "a dry run changed the object")
	k.Expect(k.List(nil).Names()).To(Equal([]string{"a"}), "a dry run shows in a list")
	w.Fence("fence")
}

func dryRunProbes() []Probe {
	return []Probe{
		kp("kube-dryrun/create", "a dry-run create leaves a trace in a get, list or watch",
			nil, func(k *K) {
				a := k.Create("a", "v1", nil)
				w := k.Watch(Q("resourceVersion", a.RV()))
				defer w.Close()
				r := k.Call("CREATE", http.MethodPost, "", dryRun(), k.Obj("b", "v1", "", nil))
				k.Expect(r.Code).To(Equal(http.StatusCreated), "answered as if created: %s %s", r.Reason, r.Message)
				k.Expect(r.Metadata.Name).To(Equal("b"))
				k.Expect(k.Get("b", nil).Code).To(Equal(http.StatusNotFound))
				noTrace(k, w, a.RV(), "v1")
			}),
		kp("kube-dryrun/update", "a dry-run update leaves a trace in a get, list or watch",
			nil, func(k *K) {
				a := k.Create("a", "v1", nil)
				w := k.Watch(Q("resourceVersion", a.RV()))
				defer w.Close()
				r := k.Call("UPDATE", http.MethodPut, "a", dryRun(), k.Obj("a", "v2", a.RV(), nil))
				k.Expect(r.Code).To(Equal(http.StatusOK), "%s %s", r.Reason, r.Message)
				k.Expect(r.Value()).To(Equal("v2"), "answered as if updated")
				noTrace(k, w, a.RV(), "v1")
			}),
		kp("kube-dryrun/patch", "a dry-run patch leaves a trace in a get, list or watch",
			nil, func(k *K) {
				a := k.Create("a", "v1", nil)
				w := k.Watch(Q("resourceVersion", a.RV()))
				defer w.Close()
				r := k.Patch("a", "", MergePatch, dryRun(), map[string]any{"data": map[string]any{kt.ValueKey: "v2"}})
				k.Expect(r.Code).To(Equal(http.StatusOK), "%s %s", r.Reason, r.Message)
				k.Expect(r.Value()).To(Equal("v2"), "answered as if patched")
				noTrace(k, w, a.RV(), "v1")
			}),
		kp("kube-dryrun/delete", "a dry-run delete leaves a trace in a get, list or watch",
			nil, func(k *K) {
				a := k.Create("a", "v1", nil)
				w := k.Watch(Q("resourceVersion", a.RV()))
				defer w.Close()
				r := k.Call("DELETE", http.MethodDelete, "a", dryRun(), nil)
				k.Expect(r.Code).To(Equal(http.StatusOK), "%s %s", r.Reason, r.Message)
				noTrace(k, w, a.RV(), "v1")
			}),
	}
}

// statusObj is a body for the custom resource with data and status.
func (k *K) statusObj(name, value, status, rv string) map[string]any {
	o := k.Obj(name, value, rv, nil)
	o["status"] = map[string]string{"phase": status}
	return o
}

// customOnly marks probes that run on custom resources only.
func customOnly(ps ...Probe) []Probe {
	for i := range ps {
		ps[i].CustomOnly = true
	}
	return ps
}

// The status subresource is the custom resource's: ConfigMaps have none.
func statusProbes() []Probe {
	return customOnly(
		kp("kube-status/status-write", "a write to the status subresource changes the object's data or generation, or not its status",
			nil, func(k *K) {
				c := k.Call("CREATE", http.MethodPost, "", nil, k.statusObj("a", "v1", "born", ""))
				k.Expect(c.Code).To(Equal(http.StatusCreated), "%s %s", c.Reason, c.Message)
				k.Expect(c.ObjStatus()).To(BeEmpty(), "a create sets no status where the status subresource is served")
				k.Expect(c.Metadata.Generation).To(BeEquivalentTo(1))
				s := k.Send(Req{Verb: "UPDATE", Method: http.MethodPut, Name: "a", Sub: "status", Body: k.statusObj("a", "v2", "ready", c.RV())})
				k.Expect(s.Code).To(Equal(http.StatusOK), "%s %s", s.Reason, s.Message)
				k.Expect(s.ObjStatus()).To(Equal(map[string]string{"phase": "ready"}))
				k.Expect(s.Value()).To(Equal("v1"), "a status write leaves data alone")
				k.Expect(s.Metadata.Generation).To(BeEquivalentTo(1), "generation moves only with data")
				k.Expect(k.RVNum(s.RV())).To(BeNumerically(">", k.RVNum(c.RV())))
				p := k.Patch("a", "status", MergePatch, nil, map[string]any{"status": map[string]any{"phase": "done"}, "data": map[string]any{kt.ValueKey: "v3"}})
				k.Expect(p.Code).To(Equal(http.StatusOK), "%s %s", p.Reason, p.Message)
				k.Expect(p.ObjStatus()).To(Equal(map[string]string{"phase": "done"}))
				k.Expect(p.Value()).To(Equal("v1"))
				k.Expect(p.Metadata.Generation).To(BeEquivalentTo(1))
				g := k.Get("a", nil)
				k.Expect(g.Value()).To(Equal("v1"))
				k.Expect(g.ObjStatus()).To(Equal(map[string]string{"phase": "done"}))
				k.Expect(g.RV()).To(Equal(p.RV()))
			}),
		kp("kube-status/data-write", "a write of the object changes its status, or does not move its generation",
			nil, func(k *K) {
				c := k.Create("a", "v1", nil)
				s := k.Patch("a", "status", MergePatch, nil, map[string]any{"status": map[string]any{"phase": "ready"}})
				k.Expect(s.Code).To(Equal(http.StatusOK), "%s %s", s.Reason, s.Message)
				k.Expect(s.ObjStatus()).To(Equal(map[string]string{"phase": "ready"}))
				u := k.Call("UPDATE", http.MethodPut, "a", nil, k.statusObj("a", "v2", "lost", s.RV()))
				k.Expect(u.Code).To(Equal(http.StatusOK), "%s %s", u.Reason, u.Message)
				k.Expect(u.Value()).To(Equal("v2"))
				k.Expect(u.ObjStatus()).To(Equal(map[string]string{"phase": "ready"}), "a write of the object leaves status alone")
				k.Expect(u.Metadata.Generation).To(Equal(c.Metadata.Generation+1), "generation moves with data")
				m := k.Call("UPDATE", http.MethodPut, "a", nil, k.statusObj("a", "v2", "lost", u.RV()))
				k.Expect(m.Code).To(Equal(http.StatusOK), "%s %s", m.Reason, m.Message)
				k.Expect(m.RV()).To(Equal(u.RV()), "a write that changes only status, through the object, changes nothing")
				k.Expect(m.Metadata.Generation).To(Equal(u.Metadata.Generation))
				g := k.Get("a", nil)
				k.Expect(g.ObjStatus()).To(Equal(map[string]string{"phase": "ready"}))
				k.Expect(g.Value()).To(Equal("v2"))
			}),
	)
}
