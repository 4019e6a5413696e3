package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// TestCommandLine covers what the command tree itself promises: flags
// before or after arguments, help per command with its flags grouped,
// shell completion, and suggestions for mistyped names.
func TestCommandLine(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, history.FileName), []byte(`{"meta":{"format":1}}`+"\n{oops\n"), 0o644)
	cases := []struct {
		name string
		args []string
		code int
		want []string // in stdout or stderr
	}{
		// The flag after the argument is parsed: the error is the history's, not the flag's.
		{"flag after argument", []string{"check", dir, "--check-timeout", "1m"}, 3, []string{"line 2"}},
		{"flag before argument", []string{"check", "--check-timeout", "1m", dir}, 3, []string{"line 2"}},
		{"bad flag value", []string{"check", dir, "--check-timeout", "soon"}, 3, []string{"invalid argument", "check-timeout"}},
		{"two arguments", []string{"check", dir, dir}, 3, []string{"accepts 1 arg"}},
		{"bare vigil", nil, 3, []string{"Available Commands"}},
		{"help", []string{"--help"}, 0, []string{"Exit codes", "conform"}},
		{"run help groups its flags", []string{"run", "--help"}, 0,
			[]string{"Common flags:", "Etcd flags:", "Kubernetes (--target kube) flags:", "Faults and sabotage flags:", "Examples:"}},
		{"completion bash", []string{"completion", "bash"}, 0, []string{"__vigil"}},
		{"completion fish", []string{"completion", "fish"}, 0, []string{"complete -c vigil"}},
		{"mistyped command", []string{"chek"}, 3, []string{"Did you mean this?", "check"}},
		{"mistyped fault", []string{"run", "--faults", "kil-leader"}, 3, []string{"did you mean kill-leader?"}},
		{"mistyped sabotage", []string{"run", "--sabotage", "drop-evnt"}, 3, []string{"did you mean drop-event?"}},
		{"sabotage run too short", []string{"run", "--sabotage", "drop-event", "--duration", "5s"}, 3,
			[]string{"drop-event needs a run of at least 10s"}},
		{"sabotage without the compactions it needs", []string{"run", "--sabotage", "compaction-silent", "--compact-every", "8s"}, 3,
			[]string{"compaction-silent needs compactions at least every"}},
		{"version", []string{"version"}, 0, []string{"vigil " + version}},
		{"wide listing", []string{"faults", "-o", "wide"}, 0, []string{"NEEDS"}},
		{"bad output format", []string{"bugs", "list", "-o", "json"}, 3, []string{"want wide"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := vigil(t, time.Minute, c.args...)
			if res.code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", res.code, c.code, res.stdout, res.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(res.stdout+res.stderr, w) {
					t.Errorf("output lacks %q:\n%s%s", w, res.stdout, res.stderr)
				}
			}
		})
	}
}
