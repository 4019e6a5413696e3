package reduce

import (
	"context"
	"errors"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/history"
)

// The symptom of etcd #18667's class: a txn whose path both writes and
// ranges at a future revision. Reduction keeps that txn alone, stripped
// of everything else: its compares, the other branch, the options.
func TestReduceKeepsTheSmallestShowingRequest(t *testing.T) {
	g := NewWithT(t)
	var steps []Step
	for i := 0; i < 12; i++ {
		steps = append(steps, Step{Req: history.Request{Kind: history.OpPut, Key: fmt.Sprintf("k%d", i), Value: "long-value", PrevKV: true}, Head: 10})
	}
	bug := history.Request{Kind: history.OpTxn,
		Compares: []history.Compare{{Key: "a", Target: history.CompareVersion, Result: ">", Int: -1}},
		Success: []history.Request{
			{Kind: history.OpRange, Key: "a", End: "b", Limit: 3},
			{Kind: history.OpPut, Key: "x", Value: "value-x", PrevKV: true},
			{Kind: history.OpRange, Key: "a", Revision: 99, KeysOnly: true},
		},
		Failure: []history.Request{{Kind: history.OpDelete, Key: "y"}}}
	steps = append(steps[:7], append([]Step{{Member: 1, Req: bug, Head: 10}}, steps[7:]...)...)
	symptom := func(_ context.Context, s []Step) (bool, string, error) {
		for _, st := range s {
			if st.Req.Kind != history.OpTxn {
				continue
			}
			put, future := false, false
			for _, r := range st.Req.Success {
				put = put || r.Kind == history.OpPut
				future = future || r.Kind == history.OpRange && r.Revision > st.Head
			}
			if put && future {
				return true, "members differ", nil
			}
		}
		return false, "", nil
	}
	res, err := Reduce(context.Background(), steps, symptom, 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Saw).To(Equal("members differ"))
	g.Expect(res.Steps).To(HaveLen(1))
	got := res.Steps[0]
	g.Expect(got.Member).To(Equal(1))
	g.Expect(got.Req).To(Equal(history.Request{Kind: history.OpTxn, Success: []history.Request{
		{Kind: history.OpPut, Key: "x", Value: "v"},
		{Kind: history.OpRange, Key: "a", Revision: 99},
	}}))
	g.Expect(bug.Success).To(HaveLen(3), "the original request is left as it was")
	t.Logf("%d replays", res.Replays)
}

func TestReduceSaysWhenTheReplayDoesNotShowIt(t *testing.T) {
	g := NewWithT(t)
	steps := []Step{{Req: history.Request{Kind: history.OpPut, Key: "a", Value: "1"}}}
	never := func(context.Context, []Step) (bool, string, error) { return false, "", nil }
	res, err := Reduce(context.Background(), steps, never, 0)
	g.Expect(errors.Is(err, ErrNotSequential)).To(BeTrue())
	g.Expect(res.Steps).To(Equal(steps))
	g.Expect(res.Replays).To(Equal(1))
}

func TestReduceStopsAtAReplayError(t *testing.T) {
	g := NewWithT(t)
	steps := []Step{{Req: history.Request{Kind: history.OpPut, Key: "a", Value: "1"}}, {Req: history.Request{Kind: history.OpPut, Key: "b", Value: "2"}}}
	n := 0
	flaky := func(context.Context, []Step) (bool, string, error) {
		n++
		if n > 1 {
			return false, "", errors.New("the server did not start")
		}
		return true, "shown", nil
	}
	res, err := Reduce(context.Background(), steps, flaky, 0)
	g.Expect(err).To(MatchError(ContainSubstring("the server did not start")))
	g.Expect(res.Steps).To(Equal(steps), "what it had when the replays broke")
}
