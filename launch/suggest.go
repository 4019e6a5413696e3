package launch

import (
	"sort"
	"strings"
)

// Suggest returns the names closest to name (by edit distance), for "did
// you mean" hints; none when nothing is close.
func Suggest(name string, names []string) []string {
	best, out := 3, []string(nil)
	for _, n := range names {
		d := editDistance(name, n)
		if strings.HasPrefix(n, name) && len(name) >= 3 {
			d = 1
		}
		switch {
		case d < best:
			best, out = d, []string{n}
		case d == best:
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// didYouMean is Suggest as a sentence ("" when there is nothing close).
func didYouMean(name string, names []string) string {
	s := Suggest(name, names)
	if len(s) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(s, " or ") + "?"
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
