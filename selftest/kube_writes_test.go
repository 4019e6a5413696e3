package selftest

import (
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// writePathsHistory is a small healthy history of history format 5: a
// custom resource a patched, status-written, applied with force and
// dry-run updated, read after each.
func writePathsHistory(t *testing.T) *history.History {
	h := history.New(history.Meta{Prefix: "/registry/vigil.dev/ns/", Target: history.Target{Kind: "kube"}})
	id := int64(0)
	op := func(client, call, ret int, req history.KubeRequest, resp *history.KubeResponse) {
		id++
		o := history.KubeOperation{ID: id, Client: client, Server: "kube-0", Call: time.Duration(call), Return: time.Duration(ret),
			Request: req, Response: resp}
		if err := h.Add(history.Record{KubeOp: &o}); err != nil {
			t.Fatal(err)
		}
	}
	obj := func(value, status string, rv string, gen int64) *history.Object {
		return &history.Object{Name: "a", UID: "u-a", ResourceVersion: rv, Value: value, Status: status, Generation: gen,
			Labels: map[string]string{"g": "a"}}
	}
	get := func(call int, o *history.Object) {
		op(9, call, call+1, history.KubeRequest{Verb: history.KubeGet, Name: "a"}, &history.KubeResponse{Code: 200, Object: o})
	}
	op(1, 0, 10, history.KubeRequest{Verb: history.KubeCreate, Object: &history.Object{Name: "a", Value: "v1", Labels: map[string]string{"g": "a"}}},
		&history.KubeResponse{Code: 201, Object: obj("v1", "", "10", 1)})
	get(11, obj("v1", "", "10", 1))
	op(1, 20, 30, history.KubeRequest{Verb: history.KubePatch, Name: "a", PatchType: history.PatchMerge, Patch: `{"data":{"value":"v2"}}`,
		Object: &history.Object{Name: "a", Value: "v2"}}, &history.KubeResponse{Code: 200, Object: obj("v2", "", "15", 2)})
	get(31, obj("v2", "", "15", 2))
	op(2, 40, 50, history.KubeRequest{Verb: history.KubePatch, Name: "a", PatchType: history.PatchMerge, Subresource: history.SubresourceStatus,
		Patch: `{"status":{"value":"s1"}}`, Object: &history.Object{Name: "a", Status: "s1"}},
		&history.KubeResponse{Code: 200, Object: obj("v2", "s1", "20", 2)})
	get(51, obj("v2", "s1", "20", 2))
	op(3, 60, 70, history.KubeRequest{Verb: history.KubePatch, Name: "a", PatchType: history.PatchApply, FieldManager: "m3", Force: true,
		Patch: `{"metadata":{"name":"a"},"data":{"value":"v3"}}`, Object: &history.Object{Name: "a", Value: "v3"}},
		&history.KubeResponse{Code: 200, Object: obj("v3", "s1", "25", 3)})
	get(71, obj("v3", "s1", "25", 3))
	op(4, 80, 90, history.KubeRequest{Verb: history.KubeUpdate, Name: "a", DryRun: true, Object: obj("v-dry", "", "", 0)},
		&history.KubeResponse{Code: 200, Object: obj("v-dry", "s1", "25", 4)})
	get(91, obj("v3", "s1", "25", 3))
	// f, with a finalizer, marked by a delete; a create with
	// generateName; a delete-collection of it by label.
	fin := []string{"vigil.dev/hold"}
	f26 := &history.Object{Name: "f", UID: "u-f", ResourceVersion: "26", Value: "f1", Generation: 1, Finalizers: fin}
	f27 := *f26
	f27.ResourceVersion, f27.Generation, f27.DeletionTimestamp = "27", 2, "2026-11-27T23:00:00Z"
	op(5, 92, 93, history.KubeRequest{Verb: history.KubeCreate, Object: &history.Object{Name: "f", Value: "f1", Finalizers: fin}},
		&history.KubeResponse{Code: 201, Object: f26})
	op(5, 94, 95, history.KubeRequest{Verb: history.KubeDelete, Name: "f"}, &history.KubeResponse{Code: 200, Object: &f27})
	g28 := &history.Object{Name: "g-x7k2q", UID: "u-g", ResourceVersion: "28", Value: "g1", Labels: map[string]string{"k": "d"}}
	op(6, 96, 97, history.KubeRequest{Verb: history.KubeCreate, Object: &history.Object{GenerateName: "g-", Value: "g1",
		Labels: map[string]string{"k": "d"}}}, &history.KubeResponse{Code: 201, Object: g28})
	op(6, 98, 99, history.KubeRequest{Verb: history.KubeDeleteCollection, LabelSelector: "k=d"},
		&history.KubeResponse{Code: 200, Items: []history.Object{*g28}})
	op(1, 100, 110, history.KubeRequest{Verb: history.KubeUpdate, Name: "a", Object: obj("v4", "", "25", 0)},
		&history.KubeResponse{Code: 200, Object: obj("v4", "s1", "30", 4)})
	if err := h.Add(history.Record{Mark: &history.Mark{Name: history.MarkFinalWrite, Time: 110, Op: id, Revision: 30}}); err != nil {
		t.Fatal(err)
	}
	// A watch from 9 that saw every change.
	recs := []history.Record{{KubeWatch: &history.KubeWatch{ID: 1, Client: 7, Server: "kube-0", Call: 1,
		Request: history.KubeWatchRequest{ResourceVersion: "9"}}}}
	ev := func(at int, typ string, o *history.Object) {
		recs = append(recs, history.Record{KubeEvent: &history.KubeEvent{Watch: 1, Time: time.Duration(at), Type: typ, Object: o}})
	}
	ev(10, history.KubeAdded, obj("v1", "", "10", 1))
	ev(30, history.KubeModified, obj("v2", "", "15", 2))
	ev(50, history.KubeModified, obj("v2", "s1", "20", 2))
	ev(70, history.KubeModified, obj("v3", "s1", "25", 3))
	ev(93, history.KubeAdded, f26)
	ev(95, history.KubeModified, &f27)
	ev(97, history.KubeAdded, g28)
	g29 := *g28
	g29.ResourceVersion = "29"
	ev(99, history.KubeDeleted, &g29)
	ev(110, history.KubeModified, obj("v4", "s1", "30", 4))
	recs = append(recs, history.Record{KubeWatchEnd: &history.KubeWatchEnd{Watch: 1, Time: 120, Reason: history.EndClient}})
	for _, r := range recs {
		if err := h.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// TestWritePathKinds: each corruption of the write paths applies to a
// format-5 history and kube/write-paths catches it.
func TestWritePathKinds(t *testing.T) {
	rep, err := Run(writePathsHistory(t), Config{PerKind: 3, Seed: 1, Checks: check.DefaultConfig(), Only: writePathKinds})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Kinds) != len(writePathKinds) {
		t.Fatalf("%d kinds tried, want %d", len(rep.Kinds), len(writePathKinds))
	}
	for _, k := range rep.Kinds {
		t.Logf("%-30s sites %d tried %d caught %d by owner %d", k.Kind, k.Sites, k.Tried, k.Caught, k.ByOwner)
		if k.Tried == 0 || k.ByOwner != k.Tried {
			t.Errorf("%s: tried %d, caught by %s %d", k.Kind, k.Tried, k.Owner, k.ByOwner)
		}
	}
	for _, m := range rep.Misses {
		t.Errorf("%s missed: %s (%s)", m.Kind, m.What, m.Argued)
	}
}
