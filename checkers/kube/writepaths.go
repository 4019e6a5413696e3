package kube

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/kube/model"
	"github.com/vigil-suite/vigil/history"
)

// Rules of kube/write-paths, as its violations name them.
const (
	RulePatchLands       = "patch-lands"
	RulePatchKeeps       = "patch-keeps"
	RuleStatusSubres     = "status-subresource"
	RuleGeneration       = "generation"
	RuleApplyConflict    = "apply-conflict"
	RuleFinalizers       = "finalizers"
	RuleDryRun           = "dry-run"
	RuleDeleteCollection = "delete-collection"
	RuleGenerateName     = "generate-name"
)

// CheckWritePaths is kube/write-paths: the verbs controllers write with
// beyond create, update and delete, judged against the state the history
// proves each was applied to (docs/checks.md, "kube/write-paths"). Each
// violation names its rule:
//
//   - patch-lands: an acknowledged patch or status write answers the
//     object with the value (or status value) and the labels it set;
//   - patch-keeps: what a patch does not set stays as it was in the state
//     it was applied to (labels, finalizers);
//   - status-subresource: a status write leaves the data alone, a data
//     write leaves the status alone;
//   - generation: metadata.generation moves by one with each data (spec)
//     change and each mark for deletion, and not with status or metadata
//     writes;
//   - apply-conflict: a FieldManagerConflict names the fields, never
//     answers a forced apply, and needs another manager to have written;
//   - finalizers: a delete of an object with finalizers only marks it
//     (deletionTimestamp), which then stays; its finalizers only shrink;
//     an update removing the last one deletes it;
//   - dry-run: no read, list, watch or other answer ever shows a dry run's
//     value, and a dry-run create answers no resourceVersion;
//   - delete-collection: each object deleted matches the selectors (each
//     is an acknowledged delete of the model, so kube/watch-from-rv owes
//     its own DELETED at its own RV);
//   - generate-name: a name the server generated starts with the prefix
//     and adds to it.
//
// Patch preconditions are judged by kube/optimistic-concurrency and
// kube/linearizable, which read them from the patch body.
func CheckWritePaths(h *history.History, cfg check.Config) check.Result {
	return checkWritePaths(model.Build(h), cfg)
}

type wpJudge struct {
	m      *model.Model
	col    *check.Collector
	judged map[string]int
}

func (j *wpJudge) add(rule string, o *history.KubeOperation, key string, rv int64, want, got, msg string, refs ...model.Ref) {
	v := check.Violation{Guarantee: ErrWritePaths, Client: o.Client, Key: key, Revision: rv, Want: want, Got: got,
		Operations: []int64{o.ID}, Message: fmt.Sprintf("[%s] %s", rule, msg)}
	j.m.Evidence(&v, refs...)
	j.col.Add(v)
}

func checkWritePaths(m *model.Model, cfg check.Config) check.Result {
	j := &wpJudge{m: m, col: check.NewCollector(cfg), judged: map[string]int{}}
	for _, w := range m.Writes {
		if w.Context {
			continue
		}
		j.patchLands(w)
		j.changeKeeps(w)
		j.finalizers(w)
	}
	j.applyConflicts()
	j.dryRuns()
	j.deleteCollections()
	j.generateNames()
	figures := map[string]float64{}
	total := 0
	for r, n := range j.judged {
		figures[strings.ReplaceAll(r, "-", "_")] = float64(n)
		total += n
	}
	if total == 0 {
		return check.Skip(NameWritePaths, kubeSkipReason(m.History, "no patch, status write, apply, finalizer, dry run, "+
			"delete-collection or generateName create was sent"), figures)
	}
	return j.col.Result(NameWritePaths, figures)
}

// answer is the object an acknowledged write answered, nil if none.
func answer(w *model.Write) *history.Object {
	if w.Outcome != model.WriteAcked || w.Op.Response == nil {
		return nil
	}
	if w.Item >= 0 {
		return &w.Op.Response.Items[w.Item]
	}
	return w.Op.Response.Object
}

