package checkers

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
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
