package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets/kube"
)

// The write paths controllers, kubectl and kubelets use beyond create,
// update and delete: patches in four types (server-side apply with two
// field managers, so they conflict, and force), preconditions inside a
// patch, unconditional updates, generateName, finalizers, delete-
// collection, dryRun=All, the status subresource, and reads and watches
// by fieldSelector. Each patch sets a unique value, as updates do, and
// its request's Object says what it sets (history.KubeRequest).

// Finalizer vigil puts on objects; nothing but vigil removes it.
const kubeFinalizer = "vigil.dev/hold"

// Labels of the delete-collection batches.
const kubeBatchLabel = "vigil-batch"

// custom reports whether the resource is a custom one: it has the status
// subresource and refuses strategic merge patches (415).
func (w *KubeWorkload) custom() bool { return w.cfg.Resource.Group != "" }

// KubeForms lists the verbs and options (history.KubeForms) the workload
// sends: every one, but strategic merge on a custom resource and the
// status subresource on a built-in one.
func (c KubeConfig) KubeForms() []string {
	custom := c.Resource.Group != ""
	out := []string{"create", "create.name=generate", "create.finalizers", "create.dryRun",
		"get", "list", "list.selector=field",
		"update", "update.rv=conditional", "update.rv=unconditional", "update.dryRun",
		"patch", "patch.type=json", "patch.type=merge", "patch.type=apply", "patch.force",
		"patch.precondition=rv", "patch.precondition=uid", "patch.finalizers", "patch.dryRun",
		"delete", "delete.precondition=rv", "delete.precondition=uid", "delete.dryRun",
		"deletecollection", "deletecollection.selector=label", "deletecollection.selector=field", "deletecollection.dryRun"}
	if custom {
		out = append(out, "get.subresource=status", "update.subresource=status", "patch.subresource=status")
	} else {
		out = append(out, "patch.type=strategic")
	}
	if c.Readers > 0 {
		out = append(out, "watch", "watch.selector=field")
	}
	return out
}

