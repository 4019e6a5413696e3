package chaos

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/history"
)

// testCluster says what cluster an injector test needs.
type testCluster struct {
	members    int
	failpoints bool      // the failpoint build of the default etcd
	proxied    bool      // behind vigil's proxies (a ProxyNet)
	net        *NetnsNet // in network namespaces, if set
	settings   fixtures.EtcdSettings
}

// start brings up a real cluster and the Env injectors act on: processes,
// links, failpoints and membership where the cluster offers them, and a
// client for the requests a fault sends itself (Status, Compact).
func (tc testCluster) start(t *testing.T) (*etcdproc.Cluster, *Env, *clientv3.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real etcd cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := binaries.Etcd(ctx, binaries.Options{Failpoints: tc.failpoints, Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	cfg := etcdproc.Config{Binary: bin, Members: tc.members, Dir: t.TempDir(), Settings: tc.settings, Version: binaries.DefaultEtcdVersion}
	var links Links
	switch {
	case tc.net != nil:
		cfg.Network, links = tc.net, tc.net
	case tc.proxied:
		pn := NewProxyNet(1)
		t.Cleanup(func() { pn.Close() })
		cfg.Network, links = pn, pn
	}
	c := etcdproc.New(cfg)
	t.Cleanup(func() { c.Stop() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	env := &Env{Fixture: c, Processes: c, Failpoints: c, Membership: c, Links: links,
		Rec: history.NewRecorder(history.Meta{}, history.NewClock(), nil)}
	env.Do = func(ctx context.Context, req history.Request) (*history.Response, error) {
		switch req.Kind {
		case history.OpStatus:
			st, err := cli.Status(ctx, c.Endpoints()[0])
			if err != nil {
				return nil, err
			}
			return &history.Response{Revision: st.Header.Revision}, nil
		case history.OpCompact:
			_, err := cli.Compact(ctx, req.Revision)
			return &history.Response{}, err
		}
		return nil, nil
	}
	env.DoOn = func(ctx context.Context, member string, req history.Request) (*history.Response, error) {
		if req.Kind != history.OpStatus {
			return nil, fmt.Errorf("the test cluster sends only Status to one member")
		}
		st, err := cli.Status(ctx, endpointOf(c, member))
		if err != nil {
			return nil, err
		}
		return &history.Response{Revision: st.Header.Revision}, nil
	}
	return c, env, cli
}
