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
	op(1, 100, 110, history.KubeRequest{Verb: history.KubeUpdate, Name: "a", Object: obj("v4", "", "25", 0)},
		&history.KubeResponse{Code: 200, Object: obj("v4", "s1", "30", 4)})
	if err := h.Add(history.Record{Mark: &history.Mark{Name: history.MarkFinalWrite, Time: 110, Op: id, Revision: 30}}); err != nil {
		t.Fatal(err)
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
