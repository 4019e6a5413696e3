package reports

import (
	"bytes"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/history"
)

// Forms are counted from the recorded requests: operations, calls and
// watches (once under each option), answered or refused during the run;
// the forms refused before the run carry the target's words, and the
// capability names standing beside them add no row.
func TestCountForms(t *testing.T) {
	g := NewWithT(t)
	h := history.New(history.Meta{Refuses: map[string]string{
		"delete": "delete is not implemented", "range-serializable": "serializable is not implemented",
		"serializable": "serializable is not implemented", "txn-value-else-read": "unsupported", "txn": "unsupported"}})
	add := func(r history.Record) { g.Expect(h.Add(r)).To(Succeed()) }
	ok := &history.Response{Revision: 3}
	add(history.Record{Op: &history.Operation{ID: 1, Request: history.Request{Kind: history.OpPut, Key: "a"}, Response: ok}})
	add(history.Record{Op: &history.Operation{ID: 2, Request: history.Request{Kind: history.OpPut, Key: "a"}, Error: "x", Code: history.ErrUnknown}})
	add(history.Record{Op: &history.Operation{ID: 3, Request: history.Request{Kind: history.OpPut, Key: "a", PrevKV: true}, Response: ok}})
	add(history.Record{Op: &history.Operation{ID: 4, Request: history.Request{Kind: history.OpRange, Key: "a", Revision: 9}, Error: "c", Code: history.ErrCompacted}})
	add(history.Record{Op: &history.Operation{ID: 5, Request: history.Request{Kind: history.OpCompact, Revision: 2}, Error: "no", Code: history.ErrRefused}})
	add(history.Record{Call: &history.Call{ID: 1, Kind: history.CallLeaseGrant, Lease: 5, TTL: 100}})
	add(history.Record{Call: &history.Call{ID: 2, Kind: history.CallLeaseKeepAlive, Lease: 5, Error: "not supported", Code: history.ErrRefused}})
	add(history.Record{Watch: &history.Watch{ID: 1, Request: history.WatchRequest{Key: "a", PrevKV: true, NoPut: true}}})
	add(history.Record{WatchResponse: &history.WatchResponse{Watch: 1, Created: true}})
	add(history.Record{Watch: &history.Watch{ID: 2, Request: history.WatchRequest{Key: "a"}}})

	got := map[string]FormCount{}
	for _, f := range CountForms(h) {
		got[f.Form] = f
	}
	g.Expect(got).To(HaveLen(12), "%v", got)
	g.Expect(got["put"]).To(Equal(FormCount{Form: "put", Sent: 2, Answered: 1}))
	g.Expect(got["put-prev-kv"]).To(Equal(FormCount{Form: "put-prev-kv", Sent: 1, Answered: 1}))
	g.Expect(got["range-rev"]).To(Equal(FormCount{Form: "range-rev", Sent: 1, Answered: 1}), "compacted is an answer")
	g.Expect(got["compact"]).To(Equal(FormCount{Form: "compact", Sent: 1, Refused: 1}))
	g.Expect(got["lease-keepalive"]).To(Equal(FormCount{Form: "lease-keepalive", Sent: 1, Refused: 1}))
	g.Expect(got["lease-grant"].Answered).To(Equal(1))
	g.Expect(got["watch-prev-kv"]).To(Equal(FormCount{Form: "watch-prev-kv", Sent: 1, Answered: 1}))
	g.Expect(got["watch-no-put"].Sent).To(Equal(1))
	g.Expect(got["watch"]).To(Equal(FormCount{Form: "watch", Sent: 1}), "no answer yet")
	g.Expect(got["delete"]).To(Equal(FormCount{Form: "delete", RefusedBefore: "delete is not implemented"}))
	g.Expect(got["range-serializable"].RefusedBefore).To(Equal("serializable is not implemented"))
	g.Expect(got).NotTo(HaveKey("serializable"))
	g.Expect(got).NotTo(HaveKey("txn"))

	// An older history's capability names stand alone: they get rows.
	old := history.New(history.Meta{Refuses: map[string]string{"txn": "unsupported", "serializable": "no"}})
	g.Expect(CountForms(old)).To(HaveLen(2))

	var b bytes.Buffer
	writeForms(&b, CountForms(h))
	g.Expect(b.String()).To(ContainSubstring("put 2/1,"))
	g.Expect(b.String()).To(ContainSubstring("compact 1/0 (1 refused)"))
	g.Expect(b.String()).To(ContainSubstring("refused before the run, so not sent:\n  delete: delete is not implemented\n"))
}
