package checkers_test

import (
	"testing"

	"github.com/vigil-suite/vigil/checkers"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/history"
)

// carried adds to h, first, writes of unknown outcome of a segment before
// it (history.Segmenter carries them): on keys of another prefix, called
// before everything of h.
func carried(h *history.History, n int) {
	var ops []history.Operation
	seg := &history.Segment{Index: 1, Prefix: histbuild.TestPrefix}
	for i := range n {
		id := int64(1_000_000 + i)
		ops = append(ops, history.Operation{ID: id, Client: 99, Call: 0, Return: 1,
			Request: history.Request{Kind: history.OpPut, Key: "/earlier/s000/k", Value: "carried." + string(rune('a'+i))},
			Code:    history.ErrUnknown, Error: "timeout"})
		seg.Carried = append(seg.Carried, id)
	}
	h.Operations = append(ops, h.Operations...)
	h.Meta.Segment = seg
}

// Writes carried from the segment before change no verdict of a valid
// segment: every check judges them as writes of unknown outcome on keys
// nothing else touches.
func TestCarriedWritesChangeNoVerdict(t *testing.T) {
	h := histbuild.Generate(histbuild.GenConfig{Ops: 3000, Clients: 8, Keys: 16, Watches: 4, FailPct: 1, ApplyPct: 50, Seed: 3})
	before := map[string]check.Verdict{}
	for _, c := range checkers.ForHistory(h) {
		before[c.Name] = check.Run(c, h, check.DefaultConfig()).Verdict
	}
	carried(h, 3)
	for _, c := range checkers.ForHistory(h) {
		if r := check.Run(c, h, check.DefaultConfig()); r.Verdict != before[c.Name] {
			t.Errorf("%s: %s with carried writes, %s without (%s %v)", c.Name, r.Verdict, before[c.Name], r.Reason, r.Violations)
		}
	}
}

// A revision no write of the segment made is explained by a carried write
// of unknown outcome, as by one of its own; one carried write explains one
// revision, not two.
func TestCarriedWritesExplainOneRevisionEach(t *testing.T) {
	build := func(carry int) *history.History {
		b := histbuild.New()
		b.Put(1, 10, 20, "a", "v1", 11)
		b.Put(1, 30, 40, "a", "v2", 14) // 12 and 13: no write of this segment
		b.Get(2, 50, 60, "a", 14, histbuild.Kv("a", "v2", 11, 14, 2))
		carried(b.H, carry)
		return b.H
	}
	for carry, want := range map[int]check.Verdict{1: check.Fail, 2: check.Pass} {
		r := kv.CheckRevisionMonotonic(build(carry), check.DefaultConfig())
		if r.Verdict != want {
			t.Errorf("two revisions unexplained, %d carried: %s, want %s (%s %v)", carry, r.Verdict, want, r.Reason, r.Violations)
		}
	}
}
