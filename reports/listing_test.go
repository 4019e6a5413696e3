package reports

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestListing(t *testing.T) {
	rows := [][]string{{"a", "yes", strings.Repeat("x", 120)}, {"longer-name", "no", "short"}}
	var narrow, wide strings.Builder
	Listing(&narrow, false, []string{"NAME", "HERE", "WHAT"}, rows)
	Listing(&wide, true, []string{"NAME", "HERE", "WHAT"}, rows)
	lines := strings.Split(strings.TrimSuffix(narrow.String(), "\n"), "\n")
	want := []string{
		"NAME         HERE  WHAT",
		"a            yes   " + strings.Repeat("x", ListWidth-len("a            yes   ")-1) + "…",
		"longer-name  no    short",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("narrow listing:\n%s\nwant:\n%s", narrow.String(), strings.Join(want, "\n"))
	}
	if n := utf8.RuneCountInString(lines[1]); n != ListWidth {
		t.Errorf("a cut line is %d runes, want %d", n, ListWidth)
	}
	if !strings.Contains(wide.String(), strings.Repeat("x", 120)) {
		t.Errorf("the wide listing cut the last column:\n%s", wide.String())
	}
}

func TestFirstClause(t *testing.T) {
	for in, want := range map[string]string{"no: needs a build": "no", "yes, with --failpoints": "yes", "yes": "yes", ": odd": ": odd"} {
		if got := FirstClause(in); got != want {
			t.Errorf("FirstClause(%q) = %q, want %q", in, got, want)
		}
	}
}