func (wr *kubeWriter) statusValue() string {
	wr.seq++
	return fmt.Sprintf("st:%d.%d", wr.c.ID(), wr.seq)
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// patchTypes are the types the resource takes.
func (wr *kubeWriter) patchTypes() []string {
	if wr.w.custom() {
		return []string{history.PatchJSON, history.PatchMerge}
	}
	return []string{history.PatchJSON, history.PatchMerge, history.PatchStrategic}
}

// patchReq builds a patch of name's data value in type t (json, merge or
// strategic; apply is applyReq), with cur's group label carried or
// flipped (merge and strategic) and preconditions rv and uid in the body
// when not empty.
func (wr *kubeWriter) patchReq(t, name string, cur *history.Object, rv, uid string) history.KubeRequest {
	obj := &history.Object{Name: name, Value: wr.value(), ResourceVersion: rv, UID: uid}
	req := history.KubeRequest{Verb: history.KubePatch, Name: name, PatchType: t, Object: obj}
	if t == history.PatchJSON {
		var ops []map[string]any
		if rv != "" {
			ops = append(ops, map[string]any{"op": "replace", "path": "/metadata/resourceVersion", "value": rv})
		}
		if uid != "" {
			ops = append(ops, map[string]any{"op": "replace", "path": "/metadata/uid", "value": uid})
		}
		// add: sets the value whether or not the object has one.
		ops = append(ops, map[string]any{"op": "add", "path": "/data", "value": map[string]string{kube.ValueKey: obj.Value}})
		req.Patch = jsonText(ops)
		return req
	}
	meta := map[string]any{}
	if cur != nil && wr.rng.IntN(3) == 0 {
		obj.Labels = wr.labels(cur)
		meta["labels"] = obj.Labels
	}
	if rv != "" {
		meta["resourceVersion"] = rv
	}
	if uid != "" {
		meta["uid"] = uid
	}
	body := map[string]any{"data": map[string]string{kube.ValueKey: obj.Value}}
	if len(meta) > 0 {
		body["metadata"] = meta
	}
	req.Patch = jsonText(body)
	return req
}

// applyReq is a server-side apply of name's data value by manager, forced
// when force. Two managers apply the same field, so an apply that is not
// forced meets a conflict (409, FieldManagerConflict) when the other
// manager, or an update, set it last.
func (wr *kubeWriter) applyReq(name, manager string, force bool) history.KubeRequest {
	r := wr.w.cfg.Resource
	obj := &history.Object{Name: name, Value: wr.value()}
	body := map[string]any{"apiVersion": r.APIVersion(), "kind": r.Kind, "metadata": map[string]any{"name": name},
		"data": map[string]string{kube.ValueKey: obj.Value}}
	return history.KubeRequest{Verb: history.KubePatch, Name: name, PatchType: history.PatchApply, Object: obj,
		Patch: jsonText(body), FieldManager: manager, Force: force}
}

// manager is the writer's field manager: writers alternate between two.
func (wr *kubeWriter) manager() string {
	return [2]string{"vigil-apply-a", "vigil-apply-b"}[wr.index%2]
}

// patch reads the object (mostly), then patches its value in one of the
// types; a third of them carry a precondition, fresh or stale: a patch
// that sets a stale resourceVersion or uid must be refused with 409.
func (wr *kubeWriter) patch(ctx context.Context, name string) {
	types := wr.patchTypes()
	t := types[wr.rng.IntN(len(types))]
	cur := wr.seen[name]
	if cur == nil || wr.rng.IntN(2) == 0 {
		var err error
		if cur, err = wr.get(ctx, name); err != nil || cur == nil {
			return
		}
	}
	var rv, uid string
	switch wr.rng.IntN(6) {
	case 0:
		rv = cur.ResourceVersion // fresh if nothing wrote since, else 409
	case 1:
		uid = cur.UID
	case 2:
		// Stale for sure: patch once, then again with the RV from before.
		if wr.sendPatch(ctx, wr.patchReq(t, name, cur, "", "")) == nil {
			rv = cur.ResourceVersion
		}
	case 3:
		if old, ok := wr.oldUIDs[name]; ok {
			uid = old // an earlier incarnation's: 409
		}
	}
	wr.sendPatch(ctx, wr.patchReq(t, name, cur, rv, uid))
}

func (wr *kubeWriter) sendPatch(ctx context.Context, req history.KubeRequest) error {
	resp, err := wr.w.do(ctx, wr.c, req)
	if err == nil && !req.DryRun {
		wr.learn(resp.Object)
	} else if st := kube.StatusOf(err); st != nil && st.Code == 404 {
		wr.forget(req.Name)
	}
	return err
}

// apply applies the writer's value with its manager; a third are forced,
// and an apply refused for a conflict is sent again forced, now and then,
// as kubectl apply --force-conflicts would.
func (wr *kubeWriter) apply(ctx context.Context, name string) {
	force := wr.rng.IntN(3) == 0
	err := wr.sendPatch(ctx, wr.applyReq(name, wr.manager(), force))
	if st := kube.StatusOf(err); !force && st != nil && st.Code == 409 && wr.rng.IntN(2) == 0 {
		wr.sendPatch(ctx, wr.applyReq(name, wr.manager(), true))
	}
}

// unconditionalUpdate writes the object with no resourceVersion: the
// server takes it over whatever is there (last write wins).
func (wr *kubeWriter) unconditionalUpdate(ctx context.Context, name string) {
	cur := wr.seen[name]
	if cur == nil {
		var err error
		if cur, err = wr.get(ctx, name); err != nil || cur == nil {
			return
		}
	}
	obj := &history.Object{Name: name, Value: wr.value(), Labels: wr.labels(cur)}
	resp, err := wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeUpdate, Name: name, Object: obj})
	if err == nil {
		wr.learn(resp.Object)
	} else if st := kube.StatusOf(err); st != nil && st.Code == 404 {
		wr.forget(name)
	}
}

// createGenerated creates an object the server names (generateName), and
// deletes the oldest of the writer's once it holds more than three.
func (wr *kubeWriter) createGenerated(ctx context.Context) {
	obj := &history.Object{GenerateName: fmt.Sprintf("g-%d-", wr.c.ID()), Value: wr.value(), Labels: wr.labels(nil)}
	resp, err := wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeCreate, Object: obj})
	if err == nil && resp.Object != nil && resp.Object.Name != "" {
		wr.generated = append(wr.generated, resp.Object.Name)
	}
	if len(wr.generated) > 3 {
		name := wr.generated[0]
		wr.generated = wr.generated[1:]
		wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeDelete, Name: name})
	}
}

