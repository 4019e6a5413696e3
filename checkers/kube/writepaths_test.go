package kube

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

// Hand-built histories of the write paths of history format 5. Objects
// here are custom resources: a data value (spec), a status value, a
// generation, finalizers.

// cr is an object with a status, a generation and finalizers.
func cr(name, value, status string, rv, gen int64, fins []string, labels ...string) history.Object {
	o := histbuild.KobjOf(name, value, rv, labels...)
	o.Status, o.Generation, o.Finalizers = status, gen, fins
	return o
}

func terminating(o history.Object) history.Object {
	o.DeletionTimestamp = "2026-11-27T23:00:00Z"
	return o
}

// patch records an acknowledged patch: set is what it sets, got its answer.
func patch(b *histbuild.KubeBuilder, client, call, ret int, typ, body string, set, got history.Object) int64 {
	s := set
	return b.Op(client, call, ret, history.KubeRequest{Verb: history.KubePatch, Name: set.Name, PatchType: typ, Patch: body, Object: &s},
		&history.KubeResponse{Code: 200, Object: &got}, nil, "")
}

// statusPatch records an acknowledged merge patch of the status subresource.
func statusPatch(b *histbuild.KubeBuilder, client, call, ret int, name, status string, got history.Object) int64 {
	return b.Op(client, call, ret, history.KubeRequest{Verb: history.KubePatch, Name: name, PatchType: history.PatchMerge,
		Patch: `{"status":{"value":"` + status + `"}}`, Subresource: history.SubresourceStatus, Object: &history.Object{Name: name, Status: status}},
		&history.KubeResponse{Code: 200, Object: &got}, nil, "")
}

func createObj(b *histbuild.KubeBuilder, client, call, ret int, o history.Object, manager string) int64 {
	body := o
	body.ResourceVersion, body.UID, body.Generation = "", "", 0
	return b.Op(client, call, ret, history.KubeRequest{Verb: history.KubeCreate, Object: &body, FieldManager: manager},
		&history.KubeResponse{Code: 201, Object: &o}, nil, "")
}

