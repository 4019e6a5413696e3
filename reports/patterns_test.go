package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/vigil-suite/vigil/history"
)

// Patterns are counted from the draw entries alone: operations (a
// definite error is an answer), and watches once, answered once created,
// also when the watch spans segments; every pattern gets a row once any
// was sent, and a history without any gets none.
func TestCountPatterns(t *testing.T) {
	g := NewWithT(t)
	h := history.New(history.Meta{})
	add := func(r history.Record) { g.Expect(h.Add(r)).To(Succeed()) }
	ok := &history.Response{Revision: 3}
	chase := history.PatternDraw(history.PatternReadAfterAck)
	race := history.PatternDraw(history.PatternCompactRace)
	add(history.Record{Op: &history.Operation{ID: 1, Request: history.Request{Kind: history.OpPut, Key: "a"}, Response: ok}})
	add(history.Record{Op: &history.Operation{ID: 2, Request: history.Request{Kind: history.OpRange, Key: "a"}, Response: ok, Draw: chase}})
	add(history.Record{Op: &history.Operation{ID: 3, Request: history.Request{Kind: history.OpRange, Key: "a"}, Error: "x", Code: history.ErrUnknown, Draw: chase}})
	add(history.Record{Op: &history.Operation{ID: 4, Request: history.Request{Kind: history.OpRange, Key: "a", Revision: 2}, Error: "c",
		Code: history.ErrCompacted, Draw: append([]string{"range.revision=compact-1"}, race...)}})
	add(history.Record{Watch: &history.Watch{ID: 1, Request: history.WatchRequest{Key: "a", StartRevision: 3}, Draw: history.PatternDraw(history.PatternWatchAtCompact)}})
	add(history.Record{WatchResponse: &history.WatchResponse{Watch: 1, Created: true}})
	add(history.Record{WatchResponse: &history.WatchResponse{Watch: 1, Revision: 4}})

	got := CountPatterns(h)
	g.Expect(got).To(HaveLen(len(history.Patterns())))
	byName := map[string]PatternCount{}
	for _, p := range got {
		byName[p.Pattern] = p
	}
	g.Expect(got[0].Pattern).To(Equal(history.PatternReadAfterAck), "in history.Patterns' order")
	g.Expect(byName[history.PatternReadAfterAck]).To(Equal(PatternCount{Pattern: history.PatternReadAfterAck, Sent: 2, Answered: 1}))
	g.Expect(byName[history.PatternCompactRace]).To(Equal(PatternCount{Pattern: history.PatternCompactRace, Sent: 1, Answered: 1}))
	g.Expect(byName[history.PatternWatchAtCompact]).To(Equal(PatternCount{Pattern: history.PatternWatchAtCompact, Sent: 1, Answered: 1}))
	g.Expect(byName[history.PatternFaultHeal]).To(Equal(PatternCount{Pattern: history.PatternFaultHeal}))

	// A watch seen in two segments counts once.
	d := NewDigest()
	d.Add(h, nil)
	next := history.New(history.Meta{})
	g.Expect(next.Add(history.Record{Watch: &history.Watch{ID: 1, Request: history.WatchRequest{Key: "a", StartRevision: 3},
		Draw: history.PatternDraw(history.PatternWatchAtCompact)}})).To(Succeed())
	d.Add(next, nil)
	g.Expect(d.countPatterns()[2]).To(Equal(PatternCount{Pattern: history.PatternWatchAtCompact, Sent: 1, Answered: 1}))

	g.Expect(CountPatterns(history.New(history.Meta{}))).To(BeNil(), "no pattern sent: no rows")

	// result.json carries them; the page of a real run, two of its reads
	// tagged, shows them in a table of its own.
	g.Expect(Summarize(h, nil, 1).Stats.Patterns).To(Equal(got))
	real, err := history.Load(savedRun)
	g.Expect(err).NotTo(HaveOccurred())
	tagged := 0
	for i := range real.Operations {
		if o := &real.Operations[i]; o.Request.Kind == history.OpRange && o.Response != nil && tagged < 2 {
			o.Draw, tagged = chase, tagged+1
		}
	}
	dir := t.TempDir()
	g.Expect(WritePage(dir, real, Summarize(real, nil, 30))).To(Succeed())
	page, err := os.ReadFile(filepath.Join(dir, PageFile))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(page)).To(ContainSubstring("placement and timing patterns: 1 of 6 sent, 2 requests"))
	g.Expect(string(page)).To(ContainSubstring("<tr><td><code>read-after-ack</code></td><td>2</td><td>2</td></tr>"))

	var b bytes.Buffer
	writePatterns(&b, got)
	g.Expect(b.String()).To(Equal("patterns, sent/answered:\n  read-after-ack 2/1, compact-race 1/1, watch-at-compact 1/1, " +
		"watch-at-head 0/0, fault-start 0/0, fault-heal 0/0\n"))
}
