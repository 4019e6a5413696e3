package checkers_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/checkers/kube"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/checkers/watch"
	"github.com/vigil-suite/vigil/history"
)

// The checks across segment boundaries: a whole history is cut into
// segments at the given moments and read back through history.Segmenter,
// as `vigil check` reads a segmented file, and every segment is judged by
// every check, the results merged as a run merges them. A watch that spans
// a boundary is judged whole in the segment it ends in, against the
// writes the segment's context holds.

// segmentsOf cuts h at the moments bounds into segments (prefixes: the
// etcd segments' keys, one per segment; nil: every segment has h's) and
// returns them sealed, as the Segmenter gives them.
func segmentsOf(t *testing.T, h *history.History, prefixes []string, bounds ...time.Duration) []*history.History {
	t.Helper()
	recs := h.Records()
	var segs []*history.History
	s := &history.Segmenter{Sealed: func(h *history.History) error { segs = append(segs, h); return nil }}
	add := func(r history.Record) {
		t.Helper()
		if err := s.Add(r); err != nil {
			t.Fatalf("%v (record %+v)", err, r)
		}
	}
	prefix := func(k int) string {
		if prefixes == nil {
			return h.Meta.Prefix
		}
		return prefixes[k]
	}
	// A segment is sealed once every request sent in it is answered.
	sealAt := func(k int) time.Duration {
		at := bounds[k]
		for i := range h.Operations {
			if o := &h.Operations[i]; o.Call < bounds[k] {
				at = max(at, o.Return)
			}
		}
		for i := range h.KubeOps {
			if o := &h.KubeOps[i]; o.Call < bounds[k] {
				at = max(at, o.Return)
			}
		}
		return at + 1
	}
	add(recs[0])
	add(history.Record{Mark: &history.Mark{Name: history.MarkSegment, Segment: &history.Segment{Index: 0, Prefix: prefix(0)}}})
	opened, sealed := 0, 0
	timeOf := func(r history.Record) time.Duration {
		switch {
		case r.Op != nil:
			return r.Op.Return
		case r.KubeOp != nil:
			return r.KubeOp.Return
		case r.Watch != nil:
			return r.Watch.Call
		case r.KubeWatch != nil:
			return r.KubeWatch.Call
		case r.WatchResponse != nil:
			return r.WatchResponse.Time
		case r.WatchEnd != nil:
			return r.WatchEnd.Time
		case r.KubeEvent != nil:
			return r.KubeEvent.Time
		case r.KubeWatchEnd != nil:
			return r.KubeWatchEnd.Time
		case r.Fault != nil:
			return r.Fault.End
		case r.Mark != nil:
			return r.Mark.Time
		}
		return 0
	}
	for _, r := range recs[1:] {
		at := timeOf(r)
		for opened < len(bounds) && at >= bounds[opened] {
			opened++
			add(history.Record{Mark: &history.Mark{Name: history.MarkSegment, Time: bounds[opened-1],
				Segment: &history.Segment{Index: opened, Prefix: prefix(opened)}}})
		}
		for sealed < opened && at >= sealAt(sealed) {
			add(history.Record{Mark: &history.Mark{Name: history.MarkSegmentEnd, Time: sealAt(sealed),
				Segment: &history.Segment{Index: sealed, End: bounds[sealed]}}})
			sealed++
		}
		add(r)
	}
	for ; sealed <= opened; sealed++ {
		add(history.Record{Mark: &history.Mark{Name: history.MarkSegmentEnd, Time: h.End() + 1,
			Segment: &history.Segment{Index: sealed, Last: sealed == opened}}})
	}
	if _, err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	return segs
}

// judgeSegments judges each segment with every check and merges them.
func judgeSegments(segs []*history.History) map[string]check.Result {
	var m check.Merger
	for _, h := range segs {
		m.Add(h.Meta.Segment.Index, h.Meta.Segment.Last, checkers.Run(h, check.DefaultConfig()))
	}
	out := map[string]check.Result{}
	for _, r := range m.Results() {
		out[r.Name] = r
	}
	return out
}

