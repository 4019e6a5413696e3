package matrix

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

func TestParseCells(t *testing.T) {
	g := NewWithT(t)
	cells, err := ParseCells("0-2, 5,7", 8)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cells).To(Equal([]int{0, 1, 2, 5, 7}))
	cells, err = ParseCells("3-4,0-3", 8)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cells).To(Equal([]int{0, 1, 2, 3, 4}), "overlaps once, in order")
	cells, err = ParseCells("", 8)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cells).To(BeNil(), "every cell")
	for _, bad := range []string{"8", "3-1", "a", "-1", "1-"} {
		_, err := ParseCells(bad, 8)
		g.Expect(err).To(MatchError(ContainSubstring("within 0-7")), bad)
	}
}

// A dir keeps the spec it was claimed for: the same spec resumes, another
// is refused.
func TestClaimDir(t *testing.T) {
	g := NewWithT(t)
	out := filepath.Join(t.TempDir(), "m")
	g.Expect(ClaimDir(out, twoByTwo)).To(Succeed())
	saved, err := os.ReadFile(filepath.Join(out, SpecFile))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(saved).To(Equal(twoByTwo))
	g.Expect(ClaimDir(out, twoByTwo)).To(Succeed())
	err = ClaimDir(out, []byte("name: other\naxes: {seed: 1}\n"))
	g.Expect(err).To(MatchError(ErrOtherSpec))
	g.Expect(err).To(MatchError(ContainSubstring(out + " holds another spec")))
}
