package workload

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets"
)

// fakeMember answers the comparer as one member of a store whose
// revision r put key k<r> = "v<r>": applied up to head, compacted at
// compact, and, from revision parted on (when set), holding "x<r>"
// instead, with a hash to match. It records what it was asked.
type fakeMember struct {
	name           string
	head, compact  int64
	parted         int64
	down           bool
	asked          []history.Request
	draws          [][]string
	refuseHash     bool
	failHashAtOnce int64 // fails the first HashKV at this revision
}

func (f *fakeMember) Member() string { return f.name }

func (f *fakeMember) value(r int64) string {
	if f.parted > 0 && r >= f.parted {
		return fmt.Sprintf("x%d", r)
	}
	return fmt.Sprintf("v%d", r)
}

func (f *fakeMember) hash(at int64) uint32 {
	h := uint32(f.compact)
	if f.parted > 0 && f.parted <= f.compact {
		h += 7777 // what compaction kept of the keys differs
	}
	for r := f.compact + 1; r <= at; r++ {
		for _, c := range f.value(r) {
			h = h*31 + uint32(c)
		}
	}
	return h
}

func (f *fakeMember) DoDrawn(_ context.Context, req history.Request, draw []string) (*history.Response, error) {
	f.asked = append(f.asked, req)
	f.draws = append(f.draws, draw)
	if f.down {
		return nil, &targets.OpError{Code: history.ErrUnknown, Err: fmt.Errorf("%s is down", f.name)}
	}
	at := req.Revision
	if at > f.head {
		return nil, &targets.OpError{Code: history.ErrFutureRevision, Err: fmt.Errorf("future revision")}
	}
	if at > 0 && at < f.compact {
		return nil, &targets.OpError{Code: history.ErrCompacted, Err: fmt.Errorf("compacted")}
	}
	switch req.Kind {
	case history.OpStatus:
		return &history.Response{Revision: f.head}, nil
	case history.OpHashKV:
		if f.refuseHash {
			return nil, &targets.OpError{Code: history.ErrRefused, Err: fmt.Errorf("hashkv is not supported")}
		}
		if f.failHashAtOnce == at {
			f.failHashAtOnce = 0
			return nil, &targets.OpError{Code: history.ErrUnknown, Err: fmt.Errorf("timeout")}
		}
		return &history.Response{Revision: f.head, CompactRevision: f.compact, Hash: f.hash(at)}, nil
	case history.OpRange:
		resp := &history.Response{Revision: f.head}
		for r := int64(1); r <= at; r++ {
			resp.KVs = append(resp.KVs, history.KV{Key: fmt.Sprintf("/p/k%d", r), Value: f.value(r), CreateRevision: r, ModRevision: r, Version: 1})
		}
		resp.Count = int64(len(resp.KVs))
		return resp, nil
	}
	return nil, fmt.Errorf("fake: %s", req.Kind)
}

func fakeComparer(floor int64, fs ...*fakeMember) *comparer {
	var ms []memberReader
	for _, f := range fs {
		ms = append(ms, f)
	}
	return newComparer(ms, "/p/", 0, nil, func() int64 { return floor })
}

// hashRevs lists the revisions of the HashKV requests f was asked.
func (f *fakeMember) hashRevs() []int64 {
	var out []int64
	for _, q := range f.asked {
		if q.Kind == history.OpHashKV {
			out = append(out, q.Revision)
		}
	}
	return out
}

