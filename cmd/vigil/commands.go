package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/suites/bugs"
)

// rootCommand is vigil's command tree. Each command's action writes its
// exit code into code; an error returned from Execute is a usage or setup
// error (exit 3).
func rootCommand(code *int) *cobra.Command {
	root := &cobra.Command{
		Use:   "vigil",
		Short: "watch and consistency conformance for etcd-API and Kubernetes-API systems",
		Long: `vigil drives a system under test (etcd, kube-apiserver, kine, or your own
etcd-API or Kubernetes-API server) with a recorded workload while it injects
faults, then checks the history against linearizability and every watch and
list/watch guarantee.

Exit codes: 0 pass, 1 violation found, 2 unknown (no violation, some check
undecided), 3 usage or setup error.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("vigil {{.Version}}\n")
	root.SuggestionsMinimumDistance = 2
	addTo := func(parent, c *cobra.Command, define func(*flag.FlagSet) action) *cobra.Command {
		a := define(c.Flags())
		c.RunE = func(_ *cobra.Command, args []string) error {
			n, err := a(args)
			*code = n
			if err != nil {
				return actionError{err}
			}
			return nil
		}
		c.SilenceUsage, c.SilenceErrors = true, true
		parent.AddCommand(c)
		return c
	}
	add := func(c *cobra.Command, define func(*flag.FlagSet) action) *cobra.Command {
		return addTo(root, c, define)
	}

	runCmd := add(&cobra.Command{
		Use:   "run",
		Short: "run a checked workload against a system under test, with faults",
		Args:  cobra.NoArgs,
		Example: `  vigil run --members 3 --duration 30s
  vigil run --faults kill-leader,pause-follower --fault-interval 8s --duration 60s
  vigil run --endpoints 127.0.0.1:2379 --duration 20s       # your own cluster
  vigil run --fixture kine --kine-backend postgres
  vigil run --target kube --apiservers 2 --faults restart-apiserver
  vigil run --sabotage drop-event                           # prove watch/reliable catches it`,
	}, cmdRun)
	groupFlags(runCmd, runFlagGroups)

	add(&cobra.Command{
		Use:   "check DIR",
		Short: "re-run the checkers on a saved run, offline",
		Long: `Re-run the checkers on a saved run (its output dir, or its history file).
The verdicts go to DIR/check/; the run's own result stays as it was.`,
		Args:    cobra.ExactArgs(1),
		Example: "  vigil check runs/20261124-101500-42 --check-timeout 10m",
	}, cmdCheck)

	add(&cobra.Command{
		Use:   "reduce DIR",
		Short: "replay a saved run's findings on fresh servers, reduce them, and write each as a program",
		Long: `Replay the requests behind a saved run's findings, one after another, on
fresh servers of the run's kind and size, and reduce them while the finding
still shows: drop requests, drop a txn's compares and operations, drop
options, shorten values. Each reduction is written to DIR/repro-N.go, a
program that exits 1 while a server still shows the finding and 0 once it
does not. A finding that does not show when replayed one request after
another is reported as such: it needs the run's concurrency or faults.
Today the replay shows members that disagree (kv/member-agreement,
kv/convergence).`,
		Args: cobra.ExactArgs(1),
		Example: `  vigil reduce runs/20261124-101500-42
  vigil reduce runs/20261124-101500-42 --finding 2 --etcd-version v3.7.3   # does another release show it?`,
	}, cmdReduce)

	add(&cobra.Command{
		Use:     "report DIR",
		Short:   "write a saved run's report.html again (plots over time, faults shaded, findings)",
		Args:    cobra.ExactArgs(1),
		Example: "  vigil report runs/20261124-101500-42",
	}, cmdReport)

	add(&cobra.Command{
		Use:   "conform",
		Short: "deterministic probes, each a minimal reproduction, compared with a reference server",
		Args:  cobra.NoArgs,
		Example: `  vigil conform                                  # a 1-member etcd vigil starts
  vigil conform --endpoints 127.0.0.1:2379 --reference v3.6.16
  vigil conform --fixture kine --kine-backend mysql
  vigil conform --only watch/ --repro watch/from-future
  vigil conform --target kube --server https://127.0.0.1:6443 --kubeconfig ~/.kube/config`,
	}, cmdConform)

	add(&cobra.Command{
		Use:   "certify",
		Short: "can Kubernetes run on this etcd-API store? probes, runs with faults, and kube-apiserver over it: one verdict",
		Long: `Certify an etcd-API server for Kubernetes, in 4 phases: the kubernetes
profile's probes against a reference etcd, a run with faults, then a
kube-apiserver vigil starts over the server, with the Kubernetes probes and
a Kubernetes run with faults through it (docs/certify.md). Every probe and
check of the profile is a requirement.

Exit codes: 0 ready, 1 not ready (a requirement fails), 2 inconclusive (none
fails, but some could not be judged), 3 setup error (the server could not
be started or reached).`,
		Args: cobra.NoArgs,
		Example: `  vigil certify --command "/usr/local/bin/etcd --data-dir {data_dir} --listen-client-urls http://127.0.0.1:{client_port} --advertise-client-urls http://127.0.0.1:{client_port} --listen-peer-urls http://127.0.0.1:0"
  vigil certify --endpoints 127.0.0.1:2379 --duration 60s`,
	}, cmdCertify)

	add(&cobra.Command{
		Use:   "selftest DIR",
		Short: "corrupt a passing run many times and report what the checks miss",
		Long: `Corrupt a saved run that every check passed, many times, one small seeded
change of what the system answered at a time (drop a watch event, duplicate
one, return an older value, ...). Each corrupted history must be rejected
by the check that owns the corrupted guarantee; every miss is listed with
the corruption, and with the argument when it cannot be told from a
correct answer. Exits 1 when a miss has no argument.`,
		Args:    cobra.ExactArgs(1),
		Example: "  vigil selftest runs/20261124-101500-42 --per-kind 50",
	}, cmdSelftest)

	add(&cobra.Command{
		Use:     "faults",
		Short:   "list the fault injectors and whether they run here",
		Args:    cobra.NoArgs,
		Example: "  vigil faults --etcd-version v3.5.17",
	}, cmdFaults)

	sab := &cobra.Command{Use: "sabotage", Short: "semantic bugs vigil can inject to prove its checks catch them"}
	sabList := &cobra.Command{Use: "list", Short: "list the sabotage modes and the check each must trip", Args: cobra.NoArgs}
	sabWide := outputFlag(sabList.Flags())
	sabList.RunE = func(*cobra.Command, []string) error { return listSabotage(*sabWide == "wide") }
	sab.AddCommand(sabList)
	root.AddCommand(sab)

	add(&cobra.Command{
		Use:   "build etcd|kube-apiserver [VERSION]",
		Short: "build and cache a binary from the Go module proxy",
		Args:  cobra.RangeArgs(1, 2),
		Example: `  vigil build etcd v3.5.17 --failpoints
  vigil build kube-apiserver v1.36.3`,
		ValidArgs: []string{"etcd", "kube-apiserver"},
	}, cmdBuild)

	bugsCmd := &cobra.Command{Use: "bugs", Short: "the known etcd bugs vigil reproduces, by release"}
	bugsList := &cobra.Command{Use: "list", Short: "list the known bugs (-o wide: with their checks and recipes)", Args: cobra.NoArgs}
	bugsWide := outputFlag(bugsList.Flags())
	bugsList.RunE = func(*cobra.Command, []string) error { bugs.PrintCatalogue(os.Stdout, *bugsWide == "wide"); return nil }
	bugsCmd.AddCommand(bugsList)
	root.AddCommand(bugsCmd)
	addTo(bugsCmd, &cobra.Command{
		Use:   "run [NUMBER...]",
		Short: "reproduce bugs on the releases that had them, and show them gone on the fixes",
		Example: `  vigil bugs run 14370 --version affected --attempts 3
  vigil bugs run                                    # the whole matrix`,
	}, cmdBugsRun)

	matrixCmd := &cobra.Command{Use: "matrix", Short: "many runs as one: the product of axes (versions × faults × seeds ...), here or on Kubernetes"}
	root.AddCommand(matrixCmd)
	addTo(matrixCmd, &cobra.Command{
		Use:   "run SPEC",
		Short: "run every cell of a matrix spec on this machine (or print the Kubernetes Job that does)",
		Args:  cobra.ExactArgs(1),
		Example: `  vigil matrix run docs/examples/nightly.yaml --out runs/nightly --parallel 2
  vigil matrix run docs/examples/nightly.yaml --out runs/nightly      # again: resumes
  vigil matrix run docs/examples/nightly.yaml --emit kubernetes | kubectl apply -f -`,
	}, cmdMatrixRun)
	addTo(matrixCmd, &cobra.Command{
		Use:     "cell",
		Short:   "run one cell of a matrix (the entry point of the Indexed Job's pods)",
		Args:    cobra.NoArgs,
		Example: `  JOB_COMPLETION_INDEX=3 vigil matrix cell --spec nightly.yaml --out /results`,
	}, cmdMatrixCell)
	addTo(matrixCmd, &cobra.Command{
		Use:     "merge DIR...",
		Short:   "merge the cells run anywhere (machines, pods) into one matrix",
		Args:    cobra.MinimumNArgs(1),
		Example: `  vigil matrix merge --out runs/nightly results-a results-b`,
	}, cmdMatrixMerge)
	addTo(matrixCmd, &cobra.Command{
		Use:   "rate DIR...",
		Short: "the false-alarm rate of matrices of healthy runs: runs, alarms, 95% upper bound",
		Long: `Read matrices of runs against healthy systems (each a matrix output dir) and
print, in Markdown, how many cells ran, how many did not pass (a false alarm
of vigil until its evidence shows a finding of the system) and the one-sided
95% upper bound on the false-alarm rate (Clopper-Pearson), then each alarm.
Exits 1 when some cell alarmed.`,
		Args:    cobra.MinimumNArgs(1),
		Example: `  vigil matrix rate runs/fp/etcd3 runs/fp/kube runs/fp/etcd5 runs/fp/docker`,
	}, cmdMatrixRate)

	add(&cobra.Command{
		Use:   "cleanup [DIR...]",
		Short: "remove what interrupted or killed runs left behind",
		Example: `  vigil cleanup
  vigil cleanup --images`,
	}, cmdCleanup)

	root.AddCommand(&cobra.Command{
		Use: "version", Short: "print vigil's version", Args: cobra.NoArgs,
		Run: func(*cobra.Command, []string) { fmt.Println("vigil", version) },
	})
	return root
}

