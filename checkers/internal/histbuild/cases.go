package histbuild

import (
	"errors"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// WatchCase is one hand-built history judged by one check.
type WatchCase struct {
	Name  string
	Build func(b *Builder)
	Want  check.Verdict
	// On fail: the first violation names this watch and revision (and key
	// when set), and its message holds msg.
	Watch int64
	Rev   int64
	Key   string
	Msg   string
	// Excused, when set, is the result's excused counts by reason: the
	// excuse the case is about was counted as one.
	Excused map[string]int
}

// checkExcused holds r's excuse counts to want, when want is set.
func checkExcused(t *testing.T, r check.Result, want map[string]int) {
	t.Helper()
	for reason, n := range want {
		if r.Excused[reason] != n {
			t.Errorf("excused %v, want %s=%d", r.Excused, reason, n)
		}
	}
}

func RunWatchCases(t *testing.T, run func(*history.History, check.Config) check.Result, sentinel error, cases []WatchCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			b := New()
			c.Build(b)
			r := run(b.H, check.DefaultConfig())
			if r.Verdict != c.Want {
				t.Fatalf("verdict %s (%s), want %s; violations %+v", r.Verdict, r.Reason, c.Want, r.Violations)
			}
			checkExcused(t, r, c.Excused)
			if c.Want != check.Fail {
				return
			}
			v := r.Violations[0]
			if !errors.Is(v, sentinel) {
				t.Errorf("violation does not wrap %v", sentinel)
			}
			if v.Watch != c.Watch || v.Revision != c.Rev || (c.Key != "" && v.Key != K(c.Key)) {
				t.Errorf("violation names watch %d revision %d key %s, want %d %d %s: %s",
					v.Watch, v.Revision, v.Key, c.Watch, c.Rev, c.Key, v.Message)
			}
			if !strings.Contains(v.Message+" "+v.Got, c.Msg) {
				t.Errorf("message %q (got %q) lacks %q", v.Message, v.Got, c.Msg)
			}
		})
	}
}
