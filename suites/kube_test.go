package suites

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/checkers"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/fixtures/kubeapiserver"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/internal/longtest"
	"github.com/vigil-suite/vigil/reports"
	"github.com/vigil-suite/vigil/targets/kube"
	"github.com/vigil-suite/vigil/workload"
)

// startKube brings up etcd and kube-apiserver replicas for a test. It skips
// only when kube-apiserver cannot be built here, and says why.
func startKube(t *testing.T, ctx context.Context, replicas, members int, watchCache bool) *kubeapiserver.Fixture {
	t.Helper()
	g := NewWithT(t)
	etcdBin, err := binaries.Etcd(ctx, binaries.Options{Version: binaries.DefaultEtcdVersion, Progress: os.Stderr})
	g.Expect(err).NotTo(HaveOccurred())
	kubeBin, err := binaries.KubeAPIServer(ctx, binaries.KubeOptions{Progress: os.Stderr})
	if err != nil {
		t.Skipf("kube-apiserver %s cannot be built here: %v", binaries.DefaultKubeVersion, err)
	}
	fx := kubeapiserver.NewFixture(kubeapiserver.FixtureConfig{Dir: t.TempDir(),
		Etcd:       etcdproc.Config{Binary: etcdBin, Members: members, Version: binaries.DefaultEtcdVersion},
		APIServers: kubeapiserver.Config{Binary: kubeBin, Replicas: replicas, DisableWatchCache: !watchCache}})
	t.Cleanup(func() { fx.Stop() })
	g.Expect(fx.Start(ctx)).To(Succeed())
	return fx
}

func kubeServers(fx *kubeapiserver.Fixture) []kube.Config {
	s := fx.Servers()
	var out []kube.Config
	for _, m := range s.Replicas() {
		out = append(out, kube.Config{Server: m.ClientURL, Name: m.Name, Token: s.Token(), CAFile: s.CAFile()})
	}
	return out
}

// A short Kubernetes run over a real kube-apiserver completes, every check
// reports a verdict, and the history holds what the checks need: every
// verb, conflicts, watches with events and bookmarks, streaming lists,
// 410s, the etcd oracle, the final write. One replica over one etcd
// member without the watch cache (every read and watch goes to etcd, so
// the forced compactions expire them), and two replicas over three
// members with it, where a watch cache holds its whole window in a short
// run: there a killed replica (a fresh cache) makes the 410s, and its
// informers relist.
func TestKubeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	cases := []struct {
		replicas, members int
		watchCache        bool
		faults            []string
		resource          kube.Resource
		duration          time.Duration
	}{
		{1, 1, false, nil, kube.ConfigMaps, 20 * time.Second},
		{2, 3, true, []string{"kill-apiserver"}, kube.ConfigMaps, 20 * time.Second},
		{1, 1, true, nil, kube.VigilObjects, 10 * time.Second},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d-apiservers/%d-members/watch-cache=%v/%s", c.replicas, c.members, c.watchCache, c.resource), func(t *testing.T) {
			if i != 1 { // make test keeps the richest case: two API servers, one killed
				longtest.Skip(t)
			}
			g := NewWithT(t)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			fx := startKube(t, ctx, c.replicas, c.members, c.watchCache)
			dir := t.TempDir()
			wl := workload.DefaultKubeConfig()
			wl.Duration = c.duration
			var schedule chaos.Schedule
			if c.faults != nil {
				schedule = chaos.Plan(7, c.faults, 8*time.Second, wl.Duration)
				g.Expect(schedule.Steps).NotTo(BeEmpty())
			}
			out, err := RunKube(ctx, fx, KubeConfig{Common: Common{Out: dir, Seed: 7, Vigil: "test", Checks: check.DefaultConfig(), Schedule: schedule, Logf: t.Logf},
				Workload: wl, Servers: kubeServers(fx), Etcd: fx.Endpoints(), Resource: c.resource})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.Interrupted).To(BeFalse())

			h := out.History
			f := reports.CountKube(h)
			t.Logf("%d results; figures:\n%s", len(out.Results), f)
			g.Expect(out.Results).To(HaveLen(len(checkers.Kube())), "every Kubernetes check reports")
			for _, r := range out.Results {
				g.Expect(r.Verdict).NotTo(BeEmpty(), "%s has no verdict", r.Name)
				if r.Should {
					// A warning, not a failure (e.g. kube/bookmarks: no
					// bookmarks without the watch cache).
					continue
				}
				g.Expect(r.Verdict).To(Or(Equal(check.Pass), Equal(check.Skipped)), "%s: %s %v", r.Name, r.Reason, r.Violations)
			}
			g.Expect(check.Overall(out.Results)).To(Equal(check.Pass))
			for _, v := range []history.KubeVerb{history.KubeCreate, history.KubeGet, history.KubeList, history.KubeUpdate, history.KubeDelete} {
				g.Expect(f.Ops[v]).To(BeNumerically(">", 20), "calls of %s", v)
			}
			g.Expect(f.Answers["update 409"]).To(BeNumerically(">", 0), "optimistic-concurrency conflicts")
			g.Expect(f.Events[history.KubeAdded] + f.Events[history.KubeModified]).To(BeNumerically(">", 500))
			g.Expect(f.Events[history.KubeDeleted]).To(BeNumerically(">", 0))
			g.Expect(f.InitialEventsEnd).To(BeNumerically(">", 0), "streaming lists end their initial events with a bookmark")
			if !c.watchCache || c.faults != nil {
				// A watch cache serves its whole window in a short healthy
				// run; without it, or after a replica's restart, RVs expire.
				g.Expect(f.Expired).To(BeNumerically(">", 0), "410s")
			}
			g.Expect(f.Resumes).To(BeNumerically(">", 0))
			if c.faults != nil {
				g.Expect(h.Faults).NotTo(BeEmpty())
				g.Expect(f.Relists).To(BeNumerically(">", 0), "informers relist after 410")
			}
			g.Expect(f.EtcdEvents).To(BeNumerically(">", 100), "the etcd oracle saw the API server's writes")
			// The validation probes were refused.
			refused := 0
			for _, w := range h.KubeWatches {
				if w.End != nil && w.End.Status != nil && w.End.Status.Code/100 == 4 && w.End.Status.Code != 410 {
					refused++
				}
			}
			g.Expect(refused).To(BeNumerically(">=", 4), "invalid watches refused")
			for _, w := range h.KubeWatches {
				g.Expect(w.End).NotTo(BeNil(), "kube watch %d has no recorded end", w.ID)
			}
			fin, final := h.Mark(history.MarkFinalWrite)
			_, end := h.Mark(history.MarkEnd)
			g.Expect(final && end).To(BeTrue(), "final-write and end marks")
			g.Expect(fin.Revision).To(BeNumerically(">", 0))

			saved, err := history.Load(history.InDir(dir))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(saved.KubeOps).To(HaveLen(len(h.KubeOps)))
			g.Expect(saved.KubeWatches).To(HaveLen(len(h.KubeWatches)))
			g.Expect(saved.Meta.Target.Kind).To(Equal("kube"))
		})
	}
}
