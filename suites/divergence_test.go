package suites

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
	etcdtarget "github.com/vigil-suite/vigil/targets/etcd"
)

// divergeVersions are the releases TestTxnRangeDivergence tries:
// VIGIL_DIVERGE_VERSIONS (comma-separated), else vigil's default.
func divergeVersions() []string {
	if v := os.Getenv("VIGIL_DIVERGE_VERSIONS"); v != "" {
		return strings.Split(v, ",")
	}
	return []string{"v3.6.16"}
}

// TestTxnRangeDivergence sends, through vigil's adapter, one txn whose
// success branch puts a key and ranges at a revision the store has not
// reached to one member of a fresh 3-member cluster, then reads every
// member's Status and HashKV. It reports what it sees.
func TestTxnRangeDivergence(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real etcd cluster")
	}
	for _, version := range divergeVersions() {
		t.Run(version, func(t *testing.T) {
			g := NewWithT(t)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			fx, _ := startCluster(ctx, t, g, version, 3)
			var cs []targets.Client
			for _, ep := range fx.Endpoints() {
				c, err := etcdtarget.Dial(ep, 5*time.Second, fixtures.Security{})
				g.Expect(err).NotTo(HaveOccurred())
				defer c.Close()
				cs = append(cs, c)
			}
			do := func(i int, req history.Request) (*history.Response, error) {
				rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				resp, err := cs[i].Do(rctx, req)
				t.Logf("member %d %s %+v -> resp %+v err %v", i, req.Kind, req, resp, err)
				return resp, err
			}
			for i := 0; i < 3; i++ {
				_, err := do(0, history.Request{Kind: history.OpPut, Key: "/d/a", Value: fmt.Sprint("a.", i)})
				g.Expect(err).NotTo(HaveOccurred())
			}
			head, err := do(0, history.Request{Kind: history.OpRange, Key: "/d/a"})
			g.Expect(err).NotTo(HaveOccurred())
			txn := history.Request{Kind: history.OpTxn, Success: []history.Request{
				{Kind: history.OpPut, Key: "/d/b", Value: "b.1"},
				{Kind: history.OpRange, Key: "/d/a", Revision: head.Revision + 100},
			}}
			do(1, txn)
			time.Sleep(time.Second)
			for i := range cs {
				do(i, history.Request{Kind: history.OpStatus})
				do(i, history.Request{Kind: history.OpHashKV})
				do(i, history.Request{Kind: history.OpRange, Key: "/d/b", Serializable: true})
			}
		})
	}
}
