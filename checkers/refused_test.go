package checkers

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/history"
)

// A target that refused a capability before the run gets the checks that
// need it skipped with its words, never a pass.
func TestRefusedCapabilitySkipsItsChecks(t *testing.T) {
	g := NewWithT(t)
	b := newHB()
	b.h.Meta.Refuses = map[string]string{"serializable": "serializable is not implemented by kine", "hashkv": "hash kv is not supported"}
	b.put(1, 0, 10, "a", "1.1", 11)
	r := CheckKVSerializableSane(b.h, DefaultConfig())
	g.Expect(r.Verdict).To(Equal(Skipped))
	g.Expect(r.Reason).To(ContainSubstring("serializable is not implemented by kine"))

	// Without the refusal the reason is the plain absence of such reads.
	b.h.Meta.Refuses = nil
	r = CheckKVSerializableSane(b.h, DefaultConfig())
	g.Expect(r.Verdict).To(Equal(Skipped))
	g.Expect(strings.Contains(r.Reason, "refuses")).To(BeFalse())
}

// A target that documents it keeps no versions (kine) gets
// watch/is-create's version-0 events reported as that limitation; any
// other disagreement, or a version other than 0, still fails the check.
func TestIsCreateDocumentedNoVersions(t *testing.T) {
	build := func(version int64, limits map[string]string) Result {
		b := newHB()
		b.h.Meta.Limitations = limits
		b.put(1, 0, 10, "a", "1", 11)
		w := b.watch(1, 9, 0, prefixWatch())
		b.created(w, 1, 10)
		b.events(w, 12, history.Event{Type: history.EventPut, IsCreate: true,
			KV: kv("a", "1", 11, 11, version)})
		return CheckWatchIsCreate(b.h, DefaultConfig())
	}
	g := NewWithT(t)
	kine := map[string]string{history.LimitationNoVersions: "kine keeps no versions"}

	r := build(0, kine)
	g.Expect(r.Verdict).To(Equal(Documented), "%+v", r)
	g.Expect(r.Reason).To(ContainSubstring("kine keeps no versions"))

	g.Expect(build(0, nil).Verdict).To(Equal(Fail), "without the documented limitation, version 0 is a violation")
	g.Expect(build(5, kine).Verdict).To(Equal(Fail), "the limitation explains version 0 only")
	g.Expect(build(1, kine).Verdict).To(Equal(Pass))
}

// kv/linearizable compares a returned version of 0 as the store's only
// where the target documents that it keeps none.
func TestLinearizableDocumentedNoVersions(t *testing.T) {
	build := func(version int64, limits map[string]string) Result {
		b := newHB()
		b.h.Meta.Limitations = limits
		b.put(1, 0, 10, "a", "1", 11)
		b.get(2, 20, 30, "a", 11, kv("a", "1", 11, 11, version))
		return CheckLinearizable(b.h, DefaultConfig())
	}
	g := NewWithT(t)
	kine := map[string]string{history.LimitationNoVersions: "kine keeps no versions"}
	r := build(0, kine)
	g.Expect(r.Verdict).To(Equal(Pass), "%+v", r)
	g.Expect(build(0, nil).Verdict).To(Equal(Fail))
	g.Expect(build(7, kine).Verdict).To(Equal(Fail))
	g.Expect(build(1, nil).Verdict).To(Equal(Pass))
}
