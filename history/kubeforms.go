package history

import "strings"

// The Kubernetes side's coverage names, one per verb and one per option
// of it, as "verb" and "verb.option=class" (the etcd side's grammar
// productions are "production.field=class"). KubeForms derives them from
// the recorded request, so any history can be counted by them.
//
//	create.name=generate         metadata.generateName, no name
//	create.finalizers            created holding finalizers
//	update.rv=conditional        metadata.resourceVersion in the body
//	update.rv=unconditional      none: the last write wins
//	patch.type=json|merge|strategic|apply
//	patch.force                  apply with force=true
//	patch.precondition=rv|uid    metadata.resourceVersion or uid in the body
//	patch.finalizers             the patch sets metadata.finalizers
//	delete.precondition=rv|uid   DeleteOptions.preconditions
//	deletecollection.selector=label|field
//	<verb>.dryRun                dryRun=All, on every write verb
//	<verb>.subresource=status    the status subresource (get, update, patch)
//	list.selector=field, watch.selector=field   fieldSelector
func KubeForms(r KubeRequest) []string {
	v := string(r.Verb)
	out := []string{v}
	add := func(on bool, opt string) {
		if on {
			out = append(out, v+"."+opt)
		}
	}
	o := r.Object
	if o == nil {
		o = &Object{}
	}
	switch r.Verb {
	case KubeCreate:
		add(o.Name == "" && o.GenerateName != "", "name=generate")
		add(len(o.Finalizers) > 0, "finalizers")
	case KubeUpdate:
		add(o.ResourceVersion != "", "rv=conditional")
		add(o.ResourceVersion == "", "rv=unconditional")
	case KubePatch:
		add(r.PatchType != "", "type="+r.PatchType)
		add(r.Force, "force")
		add(o.ResourceVersion != "", "precondition=rv")
		add(o.UID != "", "precondition=uid")
		add(strings.Contains(r.Patch, "finalizers"), "finalizers")
	case KubeDelete:
		add(r.PreconditionRV != "", "precondition=rv")
		add(r.PreconditionUID != "", "precondition=uid")
	case KubeDeleteCollection:
		add(r.LabelSelector != "", "selector=label")
		add(r.FieldSelector != "", "selector=field")
	case KubeList:
		add(r.FieldSelector != "", "selector=field")
	}
	add(r.DryRun, "dryRun")
	add(r.Subresource != "", "subresource="+r.Subresource)
	return out
}

// KubeWatchForms are a Kubernetes watch's coverage names: "watch", and
// "watch.selector=field" when it selects by field.
func KubeWatchForms(r KubeWatchRequest) []string {
	if r.FieldSelector != "" {
		return []string{"watch", "watch.selector=field"}
	}
	return []string{"watch"}
}

// KubeRefused reports whether an error answer declines the request's
// form rather than judging it: 415 (a patch type the resource does not
// take, as custom resources refuse strategic merge) or 405 (a verb or
// subresource not served).
func KubeRefused(st *KubeStatus) bool {
	return st != nil && (st.Code == 415 || st.Code == 405)
}
