package conformance

import (
	"context"
	"testing"
)

func TestZZDebug(t *testing.T) {
	cfg := startKube(t, false)
	cfg.Only = []string{"kube-watch/too-old@configmaps"}
	res, _ := RunKubeProbes(context.Background(), cfg, KubeProbes())
	for _, s := range res[0].kubeRepro.steps {
		t.Logf("%s %s", s.call, s.answer)
	}
	cfg.Only = []string{"kube-watch/too-old@configmaps"}
	cfg.Compact = nil
	res, _ = RunKubeProbes(context.Background(), cfg, KubeProbes())
	t.Log(res[0].Verdict, res[0].Reason)
}
