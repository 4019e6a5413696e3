package history

import (
	"fmt"
	"time"
)

// ServerExit is a process vigil started (an etcd member, a server from
// --command, kine, kine's database server, a kube-apiserver replica)
// that exited while vigil had not asked it to: vigil's own stops (the
// kill and restart faults, the end of the run) are not recorded. Expected
// says when a fault made the exit happen all the same (a failpoint armed
// to panic); an exit without it is the server's own doing, which
// run/server-exit reports. Absent from histories written before vigil
// watched its processes (Meta.Processes is empty there).
type ServerExit struct {
	// Process is the name faults and histories give it: m0, server-0,
	// kine-0, kine-db, kube-0.
	Process string `json:"process"`
	// Role is what it serves: RoleMember, RoleAPIServer or RoleDatabase.
	Role string        `json:"role,omitempty"`
	Time time.Duration `json:"time_ns"`
	PID  int           `json:"pid,omitempty"`
	// Status is how the operating system reported the exit ("exit status
	// 2", "signal: segmentation fault (core dumped)"); Code is the exit
	// code, -1 when a signal ended the process, which Signal names
	// (SIGSEGV).
	Status string `json:"status"`
	Code   int    `json:"code"`
	Signal string `json:"signal,omitempty"`
	// Expected names the fault that made vigil expect this exit; empty
	// when nothing did.
	Expected string `json:"expected,omitempty"`
	// LogFile is the process's log, relative to the run's output dir
	// where it lies inside it.
	LogFile string `json:"log_file,omitempty"`
	// Log is what the log said at the exit: a crash's opening lines when
	// it ends with one (Crash), else its last meaningful lines.
	Log []string `json:"log,omitempty"`
	// Crash is the Go crash the log ends with, read from it: a panic, a
	// fatal error or a signal's goroutine dump. Nil when there is none.
	Crash *Crash `json:"crash,omitempty"`
}

// Crash is a Go program's crash report, as the Go runtime writes it.
type Crash struct {
	// Message is its first line: "panic: ...", "fatal error: ...", or
	// the signal's ("SIGABRT: abort") when a signal made the runtime dump
	// every goroutine.
	Message string `json:"message"`
	// Signal is the runtime's line naming the signal behind a panic
	// ("[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=...]").
	Signal string `json:"signal,omitempty"`
	// Goroutine is the header of the goroutine shown ("goroutine 19
	// [running]"): the panicking one, or the first besides the runtime's
	// own in a signal's dump; Frames are its top frames, innermost first.
	Goroutine string  `json:"goroutine,omitempty"`
	Frames    []Frame `json:"frames,omitempty"`
	// Goroutines counts the goroutines the report lists.
	Goroutines int `json:"goroutines,omitempty"`
}

// Frame is one frame of a goroutine's stack.
type Frame struct {
	// Func is the function with its arguments as printed
	// ("main.(*srv).handle(...)"), or "created by ..." for the frame
	// that started the goroutine.
	Func string `json:"func"`
	// File is file:line.
	File string `json:"file,omitempty"`
}

// Roles of a process in a ServerExit.
const (
	// RoleMember serves the etcd API: an etcd member, a --command
	// server, kine.
	RoleMember = "member"
	// RoleAPIServer is a kube-apiserver replica.
	RoleAPIServer = "apiserver"
	// RoleDatabase is the database server under kine.
	RoleDatabase = "database"
)

// How says how the process ended, in words: "was killed by SIGSEGV" or
// "exited with code 2" (the status as the system gave it when neither
// is known).
func (x ServerExit) How() string {
	switch {
	case x.Signal != "":
		return "was killed by " + x.Signal
	case x.Code >= 0 && x.Status != "":
		return fmt.Sprintf("exited with code %d", x.Code)
	case x.Status != "":
		return x.Status
	}
	return "exited"
}

// Top is the crash's top frame in one line ("main.get(...) at
// /src/main.go:14"), "" without frames.
func (c *Crash) Top() string {
	if c == nil || len(c.Frames) == 0 {
		return ""
	}
	f := c.Frames[0]
	if f.File == "" {
		return f.Func
	}
	return f.Func + " at " + f.File
}
