package kv

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// CheckMemberAgreement is kv/member-agreement. Answers about one revision
// do not depend on the member asked: every member applies the same writes
// in the same order. So:
//   - two members that answered HashKV at the same revision with the same
//     compact revision (they hashed the same revisions) give the same hash;
//   - ranges at the same revision (Request.Revision > 0), of the same keys
//     with the same options, return the same data on every member.
//
// The member comparer (workload/members.go) asks every member for both
// while the run goes on, and when the hashes differ it bisects HashKV over
// revisions. From those answers the check finds the first revision r at
// which two members differ having agreed at r-1, and names the request that
// took r: the write whose value the members' reads at r show (values are
// unique per write), else the write acknowledged at r, else the writes of
// unknown outcome or definite error that may have taken it. That request
// is the violation's first record. When the answers do not pin r down
// (they differ already at the lowest revision compared), the violation
// says between which revisions the members parted.
//
// Range answers that differ at or above the revision the hashes parted
// at are that same divergence, counted in its violation; others are
// violations of their own, citing the reads and the writes of the values
// that differ.
func CheckMemberAgreement(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	figures := map[string]float64{}
	hashes := hashAnswers(h)
	pairs := comparePairs(hashes)
	figures["hash_revisions_compared"] = float64(countCompared(pairs))
	div := firstDivergence(pairs)
	groups := rangeGroups(h)
	writers := &writerIndex{h: h}
	compared := 0
	var covered []*readGroup
	for _, g := range groups {
		if len(g.members()) < 2 && !g.differs() {
			continue
		}
		compared++
		if !g.differs() {
			continue
		}
		if div != nil && g.rev > div.lastAgree {
			covered = append(covered, g)
			continue
		}
		col.Add(readViolation(h, g, writers))
	}
	figures["read_revisions_compared"] = float64(compared)
	if div != nil {
		figures["hash_revisions_differing"] = float64(div.differing)
		col.Add(hashViolation(h, hashes, div, len(covered), writers))
	}
	figures["reads_differing_after_divergence"] = float64(len(covered))
	if col.Total == 0 && figures["hash_revisions_compared"]+figures["read_revisions_compared"] == 0 {
		return check.Skip(NameMemberAgreement, "no two members answered HashKV or the same range at one revision", figures)
	}
	r := col.Result(NameMemberAgreement, figures)
	r.Judged = int(figures["hash_revisions_compared"]) + compared
	return r
}

// hashIndex holds the answered HashKV requests at a revision, by member
// and revision.
type hashIndex map[string]map[int64][]*history.Operation

func hashAnswers(h *history.History) hashIndex {
	out := hashIndex{}
	for i := range h.Operations {
		o := &h.Operations[i]
		if o.Request.Kind != history.OpHashKV || o.Request.Revision <= 0 || o.Failed() || o.Member == "" {
			continue
		}
		if out[o.Member] == nil {
			out[o.Member] = map[int64][]*history.Operation{}
		}
		out[o.Member][o.Request.Revision] = append(out[o.Member][o.Request.Revision], o)
	}
	return out
}

// at lists the answers at rev, every member's.
func (x hashIndex) at(rev int64) []*history.Operation {
	var out []*history.Operation
	for _, m := range sortedMembers(x) {
		out = append(out, x[m][rev]...)
	}
	return out
}

// pairState is how two members' hashes compare, by revision: a pair of
// answers (same compact revision) that agree, and one that differs.
type pairState struct {
	members [2]string
	agree   map[int64][2]*history.Operation
	differ  map[int64][2]*history.Operation
}

// comparePairs compares every two members at every revision both were
// asked about, answers with the same compact revision only.
func comparePairs(x hashIndex) []*pairState {
	ms := sortedMembers(x)
	var out []*pairState
	for i := range ms {
		for j := i + 1; j < len(ms); j++ {
			p := &pairState{members: [2]string{ms[i], ms[j]}, agree: map[int64][2]*history.Operation{},
				differ: map[int64][2]*history.Operation{}}
			for rev, as := range x[ms[i]] {
				for _, a := range as {
					for _, b := range x[ms[j]][rev] {
						if a.Response.CompactRevision != b.Response.CompactRevision {
							continue
						}
						if a.Response.Hash == b.Response.Hash {
							if _, ok := p.agree[rev]; !ok {
								p.agree[rev] = [2]*history.Operation{a, b}
							}
						} else if _, ok := p.differ[rev]; !ok {
							p.differ[rev] = [2]*history.Operation{a, b}
						}
					}
				}
			}
			out = append(out, p)
		}
	}
	return out
}

func countCompared(pairs []*pairState) int {
	revs := map[int64]bool{}
	for _, p := range pairs {
		for r := range p.agree {
			revs[r] = true
		}
		for r := range p.differ {
			revs[r] = true
		}
	}
	return len(revs)
}

