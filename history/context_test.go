package history

import (
	"slices"
	"testing"
	"time"
)

// kubeStream feeds a Segmenter a Kubernetes run of n segments built by
// the caller, and returns the sealed segments.
func kubeStream(t *testing.T, n int, build func(add func(Record), mark func(k int, at time.Duration, seal bool))) []*History {
	t.Helper()
	var segs []*History
	s := &Segmenter{Sealed: func(h *History) error { segs = append(segs, h); return nil }}
	add := func(r Record) {
		t.Helper()
		if err := s.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	mark := func(k int, at time.Duration, seal bool) {
		seg := &Segment{Index: k, Prefix: "/registry/configmaps/ns/"}
		name := MarkSegment
		if seal {
			name, seg.Last = MarkSegmentEnd, k == n-1
		}
		add(Record{Mark: &Mark{Name: name, Time: at, Segment: seg}})
	}
	add(Record{Meta: &Meta{Format: FormatVersion, Prefix: "/registry/configmaps/ns/", Target: Target{Kind: "kube"}}})
	mark(0, 0, false)
	build(add, mark)
	if _, err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	if len(segs) != n {
		t.Fatalf("%d segments sealed, want %d", len(segs), n)
	}
	return segs
}

const sec = time.Second

func kop(id int64, client int, call, ret time.Duration, verb KubeVerb, name, value string, rv string) Record {
	o := KubeOperation{ID: id, Client: client, Call: call, Return: ret, Request: KubeRequest{Verb: verb, Name: name}}
	if verb == KubeCreate || verb == KubeUpdate {
		o.Request.Object = &Object{Name: name, Value: value}
	}
	if rv != "" {
		o.Response = &KubeResponse{Code: 200, Object: &Object{Name: name, Value: value, ResourceVersion: rv}}
	} else if verb == KubeDelete {
		o.Response = &KubeResponse{Code: 200}
	}
	return Record{KubeOp: &o}
}

func ids(ops []KubeOperation) []int64 {
	var out []int64
	for _, o := range ops {
		out = append(out, o.ID)
	}
	slices.Sort(out)
	return out
}

// A watch belongs to the segment it ends in: one open at its segment's
// end, or ended after it, moves whole into the next, its later records
// with it; one ended before stays. A Kubernetes call belongs to the
// segment it was answered in, and a write sent before a segment's end and
// answered after is in that segment's context too.
func TestWatchesAndCallsBelongWhereTheyEnd(t *testing.T) {
	segs := kubeStream(t, 3, func(add func(Record), mark func(int, time.Duration, bool)) {
		add(Record{KubeWatch: &KubeWatch{ID: 1, Client: 1, Call: 10 * sec}})
		add(Record{KubeEvent: &KubeEvent{Watch: 1, Time: 20 * sec, Type: KubeAdded, Object: &Object{Name: "a", ResourceVersion: "5"}}})
		add(Record{KubeWatch: &KubeWatch{ID: 2, Client: 2, Call: 30 * sec}})
		add(Record{KubeWatchEnd: &KubeWatchEnd{Watch: 2, Time: 40 * sec, Reason: EndClient}})
		add(Record{KubeWatch: &KubeWatch{ID: 3, Client: 3, Call: 90 * sec}})
		mark(1, 100*sec, false)
		add(Record{KubeWatchEnd: &KubeWatchEnd{Watch: 3, Time: 101 * sec, Reason: EndClient}})
		add(kop(1, 4, 99*sec, 102*sec, KubeUpdate, "a", "v:a2", "9"))
		mark(0, 103*sec, true)
		add(Record{KubeEvent: &KubeEvent{Watch: 1, Time: 150 * sec, Type: KubeModified, Object: &Object{Name: "a", ResourceVersion: "9"}}})
		add(Record{KubeWatchEnd: &KubeWatchEnd{Watch: 1, Time: 160 * sec, Reason: EndClient}})
		mark(2, 200*sec, false)
		mark(1, 201*sec, true)
		mark(2, 300*sec, true)
	})
	watchIDs := func(h *History) []int64 {
		var out []int64
		for _, w := range h.KubeWatches {
			out = append(out, w.ID)
		}
		slices.Sort(out)
		return out
	}
	if got := watchIDs(segs[0]); !slices.Equal(got, []int64{2}) {
		t.Errorf("segment 0 holds watches %v, want [2] (1 never ended in it, 3 ended after its end)", got)
	}
	if got := watchIDs(segs[1]); !slices.Equal(got, []int64{1, 3}) {
		t.Errorf("segment 1 holds watches %v, want [1 3]", got)
	}
	if w := segs[1].KubeWatchByID(1); w == nil || len(w.Events) != 2 || w.End == nil {
		t.Errorf("watch 1 is not whole in segment 1: %+v", w)
	}
	if got := ids(segs[1].KubeOps); !slices.Equal(got, []int64{1}) {
		t.Errorf("segment 1's calls %v, want the update answered after the boundary", got)
	}
	if c := segs[0].Context; c == nil || !slices.Equal(ids(c.KubeOps), []int64{1}) {
		t.Errorf("segment 0's context %+v: want the update it sent and segment 1 answered", c)
	}
	if c := segs[1].Context; c == nil || len(c.KubeWatches) != 1 || c.KubeWatches[0].ID != 2 {
		t.Errorf("segment 1's context %+v: want watch 2, client 2's last (what a resume continues)", c)
	}
}

// The pages of a list whose last page carried a continue token move into
// the next segment; a finished list stays.
func TestOpenPagesMoveOn(t *testing.T) {
	page := func(id int64, client int, call time.Duration, cont, next string) Record {
		return Record{KubeOp: &KubeOperation{ID: id, Client: client, Call: call, Return: call + sec,
			Request:  KubeRequest{Verb: KubeList, Limit: 2, Continue: cont},
			Response: &KubeResponse{Code: 200, ListRV: "7", Continue: next}}}
	}
	segs := kubeStream(t, 3, func(add func(Record), mark func(int, time.Duration, bool)) {
		add(page(1, 1, 10*sec, "", "t1"))
		add(page(2, 1, 20*sec, "t1", ""))
		add(page(3, 2, 80*sec, "", "u1"))
		add(page(4, 2, 90*sec, "u1", "u2"))
		mark(1, 100*sec, false)
		mark(0, 101*sec, true)
		add(page(5, 2, 110*sec, "u2", ""))
		mark(2, 200*sec, false)
		mark(1, 201*sec, true)
		mark(2, 300*sec, true)
	})
	if got := ids(segs[0].KubeOps); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("segment 0's calls %v, want the finished list [1 2]", got)
	}
	if got := ids(segs[1].KubeOps); !slices.Equal(got, []int64{3, 4, 5}) {
		t.Errorf("segment 1's calls %v, want the list continued across the boundary [3 4 5]", got)
	}
}

