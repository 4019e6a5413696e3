package kube

import (
	"fmt"
	"strings"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/kube/model"
	"github.com/vigil-suite/vigil/history"
)

// CheckWatchlistInitialEvents is kube/watchlist-initial-events, for
// streaming lists (sendInitialEvents=true, resourceVersionMatch=
// NotOlderThan, allowWatchBookmarks=true; without bookmarks the server
// sends no end marker and nothing is judged): ADDED events only, then
// exactly one BOOKMARK annotated k8s.io/initial-events-end: "true" whose
// RV B is at or above every initial item's RV, the requested RV, and —
// for RV unset, a consistent start — every write acknowledged before the
// watch was called; the items are the collection's state at B; every
// later event has an RV above B. A watch that received later events, or
// that the server ended, without that bookmark fails. A server refusing
// sendInitialEvents (no WatchList support) makes the check skipped.
func CheckWatchlistInitialEvents(h *history.History, cfg check.Config) check.Result {
	return checkWatchlistInitialEvents(model.Build(h), cfg)
}

func checkWatchlistInitialEvents(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	judged, unsupported, noBookmarks, cutShort := 0, 0, 0, 0
	var unsupportedWhy string
	for _, kw := range m.Watches {
		w := kw.Stream
		r := w.Request
		if r.SendInitialEvents == nil || !*r.SendInitialEvents || r.ResourceVersionMatch != "NotOlderThan" || r.Continue != "" {
			continue
		}
		if why := watchListUnsupported(kw); why != "" {
			unsupported++
			unsupportedWhy = why
			continue
		}
		if kw.Mode != model.WatchStreaming {
			continue
		}
		if !r.AllowBookmarks {
			noBookmarks++
			continue
		}
		// A stream the server ended cleanly owes the bookmark; one that broke
		// (no answer, a killed server) or that a fault on its server may
		// have ended does not.
		ended := w.End != nil && w.End.Reason == history.EndServer &&
			!kubeFaultDuring(h, w.Server, w.Call, w.End.Time)
		if kw.EndBM < 0 {
			later := kw.InitN < kw.LiveEnd()
			if !later && !ended {
				cutShort++
				continue
			}
			judged++
			how := "the server ended it"
			if later {
				how = "it went on with " + model.EventText(w.Events[kw.InitN])
			}
			v := check.Violation{Guarantee: ErrWatchlistInitialEvents,
				Message: fmt.Sprintf("streaming list watch %d (client %d) sent %d initial events and no BOOKMARK annotated %s; %s",
					w.ID, w.Client, len(kw.Items), history.AnnotationInitialEventsEnd, how),
				Watch: w.ID, Client: w.Client, Want: "an initial-events-end BOOKMARK", Got: "none"}
			if later {
				v.KubeEvents = []history.KubeEventAt{model.EventAt(w, kw.InitN)}
			}
			col.Add(v)
			continue
		}
		judged++
		B := kw.StateLo
		for i := 0; i < kw.EndBM; i++ {
			if t := w.Events[i].Type; t != history.KubeAdded {
				col.Add(check.Violation{Guarantee: ErrWatchlistInitialEvents,
					Message: fmt.Sprintf("streaming list watch %d (client %d) sent %s among its initial events, before the "+
						"initial-events-end bookmark at RV %d", w.ID, w.Client, model.EventText(w.Events[i]), B),
					Watch: w.ID, Client: w.Client, Want: "ADDED", Got: t, KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}})
			}
		}
		for i := kw.EndBM + 1; i < len(w.Events); i++ {
			if model.IsInitialEnd(&w.Events[i]) {
				col.Add(check.Violation{Guarantee: ErrWatchlistInitialEvents,
					Message: fmt.Sprintf("streaming list watch %d (client %d) sent a second initial-events-end bookmark (%s) "+
						"after the one at RV %d", w.ID, w.Client, model.EventText(w.Events[i]), B),
					Watch: w.ID, Client: w.Client, Revision: kw.Rv(i), Want: "exactly one", Got: "another",
					KubeEvents: []history.KubeEventAt{model.EventAt(w, kw.EndBM), model.EventAt(w, i)}})
			}
		}
		floor, floorOp := kw.ReqRV, int64(0)
		if r.ResourceVersion == "" {
			floor, floorOp = m.Lo.MaxBefore(w.Call)
		}
		if B < floor {
			v := check.Violation{Guarantee: ErrWatchlistInitialEvents,
				Message: fmt.Sprintf("streaming list watch %d (client %d) from RV %q ended its initial events at RV %d, below %d",
					w.ID, w.Client, r.ResourceVersion, B, floor),
				Watch: w.ID, Client: w.Client, Revision: B, Want: fmt.Sprintf(">= %d", floor), Got: fmt.Sprint(B),
				KubeEvents: []history.KubeEventAt{model.EventAt(w, kw.EndBM)}}
			if floorOp != 0 {
				v.Message += fmt.Sprintf(", the RV of operation %d, a write acknowledged before the watch was called "+
					"(RV unset asks for a consistent start)", floorOp)
				v.Operations = []int64{floorOp}
			} else {
				v.Message += ", the RV it asked for"
			}
			col.Add(v)
		}
		initialStateIssues(m, kw, col, ErrWatchlistInitialEvents, "initial events")
	}
	figures := map[string]float64{"watches_judged": float64(judged), "unsupported": float64(unsupported),
		"without_bookmarks": float64(noBookmarks), "ended_before_the_bookmark": float64(cutShort)}
	if judged == 0 {
		reason := "no streaming list (sendInitialEvents=true with allowWatchBookmarks) was served"
		if unsupported > 0 {
			reason = "the server does not support streaming lists: " + unsupportedWhy
		}
		return check.Skip(NameWatchlistInitial, kubeSkipReason(h, reason), figures)
	}
	return col.Result(NameWatchlistInitial, figures)
}