func TestComparerAgreeingMembers(t *testing.T) {
	m1, m2, m3 := &fakeMember{name: "m1", head: 40}, &fakeMember{name: "m2", head: 38}, &fakeMember{name: "m3", head: 41}
	c := fakeComparer(1, m1, m2, m3)
	res := c.round(context.Background())
	if res.Rev != 38 || res.Differ || res.First != 0 {
		t.Fatalf("round: %+v, want revision 38, the lowest applied, and agreement", res)
	}
	for _, f := range []*fakeMember{m1, m2, m3} {
		if !slices.Equal(f.hashRevs(), []int64{38}) {
			t.Errorf("%s asked HashKV at %v, want [38]", f.name, f.hashRevs())
		}
		for _, d := range f.draws {
			if len(d) != 2 || d[0] != history.DrawMemberCompare || d[1] != history.CompareRound {
				t.Errorf("%s: draw %v", f.name, d)
			}
		}
		if last := f.asked[len(f.asked)-1]; last.Kind != history.OpRange || !last.Serializable || last.Revision != 38 ||
			last.Key != "/p/" || last.End != "/p0" {
			t.Errorf("%s: read %+v, want the prefix at 38, serializable", f.name, last)
		}
	}
	if c.agreed != 38 {
		t.Errorf("agreed %d, want 38", c.agreed)
	}
}

// One member holds another value from revision 23 on: the comparer
// bisects to 23 from the revision it last saw them agree at, and reads the
// prefix at 22 and 23 on every member.
func TestComparerBisectsToTheFirstDifference(t *testing.T) {
	for _, parted := range []int64{11, 12, 23, 39, 40} {
		t.Run(fmt.Sprint(parted), func(t *testing.T) {
			m1, m2, m3 := &fakeMember{name: "m1", head: 10}, &fakeMember{name: "m2", head: 10}, &fakeMember{name: "m3", head: 10}
			c := fakeComparer(1, m1, m2, m3)
			if res := c.round(context.Background()); res.Differ || c.agreed != 10 {
				t.Fatalf("first round: %+v, agreed %d", res, c.agreed)
			}
			for _, f := range []*fakeMember{m1, m2, m3} {
				f.head, f.asked, f.draws = 40, nil, nil
			}
			m2.parted = parted
			res := c.round(context.Background())
			if !res.Differ || res.First != parted {
				t.Fatalf("round: %+v, want a difference first at %d", res, parted)
			}
			var divergence []int64
			for i, q := range m1.asked {
				switch m1.draws[i][1] {
				case history.CompareBisect:
					if q.Kind != history.OpHashKV || q.Revision <= 10 || q.Revision >= 40 {
						t.Errorf("bisection asked %+v", q)
					}
				case history.CompareDivergence:
					divergence = append(divergence, q.Revision)
				}
			}
			if !slices.Equal(divergence, []int64{parted - 1, parted}) {
				t.Errorf("reads at the divergence: %v, want [%d %d]", divergence, parted-1, parted)
			}
			if n := len(m1.hashRevs()); n > 7 {
				t.Errorf("%d HashKV requests for 30 revisions: %v", n, m1.hashRevs())
			}
			// Found once: later rounds compare but do not bisect again.
			m1.asked = nil
			c.round(context.Background())
			if len(m1.hashRevs()) != 1 {
				t.Errorf("second round asked HashKV at %v", m1.hashRevs())
			}
		})
	}
}

// With no agreement seen yet, the bisection starts at the compact
// revision (asking it there first) and, when they differ already there,
// says nothing more: the record shows they differ at the lowest revision.
func TestComparerBisectsFromTheCompactRevision(t *testing.T) {
	m1, m2 := &fakeMember{name: "m1", head: 40, compact: 20}, &fakeMember{name: "m2", head: 40, compact: 20, parted: 30}
	c := fakeComparer(1, m1, m2)
	if res := c.round(context.Background()); res.First != 30 {
		t.Fatalf("round: %+v, want first 30", res)
	}
	if revs := m1.hashRevs(); revs[1] != 20 {
		t.Errorf("HashKV at %v: want the compact revision 20 asked first", revs)
	}
	m3, m4 := &fakeMember{name: "m3", head: 40, compact: 20}, &fakeMember{name: "m4", head: 40, compact: 20, parted: 15}
	c = fakeComparer(1, m3, m4)
	if res := c.round(context.Background()); !res.Differ || res.First != 0 || !c.done {
		t.Fatalf("round: %+v, want a difference it cannot locate", res)
	}
	if revs := m3.hashRevs(); !slices.Equal(revs, []int64{40, 20}) {
		t.Errorf("HashKV at %v, want [40 20]", revs)
	}
}

