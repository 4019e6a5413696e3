package suites

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/history"
	etcdtarget "github.com/vigil-suite/vigil/targets/etcd"
)

// plainLoad is the yardstick of BenchmarkRecordingVsPlain: the load a bare
// clientv3 program gives the cluster, with nothing recorded. It uses the
// same connection layout as vigil's workload (client i has a connection of
// its own to member i), the same keys and values, and, for the mix, the
// same request kinds in the same proportions as nextRequest.
type plainLoad struct {
	endpoints []string
	clients   int
	keys      int
	prefix    string
	putsOnly  bool
	// watchers, if > 0, opens that many bare watches of the prefix, each
	// on a connection of its own, drained without recording: to see what
	// serving vigil's watches costs the cluster apart from recording them.
	watchers int
}

// run drives the load for d and returns the requests answered (with or
// without error) within d and how long that took.
func (p plainLoad) run(ctx context.Context, d time.Duration, seed int64) (int64, time.Duration, error) {
	var conns []*etcdtarget.Client
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < p.clients+p.watchers; i++ {
		c, err := etcdtarget.Dial(p.endpoints[i%len(p.endpoints)], 5*time.Second, fixtures.Security{})
		if err != nil {
			return 0, 0, err
		}
		conns = append(conns, c)
	}
	watchCtx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	var wg sync.WaitGroup
	for _, c := range conns[p.clients:] {
		wc := c.Raw().Watch(watchCtx, p.prefix, clientv3.WithPrefix(), clientv3.WithPrevKV())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range wc {
			}
		}()
	}
	var ops atomic.Int64
	runCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	var kv sync.WaitGroup
	for i, c := range conns[:p.clients] {
		kv.Add(1)
		go func() {
			defer kv.Done()
			p.client(runCtx, c.Raw(), i, rand.New(rand.NewPCG(uint64(seed), uint64(i))), &ops)
		}()
	}
	kv.Wait()
	elapsed := time.Since(start)
	stopWatches()
	wg.Wait()
	return ops.Load(), elapsed, ctx.Err()
}

// client sends one request at a time until ctx ends; a request that ctx's
// end cuts off is not counted.
func (p plainLoad) client(ctx context.Context, c *clientv3.Client, id int, rng *rand.Rand, ops *atomic.Int64) {
	var head int64
	modRev := map[string]int64{}
	for seq := 0; ctx.Err() == nil; seq++ {
		key := fmt.Sprintf("%sk%03d", p.prefix, rng.IntN(p.keys))
		value := fmt.Sprintf("%d.%d", id, seq)
		var rev int64
		var err error
		if p.putsOnly {
			var r *clientv3.PutResponse
			if r, err = c.Put(ctx, key, value); err == nil {
				rev = r.Header.Revision
			}
		} else {
			rev, err = p.mixed(ctx, c, rng, key, value, head, modRev)
		}
		if ctx.Err() != nil {
			return
		}
		ops.Add(1)
		head = max(head, rev)
	}
}

// mixed sends one request of nextRequest's mix and returns the revision
// of the answer.
func (p plainLoad) mixed(ctx context.Context, c *clientv3.Client, rng *rand.Rand, key, value string, head int64, modRev map[string]int64) (int64, error) {
	var op clientv3.Op
	switch r := rng.IntN(100); {
	case r < 25:
		op = clientv3.OpPut(key, value)
	case r < 31:
		op = clientv3.OpDelete(key)
	case r < 49:
		op = clientv3.OpGet(key)
	case r < 58:
		op = clientv3.OpGet(key, clientv3.WithSerializable())
	case r < 67:
		op = clientv3.OpGet(p.prefix, clientv3.WithRange(history.PrefixEnd(p.prefix)), clientv3.WithLimit(int64(rng.IntN(6))))
	case r < 70:
		op = clientv3.OpGet(key, clientv3.WithRev(max(1, head-int64(1+rng.IntN(400)))))
	case r < 71:
		op = clientv3.OpGet(key, clientv3.WithRev(head+1000))
	default:
		cmp := clientv3.Compare(clientv3.ModRevision(key), "=", modRev[key])
		switch rng.IntN(10) {
		case 0:
			cmp = clientv3.Compare(clientv3.Version(key), ">", 0)
		case 1:
			cmp = clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
		}
		ops := []clientv3.Op{clientv3.OpPut(key, value)}
		if rng.IntN(3) == 0 {
			if other := fmt.Sprintf("%sk%03d", p.prefix, rng.IntN(p.keys)); other != key {
				second := clientv3.OpPut(other, value+"b")
				if rng.IntN(2) == 0 {
					second = clientv3.OpDelete(other)
				}
				ops = append(ops, second)
			}
		}
		resp, err := c.Txn(ctx).If(cmp).Then(ops...).Else(clientv3.OpGet(key)).Commit()
		if err != nil {
			return 0, err
		}
		if resp.Succeeded {
			modRev[key] = resp.Header.Revision
		} else if g := resp.Responses[0].GetResponseRange(); g != nil && len(g.Kvs) > 0 {
			modRev[key] = g.Kvs[0].ModRevision
		}
		return resp.Header.Revision, nil
	}
	resp, err := c.Do(ctx, op)
	if err != nil {
		return 0, err
	}
	switch {
	case resp.Put() != nil:
		modRev[key] = resp.Put().Header.Revision
		return resp.Put().Header.Revision, nil
	case resp.Del() != nil:
		modRev[key] = 0
		return resp.Del().Header.Revision, nil
	default:
		return resp.Get().Header.Revision, nil
	}
}
