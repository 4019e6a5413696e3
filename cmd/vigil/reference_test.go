package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md from the command definitions")

const cliDoc = "../../docs/cli.md"

// TestCLIReference: docs/cli.md is what the command definitions say. When
// it is stale: go test ./cmd/vigil -run TestCLIReference -update
func TestCLIReference(t *testing.T) {
	code := 0
	got := cliReference(rootCommand(&code))
	if *update {
		if err := os.WriteFile(cliDoc, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(cliDoc)
	if err != nil || string(want) != got {
		t.Fatalf("%s is stale: go test ./cmd/vigil -run TestCLIReference -update", cliDoc)
	}
}

// cliReference renders every command: what it does, its usage, examples
// and flags, as `vigil COMMAND --help` shows them.
func cliReference(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString("# CLI reference\n\n")
	b.WriteString("Generated from vigil's command definitions (`go test ./cmd/vigil -run TestCLIReference -update`);\n")
	b.WriteString("`vigil COMMAND --help` prints the same. Flags may come before or after arguments.\n")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		if c.Runnable() {
			fmt.Fprintf(&b, "\n## %s\n\n%s\n", c.CommandPath(), c.Short)
			if c.Long != "" && c != root {
				fmt.Fprintf(&b, "\n%s\n", c.Long)
			}
			var help bytes.Buffer
			c.SetOut(&help)
			c.SetErr(&help)
			c.Usage()
			fmt.Fprintf(&b, "\n```\n%s```\n", strings.TrimLeft(help.String(), "\n"))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return b.String()
}