// finalizerCycle moves one of the writer's own objects a step through a
// finalizer's life, from what a read shows: absent, it is created holding
// the finalizer; present, it is deleted, which only marks it
// (deletionTimestamp); marked, the finalizer is removed by an update or a
// patch, which lets the delete finish.
func (wr *kubeWriter) finalizerCycle(ctx context.Context) {
	name := fmt.Sprintf("fin-%d-%d", wr.c.ID(), wr.rng.IntN(2))
	for step := 0; step < 3; step++ {
		cur, err := wr.get(ctx, name)
		if err != nil {
			return
		}
		switch {
		case cur == nil:
			obj := &history.Object{Name: name, Value: wr.value(), Labels: wr.labels(nil), Finalizers: []string{kubeFinalizer}}
			if _, err := wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeCreate, Object: obj}); err != nil {
				return
			}
		case cur.DeletionTimestamp == "":
			req := history.KubeRequest{Verb: history.KubeDelete, Name: name}
			if wr.rng.IntN(2) == 0 {
				req.PreconditionRV = cur.ResourceVersion
			}
			if _, err := wr.w.do(ctx, wr.c, req); err != nil {
				return
			}
		default:
			wr.release(ctx, cur)
			return
		}
	}
}

// release removes the finalizers of a marked object: by an update
// without them (conditional), or a merge or JSON patch.
func (wr *kubeWriter) release(ctx context.Context, cur *history.Object) {
	switch wr.rng.IntN(3) {
	case 0:
		obj := &history.Object{Name: cur.Name, ResourceVersion: cur.ResourceVersion, Value: wr.value(), Labels: cur.Labels}
		wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeUpdate, Name: cur.Name, Object: obj})
	case 1:
		obj := &history.Object{Name: cur.Name, Value: wr.value()}
		wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubePatch, Name: cur.Name, PatchType: history.PatchMerge, Object: obj,
			Patch: jsonText(map[string]any{"metadata": map[string]any{"finalizers": nil}, "data": map[string]string{kube.ValueKey: obj.Value}})})
	default:
		obj := &history.Object{Name: cur.Name, Value: wr.value(), ResourceVersion: cur.ResourceVersion}
		ops := []map[string]any{{"op": "replace", "path": "/metadata/resourceVersion", "value": cur.ResourceVersion},
			{"op": "remove", "path": "/metadata/finalizers"},
			{"op": "add", "path": "/data", "value": map[string]string{kube.ValueKey: obj.Value}}}
		wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubePatch, Name: cur.Name, PatchType: history.PatchJSON, Object: obj,
			Patch: jsonText(ops)})
	}
	wr.forget(cur.Name)
}

// deleteCollection creates a small batch under a label of its own, then
// deletes it by that label selector; now and then one of it first by a
// field selector (metadata.name) too, or a dry run first.
func (wr *kubeWriter) deleteCollection(ctx context.Context) {
	wr.batch++
	batch := fmt.Sprintf("%d-%d", wr.c.ID(), wr.batch)
	n := 2 + wr.rng.IntN(2)
	for i := 0; i < n; i++ {
		labels := wr.labels(nil)
		labels[kubeBatchLabel] = batch
		obj := &history.Object{Name: fmt.Sprintf("b-%s-%d", batch, i), Value: wr.value(), Labels: labels}
		wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeCreate, Object: obj})
	}
	sel := kubeBatchLabel + "=" + batch
	if wr.rng.IntN(3) == 0 {
		wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeDeleteCollection, LabelSelector: sel, DryRun: true})
	}
	if wr.rng.IntN(2) == 0 {
		wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeDeleteCollection, LabelSelector: sel,
			FieldSelector: "metadata.name=" + fmt.Sprintf("b-%s-0", batch)})
	}
	wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeDeleteCollection, LabelSelector: sel})
}