// patchLands: what a patch or status write set is in its answer. A
// purge is left out: its answer (the write's state at the RV it replaced)
// was never stored.
func (j *wpJudge) patchLands(w *model.Write) {
	o := w.Op
	if w.Verb != history.KubePatch && !model.IsStatusWrite(o) || w.Del || o.Request.Object == nil {
		return
	}
	got := answer(w)
	if got == nil {
		return
	}
	j.judged[RulePatchLands]++
	set := o.Request.Object
	rv := model.ObjRV(got)
	switch {
	case model.IsStatusWrite(o) && set.Status != "" && got.Status != set.Status:
		j.add(RulePatchLands, o, w.Name, rv, fmt.Sprintf("status %q", set.Status), fmt.Sprintf("status %q", got.Status),
			fmt.Sprintf("%s set status %q and was acknowledged, but answered %s with status %q", model.OpText(o), set.Status, w.Name, got.Status))
	case !model.IsStatusWrite(o) && set.Value != "" && got.Value != set.Value:
		j.add(RulePatchLands, o, w.Name, rv, fmt.Sprintf("value %q", set.Value), fmt.Sprintf("value %q", got.Value),
			fmt.Sprintf("%s set value %q and was acknowledged, but answered %s with value %q", model.OpText(o), set.Value, w.Name, got.Value))
	case !model.IsStatusWrite(o) && model.SetsLabels(o):
		for k, v := range set.Labels {
			if got.Labels[k] != v {
				j.add(RulePatchLands, o, w.Name, rv, fmt.Sprintf("label %s=%s", k, v), fmt.Sprintf("labels %v", got.Labels),
					fmt.Sprintf("%s set label %s=%s and was acknowledged, but answered %s with labels %v", model.OpText(o), k, v, w.Name, got.Labels))
				return
			}
		}
	}
}

// before is the state a change was applied to, when the history settles
// it: the object's known change just below, with no write the history
// cannot place in between, and known from a returned object.
func before(c *model.Change) *model.Change {
	o := c.Obj
	prev := o.At(c.Rv - 1)
	if prev == nil || !prev.Exists() || !prev.HasObj || o.Unknown(prev.Rv) || !o.Settled(prev.Rv, c.Rv-1, true) {
		return nil
	}
	return prev
}

