package history

import "strings"

// DrawMemberCompare is the first entry of the Draw of every request the
// member comparer sends (workload/members.go): it reads each member
// directly, at a revision every member has applied, to compare them
// while the run goes on. The second entry says why it asked: one of the
// CompareRound, CompareBisect and CompareDivergence roles.
const DrawMemberCompare = "member-compare"

// The roles of the comparer's requests (Draw[1]): a round's Status,
// HashKV and range at the revision every member has applied; a HashKV of
// the bisection that looks for the first revision the members differ
// at; a range at that revision or the one before, which shows what each
// member holds there.
const (
	CompareRound      = DrawMemberCompare + "=round"
	CompareBisect     = DrawMemberCompare + "=bisect"
	CompareDivergence = DrawMemberCompare + "=divergence"
)

// IsMemberCompare reports whether the member comparer sent o.
func IsMemberCompare(o *Operation) bool {
	return len(o.Draw) > 0 && strings.HasPrefix(o.Draw[0], DrawMemberCompare)
}

// CompareRole is the role of a request of the member comparer (one of
// CompareRound, ...), or "" for any other request.
func CompareRole(o *Operation) string {
	if !IsMemberCompare(o) || len(o.Draw) < 2 {
		return ""
	}
	return o.Draw[1]
}
