package availability

import (
	"fmt"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// Check is run/availability. An outage is a span between
// two answers in which clients called and got no answer; each must end
// within cfg.MaxUnavailable of the later of its start and the end of the
// last fault overlapping it (a killed leader may keep the system down
// while the fault lasts, not long after it healed). And the run's final
// write must have succeeded: a history without it whose last calls went
// unanswered fails with the time the system stopped answering. A history
// cut short with nothing unanswered is unknown. After the final write, one
// of the linearizable reads of its key the workload then sends must have
// succeeded.
func Check(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	bound := cfg.MaxUnavailable
	if bound <= 0 {
		bound = check.DefaultConfig().MaxUnavailable
	}
	cs := facts.Calls(h)
	figures := map[string]float64{"calls": float64(len(cs)), "bound_s": bound.Seconds()}
	if len(cs) == 0 {
		return check.Skip(Name, "the history has no call", figures)
	}
	unanswered, longest := 0, time.Duration(0)
	var open *facts.Outage
	for _, o := range facts.Outages(cs) {
		unanswered += o.Unanswered
		switch {
		case o.Never && o.Open:
			col.Add(check.Violation{Guarantee: Err,
				Message: fmt.Sprintf("the system never answered: all %d calls went unanswered", len(cs)),
				Span:    &check.Span{From: max(o.From, 0), To: o.To}})
			figures["unanswered"] = float64(unanswered)
			return col.Result(Name, figures)
		case o.Open:
			open = &o
		case o.Never:
			// Unanswered calls before the first answer: the system under
			// test was still coming up, which setup bounds.
		default:
			longest = max(longest, o.To-o.From)
			if v, bad := outage(h, o.From, o.To, bound, o.Unanswered); bad {
				col.Add(v)
			}
		}
	}
	figures["unanswered"] = float64(unanswered)
	figures["longest_outage_s"] = longest.Seconds()
	if mark, ok := h.Mark(history.MarkFinalWrite); ok {
		if v, bad := finalRead(h, mark, figures); bad {
			col.Add(v)
		}
	} else if _, stopped := h.Mark(history.MarkStopped); stopped || h.NotLast() {
		// A segment before the run's last ends while the run goes on, and
		// a run --fail-fast stopped ends with calls vigil canceled: an
		// outage open at the end is held to the bound as far as it went
		// (in a segment, the next one's calls take it on); the final
		// write is the last segment's, and a stopped run has none.
		if open != nil {
			figures["longest_outage_s"] = max(longest, open.To-open.From).Seconds()
			if v, bad := outage(h, open.From, open.To, bound, open.Unanswered); bad {
				col.Add(v)
			}
		}
	} else {
		if open == nil {
			return check.Inconclusive(Name, "the run ended before its final write, with nothing unanswered: whether the system still answered at its end is not known", figures)
		}
		figures["longest_outage_s"] = max(longest, open.To-open.From).Seconds()
		col.Add(check.Violation{Guarantee: Err,
			Message: fmt.Sprintf("unavailable since t=%.1fs: the %d calls after the last answer went unanswered until the history ends at t=%.1fs, and the run's final write never succeeded",
				open.From.Seconds(), open.Unanswered, open.To.Seconds()),
			Want: "an answer, and the final write", Got: fmt.Sprintf("none since t=%.1fs", open.From.Seconds()),
			Span: &check.Span{From: open.From, To: open.To}})
	}
	return col.Result(Name, figures)
}

// finalRead judges the linearizable reads of the final key the workload
// sends after the final write: when there are some (histories of older
// runs have none), one must have succeeded.
func finalRead(h *history.History, mark history.Mark, figures map[string]float64) (check.Violation, bool) {
	key := h.Meta.Prefix + history.FinalKey
	tried, last := 0, time.Duration(0)
	for i := range h.Operations {
		o := &h.Operations[i]
		if o.Request.Kind != history.OpRange || o.Request.Key != key || o.Request.Serializable || o.Call < mark.Time {
			continue
		}
		if !o.Failed() {
			figures["final_reads"] = float64(tried + 1)
			return check.Violation{}, false
		}
		tried, last = tried+1, max(last, o.Return)
	}
	figures["final_reads"] = float64(tried)
	if tried == 0 {
		return check.Violation{}, false
	}
	return check.Violation{Guarantee: Err,
		Message: fmt.Sprintf("the final write succeeded at t=%.1fs, but none of the %d linearizable reads after it did "+
			"(the last gave up at t=%.1fs): the system did not answer a read at the end of the run", mark.Time.Seconds(), tried, last.Seconds()),
		Want: "a linearizable read of the final key answered", Got: fmt.Sprintf("%d reads unanswered", tried),
		Span: &check.Span{From: mark.Time, To: last}}, true
}

// outage judges the span (from, to) between two answers with n
// unanswered calls in it.
func outage(h *history.History, from, to, bound time.Duration, n int) (check.Violation, bool) {
	excused := from
	faults := ""
	for _, f := range h.Faults {
		if f.Start < to && f.End > from {
			excused = max(excused, f.End)
			faults += " " + f.Name
		}
	}
	if to-excused <= bound {
		return check.Violation{}, false
	}
	msg := fmt.Sprintf("unavailable from t=%.1fs to t=%.1fs (%.1fs, %d calls unanswered)", from.Seconds(), to.Seconds(), (to - from).Seconds(), n)
	if faults != "" {
		msg += fmt.Sprintf(": %.1fs after the faults around it (%s) healed, past the bound of %v", (to - excused).Seconds(), faults[1:], bound)
	} else {
		msg += fmt.Sprintf(" with no fault injected, past the bound of %v", bound)
	}
	return check.Violation{Guarantee: Err, Message: msg, Span: &check.Span{From: from, To: to},
		Want: fmt.Sprintf("an answer within %v", bound), Got: fmt.Sprintf("none for %.1fs", (to - excused).Seconds())}, true
}
