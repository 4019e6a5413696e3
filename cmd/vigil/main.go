// Command vigil drives a system under test with a recorded workload and
// checks the history against the watch and consistency guarantees of the
// etcd v3 API. See the README for the commands and their flags.
package main

import (
	"errors"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures"
	"github.com/vigil-suite/vigil/history"
	"github.com/vigil-suite/vigil/targets/sabotage"
)

// version is vigil's own version, written into every history.
const version = "0.1.0"

// Exit codes (DESIGN.md): 0 every check passed, 1 a violation was found,
// 2 no violation but some check is unknown, 3 usage or setup error.
const (
	exitPass    = 0
	exitFail    = 1
	exitUnknown = 2
	exitSetup   = 3
)

const usage = `vigil — watch and consistency conformance for etcd-API and Kubernetes-API systems

usage:
  vigil run    [flags]        run a checked workload (vigil run -h for flags)
  vigil check  [--check-timeout D] [--max-unavailable D] DIR
                              re-run the checkers on a saved run
  vigil faults                list the fault injectors (vigil run --faults ...)
  vigil sabotage list         list the sabotage modes (vigil run --sabotage ...)
                              and the check each one must trip
  vigil build  etcd [VERSION] [--failpoints]
  vigil build  kube-apiserver [VERSION]
                              build and cache a binary from the Go module proxy
  vigil conform [--target etcd|kube] [--endpoints LIST | --server URL]
               [--reference none|default|V] [--only PROBE,...] [--repro PROBE] [--list]
                              deterministic etcd-API or Kubernetes-API probes,
                              each a minimal reproduction, compared with a
                              reference server
  vigil bugs   list          the known etcd bugs vigil reproduces, with recipes
  vigil bugs   run [NUMBER...] [--version affected|fixed|both] [--attempts N]
                              reproduce them on the releases that had them and
                              show them gone on the releases that fixed them
  vigil cleanup [--images] [DIR...]
                              remove what interrupted runs left behind
  vigil version               print vigil's version

exit codes: 0 pass, 1 violation found, 2 unknown (no violation, some check
undecided), 3 usage or setup error.
`

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return exitSetup
	}
	var err error
	code := exitPass
	switch args[0] {
	case "run":
		code, err = cmdRun(args[1:])
	case "check":
		code, err = cmdCheck(args[1:])
	case "build":
		err = cmdBuild(args[1:])
	case "faults":
		err = cmdFaults(args[1:])
	case "sabotage":
		err = cmdSabotage(args[1:])
	case "cleanup":
		err = cmdCleanup(args[1:])
	case "bugs":
		code, err = cmdBugs(args[1:])
	case "conform":
		code, err = cmdConform(args[1:])
	case "version", "--version":
		fmt.Println("vigil", version)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		err = usageError("unknown command %q", args[0])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vigil:", err)
		var ue *usageErr
		if errors.As(err, &ue) {
			fmt.Fprintln(os.Stderr, "run 'vigil help' or 'vigil run -h' for usage")
		}
		return exitSetup
	}
	return code
}

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

// cmdSabotage is `vigil sabotage list`: one mode per line, name first, then
// the check it must trip, the target it applies to (--target), and what it
// does.
func cmdSabotage(args []string) error {
	if len(args) != 1 || args[0] != "list" {
		return usageError("usage: vigil sabotage list")
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	for _, m := range sabotage.Modes() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, m.Check, m.Target, m.Description)
	}
	return tw.Flush()
}

// knownSabotage reports whether name is a sabotage mode of target.
func knownSabotage(name, target string) bool {
	m, ok := sabotage.Lookup(name)
	return ok && m.Target == target
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