// changeKeeps judges what a change left alone against the state it was
// applied to: labels and finalizers a patch did not set, the data of a
// status write, the status of a data write, and the generation.
func (j *wpJudge) changeKeeps(w *model.Write) {
	if w.Rv == 0 || w.Del || w.Verb == history.KubeCreate {
		return
	}
	c := j.m.Objs[w.Name].Exactly(w.Rv)
	if c == nil || c.Write != w || !c.HasObj {
		return
	}
	prev := before(c)
	if prev == nil {
		return
	}
	o := w.Op
	status := model.IsStatusWrite(o)
	ref := prev.Ref()
	name := w.Name
	what := fmt.Sprintf("%s (RV %d) was applied to %s at RV %d (%s)", model.OpText(o), c.Rv, name, prev.Rv, j.m.ChangeText(prev))
	// Server-side apply removes the fields its manager set before and no
	// longer sets: what an apply leaves alone is not simply "unset".
	if w.Verb == history.KubePatch && o.Request.PatchType != history.PatchApply && !status && !w.Mark {
		j.judged[RulePatchKeeps]++
		if !model.SetsLabels(o) && !maps.Equal(c.Labels, prev.Labels) && !(len(c.Labels) == 0 && len(prev.Labels) == 0) {
			j.add(RulePatchKeeps, o, name, c.Rv, fmt.Sprintf("labels %v", prev.Labels), fmt.Sprintf("labels %v", c.Labels),
				fmt.Sprintf("%s; it did not set labels, yet they changed from %v to %v", what, prev.Labels, c.Labels), ref)
			return
		}
		if !model.SetsFinalizers(o) && !sameSet(c.Finalizers, prev.Finalizers) {
			j.add(RulePatchKeeps, o, name, c.Rv, fmt.Sprintf("finalizers %v", prev.Finalizers), fmt.Sprintf("finalizers %v", c.Finalizers),
				fmt.Sprintf("%s; it did not set finalizers, yet they changed from %v to %v", what, prev.Finalizers, c.Finalizers), ref)
			return
		}
	}
	if (w.Verb == history.KubePatch || w.Verb == history.KubeUpdate) && (status || prev.Status != "" || c.Status != "") {
		j.judged[RuleStatusSubres]++
		switch {
		case status && c.Value != prev.Value:
			j.add(RuleStatusSubres, o, name, c.Rv, fmt.Sprintf("value %q", prev.Value), fmt.Sprintf("value %q", c.Value),
				fmt.Sprintf("%s, a write of the status subresource, changed the data from %q to %q", what, prev.Value, c.Value), ref)
			return
		case !status && c.Status != prev.Status:
			j.add(RuleStatusSubres, o, name, c.Rv, fmt.Sprintf("status %q", prev.Status), fmt.Sprintf("status %q", c.Status),
				fmt.Sprintf("%s, a write of the object (not its status subresource), changed the status from %q to %q", what, prev.Status, c.Status), ref)
			return
		}
	}
	if prev.Generation > 0 && c.Generation > 0 {
		j.judged[RuleGeneration]++
		want, why := prev.Generation, "it changed no data (spec)"
		if w.Mark || !status && c.Value != prev.Value {
			want, why = prev.Generation+1, "it changed the data (spec)"
			if w.Mark {
				why = "it marked the object for deletion"
			}
		}
		if c.Generation != want {
			j.add(RuleGeneration, o, name, c.Rv, fmt.Sprint(want), fmt.Sprint(c.Generation),
				fmt.Sprintf("%s; %s, so metadata.generation goes from %d to %d, not %d", what, why, prev.Generation, want, c.Generation), ref)
		}
	}
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

// finalizers judges deletions and marks against the finalizers of the
// state before them.
func (j *wpJudge) finalizers(w *model.Write) {
	if w.Rv == 0 {
		return
	}
	ob := j.m.Objs[w.Name]
	c := ob.Exactly(w.Rv)
	if c == nil || c.Write != w {
		return
	}
	prev := ob.At(c.Rv - 1)
	if prev == nil || !prev.Exists() || !prev.HasObj || ob.Unknown(prev.Rv) || !ob.Settled(prev.Rv, c.Rv-1, true) {
		return
	}
	o := w.Op
	ref := prev.Ref()
	switch {
	case c.Del && (w.Verb == history.KubeDelete || w.Verb == history.KubeDeleteCollection):
		if len(prev.Finalizers) == 0 {
			return
		}
		j.judged[RuleFinalizers]++
		j.add(RuleFinalizers, o, w.Name, c.Rv, "MODIFIED with deletionTimestamp; the object stays", "deleted",
			fmt.Sprintf("%s deleted %s at RV %d, though it had finalizers %v (%s at RV %d): a delete of an object with "+
				"finalizers only sets its deletionTimestamp, and it is deleted once the last finalizer is removed",
				model.OpText(o), w.Name, c.Rv, prev.Finalizers, j.m.ChangeText(prev), prev.Rv), ref)
	case c.Del:
		// An update or patch that removed the last finalizer: the object
		// must have been marked for deletion.
		j.judged[RuleFinalizers]++
		if !prev.Terminating {
			j.add(RuleFinalizers, o, w.Name, c.Rv, "updated", "deleted",
				fmt.Sprintf("%s removed the finalizers of %s and it was deleted at RV %d, though it was not marked for "+
					"deletion (%s at RV %d)", model.OpText(o), w.Name, c.Rv, j.m.ChangeText(prev), prev.Rv), ref)
		}
	case prev.Terminating && c.HasObj:
		j.judged[RuleFinalizers]++
		switch {
		case !c.Terminating:
			j.add(RuleFinalizers, o, w.Name, c.Rv, "deletionTimestamp kept", "deletionTimestamp cleared",
				fmt.Sprintf("%s changed %s at RV %d and its deletionTimestamp is gone, though %s had marked it for deletion "+
					"at RV %d: a deletionTimestamp, once set, stays", model.OpText(o), w.Name, c.Rv, j.m.ChangeText(prev), prev.Rv), ref)
		case len(c.Finalizers) == 0:
			j.add(RuleFinalizers, o, w.Name, c.Rv, "deleted", fmt.Sprintf("kept at RV %d", c.Rv),
				fmt.Sprintf("%s left %s, marked for deletion, with no finalizers at RV %d, yet it was not deleted: once the "+
					"last finalizer is removed the object is deleted", model.OpText(o), w.Name, c.Rv), ref)
		case !subset(c.Finalizers, prev.Finalizers):
			j.add(RuleFinalizers, o, w.Name, c.Rv, fmt.Sprintf("a subset of %v", prev.Finalizers), fmt.Sprint(c.Finalizers),
				fmt.Sprintf("%s added finalizers to %s at RV %d, though it was marked for deletion: only removing them is allowed",
					model.OpText(o), w.Name, c.Rv), ref)
		}
	case w.Mark:
		j.judged[RuleFinalizers]++
		if len(prev.Finalizers) == 0 {
			j.add(RuleFinalizers, o, w.Name, c.Rv, "deleted", "marked for deletion",
				fmt.Sprintf("%s marked %s for deletion at RV %d instead of deleting it, though it had no finalizers (%s at RV %d)",
					model.OpText(o), w.Name, c.Rv, j.m.ChangeText(prev), prev.Rv), ref)
		}
	}
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// applyConflicts judges server-side apply's 409 FieldManagerConflict.
func (j *wpJudge) applyConflicts() {
	h := j.m.History
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Request.Verb != history.KubePatch || o.Request.PatchType != history.PatchApply {
			continue
		}
		j.judged[RuleApplyConflict]++
		st := o.Status
		if st == nil || st.Code != 409 || !slices.Contains(st.Causes, "FieldManagerConflict") {
			continue
		}
		name := model.OpName(o)
		switch {
		case o.Request.Force:
			j.add(RuleApplyConflict, o, name, 0, "applied", "409 FieldManagerConflict",
				fmt.Sprintf("%s was a forced apply (force=true), yet it was refused with a field manager conflict: force "+
					"takes the fields over", model.OpText(o)))
		case len(st.Fields) == 0:
			j.add(RuleApplyConflict, o, name, 0, "the conflicting fields", "none",
				fmt.Sprintf("%s was refused with a field manager conflict that names no field", model.OpText(o)))
		case j.otherManager(o, name) == nil:
			j.add(RuleApplyConflict, o, name, 0, "applied", "409 FieldManagerConflict",
				fmt.Sprintf("%s (field manager %q) was refused with a conflict on %v, but no other field manager had "+
					"written %s before it returned", model.OpText(o), o.Request.FieldManager, st.Fields, name))
		}
	}
}

// otherManager finds a write of name by another field manager, called
// before o returned, that may have happened: the owner a conflict needs.
// A write that names no manager counts (the server picks one from the
// client's user agent).
func (j *wpJudge) otherManager(o *history.KubeOperation, name string) *model.Write {
	for _, w := range j.m.Writes {
		if w.Name != name || w.Op == o || w.Outcome == model.WriteRefused || w.Op.Call >= o.Return || w.Del {
			continue
		}
		if w.Op.Request.FieldManager != o.Request.FieldManager || w.Op.Request.FieldManager == "" {
			return w
		}
	}
	return nil
}

// dryRuns: a dry run's values are never seen, and a dry-run create is
// answered without a resourceVersion.
func (j *wpJudge) dryRuns() {
	m := j.m
	vals := map[string]*history.KubeOperation{}
	for _, o := range m.DryRuns {
		j.judged[RuleDryRun]++
		for _, ob := range []*history.Object{o.Request.Object, respOf(o)} {
			if ob == nil {
				continue
			}
			for _, v := range []string{ob.Value, ob.Status} {
				if v != "" && m.ByValue[v] == nil && m.ByStatus[v] == nil {
					vals[v] = o
				}
			}
		}
		if r := respOf(o); r != nil && o.Request.Verb == history.KubeCreate && r.ResourceVersion != "" {
			j.add(RuleDryRun, o, r.Name, model.ObjRV(r), "no resourceVersion", r.ResourceVersion,
				fmt.Sprintf("%s, a dry run, answered resourceVersion %s: a dry-run create is never stored, so it has none",
					model.OpText(o), r.ResourceVersion))
		}
	}
	if len(vals) == 0 {
		return
	}
	seen := func(ob *history.Object, where string, v check.Violation) {
		for _, val := range []string{ob.Value, ob.Status} {
			d := vals[val]
			if val == "" || d == nil {
				continue
			}
			v.Guarantee, v.Key, v.Revision = ErrWritePaths, ob.Name, model.ObjRV(ob)
			v.Want, v.Got = "never seen", fmt.Sprintf("%q at RV %s", val, ob.ResourceVersion)
			v.Message = fmt.Sprintf("[%s] %s shows %s with %q at RV %s, the value of %s, a dry run: a dry run changes nothing "+
				"anyone can see", RuleDryRun, where, ob.Name, val, ob.ResourceVersion, model.OpText(d))
			v.Operations = append(v.Operations, d.ID)
			j.col.Add(v)
			delete(vals, val) // once per dry run
		}
	}
	h := m.History
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Response == nil || o.Request.DryRun {
			continue
		}
		v := check.Violation{Client: o.Client, Operations: []int64{o.ID}}
		if r := o.Response.Object; r != nil {
			seen(r, model.OpText(o), v)
		}
		for k := range o.Response.Items {
			seen(&o.Response.Items[k], model.OpText(o), v)
		}
	}
	for _, w := range h.KubeWatches {
		for i := range w.Events {
			if e := &w.Events[i]; e.Object != nil && e.Type != history.KubeBookmark {
				seen(e.Object, fmt.Sprintf("watch %d event %d (%s)", w.ID, i, e.Type),
					check.Violation{Watch: w.ID, Client: w.Client, KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}})
			}
		}
	}
}

