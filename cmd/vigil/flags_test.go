package main

import (
	"flag"
	"io"
	"slices"
	"testing"
	"time"
)

func TestParseInterspersed(t *testing.T) {
	for _, c := range []struct {
		args []string
		pos  []string
		d    time.Duration
	}{
		{[]string{"DIR", "--check-timeout", "1m"}, []string{"DIR"}, time.Minute},
		{[]string{"--check-timeout", "2m", "DIR"}, []string{"DIR"}, 2 * time.Minute},
		{[]string{"a", "--check-timeout=3m", "b", "c"}, []string{"a", "b", "c"}, 3 * time.Minute},
		{[]string{"a", "--", "--check-timeout", "b"}, []string{"a", "--check-timeout", "b"}, 0},
		{nil, nil, 0},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		d := fs.Duration("check-timeout", 0, "")
		pos, err := parseInterspersed(fs, c.args)
		if err != nil || !slices.Equal(pos, c.pos) || *d != c.d {
			t.Errorf("%q: got %q %v %v, want %q %v", c.args, pos, *d, err, c.pos, c.d)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := parseInterspersed(fs, []string{"DIR", "--bogus"}); err == nil {
		t.Error("an unknown flag after the argument must be an error")
	}
}
