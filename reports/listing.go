package reports

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ListWidth is what a listing (vigil faults, bugs list, sabotage list,
// matrix) fits in unless asked for -o wide.
const ListWidth = 100

// Listing writes rows under headers in aligned columns, the form of
// vigil's listings. Unless wide, the last column is cut (with "…") so
// that each line fits ListWidth: the listings are read in a terminal,
// and -o wide shows them in full.
func Listing(w io.Writer, wide bool, headers []string, rows [][]string) {
	lines := append([][]string{headers}, rows...)
	widths := make([]int, len(headers))
	for _, r := range lines {
		for i, c := range r[:len(r)-1] {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range lines {
		var b strings.Builder
		for i, c := range r[:len(r)-1] {
			fmt.Fprintf(&b, "%-*s  ", widths[i], c)
		}
		last := r[len(r)-1]
		if room := ListWidth - utf8.RuneCountInString(b.String()); !wide && utf8.RuneCountInString(last) > room {
			last = string([]rune(last)[:max(room-1, 0)]) + "…"
		}
		fmt.Fprintln(w, strings.TrimRight(b.String()+last, " "))
	}
}

// FirstClause is the first clause of a long cell ("no: needs ..." → "no"),
// which a narrow listing shows in place of the whole cell.
func FirstClause(s string) string {
	if i := strings.IndexAny(s, ":,"); i > 0 {
		return s[:i]
	}
	return s
}
