package watch

import (
	"errors"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	hb "github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

func checkNamed(name string) check.Check {
	for _, c := range Checks() {
		if c.Name == name {
			return c
		}
	}
	panic(name)
}

// progressHistory: one prefix watch of client 1, created at 1 s, with
// events, and n progress requests for it one second apart from 2 s on;
// answer says which get a notification 10 ms later.
func progressHistory(n int, answer func(i int) bool) *hb.Builder {
	b := hb.New()
	sec := int(time.Second)
	b.Watch(1, 1, 0, hb.PrefixWatch())
	b.Created(1, sec, 1)
	b.Put(2, sec+10, sec+20, "a", "1", 2)
	b.Events(1, sec+30, hb.PutEv("a", "1", 2, 2, 1))
	for i := 0; i < n; i++ {
		at := time.Duration((2 + i) * sec)
		b.H.Calls = append(b.H.Calls, history.Call{ID: int64(i + 1), Client: 1, Kind: history.CallProgress,
			Watches: []int64{1}, Call: at, Return: at})
		if answer(i) {
			b.Progress(1, int(at)+int(10*time.Millisecond), 2)
		}
	}
	b.End(1, (n+10)*sec, history.EndClient)
	return b
}

func TestBookmarkableEvidence(t *testing.T) {
	sec := int(time.Second)
	cases := []struct {
		name  string
		build func() *hb.Builder
		want  check.Verdict
	}{
		{"bookmarkable - every owed progress request unanswered - fail", func() *hb.Builder {
			return progressHistory(20, func(int) bool { return false })
		}, check.Fail},
		{"bookmarkable - unanswered under sabotage, which excuses nothing - fail", func() *hb.Builder {
			b := progressHistory(20, func(int) bool { return false })
			b.Fault("sabotage:ignore-progress", 0, 40*sec)
			return b
		}, check.Fail},
		{"bookmarkable - some answered - pass", func() *hb.Builder {
			return progressHistory(20, func(i int) bool { return i%5 == 0 })
		}, check.Pass},
		{"bookmarkable - every request during a fault - unknown", func() *hb.Builder {
			b := progressHistory(20, func(int) bool { return false })
			b.Fault("pause-leader", 0, 40*sec)
			return b
		}, check.Unknown},
		{"bookmarkable - no progress request sent - skipped", func() *hb.Builder {
			return progressHistory(0, nil)
		}, check.Skipped},
		{"bookmarkable - requests for a watch not yet answered - unknown", func() *hb.Builder {
			b := hb.New()
			b.Watch(1, 1, 0, hb.PrefixWatch())
			for i := 0; i < 5; i++ {
				at := time.Duration((2 + i) * sec)
				b.H.Calls = append(b.H.Calls, history.Call{ID: int64(i + 1), Client: 1, Kind: history.CallProgress,
					Watches: []int64{1}, Call: at, Return: at})
			}
			return b
		}, check.Unknown},
	}
	c := checkNamed(NameBookmarkable)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := check.Run(c, tc.build().H, check.DefaultConfig())
			if r.Verdict != tc.want {
				t.Fatalf("verdict %s (%s), want %s; evidence %+v", r.Verdict, r.Reason, tc.want, r.Evidence)
			}
			if tc.want != check.Fail {
				return
			}
			v := r.Violations[len(r.Violations)-1]
			if !errors.Is(v, ErrBookmarkable) || len(v.Calls) == 0 {
				t.Errorf("violation %+v: want ErrBookmarkable citing the unanswered calls", v)
			}
			if r.Evidence.Asked != 20 || r.Evidence.Answered != 0 || r.Evidence.Ignored != r.Evidence.Owed || r.Evidence.Owed == 0 {
				t.Errorf("evidence %+v: want 20 asked, none answered, every owed one ignored", r.Evidence)
			}
		})
	}
}

// A format-1 history did not record progress requests: its evidence is
// legacy and the check's own verdict stands.
func TestBookmarkableLegacyHistory(t *testing.T) {
	b := progressHistory(3, func(int) bool { return true })
	b.H.Calls, b.H.Meta.Format = nil, 1
	r := check.Run(checkNamed(NameBookmarkable), b.H, check.DefaultConfig())
	if r.Verdict != check.Pass || r.Evidence == nil || !r.Evidence.Legacy {
		t.Fatalf("verdict %s evidence %+v, want pass on legacy evidence", r.Verdict, r.Evidence)
	}
}