// A member that does not answer during the bisection leaves it for the
// next round, which goes on from what it learned.
func TestComparerRetriesAnInterruptedBisection(t *testing.T) {
	m1, m2, m3 := &fakeMember{name: "m1", head: 10}, &fakeMember{name: "m2", head: 10}, &fakeMember{name: "m3", head: 10}
	c := fakeComparer(1, m1, m2, m3)
	c.round(context.Background())
	for _, f := range []*fakeMember{m1, m2, m3} {
		f.head = 42
	}
	m3.parted = 17
	m1.failHashAtOnce, m2.failHashAtOnce = 26, 26
	if res := c.round(context.Background()); res.First != 0 || c.done {
		t.Fatalf("interrupted round: %+v done %t", res, c.done)
	}
	if res := c.round(context.Background()); res.First != 17 {
		t.Fatalf("next round: %+v, want 17", res)
	}
}

// Members that are down are left out; fewer than two answering is no
// round at all; a round below the floor is not made.
func TestComparerNeedsTwoMembersAboveTheFloor(t *testing.T) {
	m1, m2, m3 := &fakeMember{name: "m1", head: 40}, &fakeMember{name: "m2", head: 40, down: true}, &fakeMember{name: "m3", head: 40, down: true}
	c := fakeComparer(1, m1, m2, m3)
	if res := c.round(context.Background()); res.Rev != 0 || len(m1.hashRevs()) != 0 {
		t.Fatalf("one member up: %+v, asked %v", res, m1.hashRevs())
	}
	m2.down = false
	if res := c.round(context.Background()); res.Rev != 40 || c.agreed != 0 {
		t.Fatalf("two of three up: %+v, agreed %d (a member not heard from may be the one that differs)", res, c.agreed)
	}
	c = fakeComparer(50, m1, m2)
	if res := c.round(context.Background()); res.Rev != 0 {
		t.Fatalf("below the floor: %+v", res)
	}
}

// A target that refuses HashKV is compared by its reads alone.
func TestComparerWithoutHashKV(t *testing.T) {
	m1, m2 := &fakeMember{name: "m1", head: 40, refuseHash: true}, &fakeMember{name: "m2", head: 40, refuseHash: true, parted: 30}
	c := fakeComparer(1, m1, m2)
	if res := c.round(context.Background()); !res.Differ || res.First != 0 || !c.noHash {
		t.Fatalf("round: %+v noHash %t", res, c.noHash)
	}
	m1.asked = nil
	c.round(context.Background())
	if len(m1.hashRevs()) != 0 {
		t.Errorf("asked HashKV again after a refusal")
	}
}

// Before each compaction the compactor has a round made, so a divergence
// is bisected while its revisions are there; while a bisection is left
// open, compaction is held to the last revision the members agreed at.
func TestComparerBeforeCompact(t *testing.T) {
	m1, m2, m3 := &fakeMember{name: "m1", head: 10}, &fakeMember{name: "m2", head: 10}, &fakeMember{name: "m3", head: 10}
	w := &Workload{cmp: fakeComparer(1, m1, m2, m3)}
	if got := w.beforeCompact(context.Background(), 5); got != 5 || w.cmp.agreed != 10 {
		t.Fatalf("agreeing members: compact to %d (agreed %d), want 5", got, w.cmp.agreed)
	}
	for _, f := range []*fakeMember{m1, m2, m3} {
		f.head = 40
	}
	m3.parted = 17
	m1.failHashAtOnce, m2.failHashAtOnce = 25, 25 // the bisection's first step goes unanswered
	if got := w.beforeCompact(context.Background(), 30); got != 10 {
		t.Fatalf("bisection left open: compact to %d, want 10, where they last agreed", got)
	}
	if got := w.beforeCompact(context.Background(), 30); got != 30 || !w.cmp.done {
		t.Fatalf("bisection done: compact to %d (done %t), want 30", got, w.cmp.done)
	}
	if got := (&Workload{}).beforeCompact(context.Background(), 30); got != 30 {
		t.Fatalf("no comparer: compact to %d", got)
	}
}
