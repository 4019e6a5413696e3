// Command vigil drives a system under test with a recorded workload and
// checks the history against the watch and consistency guarantees of the
// etcd v3 API. See the README for the commands and their flags.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/vigil-suite/vigil/fixtures"
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

const usage = `vigil — watch and consistency conformance for etcd-API systems

usage:
  vigil run    [flags]        run a checked workload (vigil run -h for flags)
  vigil check  DIR            re-run the checkers on a saved run
  vigil faults                list the fault injectors (vigil run --faults ...)
  vigil build  etcd [VERSION] build and cache an etcd binary
  vigil cleanup [DIR...]      remove what interrupted runs left behind
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
	case "cleanup":
		err = cmdCleanup(args[1:])
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