func failing(rs map[string]check.Result) []string {
	var out []string
	for name, r := range rs {
		if r.Verdict == check.Fail && !r.Should {
			out = append(out, fmt.Sprintf("%s: %s", name, histbuild.ViolationTexts(r.Violations)))
		}
	}
	slices.Sort(out)
	return out
}

// A simulated run of a correct Kubernetes API server, cut into segments
// at several moments, passes every check: the watches open across the
// boundaries (every one here, from its start to the run's end), the lists
// of objects last written segments before, the pages, the oracle. With
// one event dropped just after a boundary from a watch that spans it,
// kube/watch-from-rv fails in the segment the watch ends in.
func TestSegmentedKubeRunJudgedAcrossBoundaries(t *testing.T) {
	cfg := histbuild.KgenConfig{Ops: 6000, Objects: 12, Watches: 3, SelWatches: 2, UnknownPct: 4,
		StateWatches: 2, Streams: 2, Oracle: true, Seed: 5}
	h := histbuild.GenKubeHistory(cfg)
	end := h.End()
	bounds := []time.Duration{end / 5, 2 * end / 5, 3 * end / 5, 4 * end / 5}
	segs := segmentsOf(t, h, nil, bounds...)
	if len(segs) != 5 {
		t.Fatalf("%d segments, want 5", len(segs))
	}
	for _, s := range segs[1:] {
		if s.Context == nil || len(s.Context.KubeOps) == 0 {
			t.Fatalf("segment %d has no context", s.Meta.Segment.Index)
		}
	}
	if n := len(segs[4].KubeWatches); n != len(h.KubeWatches) {
		t.Errorf("the last segment holds %d watches, want all %d: each ends there", n, len(h.KubeWatches))
	}
	if f := failing(judgeSegments(segs)); len(f) > 0 {
		t.Errorf("a correct run cut into segments fails:\n%v", f)
	}

	// Drop the first event after the second boundary from a full watch.
	w := h.KubeWatchByID(int64(cfg.StateWatches + cfg.Streams + 1))
	i := slices.IndexFunc(w.Events, func(e history.KubeEvent) bool {
		return e.Time > bounds[1] && e.Type != history.KubeBookmark
	})
	dropped := w.Events[i]
	w.Events = slices.Delete(w.Events, i, i+1)
	r := judgeSegments(segmentsOf(t, h, nil, bounds...))[kube.NameWatchFromRV]
	if r.Verdict != check.Fail || len(r.Violations) == 0 || r.Violations[0].Watch != w.ID ||
		fmt.Sprint(r.Violations[0].Revision) != dropped.Object.ResourceVersion {
		t.Errorf("watch %d missed %s %s at RV %s just after a boundary: %s %s", w.ID, dropped.Type, dropped.Object.Name,
			dropped.Object.ResourceVersion, r.Verdict, histbuild.ViolationTexts(r.Violations))
	}
}

// kubeBoundary is a run of two objects over three segments (boundaries at
// 100 and 200): a written at 10 and never again, b written in every
// segment. Watch 1 (client 5) runs from RV 9 across both boundaries.
func kubeBoundary(b *histbuild.KubeBuilder) {
	a1 := histbuild.KobjOf("a", "v:a1", 10)
	b1, b2, b3 := histbuild.KobjOf("b", "v:b1", 12), histbuild.KobjOf("b", "v:b2", 105), histbuild.KobjOf("b", "v:b3", 205)
	b.Create(1, 5, 8, a1)
	b.Create(1, 11, 14, b1)
	b.Update(1, 101, 104, 12, b2)
	b.Update(1, 201, 204, 105, b3)
}

