package history

import (
	"slices"
	"testing"
)

func TestFormOf(t *testing.T) {
	p := "/vigil/1/"
	get := func(k string) Request { return Request{Kind: OpRange, Key: k} }
	cases := []struct {
		req  Request
		want string
	}{
		{Request{Kind: OpPut, Key: p + "a", Value: "1"}, "put"},
		{Request{Kind: OpPut, Key: p + "a", PrevKV: true}, "put-prev-kv"},
		{Request{Kind: OpPut, Key: p + "a", Lease: 7}, "put-lease"},
		{Request{Kind: OpPut, Key: p + "a", Lease: 7, PrevKV: true}, "put-prev-kv-lease"},
		{Request{Kind: OpDelete, Key: p + "a"}, "delete"},
		{Request{Kind: OpDelete, Key: p + "a", PrevKV: true}, "delete-prev-kv"},
		{Request{Kind: OpDelete, Key: p, End: PrefixEnd(p)}, "delete-prefix"},
		{get(p + "a"), "range"},
		{Request{Kind: OpRange, Key: p, End: PrefixEnd(p)}, "range-prefix"},
		{Request{Kind: OpRange, Key: p, End: PrefixEnd(p), Limit: 3}, "range-prefix-limit"},
		{Request{Kind: OpRange, Key: p + "a", Revision: 9}, "range-rev"},
		{Request{Kind: OpRange, Key: p + "a", Serializable: true}, "range-serializable"},
		{Request{Kind: OpRange, Key: p, End: PrefixEnd(p), KeysOnly: true}, "range-prefix-keys-only"},
		{Request{Kind: OpRange, Key: p, End: PrefixEnd(p), CountOnly: true}, "range-prefix-count-only"},
		{Request{Kind: OpRange, Key: p + "k3", End: PrefixEnd(p), Limit: 2, Revision: 5}, "range-interval-limit-rev"},
		{Request{Kind: OpTxn, Compares: []Compare{{Key: "a", Target: "mod"}},
			Success: []Request{{Kind: OpPut, Key: "a"}}}, "txn-mod"},
		{Request{Kind: OpTxn, Compares: []Compare{{Key: "a", Target: "mod"}},
			Success: []Request{{Kind: OpPut, Key: "a"}}, Failure: []Request{get("a")}}, "txn-mod-else-read"},
		{Request{Kind: OpTxn, Compares: []Compare{{Key: "a", Target: "mod"}},
			Success: []Request{{Kind: OpDelete, Key: "a"}}, Failure: []Request{get("a")}}, "txn-mod-delete-else-read"},
		{Request{Kind: OpTxn, Compares: []Compare{{Key: "a", Target: "Version"}},
			Success: []Request{{Kind: OpPut, Key: "a"}}, Failure: []Request{get("a")}}, "txn-version-else-read"},
		{Request{Kind: OpTxn, Compares: []Compare{{Key: "a", Target: "version"}},
			Success: []Request{get("a")}}, "txn-version-read"},
		{Request{Kind: OpTxn, Compares: []Compare{{Key: "a", Target: "mod"}, {Key: "b", Target: "value"}, {Key: "c", Target: "mod"}},
			Success: []Request{{Kind: OpPut, Key: "a"}, {Kind: OpDelete, Key: "b"}}, Failure: []Request{{Kind: OpPut, Key: "c"}}},
			"txn-mod-value-multi-else-write"},
		{Request{Kind: OpTxn, Success: []Request{{Kind: OpPut, Key: "a"}, {Kind: OpDelete, Key: "b"}}}, "txn-multi"},
		{Request{Kind: OpTxn}, "txn-empty"},
		{Request{Kind: OpCompact, Revision: 4}, "compact"},
		{Request{Kind: OpHashKV}, "hashkv"},
	}
	for _, c := range cases {
		if got := FormOf(c.req); got != c.want {
			t.Errorf("FormOf(%+v) = %q, want %q", c.req, got, c.want)
		}
	}
}

func TestWatchForms(t *testing.T) {
	if got := WatchForms(WatchRequest{Key: "a"}); !slices.Equal(got, []string{FormWatch}) {
		t.Errorf("plain watch: %v", got)
	}
	got := WatchForms(WatchRequest{Key: "a", PrevKV: true, NoDelete: true, StartRevision: 3})
	if want := []string{FormWatchPrevKV, FormWatchNoDelete, FormWatchStartRev}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestSaysRefused(t *testing.T) {
	for msg, want := range map[string]bool{
		"lease revoke is not supported":                          true,
		"etcdserver: unsupported operations in txn request":      true,
		"delete is not implemented by kine":                      true,
		"etcdserver: mvcc: required revision has been compacted": false,
		"context deadline exceeded":                              false,
	} {
		if SaysRefused(msg) != want {
			t.Errorf("SaysRefused(%q) != %v", msg, want)
		}
	}
}