// watchListUnsupported says why a well-formed streaming list was refused
// for lack of support ("" if it was not): the WatchList feature gate off,
// or the storage's RequestWatchProgress missing.
func watchListUnsupported(kw *model.Watch) string {
	var s *history.KubeStatus
	switch {
	case kw.Mode == model.WatchRefused:
		s = kw.Stream.End.Status
	case kw.ErrIdx == 0:
		s = kw.Stream.Events[0].Status
	}
	if s == nil {
		return ""
	}
	msg := strings.ToLower(s.Message)
	if strings.Contains(msg, "watchlist") || strings.Contains(msg, "sendinitialevents is forbidden") ||
		strings.Contains(msg, "watch stream was requested") {
		return fmt.Sprintf("%s %q", model.StatusText(s), s.Message)
	}
	return ""
}

// CheckWatchlistValidation is kube/watchlist-validation: these
// requests are refused as invalid — a watch with sendInitialEvents but
// without resourceVersionMatch=NotOlderThan, a watch with
// resourceVersionMatch but without sendInitialEvents, a watch with
// resourceVersionMatch and continue, and a list with both a
// resourceVersion (other than "0") and continue. A first reading of the API says 400;
// kube-apiserver answers the watch cases 422 Invalid (ValidateListOptions'
// errors become NewInvalid) and the list case 400 BadRequest, so either
// code passes; serving the request, or any other answer, fails. A
// refusal may also come as a lone ERROR event with that code.
func CheckWatchlistValidation(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	judged, noAnswer := 0, 0
	for _, w := range h.KubeWatches {
		why := invalidWatch(w.Request)
		if why == "" {
			continue
		}
		var st *history.KubeStatus
		switch {
		case w.End != nil && w.End.Status != nil && len(w.Events) == 0:
			st = w.End.Status
		case len(w.Events) == 1 && w.Events[0].Type == history.KubeError:
			st = w.Events[0].Status
		case len(w.Events) == 0 && (w.End == nil || w.End.Reason == history.EndError):
			noAnswer++ // no answer came (or the history was cut)
			continue
		case len(w.Events) == 0 && kubeFaultDuring(h, w.Server, w.Call, w.End.Time):
			noAnswer++ // a fault may have held the answer back until vigil gave up
			continue
		}
		judged++
		if st != nil && (st.Code == 400 || st.Code == 422) {
			continue
		}
		got := "served"
		if st != nil {
			got = model.StatusText(st)
		} else if len(w.Events) > 0 {
			got = fmt.Sprintf("served (%d events, first %s)", len(w.Events), model.EventText(w.Events[0]))
		}
		v := check.Violation{Guarantee: ErrWatchlistValidation,
			Message: fmt.Sprintf("watch %d (client %d) %s, and was answered %s", w.ID, w.Client, why, got),
			Watch:   w.ID, Client: w.Client, Want: "400 or 422", Got: got}
		if len(w.Events) > 0 {
			v.KubeEvents = []history.KubeEventAt{model.EventAt(w, 0)}
		}
		col.Add(v)
	}
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		r := o.Request
		if r.Verb != history.KubeList || r.Continue == "" {
			continue
		}
		var why string
		switch {
		case r.ResourceVersion != "" && r.ResourceVersion != "0":
			why = fmt.Sprintf("asked for resourceVersion %q together with continue", r.ResourceVersion)
		case r.ResourceVersionMatch != "":
			why = fmt.Sprintf("asked for resourceVersionMatch=%s together with continue", r.ResourceVersionMatch)
		default:
			continue
		}
		if o.Error != "" {
			noAnswer++
			continue
		}
		judged++
		if o.Status != nil && (o.Status.Code == 400 || o.Status.Code == 422) {
			continue
		}
		got := "served"
		if o.Status != nil {
			got = model.StatusText(o.Status)
		}
		col.Add(check.Violation{Guarantee: ErrWatchlistValidation,
			Message: fmt.Sprintf("%s %s, and was answered %s", model.OpText(o), why, got),
			Client:  o.Client, Want: "400", Got: got, Operations: []int64{o.ID}})
	}
	figures := map[string]float64{"requests_judged": float64(judged), "unanswered": float64(noAnswer)}
	if judged == 0 {
		return check.Skip(NameWatchlistValidation, kubeSkipReason(h, "no invalid request was sent"), figures)
	}
	return col.Result(NameWatchlistValidation, figures)
}

// invalidWatch says how a watch request is invalid ("" if it is not).
func invalidWatch(r history.KubeWatchRequest) string {
	switch {
	case r.SendInitialEvents != nil && r.ResourceVersionMatch != "NotOlderThan":
		return "asked for sendInitialEvents without resourceVersionMatch=NotOlderThan"
	case r.ResourceVersionMatch != "" && r.SendInitialEvents == nil:
		return fmt.Sprintf("asked for resourceVersionMatch=%s without sendInitialEvents", r.ResourceVersionMatch)
	case r.ResourceVersionMatch != "" && r.Continue != "":
		return fmt.Sprintf("asked for resourceVersionMatch=%s together with continue", r.ResourceVersionMatch)
	}
	return ""
}