// The hand-built cases across boundaries: each must pass as built and
// fail with the one change that breaks the guarantee after a boundary.
func TestKubeGuaranteesAcrossBoundaries(t *testing.T) {
	bounds := []time.Duration{100, 200}
	cases := []struct {
		name  string
		check string
		build func(b *histbuild.KubeBuilder, broken bool)
	}{
		{"a watch open across both boundaries owes the change just after the first", kube.NameWatchFromRV,
			func(b *histbuild.KubeBuilder, broken bool) {
				kubeBoundary(b)
				b.Watch(1, 5, 2, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Ev(1, 9, history.KubeAdded, histbuild.KobjOf("a", "v:a1", 10))
				b.Ev(1, 15, history.KubeAdded, histbuild.KobjOf("b", "v:b1", 12))
				if !broken {
					b.Ev(1, 106, history.KubeModified, histbuild.KobjOf("b", "v:b2", 105))
				}
				b.Ev(1, 206, history.KubeModified, histbuild.KobjOf("b", "v:b3", 205))
				b.End(1, 250, history.EndClient, nil)
			}},
		{"a resume after the boundary of a watch that ended before it", kube.NameWatchResume,
			func(b *histbuild.KubeBuilder, broken bool) {
				kubeBoundary(b)
				b.Watch(1, 5, 2, history.KubeWatchRequest{ResourceVersion: "9"})
				b.Ev(1, 9, history.KubeAdded, histbuild.KobjOf("a", "v:a1", 10))
				b.Ev(1, 15, history.KubeAdded, histbuild.KobjOf("b", "v:b1", 12))
				b.End(1, 90, history.EndError, nil)
				b.Resume(2, 1, 5, 120, history.KubeWatchRequest{ResourceVersion: "12"})
				if !broken {
					b.Ev(2, 121, history.KubeModified, histbuild.KobjOf("b", "v:b2", 105))
				}
				b.Ev(2, 206, history.KubeModified, histbuild.KobjOf("b", "v:b3", 205))
				b.End(2, 250, history.EndClient, nil)
			}},
		{"a list long after an object's last write shows its anchored state", kube.NameConsistentRead,
			func(b *histbuild.KubeBuilder, broken bool) {
				kubeBoundary(b)
				a := histbuild.KobjOf("a", "v:a1", 10)
				if broken {
					a = histbuild.KobjOf("a", "v:a0", 10)
				}
				b.List(2, 220, 225, history.KubeRequest{}, 205, "", a, histbuild.KobjOf("b", "v:b3", 205))
			}},
		{"a segment whose write is answered after its end still judges its own states of that object", kube.NameConsistentRead,
			func(b *histbuild.KubeBuilder, broken bool) {
				kubeBoundary(b)
				b.Update(1, 95, 103, 10, histbuild.KobjOf("a", "v:a2", 100))
				a := histbuild.KobjOf("a", "v:a1", 10)
				if broken {
					a = histbuild.KobjOf("a", "v:ghost", 11)
				}
				b.List(2, 50, 55, history.KubeRequest{}, 12, "", a, histbuild.KobjOf("b", "v:b1", 12))
			}},
		{"a paginated list whose next page comes after the boundary", kube.NamePagination,
			func(b *histbuild.KubeBuilder, broken bool) {
				kubeBoundary(b)
				b.List(2, 90, 95, history.KubeRequest{Limit: 1}, 12, "tok-1", histbuild.KobjOf("a", "v:a1", 10))
				rv := int64(12)
				if broken {
					rv = 105
				}
				b.List(2, 120, 125, history.KubeRequest{Limit: 1, Continue: "tok-1"}, rv, "", histbuild.KobjOf("b", "v:b1", 12))
			}},
		{"a watch that spans four segments gets a bookmark at least every 90 s", kube.NameBookmarks,
			func(b *histbuild.KubeBuilder, broken bool) {
				kubeBoundary(b)
				s := int(time.Second)
				b.Watch(1, 5, 2, history.KubeWatchRequest{ResourceVersion: "205", AllowBookmarks: true})
				b.Bookmark(1, 50*s, 205, false)
				if !broken {
					b.Bookmark(1, 110*s, 205, false)
				}
				b.End(1, 150*s, history.EndClient, nil)
			}},
		{"a watch that began before the boundary agrees with the oracle's watch of the segment before", kube.NameCacheAgreesWithEtcd,
			func(b *histbuild.KubeBuilder, broken bool) {
				kubeBoundary(b)
				p := b.H.Meta.Prefix
				b.Add(history.Record{Watch: &history.Watch{ID: 7, Client: 50, Call: 1,
					Request: history.WatchRequest{Key: p, End: p[:len(p)-1] + "0", StartRevision: 9}}})
				for _, e := range []struct {
					t     int
					name  string
					rev   int64
					value string
				}{{9, "a", 10, "v:a1"}, {15, "b", 12, "v:b1"}, {106, "b", 105, "v:b2"}} {
					b.Add(history.Record{WatchResponse: &history.WatchResponse{Watch: 7, Time: time.Duration(e.t), Revision: e.rev,
						Events: []history.Event{{Type: history.EventPut, KV: history.KV{Key: p + e.name, Value: e.value, ModRevision: e.rev}}}}})
				}
				b.Add(history.Record{WatchEnd: &history.WatchEnd{Watch: 7, Time: 150, Reason: history.EndClient}})
				b.Watch(1, 5, 90, history.KubeWatchRequest{ResourceVersion: "12"})
				ev := histbuild.KobjOf("b", "v:b2", 105)
				if broken {
					ev = histbuild.KobjOf("b", "v:b9", 105)
				}
				b.Ev(1, 107, history.KubeModified, ev)
				b.End(1, 160, history.EndClient, nil)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, broken := range []bool{false, true} {
				b := histbuild.NewKube()
				c.build(b, broken)
				bs := bounds
				if c.check == kube.NameBookmarks {
					s := time.Second
					bs = []time.Duration{30 * s, 60 * s, 90 * s, 120 * s}
				}
				rs := judgeSegments(segmentsOf(t, b.H, nil, bs...))
				r := rs[c.check]
				if !broken {
					if r.Verdict != check.Pass {
						t.Errorf("as built: %s %s %s", r.Verdict, r.Reason, histbuild.ViolationTexts(r.Violations))
					}
					if f := failing(rs); len(f) > 0 {
						t.Errorf("as built, other checks fail: %v", f)
					}
				} else if r.Verdict != check.Fail {
					t.Errorf("broken: %s %s, want fail", r.Verdict, r.Reason)
				}
			}
		})
	}
}

// An etcd watch of the whole run's keys, open across a boundary, is
// judged whole in the segment it ends in: it owes the writes of both
// segments, the first one after the boundary too. kv/linearizable, which
// reads watches for the values they show, is not misled by what the
// watch saw before the segment: a write of unknown outcome carried from
// segment 0, whose value the watch shows applied there, below revisions
// segment 1 never saw.
func TestEtcdWatchAcrossBoundary(t *testing.T) {
	type ev struct {
		t          int
		key, value string
		rev        int64
	}
	evs := []ev{{15, "/r/s000/a", "0.1", 11}, {25, "/r/s000/b", "0.2", 12}, {45, "/r/s000/a", "0.3", 13},
		{55, "/r/s000/b", "0.4", 14}, {115, "/r/s001/a", "1.1", 16}, {125, "/r/s001/b", "1.2", 17}}
	judge := func(skip int64) check.Result {
		b := histbuild.New()
		b.H.Meta.Prefix = "/r/"
		add := func(r history.Record) {
			if err := b.H.Add(r); err != nil {
				t.Fatal(err)
			}
		}
		put := func(call int, key, value string, rev int64) {
			b.Op(1, call, call+3, history.Request{Kind: history.OpPut, Key: key, Value: value}, &history.Response{Revision: rev}, "")
		}
		put(10, "/r/s000/a", "0.1", 11)
		put(20, "/r/s000/b", "0.2", 12)
		b.Op(2, 30, 60, history.Request{Kind: history.OpPut, Key: "/r/s000/a", Value: "0.3"}, nil, history.ErrUnknown)
		put(50, "/r/s000/b", "0.4", 14)
		b.Op(8, 101, 104, history.Request{Kind: history.OpRange, Key: "/r/s001/a"}, &history.Response{Revision: 15}, "")
		put(110, "/r/s001/a", "1.1", 16)
		put(120, "/r/s001/b", "1.2", 17)
		add(history.Record{Watch: &history.Watch{ID: 1, Client: 9, Call: 5, Request: history.WatchRequest{Key: "/r/", End: "/r0"}}})
		add(history.Record{WatchResponse: &history.WatchResponse{Watch: 1, Time: 6, Revision: 10, Created: true}})
		versions := map[string]int64{}
		for _, e := range evs {
			versions[e.key]++
			if e.rev == skip {
				continue
			}
			kv := history.KV{Key: e.key, Value: e.value, ModRevision: e.rev, Version: versions[e.key]}
			kv.CreateRevision = e.rev
			if versions[e.key] > 1 {
				kv.CreateRevision = e.rev - 2
			}
			add(history.Record{WatchResponse: &history.WatchResponse{Watch: 1, Time: time.Duration(e.t), Revision: e.rev,
				Events: []history.Event{{Type: history.EventPut, IsCreate: versions[e.key] == 1, KV: kv}}}})
		}
		add(history.Record{WatchEnd: &history.WatchEnd{Watch: 1, Time: 150, Reason: history.EndClient}})
		segs := segmentsOf(t, b.H, []string{"/r/s000/", "/r/s001/"}, 100)
		if len(segs[0].Watches) != 0 || len(segs[1].Watches) != 1 || len(segs[1].Meta.Segment.Carried) != 1 {
			t.Fatalf("the watch is not judged in the segment it ends in (%d and %d watches), or the write of unknown "+
				"outcome is not carried (%v)", len(segs[0].Watches), len(segs[1].Watches), segs[1].Meta.Segment.Carried)
		}
		rs := judgeSegments(segs)
		if skip == 0 {
			if f := failing(rs); len(f) > 0 {
				t.Errorf("every change delivered, yet: %v", f)
			}
		}
		return rs[watch.NameReliable]
	}
	if r := judge(0); r.Verdict != check.Pass {
		t.Errorf("every change delivered: %s %s %s", r.Verdict, r.Reason, histbuild.ViolationTexts(r.Violations))
	}
	for _, skip := range []int64{14, 16} {
		if r := judge(skip); r.Verdict != check.Fail || r.Violations[0].Revision != skip {
			t.Errorf("the change at %d missed (the last before the boundary, the first after it): %s %s", skip, r.Verdict,
				histbuild.ViolationTexts(r.Violations))
		}
	}
}

// A segment's read at a revision that a compaction of the segment before
// compacted fails with ErrCompacted, as it must: kv/compaction knows that
// compaction from the segment's context. Without it, the failure is no
// compaction's doing, and a violation.
func TestCompactionOfTheSegmentBefore(t *testing.T) {
	judge := func(compact bool) check.Result {
		b := histbuild.New()
		b.H.Meta.Prefix = "/r/"
		b.Op(1, 10, 13, history.Request{Kind: history.OpPut, Key: "/r/s000/a", Value: "0.1"}, &history.Response{Revision: 11}, "")
		b.Op(1, 14, 17, history.Request{Kind: history.OpPut, Key: "/r/s000/a", Value: "0.2"}, &history.Response{Revision: 12}, "")
		if compact {
			b.Op(8, 20, 25, history.Request{Kind: history.OpCompact, Revision: 12}, &history.Response{Revision: 12}, "")
		}
		b.Op(8, 101, 104, history.Request{Kind: history.OpRange, Key: "/r/s001/a"}, &history.Response{Revision: 12}, "")
		b.Op(2, 110, 113, history.Request{Kind: history.OpRange, Key: "/r/s001/a", Revision: 11}, nil, history.ErrCompacted)
		return judgeSegments(segmentsOf(t, b.H, []string{"/r/s000/", "/r/s001/"}, 100))[kv.NameCompaction]
	}
	if r := judge(true); r.Verdict != check.Pass {
		t.Errorf("compacted by the segment before: %s %s", r.Verdict, histbuild.ViolationTexts(r.Violations))
	}
	if r := judge(false); r.Verdict != check.Fail {
		t.Errorf("compacted by nothing: %s, want fail", r.Verdict)
	}
}
