package kv

import (
	"fmt"
	"sort"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// CheckRevisionMonotonic is kv/revision-monotonic. It judges the
// acknowledged linearizable operations (writes, compactions, ranges that
// are not serializable; serializable reads belong to kv/serializable-sane):
//   - an operation called after another returned reports a header revision
//     at least that one's, and strictly above it when the later one is a
//     write that created a revision. This holds across clients, so it holds
//     for the successive operations of one client in particular, which the
//     message names when the client's own previous answer is the evidence;
//   - two acknowledged writes never create the same revision (one txn, one
//     revision);
//   - when the workload is the only writer, the revisions between the
//     first and the last acknowledged write that no acknowledged write
//     holds are at most the writes of unknown outcome called in time to
//     create them: a write never increases the revision by more than one.
func CheckRevisionMonotonic(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	bounds := facts.NewRevBounds(h)
	var lin []*history.Operation
	for i := range h.Operations {
		if o := &h.Operations[i]; !o.Failed() && facts.IsLinearizableOp(o) {
			lin = append(lin, o)
		}
	}
	figures := map[string]float64{"operations_judged": float64(len(lin))}
	if len(lin) == 0 {
		return check.Skip(NameRevisionMonotonic, "no acknowledged write or linearizable read", figures)
	}
	byID := make(map[int64]*history.Operation, len(lin))
	for _, o := range lin {
		byID[o.ID] = o
	}
	sort.SliceStable(lin, func(i, j int) bool { return lin[i].Return < lin[j].Return })

	prevOfClient := map[int]*history.Operation{}
	creator := map[int64]*history.Operation{}
	for _, o := range lin {
		rev, creates := facts.AckedWriteRevision(o)
		got := o.Response.Revision
		if before := bounds.AtLeast(o.Call); before.Op != 0 && (got < before.Rev || creates && got == before.Rev) {
			evidence := byID[before.Op]
			if p := prevOfClient[o.Client]; p != nil && p.Return < o.Call &&
				(got < p.Response.Revision || creates && got == p.Response.Revision) {
				evidence = p
			}
			col.Add(revisionWentBack(h, o, evidence, creates))
		}
		prevOfClient[o.Client] = o
		if !creates {
			continue
		}
		if first := creator[rev]; first != nil {
			col.Add(check.Violation{
				Guarantee: ErrRevisionMonotonic,
				Message: fmt.Sprintf("operations %d (client %d, %s) and %d (client %d, %s) were both acknowledged as "+
					"creating revision %d: every committed txn takes a revision of its own",
					first.ID, first.Client, first.Request.Kind, o.ID, o.Client, o.Request.Kind, rev),
				Client: o.Client, Key: facts.WriteKey(&o.Request), Revision: rev,
				Want: "one write per revision", Got: "two", Operations: []int64{first.ID, o.ID},
			})
			continue
		}
		creator[rev] = o
	}
	figures["writes"] = float64(len(creator))
	if bounds.Sole {
		checkRevisionGaps(h, creator, bounds, col, figures)
	}
	return col.Result(NameRevisionMonotonic, figures)
}

func revisionWentBack(h *history.History, o, before *history.Operation, creates bool) check.Violation {
	who := fmt.Sprintf("operation %d (client %d)", before.ID, before.Client)
	if before.Client == o.Client {
		who = fmt.Sprintf("its own previous operation %d", before.ID)
	}
	want := fmt.Sprintf(">= %d", before.Response.Revision)
	what := "reported header revision"
	if creates {
		want, what = fmt.Sprintf("> %d", before.Response.Revision), "created revision"
	}
	return check.Violation{
		Guarantee: ErrRevisionMonotonic,
		Message: fmt.Sprintf("client %d's %s %d on %s %s %d, but %s had returned header revision %d before it was called "+
			"(at %s, returned at %s)", o.Client, o.Request.Kind, o.ID, facts.ShortKey(h.Meta.Prefix, facts.WriteKey(&o.Request)),
			what, o.Response.Revision, who, before.Response.Revision, o.Call, before.Return),
		Client: o.Client, Key: facts.WriteKey(&o.Request), Revision: o.Response.Revision,
		Want: want, Got: fmt.Sprint(o.Response.Revision), Operations: []int64{before.ID, o.ID},
	}
}

// checkRevisionGaps matches every revision between two acknowledged writes
// that no acknowledged write holds with a distinct write of unknown outcome
// that could have created it: one called before some acknowledged write
// of a higher revision returned. The gaps in order need ever later
// deadlines, so counting suffices (Hall's condition on nested sets).
func checkRevisionGaps(h *history.History, creator map[int64]*history.Operation, bounds *facts.RevBounds,
	col *check.Collector, figures map[string]float64) {
	revs := make([]int64, 0, len(creator))
	for r := range creator {
		revs = append(revs, r)
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i] < revs[j] })
	if len(revs) < 2 {
		return
	}
	// deadline[i]: the earliest return of an acknowledged write at revs[i] or above.
	deadline := make([]time.Duration, len(revs))
	for i := len(revs) - 1; i >= 0; i-- {
		deadline[i] = creator[revs[i]].Return
		if i+1 < len(revs) {
			deadline[i] = min(deadline[i], deadline[i+1])
		}
	}
	gaps := int64(0)
	for i := 1; i < len(revs); i++ {
		gap := revs[i] - revs[i-1] - 1
		if gap == 0 {
			continue
		}
		gaps += gap
		avail := int64(sort.Search(len(bounds.UnknownCalls), func(j int) bool { return bounds.UnknownCalls[j] >= deadline[i] }))
		if gaps <= avail {
			continue
		}
		lo, hi := creator[revs[i-1]], creator[revs[i]]
		col.Add(check.Violation{
			Guarantee: ErrRevisionMonotonic,
			Message: fmt.Sprintf("no acknowledged write created revisions %d..%d (between operation %d at revision %d and "+
				"operation %d at revision %d); with earlier gaps that makes %d revisions to explain, but only %d writes of "+
				"unknown outcome were called before a write above them returned (at %s): a write increased the revision "+
				"by more than one", revs[i-1]+1, revs[i]-1, lo.ID, revs[i-1], hi.ID, revs[i], gaps, avail, deadline[i]),
			Client: hi.Client, Key: facts.WriteKey(&hi.Request), Revision: revs[i-1] + 1,
			Want: fmt.Sprintf("at most %d revisions without an acknowledged write", avail), Got: fmt.Sprint(gaps),
			Operations: []int64{lo.ID, hi.ID},
		})
		gaps = avail // report each unexplained stretch once
	}
	figures["revisions_without_acknowledged_write"] = float64(revs[len(revs)-1] - revs[0] + 1 - int64(len(revs)))
}