func respOf(o *history.KubeOperation) *history.Object {
	if o.Response == nil {
		return nil
	}
	return o.Response.Object
}

// deleteCollections: each item matches the selectors. (That each is
// deleted on its own, at its own RV, with its own DELETED, the model
// judges: each item is an acknowledged delete that a DELETED must place,
// kube/watch-from-rv and kube/watch-ordered.)
func (j *wpJudge) deleteCollections() {
	h := j.m.History
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Request.Verb != history.KubeDeleteCollection || o.Response == nil || o.Request.DryRun {
			continue
		}
		j.judged[RuleDeleteCollection]++
		sel, err := model.ParseSelectors(o.Request.LabelSelector, o.Request.FieldSelector)
		for k := range o.Response.Items {
			it := &o.Response.Items[k]
			rv := model.ObjRV(it)
			if err == nil && !sel.Matches(it.Name, it.Labels) {
				j.add(RuleDeleteCollection, o, it.Name, rv, "objects matching "+sel.Raw, fmt.Sprintf("%s (labels %v)", it.Name, it.Labels),
					fmt.Sprintf("%s deleted %s (labels %v), which its selectors (%s) do not pick", model.OpText(o), it.Name, it.Labels, sel.Raw))
			}
		}
	}
}

// generateNames: the server's name starts with the prefix and adds to it.
func (j *wpJudge) generateNames() {
	h := j.m.History
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		r := respOf(o)
		if o.Request.Verb != history.KubeCreate || o.Request.Object == nil || o.Request.Object.GenerateName == "" ||
			o.Request.Object.Name != "" || r == nil {
			continue
		}
		j.judged[RuleGenerateName]++
		p := o.Request.Object.GenerateName
		if !strings.HasPrefix(r.Name, p) || len(r.Name) <= len(p) {
			j.add(RuleGenerateName, o, r.Name, model.ObjRV(r), p+"<suffix>", r.Name,
				fmt.Sprintf("%s asked for a name generated from %q and was answered with %q", model.OpText(o), p, r.Name))
		}
	}
}