// outputFlag defines -o/--output: "" (fit 100 columns) or wide.
func outputFlag(fs *flag.FlagSet) *string {
	var o outputFormat
	fs.VarP(&o, "output", "o", "output format: wide shows every column in full")
	return (*string)(&o)
}

// outputFormat is -o's value; anything but wide is refused when parsed.
type outputFormat string

func (o *outputFormat) String() string { return string(*o) }
func (o *outputFormat) Type() string   { return "format" }
func (o *outputFormat) Set(v string) error {
	if v != "wide" {
		return fmt.Errorf("want wide, not %q", v)
	}
	*o = outputFormat(v)
	return nil
}

// runFlagGroups sorts vigil run's flags into the groups its help shows;
// a flag in no group is listed under "other".
var runFlagGroups = []struct {
	title string
	flags []string
}{
	{"common", []string{"target", "fixture", "duration", "seed", "out", "workload", "patterns", "clients", "rate", "keys", "watchers",
		"compact-every", "watch-bound", "compare-every", "start-timeout", "check-timeout", "max-unavailable", "conform", "history-format", "compress", "keep-data",
		"fail-fast", "judge-every", "segment", "profile", "limitation"}},
	{"etcd", []string{"members", "etcd-version", "etcd-binary", "endpoints", "failpoints", "snapshot-count",
		"compaction-batch-limit", "watch-progress-notify-interval", "tls", "auth", "cacert", "cert", "key", "user", "password"}},
	{"Kubernetes (--target kube)", []string{"store", "apiservers", "kube-version", "kube-apiserver-binary", "feature-gates",
		"kube-compaction-interval", "server", "token", "ca-file",
		"insecure-skip-tls-verify", "kubeconfig", "context", "in-cluster", "watch-cache", "resource"}},
	{"kine and your own server (--fixture kine|command)", []string{"kine-version", "kine-binary", "kine-backend", "command"}},
	{"faults and sabotage", []string{"faults", "fault-interval", "schedule", "net", "sabotage"}},
}

