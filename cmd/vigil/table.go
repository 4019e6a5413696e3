package main

import (
	"io"

	"github.com/vigil-suite/vigil/reports"
)

// printTable prints rows under headers as vigil's listings do: see
// reports.Listing, which it is (kept for the commands that print lists).
func printTable(w io.Writer, wide bool, headers []string, rows [][]string) {
	reports.Listing(w, wide, headers, rows)
}
