package availability

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// maxInFlight bounds the requests a violation cites (the message counts
// them all).
const maxInFlight = 20

// maxFrames is how many frames of a crash a violation quotes.
const maxFrames = 5

// CheckServerExits is run/server-exit: every process vigil started and
// watched (Meta.Processes) ran until vigil stopped it. Each server-exit
// record is one such process's exit that vigil did not ask for; one a
// fault made happen (Expected: a failpoint armed to panic, a member
// taken out of the membership) passes. Any other fails, quoting how the
// process ended and what its log said (a Go crash's first line and top
// frames), and naming the requests in flight at that moment. Its Span
// runs from the exit to the heal of the next fault on that process (which
// may have started it again), or the history's end: what the process
// could not answer meanwhile rests on the exit (see reports.Findings).
func CheckServerExits(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	figures := map[string]float64{"processes": float64(len(h.Meta.Processes)), "exits": float64(len(h.ServerExits))}
	expected := 0
	for _, x := range h.ServerExits {
		if x.Expected != "" {
			expected++
			continue
		}
		col.Add(exitViolation(h, x))
	}
	figures["expected_exits"] = float64(expected)
	if len(h.Meta.Processes) == 0 && len(h.ServerExits) == 0 {
		return check.Skip(NameServerExit, "vigil ran none of the system's processes", figures)
	}
	return col.Result(NameServerExit, figures)
}

// exitEvidence: each process vigil watched is a request to run until
// stopped, answered unless it exited by itself unexpectedly.
func exitEvidence(h *history.History) check.Evidence {
	e := check.Evidence{Request: "process vigil ran", Answer: "run until vigil stopped it"}
	died := map[string]bool{}
	for _, x := range h.ServerExits {
		if x.Expected == "" {
			died[x.Process] = true
		}
	}
	procs := slices.Clone(h.Meta.Processes)
	for p := range died {
		if !slices.Contains(procs, p) {
			procs = append(procs, p)
		}
	}
	e.Asked, e.Answered = len(procs), len(procs)-len(died)
	if e.Asked == 0 {
		e.Why = "vigil ran none of the system's processes (a system it reaches by its endpoints), or the history predates server-exit records"
	}
	return e
}

func exitViolation(h *history.History, x history.ServerExit) check.Violation {
	role := map[string]string{history.RoleMember: "", history.RoleAPIServer: "kube-apiserver ", history.RoleDatabase: "database server "}[x.Role]
	ops, calls := inFlight(h, x.Time)
	v := check.Violation{Guarantee: ErrServerExit,
		Message: fmt.Sprintf("%s%s %s at t=%.1fs, and vigil did not stop it: %s; %d request(s) were in flight",
			role, x.Process, x.How(), x.Time.Seconds(), said(x), len(ops)+len(calls)),
		Want: x.Process + " running until vigil stops it",
		Got:  fmt.Sprintf("%s (%s) at t=%.1fs", x.How(), x.Status, x.Time.Seconds()),
		Span: &check.Span{From: x.Time, To: downUntil(h, x)},
		Log:  quote(x),
	}
	if x.LogFile != "" {
		v.Message += "; its log: " + x.LogFile
	}
	v.Operations, v.Calls = ops[:min(len(ops), maxInFlight)], calls[:min(len(calls), maxInFlight)]
	return v
}

// said is what the log said at the exit, in a line.
func said(x history.ServerExit) string {
	switch {
	case x.Crash != nil:
		return x.Crash.Message
	case len(x.Log) > 0:
		return "its log ends: " + x.Log[len(x.Log)-1]
	}
	return "its log says nothing"
}

// quote is the part of the log a violation shows: a crash's first line,
// the runtime's signal line, and the top frames of the goroutine that
// matters; else the log's last lines.
func quote(x history.ServerExit) []string {
	c := x.Crash
	if c == nil {
		return x.Log[max(0, len(x.Log)-10):]
	}
	out := []string{c.Message}
	if c.Signal != "" {
		out = append(out, c.Signal)
	}
	if c.Goroutine != "" {
		head := c.Goroutine + ":"
		if c.Goroutines > 1 {
			head += fmt.Sprintf(" (of %d goroutines)", c.Goroutines)
		}
		out = append(out, head)
	}
	for i, f := range c.Frames {
		if i == maxFrames {
			out = append(out, "…")
			break
		}
		out = append(out, "  "+f.Func)
		if f.File != "" {
			out = append(out, "      "+f.File)
		}
	}
	return out
}

// inFlight lists the requests sent by t and answered (or given up) at t
// or later: the operations (etcd and Kubernetes), then the calls.
func inFlight(h *history.History, t time.Duration) (ops, calls []int64) {
	for i := range h.Operations {
		if o := &h.Operations[i]; o.Call <= t && o.Return >= t {
			ops = append(ops, o.ID)
		}
	}
	for i := range h.KubeOps {
		if o := &h.KubeOps[i]; o.Call <= t && o.Return >= t {
			ops = append(ops, o.ID)
		}
	}
	for i := range h.Calls {
		if c := &h.Calls[i]; c.Call <= t && c.Return >= t {
			calls = append(calls, c.ID)
		}
	}
	slices.Sort(ops)
	slices.Sort(calls)
	return ops, calls
}

// downUntil is when the process may have come back: the heal of the
// first fault on it that began after its exit (a kill or restart starts
// it again), or the history's end.
func downUntil(h *history.History, x history.ServerExit) time.Duration {
	end := max(h.End(), x.Time)
	for _, f := range h.Faults {
		if f.Start >= x.Time && f.End < end && slices.Contains(f.Targets, x.Process) {
			end = f.End
		}
	}
	return end
}

// ExitLabel names the exit a run/server-exit violation reports, as its
// message begins: "server-0 exited with code 2 at t=5.4s".
func ExitLabel(v check.Violation) string {
	if i := strings.Index(v.Message, ", and vigil did not stop it"); i > 0 {
		return v.Message[:i]
	}
	return v.Message
}