func apply(b *histbuild.KubeBuilder, client, call, ret int, name, value, manager string, force bool, st *history.KubeStatus) int64 {
	req := history.KubeRequest{Verb: history.KubePatch, Name: name, PatchType: history.PatchApply, FieldManager: manager, Force: force,
		Patch:  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"value":"` + value + `"}}`,
		Object: &history.Object{Name: name, Value: value}}
	return b.Op(client, call, ret, req, nil, st, "")
}

func conflict(fields ...string) *history.KubeStatus {
	return &history.KubeStatus{Code: 409, Reason: "Conflict", Causes: []string{"FieldManagerConflict"}, Fields: fields}
}

var (
	c10 = cr("a", "v:a1", "s:0", 10, 1, nil, "g=a")
	c15 = cr("a", "v:a2", "s:0", 15, 2, nil, "g=a") // a data patch
	c20 = cr("a", "v:a2", "s:1", 20, 2, nil, "g=a") // a status patch
)

func dataPatch(b *histbuild.KubeBuilder, got history.Object) int64 {
	return patch(b, 2, 20, 30, history.PatchMerge, `{"data":{"value":"v:a2"}}`, history.Object{Name: "a", Value: "v:a2"}, got)
}

func TestKubeWritePaths(t *testing.T) {
	fin := []string{"vigil.dev/hold"}
	f10 := cr("a", "v:a1", "", 10, 1, fin)
	f15 := terminating(cr("a", "v:a1", "", 15, 2, fin))
	// The purge answers its own new state (no finalizers, still marked) at
	// the RV of the state it replaced, as kube-apiserver v1.36.3 does.
	purged := terminating(cr("a", "v:a3", "", 15, 3, nil))
	finalized := func(b *histbuild.KubeBuilder) {
		createObj(b, 1, 0, 10, f10, "")
		b.Op(1, 20, 30, history.KubeRequest{Verb: history.KubeDelete, Name: "a"}, &history.KubeResponse{Code: 200, Object: &f15}, nil, "")
	}
	removeFinalizers := func(b *histbuild.KubeBuilder, got history.Object) {
		patch(b, 1, 40, 50, history.PatchMerge, `{"metadata":{"finalizers":null},"data":{"value":"v:a3"}}`,
			history.Object{Name: "a", Value: "v:a3"}, got)
	}
	histbuild.RunKubeCases(t, CheckWritePaths, ErrWritePaths, []histbuild.Kcase{
		{Name: "kube/write-paths - a merge patch lands and keeps the labels - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			createObj(b, 1, 0, 10, c10, "")
			dataPatch(b, c15)
		}},
		{Name: "kube/write-paths - a patch answered without its value - fail", Want: check.Fail, Key: "a", Op: 2, Msg: "[patch-lands]",
			Build: func(b *histbuild.KubeBuilder) {
				createObj(b, 1, 0, 10, c10, "")
				dataPatch(b, cr("a", "v:a1", "s:0", 15, 2, nil, "g=a"))
			}},
		{Name: "kube/write-paths - a patch that did not set labels changed them - fail", Want: check.Fail, Key: "a", Rev: 15, Op: 2,
			Msg: "[patch-keeps] operation 2", Build: func(b *histbuild.KubeBuilder) {
				createObj(b, 1, 0, 10, c10, "")
				dataPatch(b, cr("a", "v:a2", "s:0", 15, 2, nil, "g=b"))
			}},
		{Name: "kube/write-paths - status and data writes do not cross - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			createObj(b, 1, 0, 10, c10, "")
			statusPatch(b, 2, 20, 30, "a", "s:1", cr("a", "v:a1", "s:1", 15, 1, nil, "g=a"))
			patch(b, 3, 40, 50, history.PatchMerge, `{"data":{"value":"v:a2"},"status":{"value":"s:x"}}`,
				history.Object{Name: "a", Value: "v:a2"}, cr("a", "v:a2", "s:1", 20, 2, nil, "g=a"))
		}},
		{Name: "kube/write-paths - a status write changed the data - fail", Want: check.Fail, Key: "a", Rev: 15, Msg: "[status-subresource]",
			Build: func(b *histbuild.KubeBuilder) {
				createObj(b, 1, 0, 10, c10, "")
				statusPatch(b, 2, 20, 30, "a", "s:1", cr("a", "v:a9", "s:1", 15, 1, nil, "g=a"))
			}},
		{Name: "kube/write-paths - a data write changed the status - fail", Want: check.Fail, Key: "a", Rev: 15, Msg: "[status-subresource]",
			Build: func(b *histbuild.KubeBuilder) {
				createObj(b, 1, 0, 10, c10, "")
				dataPatch(b, cr("a", "v:a2", "s:9", 15, 2, nil, "g=a"))
			}},
		{Name: "kube/write-paths - generation follows the data - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			createObj(b, 1, 0, 10, c10, "")
			dataPatch(b, c15)
			statusPatch(b, 2, 40, 50, "a", "s:1", c20)
		}},
		{Name: "kube/write-paths - a status write moved the generation - fail", Want: check.Fail, Key: "a", Rev: 20, Msg: "[generation]",
			Build: func(b *histbuild.KubeBuilder) {
				createObj(b, 1, 0, 10, c10, "")
				dataPatch(b, c15)
				statusPatch(b, 2, 40, 50, "a", "s:1", cr("a", "v:a2", "s:1", 20, 3, nil, "g=a"))
			}},
		{Name: "kube/write-paths - a data write kept the generation - fail", Want: check.Fail, Key: "a", Rev: 15, Msg: "[generation]",
			Build: func(b *histbuild.KubeBuilder) {
				createObj(b, 1, 0, 10, c10, "")
				dataPatch(b, cr("a", "v:a2", "s:0", 15, 1, nil, "g=a"))
			}},
		{Name: "kube/write-paths - an apply conflict with another manager's field - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			createObj(b, 1, 0, 10, c10, "m1")
			apply(b, 2, 20, 30, "a", "v:x", "m2", false, conflict(".data.value"))
		}},
		{Name: "kube/write-paths - a forced apply refused with a conflict - fail", Want: check.Fail, Key: "a", Op: 2, Msg: "forced apply",
			Build: func(b *histbuild.KubeBuilder) {
				createObj(b, 1, 0, 10, c10, "m1")
				apply(b, 2, 20, 30, "a", "v:x", "m2", true, conflict(".data.value"))
			}},
		{Name: "kube/write-paths - an apply conflict naming no field - fail", Want: check.Fail, Key: "a", Op: 2, Msg: "names no field",
			Build: func(b *histbuild.KubeBuilder) {
				createObj(b, 1, 0, 10, c10, "m1")
				apply(b, 2, 20, 30, "a", "v:x", "m2", false, conflict())
			}},
		{Name: "kube/write-paths - an apply conflict with no other manager - fail", Want: check.Fail, Key: "a", Op: 2,
			Msg: "no other field manager", Build: func(b *histbuild.KubeBuilder) {
				createObj(b, 1, 0, 10, c10, "m1")
				apply(b, 2, 20, 30, "a", "v:x", "m1", false, conflict(".data.value"))
			}},
		{Name: "kube/write-paths - a delete marks a finalized object, removing the finalizer deletes it - pass", Want: check.Pass,
			Build: func(b *histbuild.KubeBuilder) {
				finalized(b)
				removeFinalizers(b, purged)
			}},
		{Name: "kube/write-paths - a finalized object deleted by a delete - fail", Want: check.Fail, Key: "a", Rev: 15,
			Msg: "though it had finalizers", Build: func(b *histbuild.KubeBuilder) {
				createObj(b, 1, 0, 10, f10, "")
				b.Del(1, 20, 30, "a", 0)
				b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Ev(1, 11, history.KubeAdded, f10)
				b.Ev(1, 31, history.KubeDeleted, cr("a", "v:a1", "", 15, 1, fin))
			}},
		{Name: "kube/write-paths - an update cleared a deletionTimestamp - fail", Want: check.Fail, Key: "a", Rev: 20,
			Msg: "deletionTimestamp is gone", Build: func(b *histbuild.KubeBuilder) {
				finalized(b)
				patch(b, 1, 40, 50, history.PatchMerge, `{"data":{"value":"v:a3"}}`, history.Object{Name: "a", Value: "v:a3"},
					cr("a", "v:a3", "", 20, 3, fin))
			}},
		{Name: "kube/write-paths - a dry run nobody sees - pass", Want: check.Pass, Build: func(b *histbuild.KubeBuilder) {
			createObj(b, 1, 0, 10, c10, "")
			dry := histbuild.KobjOf("a", "v:dry", 10, "g=a")
			b.Op(2, 20, 30, history.KubeRequest{Verb: history.KubeUpdate, Name: "a", DryRun: true, Object: &dry},
				&history.KubeResponse{Code: 200, Object: &dry}, nil, "")
			b.Get(3, 40, 50, "a", "", &c10)
		}},
		{Name: "kube/write-paths - a read shows a dry run's value - fail", Want: check.Fail, Key: "a", Op: 2, Msg: "a dry run changes nothing",
			Build: func(b *histbuild.KubeBuilder) {
				createObj(b, 1, 0, 10, c10, "")
				dry := histbuild.KobjOf("a", "v:dry", 10, "g=a")
				b.Op(2, 20, 30, history.KubeRequest{Verb: history.KubeUpdate, Name: "a", DryRun: true, Object: &dry},
					&history.KubeResponse{Code: 200, Object: &dry}, nil, "")
				b.Get(3, 40, 50, "a", "", ptr(histbuild.KobjOf("a", "v:dry", 15, "g=a")))
			}},
		{Name: "kube/write-paths - a dry-run create answered with a resourceVersion - fail", Want: check.Fail, Key: "n", Op: 1,
			Msg: "answered resourceVersion 12", Build: func(b *histbuild.KubeBuilder) {
				body := histbuild.KobjOf("n", "v:n", 0)
				got := histbuild.KobjOf("n", "v:n", 12)
				b.Op(1, 0, 10, history.KubeRequest{Verb: history.KubeCreate, DryRun: true, Object: &body},
					&history.KubeResponse{Code: 201, Object: &got}, nil, "")
			}},
		{Name: "kube/write-paths - a delete-collection deletes each at its own RV - pass", Want: check.Pass, Build: deleteCollection(16)},
		{Name: "kube/write-paths - a delete-collection deletes what its selector does not pick - fail", Want: check.Fail, Key: "c",
			Msg: "do not pick", Build: func(b *histbuild.KubeBuilder) {
				b.Create(1, 0, 10, histbuild.KobjOf("c", "v:c", 10, "g=b"))
				b.Op(2, 20, 30, history.KubeRequest{Verb: history.KubeDeleteCollection, LabelSelector: "g=a"},
					&history.KubeResponse{Code: 200, Items: []history.Object{histbuild.KobjOf("c", "v:c", 10, "g=b")}}, nil, "")
			}},
		{Name: "kube/write-paths - a generated name with its prefix - pass", Want: check.Pass, Build: generated("gen-x7k2q")},
		{Name: "kube/write-paths - a generated name without its prefix - fail", Want: check.Fail, Key: "other", Msg: `answered with "other"`,
			Build: generated("other")},
		{Name: "kube/write-paths - nothing of the write paths - skipped", Want: check.Skipped, Build: healthyKube},
	})
}

// deleteCollection: a and b (g=a) deleted by one delete-collection,
// which answers them as it listed them; a watch from 9 sees a's DELETED
// at 15 and b's at rvB (0: none); then c is created at 20.
func deleteCollection(rvB int64) func(b *histbuild.KubeBuilder) {
	return func(b *histbuild.KubeBuilder) {
		a, bb := histbuild.KobjOf("a", "v:a", 10, "g=a"), histbuild.KobjOf("b", "v:b", 12, "g=a")
		b.Create(1, 0, 10, a)
		b.Create(1, 11, 12, bb)
		b.Op(2, 20, 30, history.KubeRequest{Verb: history.KubeDeleteCollection, LabelSelector: "g=a"},
			&history.KubeResponse{Code: 200, Items: []history.Object{a, bb}}, nil, "")
		b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
		b.Ev(1, 11, history.KubeAdded, a)
		b.Ev(1, 13, history.KubeAdded, bb)
		b.Ev(1, 31, history.KubeDeleted, histbuild.KobjOf("a", "v:a", 15, "g=a"))
		if rvB != 0 {
			b.Ev(1, 32, history.KubeDeleted, histbuild.KobjOf("b", "v:b", rvB, "g=a"))
		}
		// A write after it bounds where its deletions lie.
		c := histbuild.KobjOf("c", "v:c", 20, "g=b")
		b.Create(1, 40, 50, c)
		b.Ev(1, 51, history.KubeAdded, c)
		b.Bookmark(1, 90, 30, false)
		b.End(1, 100, history.EndClient, nil)
	}
}

func generated(name string) func(b *histbuild.KubeBuilder) {
	return func(b *histbuild.KubeBuilder) {
		body := history.Object{GenerateName: "gen-", Value: "v:g"}
		got := histbuild.KobjOf(name, "v:g", 10)
		b.Op(1, 0, 10, history.KubeRequest{Verb: history.KubeCreate, Object: &body}, &history.KubeResponse{Code: 201, Object: &got}, nil, "")
		b.Get(2, 20, 30, name, "", &got)
	}
}

// The existing checks judge the new verbs through the model: a patch's
// precondition in its body (kube/optimistic-concurrency), the DELETED a
// finalizer removal and a delete-collection owe (kube/watch-from-rv), a
// fieldSelector (kube/linearizable, kube/watch-selector).
func TestKubeWritePathsInTheModel(t *testing.T) {
	fin := []string{"vigil.dev/hold"}
	f10 := cr("a", "v:a1", "", 10, 1, fin)
	f15 := terminating(cr("a", "v:a1", "", 15, 2, fin))
	f20 := terminating(cr("a", "v:a1", "", 20, 2, fin)) // the DELETED: the state stored before the purge, at its own RV
	purged := terminating(cr("a", "v:a3", "", 15, 3, nil))
	purge := func(deleted bool) func(b *histbuild.KubeBuilder) {
		return func(b *histbuild.KubeBuilder) {
			createObj(b, 1, 0, 10, f10, "")
			b.Op(1, 20, 30, history.KubeRequest{Verb: history.KubeDelete, Name: "a"}, &history.KubeResponse{Code: 200, Object: &f15}, nil, "")
			patch(b, 1, 40, 50, history.PatchMerge, `{"metadata":{"finalizers":null},"data":{"value":"v:a3"}}`,
				history.Object{Name: "a", Value: "v:a3"}, purged)
			b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
			b.Ev(1, 11, history.KubeAdded, f10)
			b.Ev(1, 31, history.KubeModified, f15)
			if deleted {
				b.Ev(1, 51, history.KubeDeleted, f20)
			}
			// A write after the purge returned bounds its RV from above
			// (the purge's answer does not say it): below 25.
			z := histbuild.KobjOf("z", "v:z", 25)
			b.Create(2, 55, 58, z)
			b.Ev(1, 59, history.KubeAdded, z)
			b.Bookmark(1, 90, 30, false)
			b.End(1, 100, history.EndClient, nil)
			b.Get(2, 60, 70, "a", "", nil)
		}
	}
	histbuild.RunKubeCases(t, CheckWatchFromRV, ErrWatchFromRV, []histbuild.Kcase{
		{Name: "kube/watch-from-rv - MODIFIED for the mark, DELETED once the last finalizer is gone - pass", Want: check.Pass, Build: purge(true)},
		{Name: "kube/watch-from-rv - no DELETED after the last finalizer was removed - fail", Want: check.Fail, Watch: 1, Rev: 16,
			Msg: "missed the deletion of a by patch operation 3", Build: purge(false)},
		// Measured (seed 5, 2 API servers): a delete answered with a
		// Status, an update of unknown outcome, then an apply answered 201.
		// The apply created the object: its ADDED is owed, not synthetic.
		{Name: "kube/watch-from-rv - an apply answered 201 after an unsettled history, ADDED - pass", Want: check.Pass,
			Build: func(b *histbuild.KubeBuilder) {
				a10 := cr("a", "v:a1", "", 10, 0, nil)
				createObj(b, 1, 0, 10, a10, "")
				b.Op(1, 20, 30, history.KubeRequest{Verb: history.KubeDelete, Name: "a"}, &history.KubeResponse{Code: 200}, nil, "")
				up := cr("a", "v:a2", "", 10, 0, nil)
				b.Op(2, 32, 34, history.KubeRequest{Verb: history.KubeUpdate, Name: "a", Object: &up}, nil, nil, "timeout")
				got := cr("a", "v:a3", "", 20, 0, nil)
				b.Op(3, 40, 50, history.KubeRequest{Verb: history.KubePatch, Name: "a", PatchType: history.PatchApply, FieldManager: "m",
					Patch: `{"data":{"value":"v:a3"}}`, Object: &history.Object{Name: "a", Value: "v:a3"}}, &history.KubeResponse{Code: 201, Object: &got}, nil, "")
				b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Ev(1, 11, history.KubeAdded, a10)
				b.Ev(1, 31, history.KubeDeleted, cr("a", "v:a1", "", 15, 0, nil))
				b.Ev(1, 51, history.KubeAdded, got)
				b.Bookmark(1, 90, 20, false)
				b.End(1, 100, history.EndClient, nil)
			}},
		{Name: "kube/watch-from-rv - each object of a delete-collection DELETED - pass", Want: check.Pass, Build: deleteCollection(16)},
		{Name: "kube/watch-from-rv - a delete-collection's DELETED dropped - fail", Want: check.Fail, Watch: 1, Key: "b",
			Msg: "missed the deletion of b by deletecollection operation 3", Build: deleteCollection(0)},
	})
	histbuild.RunKubeCases(t, CheckWatchOrdered, ErrWatchOrdered, []histbuild.Kcase{
		{Name: "kube/watch-ordered - a delete-collection's objects DELETED each at its own RV - pass", Want: check.Pass, Build: deleteCollection(16)},
		{Name: "kube/watch-ordered - a delete-collection's two objects DELETED at one RV - fail", Want: check.Fail, Watch: 1,
			Build: deleteCollection(15)},
	})
	histbuild.RunKubeCases(t, CheckOptimisticConcurrency, ErrOptimisticConcurrency, []histbuild.Kcase{
		{Name: "kube/optimistic-concurrency - a patch with a stale resourceVersion refused - pass", Want: check.Pass,
			Build: func(b *histbuild.KubeBuilder) {
				createObj(b, 1, 0, 10, c10, "")
				dataPatch(b, c15)
				b.Op(3, 40, 50, history.KubeRequest{Verb: history.KubePatch, Name: "a", PatchType: history.PatchMerge,
					Patch: `{"metadata":{"resourceVersion":"10"},"data":{"value":"v:late"}}`, Object: &history.Object{Name: "a", Value: "v:late"}},
					nil, &history.KubeStatus{Code: 409, Reason: "Conflict"}, "")
			}},
		{Name: "kube/optimistic-concurrency - a patch with a stale resourceVersion accepted - fail", Want: check.Fail, Key: "a", Rev: 10,
			Op: 3, Msg: "overwrote a write it never saw", Build: func(b *histbuild.KubeBuilder) {
				createObj(b, 1, 0, 10, c10, "")
				dataPatch(b, c15)
				patch(b, 3, 40, 50, history.PatchMerge, `{"metadata":{"resourceVersion":"10"},"data":{"value":"v:late"}}`,
					history.Object{Name: "a", Value: "v:late"}, cr("a", "v:late", "s:0", 20, 3, nil, "g=a"))
			}},
		{Name: "kube/optimistic-concurrency - a JSON patch replacing a stale resourceVersion accepted - fail", Want: check.Fail, Key: "a",
			Rev: 10, Op: 3, Msg: "overwrote a write it never saw", Build: func(b *histbuild.KubeBuilder) {
				createObj(b, 1, 0, 10, c10, "")
				dataPatch(b, c15)
				patch(b, 3, 40, 50, history.PatchJSON,
					`[{"op":"replace","path":"/metadata/resourceVersion","value":"10"},{"op":"replace","path":"/data/value","value":"v:late"}]`,
					history.Object{Name: "a", Value: "v:late"}, cr("a", "v:late", "s:0", 20, 3, nil, "g=a"))
			}},
	})
	fieldList := func(items ...history.Object) func(b *histbuild.KubeBuilder) {
		return func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.List(2, 100, 110, history.KubeRequest{FieldSelector: "metadata.name=a"}, 21, "", items...)
		}
	}
	histbuild.RunKubeCases(t, CheckLinearizable, ErrLinearizable, []histbuild.Kcase{
		{Name: "kube/linearizable - a list with a fieldSelector - pass", Want: check.Pass, Build: fieldList(histbuild.A20)},
		{Name: "kube/linearizable - a list with a fieldSelector returns another object - fail", Want: check.Fail, Key: "c",
			Msg: "does not match the selector", Build: func(b *histbuild.KubeBuilder) {
				b.Create(1, 0, 10, histbuild.A10)
				b.Create(1, 20, 30, histbuild.KobjOf("c", "v:c", 12))
				b.List(2, 100, 110, history.KubeRequest{FieldSelector: "metadata.name=a"}, 21, "", histbuild.A10, histbuild.KobjOf("c", "v:c", 12))
			}},
		{Name: "kube/linearizable - a list with a fieldSelector misses its object - fail", Want: check.Fail, Key: "a",
			Msg: "is missing", Build: fieldList()},
	})
	fieldWatch := func(extra bool) func(b *histbuild.KubeBuilder) {
		return func(b *histbuild.KubeBuilder) {
			histbuild.BaseWrites(b)
			b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9", FieldSelector: "metadata.name=b"})
			b.Ev(1, 31, history.KubeAdded, histbuild.B12)
			if extra {
				b.Ev(1, 51, history.KubeModified, histbuild.A15)
			}
			b.Ev(1, 71, history.KubeDeleted, histbuild.B18)
			b.End(1, 200, history.EndClient, nil)
		}
	}
	histbuild.RunKubeCases(t, CheckWatchSelector, ErrWatchSelector, []histbuild.Kcase{
		{Name: "kube/watch-selector - a watch with a fieldSelector - pass", Want: check.Pass, Build: fieldWatch(false)},
		{Name: "kube/watch-selector - a watch with a fieldSelector delivers another object - fail", Want: check.Fail, Watch: 1, Key: "a",
			Build: fieldWatch(true)},
	})
}

// A history with every write path, healthy: no Kubernetes check fails on
// it (a check that did not know a verb would raise false alarms here).
func TestKubeWritePathsNoFalseAlarms(t *testing.T) {
	b := histbuild.NewKube()
	fin := []string{"vigil.dev/hold"}
	f10 := cr("a", "v:a1", "s:0", 10, 1, fin, "g=a")
	createObj(b, 1, 0, 10, f10, "m1")                                                // a@10
	b.Create(1, 11, 12, histbuild.KobjOf("b", "v:b1", 12, "g=a"))                    // b@12
	statusPatch(b, 2, 20, 30, "a", "s:1", cr("a", "v:a1", "s:1", 14, 1, fin, "g=a")) // a@14
	patch(b, 2, 31, 35, history.PatchMerge, `{"data":{"value":"v:a2"}}`, history.Object{Name: "a", Value: "v:a2"},
		cr("a", "v:a2", "s:1", 16, 2, fin, "g=a")) // a@16
	apply(b, 3, 36, 38, "a", "v:ap", "m2", false, conflict(".data.value"))
	dry := histbuild.KobjOf("b", "v:dry", 12, "g=a")
	b.Op(3, 39, 40, history.KubeRequest{Verb: history.KubeUpdate, Name: "b", DryRun: true, Object: &dry},
		&history.KubeResponse{Code: 200, Object: &dry}, nil, "")
	dryc := histbuild.KobjOf("z", "v:dryc", 0)
	b.Op(3, 39, 40, history.KubeRequest{Verb: history.KubeCreate, DryRun: true, Object: &dryc},
		&history.KubeResponse{Code: 201, Object: &dryc}, nil, "")
	a18 := terminating(cr("a", "v:a2", "s:1", 18, 3, fin, "g=a"))
	b.Op(1, 41, 42, history.KubeRequest{Verb: history.KubeDelete, Name: "a"}, &history.KubeResponse{Code: 200, Object: &a18}, nil, "") // a@18 marked
	// Deleting it again writes nothing and answers the mark's RV.
	b.Op(3, 42, 43, history.KubeRequest{Verb: history.KubeDelete, Name: "a"}, &history.KubeResponse{Code: 200, Object: &a18}, nil, "")
	gen := histbuild.KobjOf("gen-q1", "v:g", 19)
	b.Op(1, 43, 44, history.KubeRequest{Verb: history.KubeCreate, Object: &history.Object{GenerateName: "gen-", Value: "v:g"}},
		&history.KubeResponse{Code: 201, Object: &gen}, nil, "") // gen-q1@19
	a21 := terminating(cr("a", "v:a2", "s:1", 21, 3, fin, "g=a")) // its DELETED
	patch(b, 1, 45, 46, history.PatchMerge, `{"metadata":{"finalizers":null},"data":{"value":"v:a3"}}`,
		history.Object{Name: "a", Value: "v:a3"}, terminating(cr("a", "v:a3", "s:1", 18, 4, nil, "g=a"))) // a deleted @21
	b22 := histbuild.KobjOf("b", "v:b1", 22, "g=a")
	b.Op(2, 47, 48, history.KubeRequest{Verb: history.KubeDeleteCollection, LabelSelector: "g=a"},
		&history.KubeResponse{Code: 200, Items: []history.Object{histbuild.KobjOf("b", "v:b1", 12, "g=a")}}, nil, "") // b deleted @22
	b.List(2, 50, 51, history.KubeRequest{}, 23, "", gen)
	b.List(2, 50, 51, history.KubeRequest{FieldSelector: "metadata.name=gen-q1"}, 23, "", gen)
	b.Get(2, 52, 53, "a", "", nil)
	b.Watch(1, 5, 1, history.KubeWatchRequest{ResourceVersion: "9"})
	b.Ev(1, 11, history.KubeAdded, f10)
	b.Ev(1, 13, history.KubeAdded, histbuild.KobjOf("b", "v:b1", 12, "g=a"))
	b.Ev(1, 31, history.KubeModified, cr("a", "v:a1", "s:1", 14, 1, fin, "g=a"))
	b.Ev(1, 36, history.KubeModified, cr("a", "v:a2", "s:1", 16, 2, fin, "g=a"))
	b.Ev(1, 43, history.KubeModified, a18)
	b.Ev(1, 45, history.KubeAdded, gen)
	b.Ev(1, 47, history.KubeDeleted, a21)
	b.Ev(1, 49, history.KubeDeleted, b22)
	// A server-side apply of an object that does not exist creates it.
	c25 := histbuild.KobjOf("c", "v:c", 25)
	b.Op(3, 60, 61, history.KubeRequest{Verb: history.KubePatch, Name: "c", PatchType: history.PatchApply, FieldManager: "m3",
		Patch: `{"metadata":{"name":"c"},"data":{"value":"v:c"}}`, Object: &history.Object{Name: "c", Value: "v:c"}},
		&history.KubeResponse{Code: 201, Object: &c25}, nil, "")
	b.Ev(1, 62, history.KubeAdded, c25)
	b.Get(2, 63, 64, "c", "", &c25)
	b.End(1, 100, history.EndClient, nil)
	b.Watch(2, 6, 1, history.KubeWatchRequest{ResourceVersion: "9", FieldSelector: "metadata.name=b"})
	b.Ev(2, 13, history.KubeAdded, histbuild.KobjOf("b", "v:b1", 12, "g=a"))
	b.Ev(2, 49, history.KubeDeleted, b22)
	b.End(2, 100, history.EndClient, nil)
	for _, c := range Checks() {
		r := check.Run(c, b.H, check.DefaultConfig())
		if r.Verdict == check.Fail {
			t.Errorf("%s: %s", c.Name, histbuild.ViolationTexts(r.Violations))
		}
	}
	if r := CheckWritePaths(b.H, check.DefaultConfig()); r.Verdict != check.Pass {
		t.Errorf("kube/write-paths: %s (%s)", r.Verdict, r.Reason)
	}
}
