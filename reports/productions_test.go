package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/history"
)

// Productions are counted from the requests' draws: operations, calls and
// watches, answered (a response or a definite error) or refused during
// the run; the productions refused before the run carry the target's
// words; those the run could draw and never did are named, and a history
// drawn from no grammar gets no coverage at all.
func TestCountProductions(t *testing.T) {
	g := NewWithT(t)
	h := history.New(history.Meta{
		Productions: []string{"request.kind=range", "request.kind=put", "put.lease=0", "put.lease=revoked", "put.lease=never",
			"range.revision=compact", "watch.start=head", "lease-ttl.keys=true"},
		Refuses: map[string]string{"range.serializable=true": "serializable is not implemented",
			"serializable": "serializable is not implemented", "delete": "delete is not implemented"}})
	add := func(r history.Record) { g.Expect(h.Add(r)).To(Succeed()) }
	ok := &history.Response{Revision: 3}
	put := history.Request{Kind: history.OpPut, Key: "a", Value: "0.1"}
	add(history.Record{Op: &history.Operation{ID: 1, Request: put, Response: ok, Draw: []string{"request.kind=put", "put.lease=0"}}})
	add(history.Record{Op: &history.Operation{ID: 2, Request: put, Error: "gone", Code: history.ErrLeaseNotFound,
		Draw: []string{"request.kind=put", "put.lease=revoked"}}})
	add(history.Record{Op: &history.Operation{ID: 3, Request: put, Error: "timeout", Code: history.ErrUnknown,
		Draw: []string{"request.kind=put", "put.lease=0"}}})
	add(history.Record{Op: &history.Operation{ID: 4, Request: history.Request{Kind: history.OpRange, Key: "a", Revision: 2},
		Error: "no", Code: history.ErrRefused, Draw: []string{"request.kind=range", "range.revision=compact"}}})
	add(history.Record{Call: &history.Call{ID: 1, Kind: history.CallLeaseTimeToLive, Lease: 5, Attached: true, TTL: 90,
		Draw: []string{"lease-ttl.keys=true"}}})
	add(history.Record{Watch: &history.Watch{ID: 1, Request: history.WatchRequest{Key: "a", StartRevision: 3}, Draw: []string{"watch.start=head"}}})
	add(history.Record{WatchResponse: &history.WatchResponse{Watch: 1, Created: true}})

	prods, never := CountProductions(h)
	got := map[string]ProductionCount{}
	for _, p := range prods {
		got[p.Production] = p
	}
	g.Expect(got["request.kind=put"]).To(Equal(ProductionCount{Production: "request.kind=put", Sent: 3, Answered: 2}))
	g.Expect(got["put.lease=revoked"]).To(Equal(ProductionCount{Production: "put.lease=revoked", Sent: 1, Answered: 1}),
		"lease-not-found is an answer")
	g.Expect(got["range.revision=compact"]).To(Equal(ProductionCount{Production: "range.revision=compact", Sent: 1, Refused: 1}))
	g.Expect(got["lease-ttl.keys=true"].Answered).To(Equal(1))
	g.Expect(got["watch.start=head"]).To(Equal(ProductionCount{Production: "watch.start=head", Sent: 1, Answered: 1}))
	g.Expect(got["range.serializable=true"].RefusedBefore).To(Equal("serializable is not implemented"))
	g.Expect(got).NotTo(HaveKey("delete"), "a form's refusal is the forms' table's")
	g.Expect(never).To(Equal([]string{"put.lease=never"}))
	g.Expect(prods[0].Production).To(Equal("request.kind=range"), "in the vocabulary's order")

	forms := CountForms(h)
	for _, f := range forms {
		g.Expect(f.Form).NotTo(Equal("range.serializable=true"), "a production's refusal is the productions' table's")
	}

	var b bytes.Buffer
	writeProductions(&b, prods, never)
	g.Expect(b.String()).To(ContainSubstring("  request.kind: range 1/0 (1 refused), put 3/2\n"))
	g.Expect(b.String()).To(ContainSubstring("  put.lease: 0 2/1, revoked 1/1\n"))
	g.Expect(b.String()).To(ContainSubstring("never drawn: put.lease=never\n"))
	g.Expect(b.String()).To(ContainSubstring("refused before the run, so not drawn:\n  serializable is not implemented: range.serializable=true\n"))

	// A history drawn from no grammar (format 3 and before) has no coverage.
	old := history.New(history.Meta{Refuses: map[string]string{"txn": "unsupported"}})
	g.Expect(old.Add(history.Record{Op: &history.Operation{ID: 1, Request: put, Response: ok}})).To(Succeed())
	prods, never = CountProductions(old)
	g.Expect(prods).To(BeNil())
	g.Expect(never).To(BeNil())
}

// report.html lists the coverage per production, and names those the run
// never drew; a saved run from before the grammar shows none.
func TestWritePageProductions(t *testing.T) {
	g := NewWithT(t)
	old, err := history.Load(savedRun)
	g.Expect(err).NotTo(HaveOccurred())
	dir := t.TempDir()
	g.Expect(WritePage(dir, old, Summarize(old, nil, 30))).To(Succeed())
	b, err := os.ReadFile(filepath.Join(dir, PageFile))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(b)).NotTo(ContainSubstring("grammar productions"))

	// The same run as if drawn from the grammar: its puts drawn as such.
	h := old
	h.Meta.Productions = []string{"request.kind=put", "put.lease=never"}
	puts := 0
	for i := range h.Operations {
		if o := &h.Operations[i]; o.Request.Kind == history.OpPut && o.Response != nil {
			o.Draw = []string{"request.kind=put"}
			puts++
		}
	}
	dir = t.TempDir()
	g.Expect(WritePage(dir, h, Summarize(h, nil, 30))).To(Succeed())
	b, err = os.ReadFile(filepath.Join(dir, PageFile))
	g.Expect(err).NotTo(HaveOccurred())
	page := string(b)
	g.Expect(page).To(ContainSubstring("grammar productions: 1 drawn, 1 never drawn, 0 refused before the run, 0 refused during it"))
	g.Expect(page).To(ContainSubstring("<td><code>request.kind=put</code></td><td>%d</td><td>%d</td>", puts, puts))
	g.Expect(page).To(ContainSubstring("Never drawn: <code>put.lease=never</code>"))
}
