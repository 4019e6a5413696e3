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

	"github.com/vigil-suite/vigil/launch"
	"github.com/vigil-suite/vigil/reports"
	"github.com/vigil-suite/vigil/targets/sabotage"
)

// version is vigil's own version, written into every history.
const version = "0.1.0"

// Exit codes (README, Exit codes): 0 every check passed, 1 a violation was found,
// 2 no violation but some check is unknown, 3 usage or setup error.
const (
	exitPass    = launch.ExitPass
	exitFail    = launch.ExitFail
	exitUnknown = launch.ExitUnknown
	exitSetup   = launch.ExitSetup
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
		var ue *launch.UsageError
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

// usageError is a bad command line: exit code 3 and a pointer to the usage.
func usageError(format string, a ...any) error { return launch.Usagef(format, a...) }

// setupError marks an error as a setup failure (exit 3) for the message.
func setupError(err error) error { return launch.SetupError(err) }

// listSabotage is `vigil sabotage list`: one mode per line, name first,
// then the check it must trip, the target it applies to (--target), and
// what it does.
func listSabotage(wide bool) error {
	var rows [][]string
	for _, m := range sabotage.Modes() {
		rows = append(rows, []string{m.Name, m.Check, m.Target, m.Description})
	}
	reports.Listing(os.Stdout, wide, []string{"MODE", "CHECK", "TARGET", "WHAT"}, rows)
	return nil
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
