package matrix

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

var twoByTwo = []byte("name: t\nrun: {duration: 5s}\naxes: {faults: ['', kill-leader], seed: 2}\n")

// fakeCell writes cell i's record as a run of it would have left it.
func fakeCell(t *testing.T, spec *Spec, dir string, i int, verdict string, failed ...string) {
	t.Helper()
	params, err := spec.Cell(i)
	if err != nil {
		t.Fatal(err)
	}
	cd := filepath.Join(dir, "cells", CellDir(i))
	os.MkdirAll(filepath.Join(cd, "run"), 0o755)
	os.WriteFile(filepath.Join(cd, "run", "result.json"), []byte(`{"verdict":"`+verdict+`"}`), 0o644)
	c := Cell{Matrix: spec.Name, Index: i, Label: Label(params), Params: params, Args: spec.Args(params), Host: "h",
		Started: time.Now(), Verdict: verdict, Failed: failed, Spec: spec}
	if verdict != NotRun {
		c.Finished = c.Started.Add(time.Second)
		c.DurationS = 1
	}
	if err := writeCell(cd, c); err != nil {
		t.Fatal(err)
	}
}

// Cells made by two processes in two dirs merge into one matrix, an
// unfinished cell gives way to a finished one, and every cell of the spec
// is in matrix.html, run or not.
func TestCollectMerges(t *testing.T) {
	g := NewWithT(t)
	spec, err := ParseSpec(twoByTwo)
	g.Expect(err).NotTo(HaveOccurred())
	root := t.TempDir()
	a, b, out := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "merged")
	fakeCell(t, spec, a, 0, "pass")
	fakeCell(t, spec, a, 1, NotRun) // interrupted on a...
	fakeCell(t, spec, b, 1, "fail", "watch/reliable")
	fakeCell(t, spec, b, 2, "fail", "watch/reliable", "kv/linearizable")
	m, err := Collect(out, a, b)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.Cells).To(HaveLen(4))
	g.Expect(m.Cells[1].Verdict).To(Equal("fail"), "...finished on b")
	g.Expect(m.Cells[1].Dir).To(Equal(filepath.Join("..", "b", "cells", CellDir(1))))
	g.Expect(m.Cells[3].Verdict).To(Equal(NotRun))
	g.Expect(m.Counts).To(Equal(map[string]int{"pass": 1, "fail": 2, NotRun: 1}))
	g.Expect(m.Clusters).To(Equal([]Cluster{{"watch/reliable", []int{1, 2}}, {"kv/linearizable", []int{2}}}))
	g.Expect(m.ExitCode()).To(Equal(1))

	g.Expect(os.MkdirAll(out, 0o755)).To(Succeed())
	g.Expect(m.Write(out)).To(Succeed())
	html, err := os.ReadFile(filepath.Join(out, "matrix.html"))
	g.Expect(err).NotTo(HaveOccurred())
	page := string(html)
	for _, want := range []string{`href="../b/cells/cell-0001/run/result.json"`, `href="../a/cells/cell-0000/run/result.json"`,
		"seed=1", "seed=2", "kill-leader", "(none)", ">–<", "watch/reliable"} {
		g.Expect(page).To(ContainSubstring(want))
	}
	g.Expect(strings.Count(page, `<td class="v `)).To(Equal(4), "one grid cell per matrix cell")
	back, err := ReadMatrix(filepath.Join(out, "matrix.json"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(back.Counts).To(Equal(m.Counts))

	if xmllint, err := exec.LookPath("xmllint"); err == nil {
		outb, err := exec.Command(xmllint, "--noout", "--schema", "../reports/testdata/junit.xsd", filepath.Join(out, "junit.xml")).CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), string(outb))
	} else if os.Getenv("CI") != "" {
		t.Fatal("xmllint is missing: apt-get install libxml2-utils")
	}
}

// A cell finished twice, or a cell of another spec, is refused by name.
func TestCollectRefuses(t *testing.T) {
	g := NewWithT(t)
	spec, _ := ParseSpec(twoByTwo)
	other, _ := ParseSpec([]byte("name: other\naxes: {seed: 9}\n"))
	root := t.TempDir()
	fakeCell(t, spec, filepath.Join(root, "a"), 0, "pass")
	fakeCell(t, spec, filepath.Join(root, "b"), 0, "fail")
	fakeCell(t, other, filepath.Join(root, "c"), 0, "pass")
	_, err := Collect(root, filepath.Join(root, "a"), filepath.Join(root, "b"))
	g.Expect(err).To(MatchError(ContainSubstring("cell 0 ran twice")))
	_, err = Collect(root, filepath.Join(root, "a"), filepath.Join(root, "c"))
	g.Expect(err).To(MatchError(ContainSubstring(`does not belong to matrix "t"`)))
	_, err = Collect(root, t.TempDir())
	g.Expect(err).To(MatchError(ContainSubstring("no cells")))
}

// Print lists the cells that ran, the counts and the clusters.
func TestPrint(t *testing.T) {
	g := NewWithT(t)
	spec, _ := ParseSpec(twoByTwo)
	root := t.TempDir()
	fakeCell(t, spec, root, 0, "pass")
	fakeCell(t, spec, root, 2, "fail", "watch/reliable")
	m, err := Collect(root, root)
	g.Expect(err).NotTo(HaveOccurred())
	var b strings.Builder
	m.Print(&b, "runs/x")
	g.Expect(b.String()).To(Equal(`CELL  VERDICT  FAILED CHECKS   VALUES
0     pass                     faults=(none) seed=1
2     fail     watch/reliable  faults=kill-leader seed=1

matrix t: 4 cells: 1 pass, 1 fail, 2 not run
  watch/reliable failed in 1 cell(s): [2]
results in runs/x (matrix.html, matrix.json, junit.xml)
`))
}
