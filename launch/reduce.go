package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/fixtures/binaries"
	etcdproc "github.com/vigil-suite/vigil/fixtures/etcd"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/reports"
	"github.com/vigil-suite/vigil/suites/reduce"
)

// ReduceOptions say which findings of a saved run to reduce and against
// what.
type ReduceOptions struct {
	// Dir is the run's output dir.
	Dir string
	// Finding is the number of the finding to reduce (as the verdict
	// lists them, from 1); 0 reduces every one vigil can.
	Finding int
	// Budget bounds the replays of one finding.
	Budget int
	// EtcdVersion and EtcdBinary replace the run's server (to see whether
	// another release still shows it); empty: the run's.
	EtcdVersion, EtcdBinary string
}

// reducible are the checks whose findings a sequential replay on a fresh
// cluster can show: members that end up disagreeing.
var reducible = []string{kv.NameMemberAgreement, kv.NameConvergence}

// Reduce replays the requests behind a saved run's findings against fresh
// servers of the run's kind and size, reduces them while the finding
// still shows, and writes each reduction as a program (repro-N.go in the
// run's dir) that exits 1 while a server still shows it. It prints what
// it did for each finding and returns the exit code: 0 when every finding
// asked for was reduced, 1 when some did not show again when replayed
// one request after another (the finding needs concurrency or faults), 3
// on a setup error.
func Reduce(ctx context.Context, o ReduceOptions) (int, error) {
	path, err := history.RunFile(o.Dir)
	if err != nil {
		return ExitSetup, fmt.Errorf("cannot reduce: %w", err)
	}
	dir := filepath.Dir(path)
	res, err := reports.ReadJSON(filepath.Join(dir, "result.json"))
	if err != nil {
		return ExitSetup, fmt.Errorf("cannot reduce: %w", err)
	}
	if len(res.Findings) == 0 {
		return ExitSetup, fmt.Errorf("cannot reduce: %s has no finding", dir)
	}
	if o.Finding > len(res.Findings) {
		return ExitSetup, fmt.Errorf("cannot reduce: the run has %d finding(s), not %d", len(res.Findings), o.Finding)
	}
	h, err := loadWhole(path)
	if err != nil {
		return ExitSetup, fmt.Errorf("cannot reduce: %w", err)
	}
	start, server, err := o.starter(ctx, h.Meta, dir)
	if err != nil {
		return ExitSetup, fmt.Errorf("cannot reduce: %w", err)
	}
	code := ExitPass
	for i, f := range res.Findings {
		n := i + 1
		if o.Finding != 0 && n != o.Finding {
			continue
		}
		if !slices.Contains(reducible, f.Check) {
			if o.Finding != 0 {
				return ExitSetup, fmt.Errorf("cannot reduce finding %d: a replay one request after another shows only members that disagree (%s), not %s",
					n, strings.Join(reducible, ", "), f.Check)
			}
			fmt.Printf("finding %d (%s): not reduced: a replay one request after another shows only members that disagree\n", n, f.Check)
			continue
		}
		steps := stepsOf(h, f.Witness.Operations)
		if len(steps) == 0 {
			fmt.Printf("finding %d (%s): not reduced: its witness names no request vigil can replay\n", n, f.Check)
			code = max(code, ExitFail)
			continue
		}
		logf("finding %d (%s): replaying %d request(s) on fresh %s clusters...", n, f.Check, len(steps), server)
		red, err := reduce.Reduce(ctx, steps, reduce.Divergence(start), o.Budget)
		if errors.Is(err, reduce.ErrNotSequential) {
			fmt.Printf("finding %d (%s): does not show when its %d request(s) are replayed one after another on a fresh %s cluster (%d replays): it needs the run's concurrency, faults or timing\n",
				n, f.Check, len(steps), server, red.Replays)
			code = max(code, ExitFail)
			continue
		}
		if err != nil {
			return ExitSetup, fmt.Errorf("reducing finding %d: %w", n, err)
		}
		src, err := reduce.DivergenceProgram(reduce.Finding{Check: f.Check, Title: f.Signature, Saw: red.Saw, Server: server},
			red.Steps, h.Meta.Prefix)
		if err != nil {
			return ExitSetup, fmt.Errorf("writing finding %d's program: %w", n, err)
		}
		file := filepath.Join(dir, fmt.Sprintf("repro-%d.go", n))
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			return ExitSetup, err
		}
		fmt.Printf("finding %d (%s): reduced from %d to %d request(s) in %d replays on fresh %s clusters:\n",
			n, f.Check, len(steps), len(red.Steps), red.Replays, server)
		for _, st := range red.Steps {
			fmt.Printf("  to member %d: %s\n", st.Member, reduce.Describe(st.Req, h.Meta.Prefix))
		}
		fmt.Printf("  then %s\n  program: %s (go run . -endpoints A,B,C: exits 1 while the members disagree)\n", red.Saw, file)
	}
	return code, nil
}

