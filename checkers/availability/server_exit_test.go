package availability

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/history"
)

// panicked is kine-0's exit at 5 s with a Go panic, as fixtures/procs
// reads it from the log.
func panicked() history.ServerExit {
	return history.ServerExit{Process: "kine-0", Role: history.RoleMember, Time: 5 * time.Second, PID: 4242,
		Status: "exit status 2", Code: 2, LogFile: "members/kine-0/log",
		Log: []string{"panic: runtime error: invalid memory address or nil pointer dereference",
			"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a14b2]", "", "goroutine 19 [running]:"},
		Crash: &history.Crash{Message: "panic: runtime error: invalid memory address or nil pointer dereference",
			Signal: "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a14b2]", Goroutine: "goroutine 19 [running]",
			Goroutines: 1, Frames: []history.Frame{
				{Func: "github.com/k3s-io/kine/pkg/server.(*KVServerBridge).Range(...)", File: "/src/kine/pkg/server/kv.go:57"},
				{Func: "go.etcd.io/etcd/api/v3/etcdserverpb._KV_Range_Handler(...)", File: "/src/api/rpc.pb.go:6721"},
				{Func: "created by google.golang.org/grpc.(*Server).serveStreams in goroutine 40", File: "/src/grpc/server.go:1080"},
			}}}
}

// exitHistory is a run of kine-0 (and its database) with calls answered
// every second and ops around the exit at 5 s.
func exitHistory(exits ...history.ServerExit) *history.History {
	b := histbuild.New()
	b.H.Meta.Processes = []string{"kine-0", "kine-db"}
	s := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	add := func(id int64, call, ret float64, ok bool) {
		o := history.Operation{ID: id, Call: s(call), Return: s(ret), Request: history.Request{Kind: history.OpPut, Key: "/k"}}
		if ok {
			o.Response = &history.Response{Revision: id}
		} else {
			o.Code, o.Error = history.ErrUnknown, "context canceled"
		}
		b.H.Operations = append(b.H.Operations, o)
	}
	add(1, 1, 1.1, true)
	add(2, 4.9, 4.95, true) // answered before the exit
	add(3, 4.9, 5.2, false) // in flight, then given up
	add(4, 5, 5.3, false)   // sent at the very moment
	add(5, 5.5, 6, false)   // sent after: not in flight
	b.H.Calls = append(b.H.Calls, history.Call{ID: 7, Kind: history.CallLeaseKeepAlive, Call: s(4.5), Return: s(9)})
	b.H.ServerExits = exits
	return b.H
}

func TestServerExit(t *testing.T) {
	expected := panicked()
	expected.Expected = "failpoint beforeCommit armed to panic (panic(\"vigil\"))"
	histbuild.RunWatchCases(t, CheckServerExits, ErrServerExit, []histbuild.WatchCase{
		{Name: "run/server-exit - no process exited by itself - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			*b.H = *exitHistory()
		}},
		{Name: "run/server-exit - an exit a fault armed (a failpoint's panic) - pass", Want: check.Pass, Build: func(b *histbuild.Builder) {
			*b.H = *exitHistory(expected)
		}},
		{Name: "run/server-exit - a panic nothing vigil did explains - fail", Want: check.Fail,
			Msg:   "kine-0 exited with code 2 at t=5.0s, and vigil did not stop it: panic: runtime error: invalid memory address or nil pointer dereference; 3 request(s) were in flight",
			Build: func(b *histbuild.Builder) { *b.H = *exitHistory(expected, panicked()) }},
		{Name: "run/server-exit - a database server killed by a signal - fail", Want: check.Fail,
			Msg: "database server kine-db was killed by SIGKILL at t=5.0s, and vigil did not stop it: its log ends: LOG:  database system is ready",
			Build: func(b *histbuild.Builder) {
				*b.H = *exitHistory(history.ServerExit{Process: "kine-db", Role: history.RoleDatabase, Time: 5 * time.Second,
					Status: "signal: killed", Code: -1, Signal: "SIGKILL", Log: []string{"LOG:  database system is ready"}})
			}},
	})
}

// TestServerExitWitness: the violation quotes the crash (first line,
// signal, goroutine, top frames), cites the requests in flight at the
// exit, and spans the time until a fault on the process healed.
func TestServerExitWitness(t *testing.T) {
	h := exitHistory(panicked())
	h.Faults = append(h.Faults,
		history.Fault{ID: 1, Name: "pause-leader", Targets: []string{"kine-0"}, Start: 2 * time.Second, End: 4 * time.Second},
		history.Fault{ID: 2, Name: "kill-leader", Targets: []string{"kine-0"}, Start: 7 * time.Second, End: 8 * time.Second})
	r := check.Run(Checks()[1], h, check.DefaultConfig())
	if r.Verdict != check.Fail || len(r.Violations) != 1 {
		t.Fatalf("verdict %s, %d violations", r.Verdict, len(r.Violations))
	}
	v := r.Violations[0]
	if !errors.Is(v, ErrServerExit) {
		t.Error("the violation does not wrap run/server-exit's guarantee")
	}
	if !slices.Equal(v.Operations, []int64{3, 4}) || !slices.Equal(v.Calls, []int64{7}) {
		t.Errorf("in flight: operations %v, calls %v; want 3, 4 and call 7", v.Operations, v.Calls)
	}
	if v.Span == nil || v.Span.From != 5*time.Second || v.Span.To != 8*time.Second {
		t.Errorf("span %+v, want 5s to the kill's heal at 8s", v.Span)
	}
	want := []string{
		"panic: runtime error: invalid memory address or nil pointer dereference",
		"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a14b2]",
		"goroutine 19 [running]:",
		"  github.com/k3s-io/kine/pkg/server.(*KVServerBridge).Range(...)",
		"      /src/kine/pkg/server/kv.go:57",
	}
	if len(v.Log) < len(want) || !slices.Equal(v.Log[:len(want)], want) {
		t.Errorf("quoted log:\n%s", strings.Join(v.Log, "\n"))
	}
	if !strings.Contains(v.Message, "its log: members/kine-0/log") || !strings.HasPrefix(v.Got, "exited with code 2 (exit status 2)") {
		t.Errorf("message %q, got %q", v.Message, v.Got)
	}
	if r.Evidence == nil || r.Evidence.Asked != 2 || r.Evidence.Answered != 1 {
		t.Errorf("evidence %+v: want 2 processes, 1 ran until stopped", r.Evidence)
	}
	// Without a later fault on it, the span runs to the history's end.
	h.Faults = h.Faults[:1]
	if v := CheckServerExits(h, check.DefaultConfig()).Violations[0]; v.Span.To != 9*time.Second {
		t.Errorf("span %+v, want to the history's end at 9s", v.Span)
	}
}

// TestServerExitSkipped: a history of a system vigil does not run (or
// from before server-exit records) has nothing to judge.
func TestServerExitSkipped(t *testing.T) {
	h := exitHistory()
	h.Meta.Processes = nil
	r := check.Run(Checks()[1], h, check.DefaultConfig())
	if r.Verdict != check.Skipped || !strings.Contains(r.Reason, "vigil ran none of the system's processes") {
		t.Errorf("verdict %s (%s), want skipped", r.Verdict, r.Reason)
	}
}
