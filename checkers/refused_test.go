package checkers

import (
	"strings"
	"testing"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/internal/histbuild"
	"github.com/vigil-suite/vigil/checkers/kv"
	"github.com/vigil-suite/vigil/checkers/linearizable"
	"github.com/vigil-suite/vigil/checkers/watch"

	. "github.com/onsi/gomega"
	"github.com/vigil-suite/vigil/history"
)

// A target that refused a capability before the run gets the checks that
// need it skipped with its words, never a pass.
func TestRefusedCapabilitySkipsItsChecks(t *testing.T) {
	g := NewWithT(t)
	b := histbuild.New()
	b.H.Meta.Refuses = map[string]string{"serializable": "serializable is not implemented by kine", "hashkv": "hash kv is not supported"}
	b.Put(1, 0, 10, "a", "1.1", 11)
	r := kv.CheckSerializableSane(b.H, check.DefaultConfig())
	g.Expect(r.Verdict).To(Equal(check.Skipped))
	g.Expect(r.Reason).To(ContainSubstring("serializable is not implemented by kine"))

	// Without the refusal the reason is the plain absence of such reads.
	b.H.Meta.Refuses = nil
	r = kv.CheckSerializableSane(b.H, check.DefaultConfig())
	g.Expect(r.Verdict).To(Equal(check.Skipped))
	g.Expect(strings.Contains(r.Reason, "refuses")).To(BeFalse())
}

// A target that documents it keeps no versions (kine) gets
// watch/is-create's version-0 events reported as that limitation; any
// other disagreement, or a version other than 0, still fails the check.
func TestIsCreateDocumentedNoVersions(t *testing.T) {
	build := func(version int64, limits map[string]string) check.Result {
		b := histbuild.New()
		b.H.Meta.Limitations = limits
		b.Put(1, 0, 10, "a", "1", 11)
		w := b.Watch(1, 9, 0, histbuild.PrefixWatch())
		b.Created(w, 1, 10)
		b.Events(w, 12, history.Event{Type: history.EventPut, IsCreate: true,
			KV: histbuild.Kv("a", "1", 11, 11, version)})
		return watch.CheckIsCreate(b.H, check.DefaultConfig())
	}
	g := NewWithT(t)
	kine := map[string]string{history.LimitationNoVersions: "kine keeps no versions"}

	r := build(0, kine)
	g.Expect(r.Verdict).To(Equal(check.Documented), "%+v", r)
	g.Expect(r.Reason).To(ContainSubstring("kine keeps no versions"))

	g.Expect(build(0, nil).Verdict).To(Equal(check.Fail), "without the documented limitation, version 0 is a violation")
	g.Expect(build(5, kine).Verdict).To(Equal(check.Fail), "the limitation explains version 0 only")
	g.Expect(build(1, kine).Verdict).To(Equal(check.Pass))
}

// kv/linearizable compares a returned version of 0 as the store's only
// where the target documents that it keeps none.
func TestLinearizableDocumentedNoVersions(t *testing.T) {
	build := func(version int64, limits map[string]string) check.Result {
		b := histbuild.New()
		b.H.Meta.Limitations = limits
		b.Put(1, 0, 10, "a", "1", 11)
		b.Get(2, 20, 30, "a", 11, histbuild.Kv("a", "1", 11, 11, version))
		return linearizable.Check(b.H, check.DefaultConfig())
	}
	g := NewWithT(t)
	kine := map[string]string{history.LimitationNoVersions: "kine keeps no versions"}
	r := build(0, kine)
	g.Expect(r.Verdict).To(Equal(check.Pass), "%+v", r)
	g.Expect(build(0, nil).Verdict).To(Equal(check.Fail))
	g.Expect(build(7, kine).Verdict).To(Equal(check.Fail))
	g.Expect(build(1, nil).Verdict).To(Equal(check.Pass))
}
