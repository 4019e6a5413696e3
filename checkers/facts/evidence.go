package facts

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// The evidence counters every check's declaration is built from. Each
// counts requests of one kind the run sent and the answers of one kind the
// target gave; see check.Evidence for the rule that reads them.

// settle is how long after a fault's end silence is still excused: the
// time a healed member or link takes to answer again (a leader election,
// a reconnect). The excuse is bounded by the fault's own interval plus it.
const settle = time.Second

// FaultAround reports whether a fault other than sabotage overlapped
// [from, to], widened by the settle time after each fault. Sabotage is
// recorded as a fault too, but it changes only what vigil's clients see:
// it never excuses the server.
func FaultAround(faults []history.Fault, from, to time.Duration) bool {
	for i := range faults {
		f := &faults[i]
		if strings.HasPrefix(f.Name, "sabotage:") {
			continue
		}
		if f.Start <= to && f.End+settle >= from {
			return true
		}
	}
	return false
}

// OpEvidence counts the operations match selects: asked, answered (a
// response or a definite error: compacted, future revision) and refused
// (declined as unsupported). An operation that timed out is owed nothing
// here — faults make timeouts legitimate — so none answered is unknown.
func OpEvidence(h *history.History, request, answer string, match func(o *history.Operation) bool) check.Evidence {
	e := check.Evidence{Request: request, Answer: answer, Records: check.RecordOperations}
	for i := range h.Operations {
		o := &h.Operations[i]
		if !match(o) {
			continue
		}
		e.Asked++
		switch {
		case o.Code == history.ErrRefused:
			e.Refused++
		case answered(o):
			e.Answered++
		}
	}
	if e.Asked == 0 {
		e.Why = "the run sent no " + request
		if reason, ok := refusal(h, request); ok {
			e.Why += ": the target refused it before the run (" + reason + ")"
		}
	}
	return e
}

// refusal finds what the target said before the run about a capability
// whose name the request kind starts with (Meta.Refuses).
func refusal(h *history.History, request string) (string, bool) {
	for name, words := range h.Meta.Refuses {
		if strings.Contains(request, name) {
			return words, true
		}
	}
	return "", false
}

// WatchEvidence counts the watches match selects: asked, and answered
// when the watch got any response (created, events, progress, a cancel)
// or was refused or canceled by the server with a reason.
func WatchEvidence(h *history.History, request, answer string, match func(w *history.WatchStream) bool,
	answeredBy func(w *history.WatchStream) bool) check.Evidence {
	e := check.Evidence{Request: request, Answer: answer, Records: check.RecordWatches}
	for _, w := range h.Watches {
		if !match(w) {
			continue
		}
		e.Asked++
		if answeredBy(w) {
			e.Answered++
		}
	}
	if e.Asked == 0 {
		e.Why = "the run opened no " + request
	}
	return e
}

// Responded reports whether the watch got any response at all.
func Responded(w *history.WatchStream) bool { return len(w.Responses) > 0 }

// DeliveredEvents reports whether the watch delivered at least one event.
func DeliveredEvents(w *history.WatchStream) bool {
	for i := range w.Responses {
		if len(w.Responses[i].Events) > 0 {
			return true
		}
	}
	return false
}

// progressWindow is how long a progress request waits for its answer. etcd
// answers at once when the watches of the stream are in sync, so this is
// generous under load; a notification in it answers every request it follows.
const progressWindow = 2 * time.Second

// ProgressEvidence counts the progress requests sent for watches match
// selects (nil: all) and their answers: a progress notification on one of
// the watches the request was sent for, within progressWindow after it.
//
// A request is owed an answer when it was handed to the stream without an
// error, one of its watches had been answered (created) before it, stayed
// open for the whole window and started at or below the store's revision
// then, and no fault (other than sabotage) was around it. etcd leaves a request unanswered while a watch of the stream
// is catching up, so single silences are not violations; the rule fails
// the check only when every owed request went unanswered.
//
// In a format-1 history progress requests were not recorded: the evidence
// is then the notifications alone, marked Legacy.
func ProgressEvidence(h *history.History, match func(w *history.WatchStream) bool) check.Evidence {
	e := check.Evidence{Request: "progress request", Answer: "progress notification", Records: check.RecordCalls}
	if match == nil {
		match = func(*history.WatchStream) bool { return true }
	}
	if !h.RecordsCalls() {
		e.Legacy = true
		for _, w := range h.Watches {
			if !match(w) {
				continue
			}
			if w.Request.ProgressNotify {
				e.Asked++
			}
			if GotProgress(w) {
				e.Answered++
			}
		}
		return e
	}
	bounds, end := NewRevBounds(h), h.End()
	for _, c := range h.CallsOf(history.CallProgress) {
		var watches []*history.WatchStream
		for _, id := range c.Watches {
			if w := h.WatchByID(id); w != nil && match(w) {
				watches = append(watches, w)
			}
		}
		if len(watches) == 0 {
			continue // sent for no watch this check judges
		}
		e.Asked++
		if c.Failed() {
			if c.Code == history.ErrRefused {
				e.Refused++
			}
			continue
		}
		answered, owed := false, false
		for _, w := range watches {
			answered = answered || progressIn(w, c.Call, c.Call+progressWindow)
			// A watch still ahead of its store is right to get no
			// notification (etcd #20221): not owed one.
			reached := w.Request.StartRevision <= bounds.AtLeast(c.Call).Rev+1
			owed = owed || (liveBefore(w, c.Call) && openUntil(w, c.Call+progressWindow) && reached)
		}
		// The window must lie inside what the history knows: a history
		// cut while the run goes on may not hold the answer yet.
		owed = owed && c.Call+progressWindow <= end && !FaultAround(h.Faults, c.Call, c.Call+progressWindow)
		if answered {
			e.Answered++
		}
		if owed {
			e.Owed++
			if !answered {
				if e.Ignored == 0 {
					e.Example = fmt.Sprintf("progress request %d (client %d, at %s) for watch %d, created at %s and open past %s, "+
						"got no notification", c.ID, c.Client, c.Call.Round(time.Millisecond), watches[0].ID,
						watches[0].Responses[0].Time.Round(time.Millisecond), (c.Call + progressWindow).Round(time.Millisecond))
				}
				e.NoteUnanswered(c.ID)
			}
		}
	}
	if e.Asked == 0 {
		e.Why = "the run sent no progress request for a watch this check judges"
	}
	return e
}

