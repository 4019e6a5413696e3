// Command vigil drives a system under test with a recorded workload and
// checks the history against the watch and consistency guarantees of the
// etcd v3 API. docs/cli.md lists the commands and their flags.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets/sabotage"
)

// version is vigil's own version, written into every history.
const version = "0.1.0"

// Exit codes (README, Exit codes): 0 every check passed, 1 a violation was found,
// 2 no violation but some check is unknown, 3 usage or setup error.
const (
	exitPass    = 0
	exitFail    = 1
	exitUnknown = 2
	exitSetup   = 3
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// action is what a command does once cobra has parsed its flags: it gets
// the positional arguments and returns the exit code.
type action func(args []string) (int, error)

// exitCodeOf is the exit code of an action that only succeeds or fails.
func exitCodeOf(err error) (int, error) {
	if err != nil {
		return exitSetup, err
	}
	return exitPass, nil
}

// run runs vigil with args and returns its exit code.
func run(args []string) int {
	code := exitPass
	root := rootCommand(&code)
	if len(args) == 0 {
		// A bare `vigil` shows the help and exits 3, as any bad command line.
		root.SetOut(os.Stderr)
		root.Help()
		return exitSetup
	}
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "vigil:", err)
		// An error no action returned is cobra's or pflag's: a bad command
		// line (unknown command or flag, wrong number of arguments).
		var ae actionError
		var ue *usageErr
		if !errors.As(err, &ae) || errors.As(err, &ue) {
			fmt.Fprintln(os.Stderr, "run 'vigil --help' or 'vigil COMMAND --help' for usage")
		}
		return exitSetup
	}
	return code
}

// actionError is an error a command's action returned, as opposed to one
// cobra returned while parsing the command line.
type actionError struct{ err error }

func (e actionError) Error() string { return e.err.Error() }
func (e actionError) Unwrap() error { return e.err }

// usageErr is a bad command line: exit code 3 and a pointer to the usage.
type usageErr struct{ msg string }

func (e *usageErr) Error() string { return e.msg }

func usageError(format string, a ...any) error {
	return &usageErr{msg: fmt.Sprintf(format, a...)}
}

// setupError marks an error as a setup failure (exit 3) for the message.
func setupError(err error) error {
	if errors.Is(err, fixtures.ErrSetup) {
		return err
	}
	return fmt.Errorf("%w: %v", fixtures.ErrSetup, err)
}

// listSabotage is `vigil sabotage list`: one mode per line, name first,
// then the check it must trip, the target it applies to (--target), and
// what it does.
func listSabotage(wide bool) error {
	var rows [][]string
	for _, m := range sabotage.Modes() {
		rows = append(rows, []string{m.Name, m.Check, m.Target, m.Description})
	}
	printTable(os.Stdout, wide, []string{"MODE", "CHECK", "TARGET", "WHAT"}, rows)
	return nil
}

// knownSabotage reports whether name is a sabotage mode of target.
func knownSabotage(name, target string) bool {
	m, ok := sabotage.Lookup(name)
	return ok && m.Target == target
}

// stopSignals end a command the way Ctrl-C does: the workload stops,
// faults heal, and what vigil started is stopped and removed. Left to
// their default, SIGHUP (the terminal went away), SIGQUIT and a SIGPIPE of
// a closed stdout (`vigil run | head`) would kill vigil on the spot and
// leave its processes, containers and networks behind.
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE}

// stopContext is canceled by the first of stopSignals. A SIGPIPE counts
// only when stdout or stderr is a closed pipe: once SIGPIPE is caught, the
// writes to a member's socket or log pipe that a killed member breaks
// raise it too (and fail with EPIPE, as they should).
func stopContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, stopSignals...)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case sig := <-ch:
				if sig == syscall.SIGPIPE && !outputClosed() {
					continue
				}
				cancel()
				return
			}
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}

// outputClosed reports whether stdout or stderr is a pipe whose reader
// has gone.
func outputClosed() bool {
	fds := []unix.PollFd{{Fd: 1, Events: unix.POLLOUT}, {Fd: 2, Events: unix.POLLOUT}}
	if _, err := unix.Poll(fds, 0); err != nil {
		return false
	}
	for _, f := range fds {
		if f.Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			return true
		}
	}
	return false
}

// sabotageFits checks that the run can prove its sabotage mode. A mode
// that needs frequent compactions gets them unless --compact-every was
// given; a run shorter than the mode needs is refused.
func sabotageFits(f *runFlags, set map[string]string) error {
	m, ok := sabotage.Lookup(f.sabotage)
	if !ok {
		return nil
	}
	if m.CompactEvery > 0 && set["compact-every"] == "" && f.workload.CompactEvery > m.CompactEvery {
		f.workload.CompactEvery = m.CompactEvery
		set["compact-every"] = m.CompactEvery.String()
		fmt.Fprintf(os.Stderr, "--sabotage %s: compacting every %v (it needs watches that start below a compaction)\n",
			m.Name, m.CompactEvery)
	}
	if err := m.Fits(f.workload.Duration, f.workload.CompactEvery); err != nil {
		return usageError("%v", err)
	}
	return nil
}

// reportSabotage says after the table whether the sabotage was injected and
// what the check it names made of it.
func reportSabotage(mode string, h *history.History, results []check.Result) {
	m, _ := sabotage.Lookup(mode)
	verdict := check.Verdict("not run")
	for _, r := range results {
		if r.Name == m.Check {
			verdict = r.Verdict
		}
	}
	n := 0
	for _, f := range h.Faults {
		if f.Name == sabotage.FaultName(mode) {
			n++
			fmt.Printf("sabotage %s at %.2fs (client %s): %s\n", mode, f.Start.Seconds(), f.Details["client"], f.Details["what"])
		}
	}
	if n == 0 {
		fmt.Printf("sabotage %s: no opportunity arose, nothing was injected\n", mode)
	}
	fmt.Printf("sabotage %s must trip %s: %s\n", mode, m.Check, verdict)
}
