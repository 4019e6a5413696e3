package checkers_test

import (
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/checkers/linearizable"
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

// A txn of the segment before, of unknown outcome and applied late, whose
// compare reads a key of that segment: the next segment cannot know that
// key's state, so the Segmenter carries the txn as its writes alone, and
// kv/linearizable places it at the revision it took there. Carried whole,
// the compare (version > 0 of a key the segment never saw) would make it a
// read, and the revision it took unexplained — as the third soak found.
// Without the carried write at all, the gap is a violation.
func TestCarriedTxnFillsTheRevisionItTook(t *testing.T) {
	judge := func(carry bool) check.Result {
		var segs []*history.History
		s := &history.Segmenter{Sealed: func(h *history.History) error { segs = append(segs, h); return nil }}
		add := func(r history.Record) {
			if err := s.Add(r); err != nil {
				t.Fatal(err)
			}
		}
		meta := history.Meta{Format: history.FormatVersion, Prefix: "/r/"}
		add(history.Record{Meta: &meta})
		add(history.Record{Mark: &history.Mark{Name: history.MarkSegment, Time: 0, Segment: &history.Segment{Index: 0, Prefix: "/r/s000/"}}})
		if carry {
			txn := history.Request{Kind: history.OpTxn,
				Compares: []history.Compare{{Key: "/r/s000/k", Target: "version", Result: ">", Int: 0}},
				Success:  []history.Request{{Kind: history.OpPut, Key: "/r/s000/k", Value: "0.9"}},
				Failure:  []history.Request{{Kind: history.OpRange, Key: "/r/s000/k"}}}
			add(history.Record{Op: &history.Operation{ID: 1, Client: 0, Call: 5, Return: 10, Request: txn, Code: history.ErrUnknown, Error: "timeout"}})
		}
		add(history.Record{Mark: &history.Mark{Name: history.MarkSegment, Time: 100, Segment: &history.Segment{Index: 1, Prefix: "/r/s001/"}}})
		add(history.Record{Mark: &history.Mark{Name: history.MarkSegmentEnd, Time: 101, Segment: &history.Segment{Index: 0, End: 100}}})
		put := func(id int64, call int, value string, rev int64) {
			add(history.Record{Op: &history.Operation{ID: id, Client: 1, Call: time.Duration(call), Return: time.Duration(call + 5),
				Request: history.Request{Kind: history.OpPut, Key: "/r/s001/a", Value: value}, Response: &history.Response{Revision: rev}}})
		}
		put(2, 110, "1.1", 11)
		put(3, 130, "1.2", 13) // revision 12: the carried txn's, or nobody's
		add(history.Record{Op: &history.Operation{ID: 4, Client: 1, Call: 140, Return: 145,
			Request:  history.Request{Kind: history.OpRange, Key: "/r/s001/a"},
			Response: &history.Response{Revision: 13, KVs: []history.KV{{Key: "/r/s001/a", Value: "1.2", CreateRevision: 11, ModRevision: 13, Version: 2}}, Count: 1}}})
		add(history.Record{Mark: &history.Mark{Name: history.MarkSegmentEnd, Time: 150, Segment: &history.Segment{Index: 1, End: 150, Last: true}}})
		if _, err := s.Finish(); err != nil || len(segs) != 2 {
			t.Fatalf("segments: %d, %v", len(segs), err)
		}
		return linearizable.Check(segs[1], check.DefaultConfig())
	}
	if r := judge(true); r.Verdict != check.Pass {
		t.Errorf("the carried txn fills revision 12: %s %s %v", r.Verdict, r.Reason, r.Violations)
	}
	if r := judge(false); r.Verdict != check.Fail {
		t.Errorf("nothing fills revision 12: %s, want fail", r.Verdict)
	}
}
