package chaos

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/fixtures/binaries"
)

// What vigil faults says of where each fault applies, for a failpoint
// build of one's own, and for none.
func TestAppliesHere(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	binary := filepath.Join(dir, "etcd")
	os.WriteFile(filepath.Join(dir, binaries.FailpointsFile), []byte("beforeCommit\nraftBeforeSave\n"), 0o644)
	own, err := FindFailpointBuild("", binary)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(own.Names).To(Equal([]string{"beforeCommit", "raftBeforeSave"}))
	g.Expect(own.AppliesHere(Needs{Failpoint: "beforeCommit"})).To(Equal("yes, with --failpoints"))
	g.Expect(own.AppliesHere(Needs{Failpoint: "raftBeforeAdvance"})).To(Equal("no: " + binary + " has no failpoint raftBeforeAdvance"))
	g.Expect(own.AppliesHere(Needs{Processes: true})).To(Equal("yes"))
	g.Expect(own.AppliesHere(Needs{APIServers: true})).To(Equal("yes, with --target kube"))

	none, err := FindFailpointBuild("", filepath.Join(t.TempDir(), "etcd"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(none.AppliesHere(Needs{Failpoints: true})).To(HavePrefix("no: "))
	// An empty list is no build either: the HERE column says so, not "".
	emptyDir := t.TempDir()
	os.WriteFile(filepath.Join(emptyDir, binaries.FailpointsFile), nil, 0o644)
	empty, err := FindFailpointBuild("", filepath.Join(emptyDir, "etcd"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(empty.AppliesHere(Needs{Failpoint: "beforeCommit"})).To(HavePrefix("no: "))
	_, err = FindFailpointBuild("latest", "")
	g.Expect(err).To(MatchError(ContainSubstring(`"latest"`)))

	for name, want := range map[string]string{"kill-leader": "yes", "failpoint:beforeCommit": "no: etcd builds only",
		"defrag-leader": "no: kine refuses Defragment"} {
		inj, ok := Lookup(name)
		g.Expect(ok).To(BeTrue(), name)
		g.Expect(AppliesToKine(inj)).To(Equal(want), name)
	}
}