// dryRun sends one write verb with dryRun=All: the server answers as if
// it wrote and must change nothing anyone can see.
func (wr *kubeWriter) dryRun(ctx context.Context, name string) {
	do := func(req history.KubeRequest) {
		req.DryRun = true
		wr.w.do(ctx, wr.c, req)
	}
	cur := wr.seen[name]
	switch k := wr.rng.IntN(8); {
	case k == 0:
		do(history.KubeRequest{Verb: history.KubeCreate, Object: &history.Object{Name: name, Value: wr.value(), Labels: wr.labels(nil)}})
	case k == 1:
		do(history.KubeRequest{Verb: history.KubeCreate, Object: &history.Object{GenerateName: fmt.Sprintf("g-%d-", wr.c.ID()),
			Value: wr.value(), Labels: wr.labels(nil), Finalizers: []string{kubeFinalizer}}})
	case k == 7:
		do(history.KubeRequest{Verb: history.KubeDeleteCollection, LabelSelector: kubeGroupLabel + "=b"})
	case cur == nil:
		if c, err := wr.get(ctx, name); err == nil && c != nil {
			wr.dryRun(ctx, name)
		}
	case k == 2:
		do(history.KubeRequest{Verb: history.KubeUpdate, Name: name,
			Object: &history.Object{Name: name, ResourceVersion: cur.ResourceVersion, Value: wr.value(), Labels: wr.labels(cur)}})
	case k == 3:
		do(history.KubeRequest{Verb: history.KubeUpdate, Name: name, Object: &history.Object{Name: name, Value: wr.value(), Labels: cur.Labels}})
	case k == 4:
		types := wr.patchTypes()
		do(wr.patchReq(types[wr.rng.IntN(len(types))], name, cur, "", ""))
	case k == 5:
		do(wr.applyReq(name, wr.manager(), true))
	default:
		do(history.KubeRequest{Verb: history.KubeDelete, Name: name, PreconditionRV: cur.ResourceVersion})
	}
}

// statusWrite writes the status subresource of a custom resource: an
// update of /status with the RV read (status only; the data sent along is
// ignored by the server) or a merge or JSON patch of it, each with its
// own unique status value. On a built-in resource, a plain update.
func (wr *kubeWriter) statusWrite(ctx context.Context, name string) {
	if !wr.w.custom() {
		wr.occUpdate(ctx, name, nil)
		return
	}
	sub := history.SubresourceStatus
	dry := wr.rng.IntN(8) == 0
	switch wr.rng.IntN(3) {
	case 0:
		resp, err := wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeGet, Name: name, Subresource: sub})
		if err != nil {
			return
		}
		cur := resp.Object
		obj := &history.Object{Name: name, ResourceVersion: cur.ResourceVersion, Status: wr.statusValue()}
		wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeUpdate, Name: name, Subresource: sub, Object: obj, DryRun: dry})
	case 1:
		obj := &history.Object{Name: name, Status: wr.statusValue()}
		wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubePatch, Name: name, Subresource: sub, PatchType: history.PatchMerge,
			Object: obj, DryRun: dry, Patch: jsonText(map[string]any{"status": map[string]string{kube.ValueKey: obj.Status}})})
	default:
		obj := &history.Object{Name: name, Status: wr.statusValue()}
		ops := []map[string]any{{"op": "add", "path": "/status", "value": map[string]string{kube.ValueKey: obj.Status}}}
		wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubePatch, Name: name, Subresource: sub, PatchType: history.PatchJSON,
			Object: obj, DryRun: dry, Patch: jsonText(ops)})
	}
}

// fieldRead lists by field selector (metadata.name), or reads the status
// subresource of a custom resource.
func (wr *kubeWriter) fieldRead(ctx context.Context, name string) {
	if wr.w.custom() && wr.rng.IntN(2) == 0 {
		wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeGet, Name: name, Subresource: history.SubresourceStatus})
		return
	}
	wr.w.do(ctx, wr.c, history.KubeRequest{Verb: history.KubeList, FieldSelector: "metadata.name=" + name})
}

// fieldWatcher opens short watches by field selector (metadata.name of
// one pool object), each ended by the server's timeoutSeconds, until
// runCtx ends.
func (w *KubeWorkload) fieldWatcher(runCtx context.Context, c *kube.Recording, rngSeed string) {
	rng := seeded(w.seed, rngSeed)
	for sleepCtx(runCtx, jitter(rng, 2*time.Second)) {
		name := w.objectName(rng.IntN(w.cfg.Objects))
		req := history.KubeWatchRequest{FieldSelector: "metadata.name=" + name, TimeoutSeconds: int64(2 + rng.IntN(3)),
			AllowBookmarks: rng.IntN(2) == 0}
		ctx, cancel := context.WithTimeout(runCtx, 10*time.Second)
		rw := c.Watch(ctx, req, kube.Origin{})
		for ev := range rw.C {
			w.countEvent(ev)
		}
		cancel()
	}
}
