package selftest

import (
	"fmt"
	"strings"

	"github.com/vigil-suite/vigil/checkers/kube"
	"github.com/vigil-suite/vigil/checkers/kube/model"
	"github.com/vigil-suite/vigil/history"
)

// The corruptions of the write paths of history format 5, owned by
// kube/write-paths. A run recorded before format 5 gives them no place.
func kubeWriteKinds() []Kind {
	return []Kind{
		{Name: "kube-dry-run-seen", Owner: kube.NameWritePaths, sites: dryRunThenGet, apply: dryRunSeen},
		{Name: "kube-patch-drops-labels", Owner: kube.NameWritePaths, sites: labelKeepingPatches, apply: patchDropsLabels,
			argue: stateBeforeUnsettled},
		{Name: "kube-status-write-moves-data", Owner: kube.NameWritePaths, sites: statusWrites, apply: statusMovesData,
			argue: stateBeforeUnsettled},
		{Name: "kube-forced-apply-conflict", Owner: kube.NameWritePaths, sites: forcedApplies, apply: forcedApplyConflict},
		{Name: "kube-patch-not-applied", Owner: kube.NameWritePaths, sites: patchesWithValue, apply: patchAnswersOld},
		{Name: "kube-status-write-bumps-generation", Owner: kube.NameWritePaths, sites: statusWritesWithGeneration,
			apply: statusBumpsGeneration, argue: stateBeforeUnsettled},
		{Name: "kube-generated-name-without-prefix", Owner: kube.NameWritePaths, sites: generatedNames, apply: generatedNameWithoutPrefix},
		{Name: "kube-delete-collection-beyond-selector", Owner: kube.NameWritePaths, sites: selectedCollections,
			apply: collectionBeyondSelector},
		{Name: "kube-finalized-object-deleted", Owner: kube.NameWritePaths, sites: marks, apply: finalizedDeleted,
			argue: stateBeforeUnsettled},
	}
}

// dryRunThenGet pairs each answered dry-run write that set a value with
// an answered get of the same object called after it returned.
func dryRunThenGet(h *history.History) []site {
	var out []site
	for i := range h.KubeOps {
		d := &h.KubeOps[i]
		if !d.Request.DryRun || d.Response == nil || d.Request.Object == nil || d.Request.Object.Value == "" {
			continue
		}
		for j := range h.KubeOps {
			g := &h.KubeOps[j]
			if g.Request.Verb == history.KubeGet && g.Response != nil && g.Response.Object != nil &&
				g.Response.Object.Name == model.OpName(d) && g.Call > d.Return {
				out = append(out, site{op: i, kv: j})
				break
			}
		}
	}
	return out
}

// dryRunSeen makes the get show the dry run's value, as a server that
// wrote the dry run would.
func dryRunSeen(h *history.History, s site) string {
	d := &h.KubeOps[s.op]
	g := mutableKubeOp(h, s.kv)
	obj := *g.Response.Object
	obj.Value = d.Request.Object.Value
	g.Response.Object = &obj
	return fmt.Sprintf("kube operation %d: get of %s shows value %q, which only dry run %d wrote", g.ID, obj.Name, obj.Value, d.ID)
}

// labelKeepingPatches are acknowledged patches of the object's data (not
// applies) that set no labels, whose answer has labels.
func labelKeepingPatches(h *history.History) []site {
	return kubeOpsWhere(func(o *history.KubeOperation) bool {
		return answeredDataPatch(o) && !model.SetsLabels(o) && len(o.Response.Object.Labels) > 0
	})(h)
}

func patchDropsLabels(h *history.History, s site) string {
	o := mutableKubeOp(h, s.op)
	obj := *o.Response.Object
	obj.Labels = map[string]string{"vigil.dev/corrupt": "1"}
	o.Response.Object = &obj
	return fmt.Sprintf("kube operation %d: a patch that set no labels answered %s with labels %v", o.ID, obj.Name, obj.Labels)
}

// statusWrites are acknowledged writes of the status subresource.
func statusWrites(h *history.History) []site {
	return kubeOpsWhere(func(o *history.KubeOperation) bool {
		return model.IsStatusWrite(o) && !o.Request.DryRun && o.Response != nil && o.Response.Object != nil
	})(h)
}

func statusMovesData(h *history.History, s site) string {
	o := mutableKubeOp(h, s.op)
	obj := *o.Response.Object
	obj.Value += "-moved"
	o.Response.Object = &obj
	return fmt.Sprintf("kube operation %d: a status write answered %s with data %q", o.ID, obj.Name, obj.Value)
}

// stateBeforeUnsettled: kube/write-paths judges what a write left alone
// only against a state the history settles just below it.
func stateBeforeUnsettled(h *history.History, s site) string {
	o := &h.KubeOps[s.op]
	m := model.Build(h)
	ob := m.Objs[model.OpName(o)]
	rv := model.ObjRV(o.Response.Object)
	if ob == nil || rv == 0 {
		return "the write is at no RV the model knows"
	}
	prev := ob.At(rv - 1)
	if prev == nil || !prev.Exists() || !prev.HasObj || !ob.Settled(prev.Rv, rv-1, true) {
		return fmt.Sprintf("kube operation %d: the state it was applied to is not settled by the history", o.ID)
	}
	return ""
}

// forcedApplies are acknowledged server-side applies with force.
func forcedApplies(h *history.History) []site {
	return kubeOpsWhere(func(o *history.KubeOperation) bool {
		return model.IsApply(o) && o.Request.Force && o.Response != nil
	})(h)
}

