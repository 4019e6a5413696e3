package docs

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/targets/sabotage"
)

var (
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading  = regexp.MustCompile("(?m)^#{1,6} (.+)$")
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// A path into the repository, as prose writes it.
	repoPath = regexp.MustCompile(`^(cmd|checkers|chaos|fixtures|targets|history|suites|reports|docs|\.ci)/[A-Za-z0-9_./-]*[A-Za-z0-9_/]$`)
	// The same inside Go comments, where it is not quoted.
	commentPath = regexp.MustCompile(`(?:^|[\s(])((?:cmd|checkers|chaos|fixtures|targets|history|suites|reports|docs)/[A-Za-z0-9_./-]*[A-Za-z0-9_])`)
)

const root = ".."

// slug is the anchor a heading gets, as GitHub makes it.
func slug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func markdownFiles(t *testing.T) []string {
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "CONTRIBUTING.md")}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "runs" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".md") && filepath.Dir(p) != root {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func anchors(t *testing.T, path string) map[string]bool {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(string(b), -1) {
		out[slug(strings.ReplaceAll(m[1], "`", ""))] = true
	}
	return out
}

func TestLinksAndPaths(t *testing.T) {
	for _, file := range markdownFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, anchor, _ := strings.Cut(link, "#")
			path := file
			if target != "" {
				path = filepath.Join(filepath.Dir(file), target)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s links to %s, which does not exist", file, link)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchors(t, path)[anchor] {
				t.Errorf("%s links to %s: no heading %q there", file, link, anchor)
			}
		}
		for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
			p := strings.TrimSuffix(m[1], ".")
			if repoPath.MatchString(p) && !strings.ContainsAny(p, "<>*{}") {
				if _, err := os.Stat(filepath.Join(root, p)); err != nil {
					t.Errorf("%s names %s, which does not exist", file, p)
				}
			}
		}
	}
}

// TestCommentPaths: a path a Go comment names exists.
func TestCommentPaths(t *testing.T) {
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "runs" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			_, comment, ok := strings.Cut(line, "// ")
			if !ok {
				continue
			}
			for _, m := range commentPath.FindAllStringSubmatch(comment, -1) {
				path := m[1]
				// "fixtures/kubeapiserver.Fixture" names a package's identifier.
				if dir, ident, ok := strings.Cut(filepath.Base(path), "."); ok && !slices.Contains([]string{"go", "md", "json", "png", "yaml", "html"}, ident) {
					path = filepath.Join(filepath.Dir(path), dir)
				}
				if _, err := os.Stat(filepath.Join(root, path)); err != nil {
					t.Errorf("%s:%d names %s, which does not exist", p, i+1, m[1])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEveryCheckDocumented: docs/checks.md has a row for every check a run
// can report.
func TestEveryCheckDocumented(t *testing.T) {
	b, err := os.ReadFile("checks.md")
	if err != nil {
		t.Fatal(err)
	}
	evidence := string(b)
	if i := strings.Index(evidence, "## Evidence"); i >= 0 {
		evidence = evidence[i:]
		if j := strings.Index(evidence[3:], "\n## "); j >= 0 {
			evidence = evidence[:j+3]
		}
	} else {
		t.Error("docs/checks.md has no Evidence section")
	}
	for _, cs := range [][]check.Check{checkers.Etcd(), checkers.Kube()} {
		for _, c := range cs {
			if !strings.Contains(string(b), "| `"+c.Name+"` |") {
				t.Errorf("docs/checks.md has no row for %s", c.Name)
			}
			if !strings.Contains(evidence, "| `"+c.Name+"`") && !strings.Contains(evidence, ", `"+c.Name+"`") {
				t.Errorf("docs/checks.md does not say what evidence %s needs", c.Name)
			}
			if row := severityRow(string(b), c.Severity); !strings.Contains(row, "`"+c.Name+"`") {
				t.Errorf("docs/checks.md does not list %s under severity %s", c.Name, c.Severity)
			}
		}
	}
}

// TestEverySabotageModeDocumented: docs/sabotage.md has a row for every
// sabotage mode, naming the check the mode must trip.
func TestEverySabotageModeDocumented(t *testing.T) {
	b, err := os.ReadFile("sabotage.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range sabotage.Modes() {
		if !strings.Contains(string(b), "| `"+m.Name+"` | `"+m.Check+"` |") {
			t.Errorf("docs/sabotage.md has no row for %s naming %s", m.Name, m.Check)
		}
	}
}

// severityRow is the row of the severity table in docs/checks.md.
func severityRow(doc string, s check.Severity) string {
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "| `"+string(s)+"` |") {
			return line
		}
	}
	return ""
}

// TestExcusesHeldByTests: every check is in the table of excuses of
// docs/checks.md or named among those that have none, and every test case
// a row of that table quotes exists in the checks' tests.
func TestExcusesHeldByTests(t *testing.T) {
	b, err := os.ReadFile("checks.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "## Excuses and their bounds")
	if i < 0 {
		t.Fatal("docs/checks.md has no section of excuses")
	}
	sec := doc[i:]
	if j := strings.Index(sec[3:], "\n## "); j >= 0 {
		sec = sec[:j+3]
	}
	var tests strings.Builder
	err = filepath.WalkDir("../checkers", func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, "_test.go") {
			b, err := os.ReadFile(p)
			tests.Write(b)
			return err
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile(`"([^"]+)"`)
	rows := 0
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		rows++
		cells := strings.Split(line, " | ")
		for _, m := range quoted.FindAllStringSubmatch(cells[len(cells)-1], -1) {
			if !strings.Contains(tests.String(), m[1]) {
				t.Errorf("docs/checks.md's excuses quote the test %q, which does not exist", m[1])
			}
		}
	}
	if rows < 20 {
		t.Errorf("the table of excuses has %d rows", rows)
	}
	for _, cs := range [][]check.Check{checkers.Etcd(), checkers.Kube()} {
		for _, c := range cs {
			if !strings.Contains(sec, "`"+c.Name+"`") {
				t.Errorf("docs/checks.md's excuses say nothing of %s", c.Name)
			}
		}
	}
}

// TestCheckNamesWrittenOnce: a check's name is a string literal in one
// place of the non-test code, its family's constant; the registry, the
// SHOULD list, the sabotage modes and the reports read that constant.
// The conformance probes are skipped: a probe has a name of its own,
// which may equal the name of the check it isolates.
func TestCheckNamesWrittenOnce(t *testing.T) {
	names := map[string]bool{}
	for _, cs := range [][]check.Check{checkers.Etcd(), checkers.Kube()} {
		for _, c := range cs {
			names[strconv.Quote(c.Name)] = true
		}
	}
	found := map[string][]string{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "conformance"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		var s scanner.Scanner
		s.Init(fset.AddFile(path, -1, len(src)), src, nil, 0)
		for {
			_, tok, lit := s.Scan()
			if tok == token.EOF {
				return nil
			}
			if tok == token.STRING && names[lit] {
				found[lit] = append(found[lit], path)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for n := range names {
		if len(found[n]) != 1 {
			t.Errorf("check %s is written as a string in non-test code %d times, want once: %v", n, len(found[n]), found[n])
		}
	}
}
