package checkers

import (
	"fmt"
	"sort"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// answered reports whether the system answered the call: a response, or a
// definite error (compacted, future revision, refused as unsupported; for Kubernetes, an HTTP
// Status). A timeout, a reset or a refused connection is no answer.
func answered(o *history.Operation) bool {
	return o.Response != nil || o.Code == history.ErrCompacted || o.Code == history.ErrFutureRevision || o.Code == history.ErrRefused
}

// call is when a call returned and whether the system answered it.
type call struct {
	ret time.Duration
	ok  bool
}

// calls lists the calls on the system under test, by return time: the
// Kubernetes calls of a Kubernetes target (its etcd is vigil's oracle, not
// what the clients use), every KV call otherwise.
func calls(h *history.History) []call {
	var out []call
	if h.Meta.Target.Kind != "kube" {
		for i := range h.Operations {
			o := &h.Operations[i]
			out = append(out, call{o.Return, answered(o)})
		}
	}
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		out = append(out, call{o.Return, o.Response != nil || o.Status != nil})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ret < out[j].ret })
	return out
}

// CheckRunAvailability is run/availability. An outage is a span between
// two answers in which clients called and got no answer; each must end
// within cfg.MaxUnavailable of the later of its start and the end of the
// last fault overlapping it (a killed leader may keep the system down
// while the fault lasts, not long after it healed). And the run's final
// write must have succeeded: a history without it whose last calls went
// unanswered fails with the time the system stopped answering. A history
// cut short with nothing unanswered is unknown.
func CheckRunAvailability(h *history.History, cfg Config) Result {
	col := newCollector(cfg)
	bound := cfg.MaxUnavailable
	if bound <= 0 {
		bound = DefaultConfig().MaxUnavailable
	}
	cs := calls(h)
	figures := map[string]float64{"calls": float64(len(cs)), "bound_s": bound.Seconds()}
	if len(cs) == 0 {
		return skipped(NameRunAvailability, "the history has no call", figures)
	}
	prev := time.Duration(-1) // the last answer's return; -1: none yet
	unanswered, longest := 0, time.Duration(0)
	pending, lastPending := 0, time.Duration(0) // unanswered calls since prev
	for _, c := range cs {
		if !c.ok {
			unanswered++
			pending, lastPending = pending+1, c.ret
			continue
		}
		if prev >= 0 && pending > 0 {
			longest = max(longest, c.ret-prev)
			if v, bad := outage(h, prev, c.ret, bound, pending); bad {
				col.add(v)
			}
		}
		prev, pending = c.ret, 0
	}
	figures["unanswered"] = float64(unanswered)
	figures["longest_outage_s"] = longest.Seconds()
	if prev < 0 {
		col.add(Violation{Guarantee: ErrRunAvailability,
			Message: fmt.Sprintf("the system never answered: all %d calls went unanswered", len(cs))})
		return col.result(NameRunAvailability, figures)
	}
	if _, ok := h.Mark(history.MarkFinalWrite); !ok {
		if pending == 0 {
			return unknown(NameRunAvailability, "the run ended before its final write, with nothing unanswered: whether the system still answered at its end is not known", figures)
		}
		figures["longest_outage_s"] = max(longest, lastPending-prev).Seconds()
		col.add(Violation{Guarantee: ErrRunAvailability,
			Message: fmt.Sprintf("unavailable since t=%.1fs: the %d calls after the last answer went unanswered until the history ends at t=%.1fs, and the run's final write never succeeded",
				prev.Seconds(), pending, lastPending.Seconds()),
			Want: "an answer, and the final write", Got: fmt.Sprintf("none since t=%.1fs", prev.Seconds())})
	}
	return col.result(NameRunAvailability, figures)
}

// outage judges the span (from, to) between two answers with n
// unanswered calls in it.
func outage(h *history.History, from, to, bound time.Duration, n int) (Violation, bool) {
	excused := from
	faults := ""
	for _, f := range h.Faults {
		if f.Start < to && f.End > from {
			excused = max(excused, f.End)
			faults += " " + f.Name
		}
	}
	if to-excused <= bound {
		return Violation{}, false
	}
	msg := fmt.Sprintf("unavailable from t=%.1fs to t=%.1fs (%.1fs, %d calls unanswered)", from.Seconds(), to.Seconds(), (to - from).Seconds(), n)
	if faults != "" {
		msg += fmt.Sprintf(": %.1fs after the faults around it (%s) healed, past the bound of %v", (to - excused).Seconds(), faults[1:], bound)
	} else {
		msg += fmt.Sprintf(" with no fault injected, past the bound of %v", bound)
	}
	return Violation{Guarantee: ErrRunAvailability, Message: msg,
		Want: fmt.Sprintf("an answer within %v", bound), Got: fmt.Sprintf("none for %.1fs", (to - excused).Seconds())}, true
}