func forcedApplyConflict(h *history.History, s site) string {
	o := mutableKubeOp(h, s.op)
	o.Response = nil
	o.Status = &history.KubeStatus{Code: 409, Reason: "Conflict", Causes: []string{"FieldManagerConflict"}, Fields: []string{".data.value"}}
	return fmt.Sprintf("kube operation %d: a forced apply answered 409 FieldManagerConflict (%s)", o.ID,
		strings.Join(o.Status.Fields, ", "))
}

// patchesWithValue are acknowledged JSON, merge or strategic patches of
// the object's data that set a value.
func patchesWithValue(h *history.History) []site {
	return kubeOpsWhere(func(o *history.KubeOperation) bool {
		return answeredDataPatch(o) && o.Request.Object != nil && o.Request.Object.Value != ""
	})(h)
}

// patchAnswersOld answers a patch with the object as it was: a server that
// acknowledged a patch it did not apply.
func patchAnswersOld(h *history.History, s site) string {
	o := mutableKubeOp(h, s.op)
	obj := *o.Response.Object
	obj.Value = o.Request.Object.Value + "-not-applied"
	o.Response.Object = &obj
	return fmt.Sprintf("kube operation %d: a patch setting %q answered %s with %q", o.ID, o.Request.Object.Value, obj.Name, obj.Value)
}

// statusWritesWithGeneration are status writes answered with a generation.
func statusWritesWithGeneration(h *history.History) []site {
	var out []site
	for _, s := range statusWrites(h) {
		if h.KubeOps[s.op].Response.Object.Generation > 0 {
			out = append(out, s)
		}
	}
	return out
}

func statusBumpsGeneration(h *history.History, s site) string {
	o := mutableKubeOp(h, s.op)
	obj := *o.Response.Object
	obj.Generation++
	o.Response.Object = &obj
	return fmt.Sprintf("kube operation %d: a status write answered %s at generation %d", o.ID, obj.Name, obj.Generation)
}

// generatedNames are acknowledged creates with generateName.
func generatedNames(h *history.History) []site {
	return kubeOpsWhere(func(o *history.KubeOperation) bool {
		r := o.Request
		return r.Verb == history.KubeCreate && !r.DryRun && r.Object != nil && r.Object.GenerateName != "" &&
			r.Object.Name == "" && o.Response != nil && o.Response.Object != nil
	})(h)
}

func generatedNameWithoutPrefix(h *history.History, s site) string {
	o := mutableKubeOp(h, s.op)
	obj := *o.Response.Object
	obj.Name = "x" + obj.Name
	o.Response.Object = &obj
	return fmt.Sprintf("kube operation %d: generateName %q answered with the name %q", o.ID, o.Request.Object.GenerateName, obj.Name)
}

// selectedCollections are acknowledged delete-collections by label.
func selectedCollections(h *history.History) []site {
	return kubeOpsWhere(func(o *history.KubeOperation) bool {
		r := o.Request
		return r.Verb == history.KubeDeleteCollection && !r.DryRun && r.LabelSelector != "" && o.Response != nil && len(o.Response.Items) > 0
	})(h)
}

// collectionBeyondSelector answers a delete-collection with one more
// object, one its selector does not pick.
func collectionBeyondSelector(h *history.History, s site) string {
	o := mutableKubeOp(h, s.op)
	stray := o.Response.Items[0]
	stray.Name, stray.Labels = stray.Name+"-stray", map[string]string{"vigil.dev/stray": "1"}
	o.Response.Items = append(o.Response.Items, stray)
	return fmt.Sprintf("kube operation %d: delete-collection (%s) also deleted %s, which it does not pick", o.ID,
		o.Request.LabelSelector, stray.Name)
}

// marks are deletes answered with the object marked for deletion (it has
// finalizers), paired with the MODIFIED event of a watch at that RV.
func marks(h *history.History) []site {
	var out []site
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Request.Verb != history.KubeDelete || o.Request.DryRun || o.Response == nil || o.Response.Object == nil ||
			o.Response.Object.DeletionTimestamp == "" || len(o.Response.Object.Finalizers) == 0 {
			continue
		}
		for wi, w := range h.KubeWatches {
			for ei, e := range w.Events {
				if e.Type == history.KubeModified && e.Object != nil && e.Object.Name == o.Response.Object.Name &&
					e.Object.ResourceVersion == o.Response.Object.ResourceVersion {
					out = append(out, site{op: i, watch: wi, ev: ei})
				}
			}
		}
	}
	return out
}

// finalizedDeleted deletes an object with finalizers outright: the delete
// answers a Status, and the watch delivers DELETED at the mark's RV.
func finalizedDeleted(h *history.History, s site) string {
	o := mutableKubeOp(h, s.op)
	name, rv := o.Response.Object.Name, o.Response.Object.ResourceVersion
	o.Response = &history.KubeResponse{Code: 200}
	w, e := mutableKubeEvent(h, s.watch, s.ev)
	e.Type = history.KubeDeleted
	e.Object.DeletionTimestamp = ""
	return fmt.Sprintf("kube operation %d deleted %s, which has finalizers, outright: watch %d delivers DELETED at RV %s",
		o.ID, name, w.ID, rv)
}

// kubeOpsWhere is opsWhere for the Kubernetes operations.
func kubeOpsWhere(keep func(o *history.KubeOperation) bool) func(h *history.History) []site {
	return where(func(h *history.History) []history.KubeOperation { return h.KubeOps }, keep)
}

// answeredDataPatch: an acknowledged patch of the object's data, not a
// dry run, an apply or a status write, answered with the object.
func answeredDataPatch(o *history.KubeOperation) bool {
	r := o.Request
	return r.Verb == history.KubePatch && !r.DryRun && r.PatchType != history.PatchApply && !model.IsStatusWrite(o) &&
		o.Response != nil && o.Response.Object != nil
}
