package conformance

import (
	"encoding/base64"
	"encoding/json"
	"testing"
)

// TestNormalizeLeaseKeysUnordered: the keys a lease's time-to-live lists
// compare as a set (etcd answers them in map order), while the order of
// other lists still counts.
func TestNormalizeLeaseKeysUnordered(t *testing.T) {
	n := newNormalizer("/p/", 10)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	answer := func(keys ...string) string {
		var list []any
		for _, k := range keys {
			list = append(list, b64(k))
		}
		return string(n.json(map[string]any{"keys": list}, true))
	}
	if a, b := answer("/p/a", "/p/b"), answer("/p/b", "/p/a"); a != b {
		t.Errorf("lease keys in another order differ: %s vs %s", a, b)
	}
	kvs := func(keys ...string) string {
		var list []any
		for _, k := range keys {
			list = append(list, map[string]any{"key": b64(k)})
		}
		return string(n.json(map[string]any{"kvs": list}, true))
	}
	if a, b := kvs("/p/a", "/p/b"), kvs("/p/b", "/p/a"); a == b {
		t.Errorf("a range's key-values in another order must differ: %s", a)
	}
}

// TestNormalizeWatchIDsAndServerIdentity: a stream's first watch compares
// alike whether the server numbered it 0 (omitted by JSON) or 1, and a
// header compares alike with or without the server's identity fields.
func TestNormalizeWatchIDsAndServerIdentity(t *testing.T) {
	answer := func(resp map[string]any) string {
		return string(newNormalizer("/p/", 10).step(rawStep{call: "Watch.Recv", resp: resp}).Answer)
	}
	etcd := map[string]any{"created": true, "header": map[string]any{"revision": float64(10),
		"cluster_id": float64(7), "member_id": float64(8), "raft_term": float64(2)}}
	other := map[string]any{"created": true, "watch_id": float64(1), "header": map[string]any{"revision": float64(10)}}
	if a, b := answer(etcd), answer(other); a != b {
		t.Errorf("the same created response differs: %s vs %s", a, b)
	}
	if _, has := etcd["watch_id"]; has {
		t.Error("normalizing changed the recorded answer")
	}
	// On one stream, watch 0 and watch 1 stay two watches.
	n := newNormalizer("/p/", 10)
	first := string(n.step(rawStep{call: "Watch.Recv", resp: etcd}).Answer)
	next := string(n.step(rawStep{call: "Watch.Recv", resp: other}).Answer)
	if first == next {
		t.Errorf("watch ids 0 and 1 of one stream compare alike: %s", first)
	}
}

// TestCompareMaskedByLimitation: a probe that differs from the reference
// only in what a limitation masks is that limitation; any other
// difference stays a difference.
func TestCompareMaskedByLimitation(t *testing.T) {
	step := func(answer string) []Step { return []Step{{Call: "Range", Answer: json.RawMessage(answer)}} }
	ref := []Result{{Info: Info{Name: "a"}, Verdict: Pass, Transcript: step(`{"kvs":[{"key":"$/a","version":1}]}`)},
		{Info: Info{Name: "b"}, Verdict: Pass, Transcript: step(`{"kvs":[{"key":"$/a","version":1}]}`)}}
	target := []Result{{Info: Info{Name: "a"}, Verdict: Pass, Transcript: step(`{"kvs":[{"key":"$/a"}]}`)},
		{Info: Info{Name: "b"}, Verdict: Pass, Transcript: step(`{"kvs":[{"key":"$/b"}]}`)}}
	got := CompareWithReference(target, ref, KineLimitations()...)
	if got[0].Verdict != Documented || got[0].Reason == "" {
		t.Errorf("a version-only difference: %s %q, want limitation with its reason", got[0].Verdict, got[0].Reason)
	}
	if got[1].Verdict != Differs {
		t.Errorf("a different key: %s, want differs", got[1].Verdict)
	}
	if got := CompareWithReference(target, ref); got[0].Verdict != Differs {
		t.Errorf("without the limitation a version-only difference is %s, want differs", got[0].Verdict)
	}
}