// loadWhole loads a run's history; of a segmented one, every segment's
// operations in one history (a finding's witness names operations of
// the whole run).
func loadWhole(path string) (*history.History, error) {
	h, err := history.Load(path)
	if err == nil {
		return h, nil
	}
	var whole *history.History
	_, _, serr := history.LoadSegments(path, func(seg *history.History) error {
		if whole == nil {
			whole = history.New(seg.Meta)
			whole.Meta.Segment, whole.Meta.Prefix = nil, ""
		}
		whole.Operations = append(whole.Operations, seg.Operations...)
		return nil
	})
	if serr != nil || whole == nil {
		return nil, err
	}
	return whole, nil
}

// stepsOf turns a witness's operations into steps, in the order they were
// called: each to the member that answered it, with the store's revision
// when it was sent (for its revisions) and, for a grant, the lease it got.
func stepsOf(h *history.History, ids []int64) []reduce.Step {
	members := h.Meta.Target.Endpoints
	bounds := facts.NewRevBounds(h)
	var ops []*history.Operation
	for i := range h.Operations {
		o := &h.Operations[i]
		if slices.Contains(ids, o.ID) && o.Request.Kind != history.OpHashKV && o.Request.Kind != history.OpStatus {
			ops = append(ops, o)
		}
	}
	slices.SortFunc(ops, func(a, b *history.Operation) int { return int(a.Call - b.Call) })
	var out []reduce.Step
	for _, o := range ops {
		st := reduce.Step{Member: max(0, slices.Index(members, o.Member)), Req: o.Request, Head: bounds.AtLeast(o.Call).Rev}
		if o.Request.Kind == history.OpLeaseGrant && o.Response != nil {
			st.Granted = o.Response.Lease
		}
		out = append(out, st)
	}
	return out
}

// starter starts fresh clusters like the run's: etcd processes of its
// release (or the one asked for) and size, each in a dir under the run's
// that goes when it stops.
func (o ReduceOptions) starter(ctx context.Context, meta history.Meta, dir string) (reduce.Starter, string, error) {
	t := meta.Target
	if t.Kind != "" && t.Kind != "etcd" || o.EtcdVersion == "" && o.EtcdBinary == "" && t.Fixture != "process" && t.Fixture != "" {
		return nil, "", fmt.Errorf("the run's server (%s, fixture %s) is not one vigil can start again: give --etcd-version or --etcd-binary to replay on etcd", t.Kind, t.Fixture)
	}
	version := o.EtcdVersion
	if version == "" && o.EtcdBinary == "" {
		version = t.Version
	}
	bin, err := binaries.Etcd(ctx, binaries.Options{Version: version, Binary: o.EtcdBinary, Progress: os.Stderr})
	if err != nil {
		return nil, "", err
	}
	members := max(t.Members, 1)
	server := fmt.Sprintf("etcd %s, %d member(s)", version, members)
	if o.EtcdBinary != "" {
		server = fmt.Sprintf("%s, %d member(s)", o.EtcdBinary, members)
	}
	n := 0
	return func(ctx context.Context) (reduce.System, error) {
		n++
		d := filepath.Join(dir, "reduce", fmt.Sprint(n))
		c := etcdproc.New(etcdproc.Config{Binary: bin, Members: members, Dir: d, Version: version})
		stop := func() { c.Stop(); os.RemoveAll(d) }
		if err := c.Start(ctx); err != nil {
			stop()
			return reduce.System{}, err
		}
		return reduce.System{Endpoints: c.Endpoints(), Stop: stop}, nil
	}, server, nil
}
