package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

const savedRun = "../checkers/testdata/etcd-v3.6.16-faults.jsonl.gz"

// The page of a saved real run, with a finding placed on it by hand:
// every fault of the history is named on the timeline, the finding is
// marked at its first record, and nothing in the page is fetched.
func TestWritePage(t *testing.T) {
	g := NewWithT(t)
	h, err := history.Load(savedRun)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(h.Faults).NotTo(BeEmpty())
	op := h.Operations[len(h.Operations)/2]
	r := Summarize(h, []check.Result{{Name: "watch/reliable", Verdict: check.Fail,
		Violations: []check.Violation{{Message: "watch 1 missed it", Operations: []int64{op.ID}}}}}, 30)
	dir := t.TempDir()
	g.Expect(WritePage(dir, h, r)).To(Succeed())
	b, err := os.ReadFile(filepath.Join(dir, PageFile))
	g.Expect(err).NotTo(HaveOccurred())
	page := string(b)
	for _, f := range h.Faults {
		g.Expect(page).To(ContainSubstring(">" + f.Name + "<"))
	}
	g.Expect(page).To(ContainSubstring(">finding 1<"))
	g.Expect(page).To(ContainSubstring("%.1f s", op.Call.Seconds()))
	g.Expect(page).To(ContainSubstring("watch 1 missed it"))
	g.Expect(strings.Count(page, "<svg")).To(Equal(3))
	for _, bad := range []string{"<script", "<link", "<img", "src=", "url("} {
		g.Expect(page).NotTo(ContainSubstring(bad))
	}
}

// BenchmarkWritePage draws the page of a saved 3-member run with faults
// (2,857 operations, 7,916 watch events).
func BenchmarkWritePage(b *testing.B) {
	h, err := history.Load(savedRun)
	if err != nil {
		b.Fatal(err)
	}
	r := Summarize(h, nil, 30)
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if err := WritePage(dir, h, r); err != nil {
			b.Fatal(err)
		}
	}
}

// A Kubernetes run's page plots the calls to the API servers, not the
// etcd calls and watch of vigil's oracle under them.
func TestWritePageKube(t *testing.T) {
	g := NewWithT(t)
	h, err := history.Load("../checkers/kube/testdata/kube-v1.36.3-faults.jsonl.gz")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(h.Operations).NotTo(BeEmpty(), "the recorded run has oracle calls to etcd")
	dir := t.TempDir()
	g.Expect(WritePage(dir, h, Summarize(h, nil, 30))).To(Succeed())
	b, err := os.ReadFile(filepath.Join(dir, PageFile))
	g.Expect(err).NotTo(HaveOccurred())
	page := string(b)
	g.Expect(page).To(ContainSubstring(">update ("), "the API servers' calls")
	g.Expect(page).To(ContainSubstring(">lists ("))
	g.Expect(page).NotTo(ContainSubstring(">compact ("), "the oracle's etcd calls")
	g.Expect(page).NotTo(ContainSubstring(">status ("))
}

// A page drawn from a history cut short (vigil killed) says so.
func TestWritePageCutHistory(t *testing.T) {
	g := NewWithT(t)
	h, err := history.Load(savedRun)
	g.Expect(err).NotTo(HaveOccurred())
	h.Cut = "history.jsonl.zst: the compressed history ends before its end"
	dir := t.TempDir()
	g.Expect(WritePage(dir, h, Summarize(h, nil, 30))).To(Succeed())
	b, err := os.ReadFile(filepath.Join(dir, PageFile))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(b)).To(ContainSubstring("The history file was cut short (history.jsonl.zst: the compressed history ends before its end)"))
}
