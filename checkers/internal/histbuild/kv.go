package histbuild

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// More builders for hand-made histories (see builder_test.go).

func WithPrev(ev history.Event, prev history.KV) history.Event {
	ev.PrevKV = &prev
	return ev
}

// KvCase is one hand-built history judged by one KV check.
type KvCase struct {
	Name  string
	Build func(b *Builder)
	Want  check.Verdict
	// On fail: the first violation names this client, revision (and key
	// when set), cites operation op when set, and its message holds msg.
	Client int
	Rev    int64
	Key    string
	Op     int64
	Msg    string
	// Excused, when set: the result's excused counts by reason.
	Excused map[string]int
}

func RunKVCases(t *testing.T, run func(*history.History, check.Config) check.Result, sentinel error, cases []KvCase) {
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
			if r.Verdict == check.Skipped || r.Verdict == check.Unknown {
				if r.Reason == "" {
					t.Errorf("%s without a reason", r.Verdict)
				}
			}
			if c.Want != check.Fail {
				return
			}
			v := r.Violations[0]
			if !errors.Is(v, sentinel) {
				t.Errorf("violation does not wrap %v", sentinel)
			}
			if v.Client != c.Client || v.Revision != c.Rev || (c.Key != "" && v.Key != K(c.Key)) {
				t.Errorf("violation names client %d revision %d key %s, want %d %d %s: %s",
					v.Client, v.Revision, v.Key, c.Client, c.Rev, c.Key, v.Message)
			}
			if c.Op != 0 && !slices.Contains(v.Operations, c.Op) {
				t.Errorf("violation cites operations %v, want %d among them: %s", v.Operations, c.Op, v.Message)
			}
			if !strings.Contains(v.Message, c.Msg) {
				t.Errorf("message %q lacks %q", v.Message, c.Msg)
			}
		})
	}
}

func DurationOf(t int) time.Duration { return time.Duration(t) }