// divergence is where the members' hashes part: first is the lowest
// revision at which two members differ; lastAgree the highest revision
// below it at which such a pair agreed (0: none compared). located when
// lastAgree is first-1: revision first is where they parted.
type divergence struct {
	first, lastAgree int64
	located          bool
	pair             *pairState
	differing        int   // revisions at which some pair differs
	highest          int64 // the highest of them
}

func firstDivergence(pairs []*pairState) *divergence {
	var d *divergence
	differing := map[int64]bool{}
	for _, p := range pairs {
		if len(p.differ) == 0 {
			continue
		}
		first := int64(-1)
		for r := range p.differ {
			differing[r] = true
			if first < 0 || r < first {
				first = r
			}
		}
		var last int64
		for r := range p.agree {
			if r < first && r > last {
				last = r
			}
		}
		if d == nil || first < d.first || (first == d.first && last > d.lastAgree) {
			d = &divergence{first: first, lastAgree: last, pair: p}
		}
	}
	if d == nil {
		return nil
	}
	d.located = d.lastAgree == d.first-1
	d.differing = len(differing)
	for r := range differing {
		d.highest = max(d.highest, r)
	}
	return d
}

// hashViolation reports the divergence, naming the request that took its
// first revision when it is located.
func hashViolation(h *history.History, x hashIndex, d *divergence, readsToo int, writers *writerIndex) check.Violation {
	p := d.pair
	atFirst := p.differ[d.first]
	compact := atFirst[0].Response.CompactRevision
	got := hashGroups(x.at(d.first), compact)
	v := check.Violation{Guarantee: ErrMemberAgreement, Revision: d.first,
		Want: fmt.Sprintf("the same HashKV at revision %d on every member with compact revision %d", d.first, compact),
		Got:  got}
	var b strings.Builder
	var cite []int64
	if d.located {
		before := p.agree[d.lastAgree]
		fmt.Fprintf(&b, "members %s and %s agree at revision %d (HashKV %#x) and differ from revision %d on (%s; compact revision %d)",
			p.members[0], p.members[1], d.lastAgree, before[0].Response.Hash, d.first, got, compact)
		n := nameTaker(h, d.first, writers)
		if n.text != "" {
			fmt.Fprintf(&b, "; %s", n.text)
		}
		v.Client, v.Key = n.client, n.key
		cite = append(cite, n.ops...)
		cite = append(cite, before[0].ID, before[1].ID)
	} else {
		fmt.Fprintf(&b, "members %s and %s differ at revision %d (%s; compact revision %d), ", p.members[0], p.members[1],
			d.first, got, compact)
		if d.lastAgree > 0 {
			fmt.Fprintf(&b, "having last agreed at %d: they parted at a revision in %d..%d, which the answers do not pin down",
				d.lastAgree, d.lastAgree+1, d.first)
		} else {
			fmt.Fprintf(&b, "the lowest revision they were compared at: they parted at or below it")
		}
	}
	cite = append(cite, atFirst[0].ID, atFirst[1].ID)
	if d.differing > 1 {
		fmt.Fprintf(&b, "; they differ at %d revisions compared, up to %d", d.differing, d.highest)
		for _, o := range x.at(d.highest) {
			cite = append(cite, o.ID)
		}
	}
	if readsToo > 0 {
		fmt.Fprintf(&b, "; %d read(s) at one revision differ from member to member there too", readsToo)
	}
	v.Message = b.String()
	v.Operations = dedup(cite)
	return v
}

// hashGroups says which member answered which hash, among answers with
// the given compact revision: "0xab on m2; 0xcd on m1, m3".
func hashGroups(ops []*history.Operation, compact int64) string {
	by := map[uint32][]string{}
	for _, o := range ops {
		if o.Response.CompactRevision != compact {
			continue
		}
		if !slices.Contains(by[o.Response.Hash], o.Member) {
			by[o.Response.Hash] = append(by[o.Response.Hash], o.Member)
		}
	}
	hs := make([]uint32, 0, len(by))
	for k := range by {
		hs = append(hs, k)
	}
	sort.Slice(hs, func(i, j int) bool {
		if len(by[hs[i]]) != len(by[hs[j]]) {
			return len(by[hs[i]]) < len(by[hs[j]])
		}
		return hs[i] < hs[j]
	})
	parts := make([]string, len(hs))
	for i, hv := range hs {
		ms := by[hv]
		sort.Strings(ms)
		parts[i] = fmt.Sprintf("%#x on %s", hv, strings.Join(ms, ", "))
	}
	return strings.Join(parts, "; ")
}

func dedup(ids []int64) []int64 {
	var out []int64
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
