package suites

import (
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/vigil-suite/vigil/chaos"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/history"
)

// exitWatch records the exits of the system's processes that vigil did
// not ask for (fixtures.Supervised) as they happen, says each unexpected
// one on the progress line, and stops the workload when no fault of the
// schedule still to heal may start that process again: the run then
// judges what it has rather than wait for answers that cannot come.
type exitWatch struct {
	fx       fixtures.Supervised
	rec      *history.Recorder
	out      string // the run's output dir: log files are named from it
	progress io.Writer
	schedule chaos.Schedule

	mu      sync.Mutex
	closed  bool
	chaosAt time.Duration // when the schedule began, on the run's clock; -1 before
	stop    func()        // ends the workload
	stopped string        // why it stopped the workload, "" if it did not
}

// watchExits starts watching fx's processes, or returns nil when vigil
// runs none of the system's processes.
func watchExits(fx fixtures.Fixture, rec *history.Recorder, c Common) *exitWatch {
	s, ok := fx.(fixtures.Supervised)
	if !ok {
		return nil
	}
	w := &exitWatch{fx: s, rec: rec, out: c.Out, progress: c.Progress, schedule: c.Schedule, chaosAt: -1}
	s.WatchExits(w.exit)
	return w
}

// began notes that the schedule began now.
func (w *exitWatch) began() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.chaosAt = w.rec.Now()
}

// start gives the watch what ends the workload.
func (w *exitWatch) start(stop func()) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stop = stop
}

// close stops watching: the workload is over.
func (w *exitWatch) close() {
	if w == nil {
		return
	}
	w.fx.WatchExits(nil)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}

// stoppedReason says why the watch stopped the workload ("" if it did not).
func (w *exitWatch) stoppedReason() string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped
}

// exit records one exit and, when it is unexpected, says so and decides
// whether the workload goes on.
func (w *exitWatch) exit(x fixtures.Exit) {
	e := x.ServerExit
	e.Time = max(x.At.Sub(w.rec.Clock().Base()), 0)
	if rel, err := filepath.Rel(abs(w.out), abs(e.LogFile)); err == nil && filepath.IsLocal(rel) {
		e.LogFile = rel
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.rec.Add(history.Record{ServerExit: &e})
	if e.Expected != "" {
		w.mu.Unlock()
		return
	}
	at := fmt.Sprintf("[%5.1fs]", e.Time.Seconds())
	who := e.Process
	if e.PID != 0 {
		who += fmt.Sprintf(" (pid %d)", e.PID) // a container's has none
	}
	w.say("%s %s %s without vigil stopping it: %s\n", at, who, e.How(), headline(e))
	if top := e.Crash.Top(); top != "" {
		w.say("%s   in %s: %s\n", at, e.Crash.Goroutine, top)
	}
	if e.LogFile != "" {
		w.say("%s   its log: %s\n", at, e.LogFile)
	}
	since := time.Duration(0)
	if w.chaosAt >= 0 {
		since = e.Time - w.chaosAt
	}
	var stop func()
	if w.stop != nil && w.stopped == "" && !w.schedule.Restarts(e.Role, since) {
		w.stopped = fmt.Sprintf("%s %s at t=%.1fs and no fault of the schedule starts it again: the workload stopped there, the faults healed, and the history up to it was judged",
			e.Process, e.How(), e.Time.Seconds())
		w.say("%s no fault of the schedule starts %s again: the workload stops here\n", at, e.Process)
		w.rec.Add(history.Record{Mark: &history.Mark{Name: history.MarkStopped, Time: w.rec.Now()}})
		stop = w.stop
	}
	w.mu.Unlock()
	if stop != nil {
		stop()
	}
}

func (w *exitWatch) say(format string, args ...any) {
	if w.progress != nil {
		fmt.Fprintf(w.progress, format, args...)
	}
}

// headline is what an exit's log says first: the crash's first line, or
// the log's last line.
func headline(e history.ServerExit) string {
	switch {
	case e.Crash != nil:
		return e.Crash.Message
	case len(e.Log) > 0:
		return "its log ends: " + e.Log[len(e.Log)-1]
	}
	return "its log says nothing"
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
