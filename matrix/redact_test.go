package matrix

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// A secret in a spec's flags reaches the cell's run as written, and none
// of the matrix's own records (cell.json, matrix.json, matrix.html).
func TestMatrixRecordsHoldNoSecret(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	spec, err := ParseSpec([]byte("name: s\nrun: {fixture: command, command: \"/bin/sh -c 'exec srv' x postgres://u:SECRET1@h/db\"}\naxes: {password: [SECRET2], seed: 1}\n"))
	g.Expect(err).NotTo(HaveOccurred())
	// A stand-in for vigil: it keeps the arguments it was given and
	// writes a result where the last one (--out DIR) says.
	got := filepath.Join(dir, "argv")
	vigil := filepath.Join(dir, "vigil")
	g.Expect(os.WriteFile(vigil, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > "+got+"\nfor a; do out=$a; done\nmkdir -p $out\necho '{\"verdict\":\"pass\"}' > $out/result.json\n"), 0o755)).To(Succeed())
	out := filepath.Join(dir, "out")
	c, _, err := RunCell(context.Background(), spec, vigil, out, 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Verdict).To(Equal("pass"))
	argv, err := os.ReadFile(got)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(argv)).To(ContainSubstring("SECRET1"), "the run gets the command as written")
	g.Expect(string(argv)).To(ContainSubstring("SECRET2"))
	m, err := Collect(out, out)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.Write(out)).To(Succeed())
	for _, f := range []string{filepath.Join("cells", CellDir(0), CellFile), "matrix.json", "matrix.html"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		g.Expect(err).NotTo(HaveOccurred(), f)
		g.Expect(string(b)).NotTo(ContainSubstring("SECRET"), f)
		g.Expect(strings.Contains(string(b), "REDACTED")).To(BeTrue(), f)
	}
}
