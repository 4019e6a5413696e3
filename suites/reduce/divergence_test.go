package reduce

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/suites/conformance"
)

// starter starts fresh 3-member clusters of an etcd release.
func starter(t *testing.T, version string) Starter {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: version, Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context) (System, error) {
		c := etcdproc.New(etcdproc.Config{Binary: bin, Members: 3, Dir: t.TempDir(), Version: version})
		if err := c.Start(ctx); err != nil {
			c.Stop()
			return System{}, err
		}
		return System{Endpoints: c.Endpoints(), Stop: func() { c.Stop() }}, nil
	}
}

// etcd #18667 on v3.6.16: a txn with a put and a range at a future
// revision, sent to one member, fails there and applies on the others.
// Among other requests of a run, reduction keeps that txn alone, and the
// program written from it exits 1 against v3.6.16 and 0 against v3.7.3,
// which no longer strips a txn's ranges on the members the client is not
// connected to.
func TestReduceADivergenceToAProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real etcd clusters")
	}
	g := NewWithT(t)
	ctx := context.Background()
	prefix := "/vigil/run-1/"
	k := func(s string) string { return prefix + s }
	steps := []Step{
		{Member: 0, Req: history.Request{Kind: history.OpPut, Key: k("a"), Value: "0.1"}, Head: 40},
		{Member: 2, Req: history.Request{Kind: history.OpRange, Key: k("a")}, Head: 41},
		{Member: 1, Req: history.Request{Kind: history.OpTxn,
			Compares: []history.Compare{{Key: k("a"), Target: history.CompareVersion, Result: ">", Int: 0}},
			Success: []history.Request{
				{Kind: history.OpPut, Key: k("b"), Value: "1.7", PrevKV: true},
				{Kind: history.OpRange, Key: k("a"), Revision: 45},
			}}, Head: 41},
		{Member: 0, Req: history.Request{Kind: history.OpDelete, Key: k("c")}, Head: 41},
	}
	res, err := Reduce(ctx, steps, Divergence(starter(t, "v3.6.16")), 30)
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("%d replays: kept %d step(s); %s", res.Replays, len(res.Steps), res.Saw)
	g.Expect(res.Steps).To(HaveLen(1))
	g.Expect(res.Steps[0].Req.Kind).To(Equal(history.OpTxn))
	g.Expect(res.Saw).To(ContainSubstring("member"))

	src, err := DivergenceProgram(Finding{Check: "kv/member-agreement", Title: "members disagree",
		Saw: res.Saw, Server: "etcd v3.6.16, 3 members"}, res.Steps, prefix)
	g.Expect(err).NotTo(HaveOccurred())
	bin := conformance.BuildReproduction(t, "divergence", src)
	for _, c := range []struct {
		version string
		exit    int
	}{{"v3.6.16", 1}, {"v3.7.3", 0}} {
		sys, err := starter(t, c.version)(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		out, err := exec.Command(bin, "-endpoints", strings.Join(sys.Endpoints, ",")).CombinedOutput()
		sys.Stop()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		t.Logf("%s: exit %d\n%s", c.version, code, out)
		g.Expect(code).To(Equal(c.exit), "%s\n%s", c.version, out)
	}
}
