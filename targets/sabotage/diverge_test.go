package sabotage

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// store is a tiny multi-version store that two fake members share: every
// put takes the next revision.
type store struct {
	mu   sync.Mutex
	puts []history.KV // puts[i] took revision i+1
}

func (s *store) at(rev int64, key string) (history.KV, bool) {
	var kv history.KV
	found := false
	for i := int64(0); i < rev && i < int64(len(s.puts)); i++ {
		if p := s.puts[i]; p.Key == key {
			if !found {
				p.CreateRevision, p.Version = p.ModRevision, 1
			} else {
				p.CreateRevision, p.Version = kv.CreateRevision, kv.Version+1
			}
			kv, found = p, true
		}
	}
	return kv, found
}

// member is one member of the store, by name.
type member struct {
	s    *store
	name string
}

func (m *member) Member() string                        { return m.name }
func (m *member) Close() error                          { return nil }
func (m *member) RequestProgress(context.Context) error { return nil }
func (m *member) Lease(context.Context, targets.LeaseRequest) (targets.LeaseAnswer, error) {
	return targets.LeaseAnswer{}, nil
}
func (m *member) Watch(context.Context, history.WatchRequest) <-chan targets.WatchMessage { return nil }

func (m *member) Do(_ context.Context, req history.Request) (*history.Response, error) {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	head := int64(len(m.s.puts))
	at := req.Revision
	if at == 0 {
		at = head
	}
	switch req.Kind {
	case history.OpPut:
		m.s.puts = append(m.s.puts, history.KV{Key: req.Key, Value: req.Value, ModRevision: head + 1})
		return &history.Response{Revision: head + 1}, nil
	case history.OpRange:
		resp := &history.Response{Revision: head}
		for _, k := range []string{"a", "b"} {
			if kv, ok := m.s.at(at, k); ok && (req.End != "" || k == req.Key) {
				resp.KVs = append(resp.KVs, kv)
			}
		}
		resp.Count = int64(len(resp.KVs))
		return resp, nil
	case history.OpHashKV:
		h := uint32(17)
		for i := int64(0); i < at; i++ {
			for _, c := range m.s.puts[i].Value {
				h = h*31 + uint32(c)
			}
		}
		return &history.Response{Revision: head, Hash: h}, nil
	}
	return nil, fmt.Errorf("member: %s", req.Kind)
}

func TestDivergeMember(t *testing.T) {
	sab, rec := newSaboteur(t, "diverge-member", 3)
	st := &store{}
	m1 := sab.Wrap(&member{s: st, name: "m1"}, 1)
	m2 := sab.Wrap(&member{s: st, name: "m2"}, 2)
	ctx := context.Background()
	do := func(c targets.Client, req history.Request) *history.Response {
		t.Helper()
		resp, err := c.Do(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	var rev int64
	for i := 0; sab.Injected() == 0; i++ {
		if i > 10 {
			t.Fatal("never injected")
		}
		do(m2, history.Request{Kind: history.OpPut, Key: "b", Value: fmt.Sprintf("b.%d", i)})
		rev = do(m1, history.Request{Kind: history.OpPut, Key: "a", Value: fmt.Sprintf("a.%d", i)}).Revision
	}
	do(m2, history.Request{Kind: history.OpPut, Key: "b", Value: "b.last"})
	f := rec.History().Faults
	if len(f) != 1 || f[0].Details["diverged_member"] != "m1" || f[0].Details["revision"] != fmt.Sprint(rev) ||
		f[0].Details["key"] != "a" {
		t.Fatalf("faults %+v, want one at revision %d of a on m1", f, rev)
	}
	hash := func(c targets.Client, at int64) uint32 {
		return do(c, history.Request{Kind: history.OpHashKV, Revision: at}).Hash
	}
	if hash(m1, rev-1) != hash(m2, rev-1) {
		t.Error("hashes differ before the put")
	}
	for _, at := range []int64{rev, rev + 1, 0} {
		if hash(m1, at) == hash(m2, at) {
			t.Errorf("hashes agree at %d, from the put on", at)
		}
	}
	read := func(c targets.Client, at int64) []history.KV {
		return do(c, history.Request{Kind: history.OpRange, Key: "a", End: "c", Revision: at, Serializable: true}).KVs
	}
	of := func(kvs []history.KV, key string) string {
		for _, kv := range kvs {
			if kv.Key == key {
				return fmt.Sprintf("%s@%d", kv.Value, kv.ModRevision)
			}
		}
		return "absent"
	}
	before, after, other := read(m2, rev-1), read(m1, rev+1), read(m2, rev+1)
	if of(after, "a") != of(before, "a") || of(other, "a") == of(before, "a") || of(after, "b") != of(other, "b") {
		t.Errorf("m1 reads at %d: %v, m2 %v (at %d: %v): want a as before the put on m1, b alike", rev+1, after, other, rev-1, before)
	}
	// A linearizable read is left alone: only the member's own state is.
	if got := do(m1, history.Request{Kind: history.OpRange, Key: "a", Revision: rev}).KVs; got[0].ModRevision != rev {
		t.Errorf("linearizable read altered: %v", got)
	}
}
