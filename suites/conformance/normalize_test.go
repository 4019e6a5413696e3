package conformance

import (
	"encoding/base64"
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