// groupFlags makes c's help list its flags by group.
func groupFlags(c *cobra.Command, groups []struct {
	title string
	flags []string
}) {
	c.SetUsageFunc(func(c *cobra.Command) error {
		w := c.OutOrStderr()
		fmt.Fprintf(w, "Usage:\n  %s\n", c.UseLine())
		if c.Example != "" {
			fmt.Fprintf(w, "\nExamples:\n%s\n", c.Example)
		}
		seen := map[string]bool{}
		for _, g := range groups {
			fs := flag.NewFlagSet(g.title, flag.ContinueOnError)
			for _, n := range g.flags {
				if f := c.Flags().Lookup(n); f != nil {
					fs.AddFlag(f)
					seen[n] = true
				}
			}
			printGroup(w, g.title, fs)
		}
		rest := flag.NewFlagSet("other", flag.ContinueOnError)
		c.Flags().VisitAll(func(f *flag.Flag) {
			if !seen[f.Name] {
				rest.AddFlag(f)
			}
		})
		printGroup(w, "other", rest)
		return nil
	})
}

func printGroup(w io.Writer, title string, fs *flag.FlagSet) {
	if !fs.HasFlags() {
		return
	}
	fmt.Fprintf(w, "\n%s flags:\n%s", strings.ToUpper(title[:1])+title[1:], fs.FlagUsagesWrapped(100))
}
