package suites

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/checkers"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/reports"
	"github.com/vigil-suite/vigil/targets"
	etcdtarget "github.com/vigil-suite/vigil/targets/etcd"
	"github.com/vigil-suite/vigil/workload"
)

// divergesOn says, for the releases tried, whether one txn that puts a
// key and ranges at a future revision, sent to one member, leaves the
// members disagreeing (etcd issue 18667: members other than the one asked
// drop the txn's ranges before applying it, so only the one asked refuses
// it). Measured by TestTxnRangeDivergence on this project's machine.
var divergesOn = map[string]bool{"v3.5.17": true, "v3.6.16": true, "v3.7.3": false}

// divergeVersions are the releases TestTxnRangeDivergence tries:
// VIGIL_DIVERGE_VERSIONS (comma-separated), else vigil's default.
func divergeVersions() []string {
	if v := os.Getenv("VIGIL_DIVERGE_VERSIONS"); v != "" {
		return strings.Split(v, ",")
	}
	return []string{"v3.6.16"}
}

// TestTxnRangeDivergence runs the default workload for 8 s against a fresh
// 3-member cluster and, 2 s in, sends once, by a recorded client of its
// own to the second member, a txn whose success branch puts a key and
// ranges at a revision far ahead of the store's. On the releases where
// the members then disagree, kv/member-agreement must fail and name that
// txn as the request that took the revision they part at; where they do
// not, it must pass.
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
			endpoints := fx.Endpoints()
			dial := func(_ context.Context, member int) (targets.Client, error) {
				return etcdtarget.Dial(endpoints[member%len(endpoints)], 5*time.Second, fixtures.Security{})
			}
			cfg := workload.DefaultConfig()
			// The members never agree again: watches on the one asked never
			// reach the final write and the convergence reads never see one
			// revision, so both bounds run out; keep them short.
			cfg.Duration, cfg.CompactEvery, cfg.FinalTimeout = 8*time.Second, 3*time.Second, 3*time.Second
			cfg.Prefix = fmt.Sprintf("/vigil/diverge-%d/", time.Now().UnixNano())
			probe, err := dial(ctx, 0)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cfg.Probe(ctx, probe)).To(Succeed())
			probe.Close()
			rec := history.NewRecorder(history.Meta{Prefix: cfg.Prefix, Refuses: cfg.Refused,
				Target: history.Target{Kind: "etcd", Fixture: "process", Version: version, Members: 3}}, history.NewClock(), nil)
			w := workload.New(cfg, dial, 3, rec, 7, nil)
			var txnID int64
			var txnErr error
			w.During = func(ctx context.Context) {
				select {
				case <-time.After(2 * time.Second):
				case <-ctx.Done():
					return
				}
				c, err := w.NewClient(ctx, 1)
				if err != nil {
					txnErr = err
					return
				}
				defer c.Close()
				txn := history.Request{Kind: history.OpTxn, Success: []history.Request{
					{Kind: history.OpPut, Key: cfg.Prefix + "diverge", Value: "diverge.1"},
					{Kind: history.OpRange, Key: cfg.Prefix + "k000", Revision: w.Stats.StoreRevision.Load() + 100000},
				}}
				rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				_, txnErr = c.Do(rctx, txn)
				txnID = c.LastOp()
			}
			g.Expect(w.Run(ctx)).To(Succeed())
			h := rec.History()
			t.Logf("the txn (operation %d on %s): %v", txnID, endpoints[1], txnErr)

			results := checkers.Run(h, check.DefaultConfig())
			var agreement check.Result
			for _, r := range results {
				if r.Verdict == check.Fail {
					t.Logf("%s fails (%d violations), first: %s", r.Name, len(r.Violations), r.Violations[0].Message)
				}
				if r.Name == kv.NameMemberAgreement {
					agreement = r
				}
			}
			diverges, known := divergesOn[version]
			if !known {
				t.Logf("%s: kv/member-agreement %s (no expectation recorded for this release)", version, agreement.Verdict)
				return
			}
			if !diverges {
				g.Expect(agreement.Verdict).To(Equal(check.Pass), "%s: %s %v", version, agreement.Reason, agreement.Violations)
				return
			}
			g.Expect(agreement.Verdict).To(Equal(check.Fail), "%s: %s", version, agreement.Reason)
			v := agreement.Violations[0]
			t.Logf("kv/member-agreement: %s\n  want: %s\n  got:  %s\n  operations: %v", v.Message, v.Want, v.Got, v.Operations)
			g.Expect(v.Operations[0]).To(Equal(txnID), "the violation's first record is the txn")
			g.Expect(v.Message).To(ContainSubstring(fmt.Sprintf("was taken by operation %d (client", txnID)))
			found := false
			for _, f := range reports.Findings(h, results) {
				for _, p := range append([]reports.Part{f.Part}, f.Also...) {
					if p.Check == kv.NameMemberAgreement {
						found = true
						g.Expect(p.Witness.Operations[0]).To(Equal(txnID), "the finding's witness names the txn")
					}
				}
			}
			g.Expect(found).To(BeTrue(), "a finding holds kv/member-agreement's violation")
		})
	}
}