// A segment's context keeps the writes of the span its watches may reach
// back to, and, of each object's writes, its anchor (the acknowledged
// create or update with the highest RV) and what came from a segment's
// length before it on; writes refused for sure are dropped.
// Segments of 30 s: the fourth reaches back to 60-30-15 = 15 s.
func TestContextKeepsEachObjectsAnchor(t *testing.T) {
	segs := kubeStream(t, 4, func(add func(Record), mark func(int, time.Duration, bool)) {
		add(kop(1, 1, 1*sec, 2*sec, KubeCreate, "a", "v:a1", "10"))
		add(kop(2, 1, 3*sec, 4*sec, KubeUpdate, "a", "v:a2", "11"))
		add(kop(6, 1, 5*sec, 6*sec, KubeCreate, "b", "v:b1", "12"))
		mark(1, 30*sec, false)
		mark(0, 31*sec, true)
		add(kop(3, 1, 50*sec, 51*sec, KubeUpdate, "a", "v:a3", "20"))
		add(kop(4, 1, 52*sec, 53*sec, KubeDelete, "a", "", ""))
		refused := kop(5, 1, 54*sec, 55*sec, KubeUpdate, "a", "v:a4", "")
		refused.KubeOp.Status = &KubeStatus{Code: 404}
		add(refused)
		mark(2, 60*sec, false)
		mark(1, 61*sec, true)
		add(kop(7, 1, 70*sec, 71*sec, KubeCreate, "c", "v:c1", "40"))
		mark(3, 90*sec, false)
		mark(2, 91*sec, true)
		mark(3, 120*sec, true)
	})
	// Segment 3 keeps a's writes from 50-45 = 5 s on (its anchor, RV 20, was
	// sent at 50 s) and b's only write, its anchor.
	for k, want := range map[int][]int64{1: {1, 2, 6}, 2: {1, 2, 3, 4, 6}, 3: {3, 4, 6, 7}} {
		if got := ids(segs[k].Context.KubeOps); !slices.Equal(got, want) {
			t.Errorf("segment %d's context holds %v, want %v", k, got, want)
		}
	}
}
