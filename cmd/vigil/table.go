package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// listWidth is what a listing fits in unless asked for -o wide.
const listWidth = 100

// printTable prints rows under headers in aligned columns. Unless wide,
// the last column is cut so that each line fits listWidth.
func printTable(w io.Writer, wide bool, headers []string, rows [][]string) {
	widths := make([]int, len(headers))
	for _, r := range append([][]string{headers}, rows...) {
		for i, c := range r[:len(r)-1] {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range append([][]string{headers}, rows...) {
		var b strings.Builder
		for i, c := range r[:len(r)-1] {
			fmt.Fprintf(&b, "%-*s  ", widths[i], c)
		}
		last := r[len(r)-1]
		if room := listWidth - utf8.RuneCountInString(b.String()); !wide && utf8.RuneCountInString(last) > room {
			last = string([]rune(last)[:max(room-1, 0)]) + "…"
		}
		fmt.Fprintln(w, strings.TrimRight(b.String()+last, " "))
	}
}

// short is the first clause of a long cell ("no: needs ..." → "no"), for
// the narrow listing.
func short(s string) string {
	if i := strings.IndexAny(s, ":,"); i > 0 {
		return s[:i]
	}
	return s
}