// progressIn reports whether w received a progress notification in [from, to].
func progressIn(w *history.WatchStream, from, to time.Duration) bool {
	for i := range w.Responses {
		r := &w.Responses[i]
		if r.Progress && r.Time >= from && r.Time <= to {
			return true
		}
	}
	return false
}

// liveBefore reports whether the server had answered w (its creation, an
// event) before t.
func liveBefore(w *history.WatchStream, t time.Duration) bool {
	return len(w.Responses) > 0 && w.Responses[0].Time < t && !w.Responses[0].Canceled
}

// openUntil reports whether w was still open at t.
func openUntil(w *history.WatchStream, t time.Duration) bool {
	return w.End == nil || w.End.Time >= t
}

// Tally counts requests one at a time into an Evidence, for checks whose
// requests are records of several kinds or whose owing needs the check's
// own knowledge (the Kubernetes checks).
type Tally struct{ E check.Evidence }

// NewTally starts a count of requests of one kind and answers of one
// kind; ids of owed requests left unanswered name records of kind records.
func NewTally(request, answer string, records check.RecordKind) *Tally {
	return &Tally{E: check.Evidence{Request: request, Answer: answer, Records: records}}
}

// Count adds one request the run sent: whether the target answered it
// with the answer kind, refused it as unsupported, and whether the API
// owed it an answer (an owed request with none is noted by id).
func (t *Tally) Count(id int64, answered, refused, owed bool) {
	t.E.Asked++
	switch {
	case answered:
		t.E.Answered++
	case refused:
		t.E.Refused++
	}
	if owed {
		t.E.Owed++
		if !answered {
			t.E.NoteUnanswered(id)
		}
	}
}

// Evidence is the count; why says why the run did not ask, kept only
// when it did not.
func (t *Tally) Evidence(why string) check.Evidence {
	e := t.E
	if e.Asked == 0 {
		e.Why = why
		if e.Why == "" {
			e.Why = "the run sent no " + e.Request
		}
	}
	return e
}

// KubeOpEvidence counts the Kubernetes calls match selects that left the
// client: asked, and answered when answeredBy says the target gave the
// answer kind. Nothing
// is owed: a call may go unanswered under a fault, and run/availability
// judges outages.
func KubeOpEvidence(h *history.History, request, answer string, match, answeredBy func(o *history.KubeOperation) bool,
	why string) check.Evidence {
	t := NewTally(request, answer, check.RecordKubeOps)
	for i := range h.KubeOps {
		if o := &h.KubeOps[i]; !o.NeverSent() && match(o) {
			t.Count(o.ID, answeredBy(o), false, false)
		}
	}
	return t.Evidence(why)
}

// KubeWatchEvidence counts the Kubernetes watches match selects that left
// the client, as KubeOpEvidence counts calls.
func KubeWatchEvidence(h *history.History, request, answer string, match, answeredBy func(w *history.KubeWatchStream) bool,
	why string) check.Evidence {
	t := NewTally(request, answer, check.RecordKubeWatches)
	for _, w := range h.KubeWatches {
		if !KubeWatchNeverSent(w) && match(w) {
			t.Count(w.ID, answeredBy(w), false, false)
		}
	}
	return t.Evidence(why)
}

// KubeWatchNeverSent reports whether a Kubernetes watch failed before its
// request left the client (the connection was refused: no server saw it),
// as KubeOperation.NeverSent does for a call. Such a request asked nothing
// of the target; run/availability judges the outage.
func KubeWatchNeverSent(w *history.KubeWatchStream) bool {
	return len(w.Events) == 0 && w.End != nil && w.End.Status == nil && strings.Contains(w.End.Error, "dial tcp") &&
		strings.Contains(w.End.Error, "connect: connection refused")
}

// KubeServed reports whether the server answered a Kubernetes watch with a
// stream: an event of any type, or a clean end of the stream. A watch
// refused with a Status, or that broke or was closed with nothing, was not
// served (or the history cannot tell).
func KubeServed(w *history.KubeWatchStream) bool {
	return len(w.Events) > 0 || w.End != nil && w.End.Reason == history.EndServer && w.End.Status == nil
}

// QuietSpan is the longest part of [from, to] that no fault other than
// sabotage overlaps, each fault widened by the settle time after it (the
// spans FaultAround excuses): how long the server had to answer with
// nothing to excuse its silence.
func QuietSpan(faults []history.Fault, from, to time.Duration) time.Duration {
	if to <= from {
		return 0
	}
	type span struct{ a, b time.Duration }
	var busy []span
	for i := range faults {
		f := &faults[i]
		if strings.HasPrefix(f.Name, "sabotage:") || f.Start > to || f.End+settle < from {
			continue
		}
		busy = append(busy, span{max(f.Start, from), min(f.End+settle, to)})
	}
	slices.SortFunc(busy, func(x, y span) int { return cmp.Compare(x.a, y.a) })
	longest, at := time.Duration(0), from
	for _, s := range busy {
		longest = max(longest, s.a-at)
		at = max(at, s.b)
	}
	return max(longest, to-at)
}
