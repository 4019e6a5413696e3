package matrix

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestParseSpec(t *testing.T) {
	g := NewWithT(t)
	s, err := ParseSpec([]byte(`
name: nightly
run: {duration: 30s, members: 3, failpoints: true}
axes:
  seed: 3
  faults: ["", kill-leader]
  etcd-version: [v3.5.17, v3.6.16]
`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.Cells()).To(Equal(12))
	// The system first, the faults, the seed last, whatever the file's order.
	g.Expect(s.AxisNames()).To(Equal([]string{"etcd-version", "faults", "seed"}))
	g.Expect(s.Axes["seed"]).To(Equal(Values{"1", "2", "3"}))
	c, err := s.Cell(0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(Label(c)).To(Equal("etcd-version=v3.5.17 faults=(none) seed=1"))
	// The empty fault value leaves --faults out; run flags come first, sorted.
	g.Expect(s.Args(c)).To(Equal([]string{"run", "--duration=30s", "--failpoints=true", "--members=3",
		"--etcd-version=v3.5.17", "--seed=1"}))
	c, _ = s.Cell(11)
	g.Expect(Label(c)).To(Equal("etcd-version=v3.6.16 faults=kill-leader seed=3"))
	c, _ = s.Cell(4)
	g.Expect(Label(c)).To(Equal("etcd-version=v3.5.17 faults=kill-leader seed=2"))
	_, err = s.Cell(12)
	g.Expect(err).To(MatchError(ContainSubstring("cells 0..11")))

	// A list of one seed is that seed, not a count.
	s, err = ParseSpec([]byte("name: a\naxes: {seed: [7]}"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.Axes["seed"]).To(Equal(Values{"7"}))
}

func TestSpecErrors(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"name: a\naxes: {seed: 2}\nparralel: 2", `unknown field "parralel"`},
		{"name: Nightly Run\naxes: {seed: 2}", "lower-case letters"},
		{"name: a", "no axes"},
		{"name: a\naxes: {faults: []}", "axis faults has no values"},
		{"name: a\nrun: {seed: 1}\naxes: {seed: 2}", "both an axis and a run flag"},
		{"name: a\nrun: {out: /tmp/x}\naxes: {seed: 2}", "--out is vigil matrix's"},
		{"name: a\naxes: {faults: [{a: b}]}", "must be a string"},
		{"name: a\nrun: {duration: [1, 2]}\naxes: {seed: 2}", "want one value"},
	} {
		_, err := ParseSpec([]byte(c.spec))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error with %q", c.spec, err, c.want)
		}
	}
}

// LoadSpec has each cell's command line judged, and names the first cell
// whose line is refused.
func TestLoadSpec(t *testing.T) {
	g := NewWithT(t)
	path := filepath.Join(t.TempDir(), "m.yaml")
	os.WriteFile(path, twoByTwo, 0o644)
	var judged [][]string
	spec, raw, err := LoadSpec(path, func(args []string) error {
		judged = append(judged, args)
		if slices.Contains(args, "--faults=kill-leader") {
			return errors.New("no such fault")
		}
		return nil
	})
	g.Expect(err).To(MatchError(path + ": cell 2 (faults=kill-leader seed=1): no such fault"))
	g.Expect(spec).To(BeNil())
	g.Expect(judged[0]).To(Equal([]string{"--duration=5s", "--seed=1"}), "without the leading run")
	spec, raw, err = LoadSpec(path, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(spec.Cells()).To(Equal(4))
	g.Expect(raw).To(Equal(twoByTwo))
	_, _, err = LoadSpec(filepath.Join(t.TempDir(), "none.yaml"), nil)
	g.Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue())
}
