package kube

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/checkers/kube/model"
	"github.com/vigil-suite/vigil/history"
)

// Bounds of kube/bookmarks. kube-apiserver's watch cache sends a bookmark
// to every watcher that allows them about once a minute
// (defaultBookmarkFrequency) and 2 s before the watch's deadline, on a
// timer ticking about every second (k8s.io/apiserver pkg/storage/cacher,
// cacheWatcher.nextBookmarkTime).
const (
	bookmarkPeriodBound = 90 * time.Second
	bookmarkPreTimeout  = 5 * time.Second
	bookmarkMinTimeout  = 4 * time.Second
)

// CheckBookmarks is kube/bookmarks (SHOULD): a BOOKMARK comes only on
// a watch that allowed them; it carries only an RV (no name, no value;
// annotations only to mark the end of a streaming list's initial events),
// never below the last event's RV nor below an earlier bookmark's; on a
// watch open longer than 90 s, no 90 s pass without one; and a watch with
// timeoutSeconds of 4 or more, ended cleanly at its timeout, received one
// in its last 5 s. (A server serving watches from etcd, with the watch
// cache off, sends none: that is reported here, as a warning.)
func CheckBookmarks(h *history.History, cfg check.Config) check.Result {
	return checkBookmarks(model.Build(h), cfg)
}

func checkBookmarks(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	rule := facts.NewEndings(h)
	bookmarks, periodic, judged := 0, 0, 0
	for _, kw := range m.Watches {
		w := kw.Stream
		if kw.Mode == model.WatchRefused {
			continue
		}
		var lastEv, lastBM int64
		lastAt := w.Call
		var bmTimes []time.Duration
		for i := 0; i < kw.LiveEnd(); i++ {
			e := &w.Events[i]
			rv := kw.Rv(i)
			if e.Type != history.KubeBookmark {
				if i >= kw.InitN {
					lastEv = max(lastEv, rv)
				}
				continue
			}
			bookmarks++
			bmTimes = append(bmTimes, e.Time)
			base := check.Violation{Guarantee: ErrBookmarks, Watch: w.ID, Client: w.Client, Revision: rv,
				KubeEvents: []history.KubeEventAt{model.EventAt(w, i)}}
			if !w.Request.AllowBookmarks {
				v := base
				v.Message = fmt.Sprintf("watch %d (client %d) did not allow bookmarks and received %s", w.ID, w.Client, model.EventText(*e))
				v.Want, v.Got = "no BOOKMARK", "BOOKMARK"
				col.Add(v)
			}
			if e.Object != nil && (e.Object.Name != "" || e.Object.Value != "") {
				v := base
				v.Message = fmt.Sprintf("watch %d (client %d) received a BOOKMARK carrying object %s (value %q), not only an RV",
					w.ID, w.Client, e.Object.Name, e.Object.Value)
				v.Want, v.Got = "only an RV", e.Object.Name
				col.Add(v)
			}
			if i < kw.InitN {
				lastBM = max(lastBM, rv)
				continue // the initial-events-end bookmark: kube/watchlist-initial-events judges it
			}
			periodic++
			if rv < lastEv || rv < lastBM {
				v := base
				v.Message = fmt.Sprintf("watch %d (client %d) received a BOOKMARK at RV %d after an event at RV %d and a "+
					"bookmark at RV %d", w.ID, w.Client, rv, lastEv, lastBM)
				v.Want, v.Got = fmt.Sprintf(">= %d", max(lastEv, lastBM)), fmt.Sprint(rv)
				col.Add(v)
			}
			lastBM = max(lastBM, rv)
		}
		if !w.Request.AllowBookmarks || kw.Mode == model.WatchUnjudged {
			continue
		}
		judged++
		end := w.Call
		if w.End != nil {
			end = w.End.Time
		} else if n := len(w.Events); n > 0 {
			end = w.Events[n-1].Time
		}
		for _, t := range append(bmTimes, end) {
			if t-lastAt > bookmarkPeriodBound {
				col.Add(check.Violation{Guarantee: ErrBookmarks,
					Message: fmt.Sprintf("watch %d (client %d) allowed bookmarks and went %.0fs without one (from %.1fs to %.1fs)",
						w.ID, w.Client, (t - lastAt).Seconds(), lastAt.Seconds(), t.Seconds()),
					Watch: w.ID, Client: w.Client, Want: fmt.Sprintf("a bookmark every %s", bookmarkPeriodBound),
					Got: fmt.Sprintf("%.0fs without", (t - lastAt).Seconds())})
				break
			}
			lastAt = t
		}
		T := time.Duration(w.Request.TimeoutSeconds) * time.Second
		if T < bookmarkMinTimeout || rule.KubeWatch(w).Class != facts.EndingTimeout {
			continue // only a watch that ran to its timeout owes the last bookmark
		}
		got := false
		for _, t := range bmTimes {
			if t >= w.End.Time-bookmarkPreTimeout {
				got = true
			}
		}
		if !got {
			col.Add(check.Violation{Guarantee: ErrBookmarks,
				Message: fmt.Sprintf("watch %d (client %d) with timeoutSeconds=%d ended at its timeout without a bookmark in "+
					"its last %s", w.ID, w.Client, w.Request.TimeoutSeconds, bookmarkPreTimeout),
				Watch: w.ID, Client: w.Client, Want: "a bookmark shortly before the timeout", Got: "none"})
		}
	}
	if periodic == 0 {
		for i := range col.Kept {
			col.Kept[i].Message += " (the server sent no bookmark to any watch but to end a streaming list's initial " +
				"events: with the watch cache off, kube-apiserver serves watches from etcd and sends no others)"
		}
	}
	figures := map[string]float64{"bookmarks": float64(bookmarks), "other_than_initial_end": float64(periodic),
		"watches_judged": float64(judged)}
	if judged == 0 && bookmarks == 0 {
		return check.Skip(NameBookmarks, kubeSkipReason(h, "no watch allowed bookmarks"), figures)
	}
	return col.Result(NameBookmarks, figures)
}

// recoveryGrace is how long after a fault heals a watch may lag before
// kube/recovery expects it to deliver again.
const recoveryGrace = 5 * time.Second

// CheckRecovery is kube/recovery (SHOULD), for histories with faults.
// A watch open when a fault healed that stayed open (vigil closed it, or
// the history ends) keeps delivering: it reaches the RV of every change it
// owes that was acknowledged at least 5 s after the heal and 5 s before the
// watch's end. A watch that a fault ends, ends visibly: a broken stream,
// or an ERROR or refusal with 410 or 429 (504 ResourceVersionTooLarge is
// let pass too); an ERROR or refusal with another code during or just
// after a fault is reported.
func CheckRecovery(h *history.History, cfg check.Config) check.Result {
	return checkRecovery(h, func() *model.Model { return model.Build(h) }, cfg)
}

func checkRecovery(h *history.History, buildModel func() *model.Model, cfg check.Config) check.Result {
	faults := recoveryFaults(h)
	if len(faults) == 0 {
		return check.Skip(NameRecovery, "the history has no fault", map[string]float64{})
	}
	m := buildModel()
	col := check.NewCollector(cfg)
	type ack struct {
		t  time.Duration
		rv int64
		c  *model.Change
	}
	var acks []ack
	for _, c := range m.Changes {
		if c.Write.Outcome == model.WriteAcked && c.Write.How == (model.Ref{}) {
			acks = append(acks, ack{c.Write.Op.Return, c.Rv, c})
		}
	}
	sort.Slice(acks, func(i, j int) bool { return acks[i].t < acks[j].t })
	rule := facts.NewEndings(h)
	across, ended := 0, 0
	for _, kw := range m.Watches {
		w := kw.Stream
		if kw.Mode == model.WatchUnjudged {
			continue
		}
		// How it ended, by the one rule: the server's answers are judged
		// near faults; a watch that stayed open is held to deliver.
		how := rule.KubeWatch(w)
		var st *history.KubeStatus
		var stIdx = -1
		switch how.Class {
		case facts.EndingAnswered, facts.EndingExpired, facts.EndingRefused:
			if how.Index >= 0 {
				st, stIdx = w.Events[how.Index].Status, how.Index
			} else {
				st = w.End.Status
			}
		}
		if st != nil {
			at := w.Call
			if w.End != nil {
				at = w.End.Time
			}
			if f := faultNear(faults, at); f != nil {
				ended++
				ok := st.Code == 410 || st.Code == 429 || st.Code == 504 || st.Code == 400 || st.Code == 422
				if !ok {
					v := check.Violation{Guarantee: ErrRecovery, Watch: w.ID, Client: w.Client,
						Message: fmt.Sprintf("watch %d (client %d) failed with %s during or just after fault %s (%d)", w.ID,
							w.Client, model.StatusText(st), f.Name, f.ID),
						Want: "410 or 429", Got: model.StatusText(st)}
					if stIdx >= 0 {
						v.KubeEvents = []history.KubeEventAt{model.EventAt(w, stIdx)}
					}
					col.Add(v)
				}
			}
			continue
		}
		if !kw.StartKnown || (how.Class != facts.EndingClient && how.Class != facts.EndingOpen) {
			continue
		}
		end := time.Duration(1<<62 - 1)
		if w.End != nil {
			end = w.End.Time
		}
		for _, f := range faults {
			if w.Call >= f.End || end <= f.End+recoveryGrace {
				continue
			}
			across++
			var owed *model.Change
			i := sort.Search(len(acks), func(i int) bool { return acks[i].t > f.End+recoveryGrace })
			for ; i < len(acks) && acks[i].t < end-recoveryGrace; i++ {
				a := acks[i]
				if a.rv <= kw.Start {
					continue
				}
				if typ, sure := m.Expected(a.c, kw.Sel); typ != "" && sure && (owed == nil || a.rv > owed.Rv) {
					owed = a.c
				}
			}
			if owed == nil || kw.Last >= owed.Rv {
				continue
			}
			v := check.Violation{Guarantee: ErrRecovery, Watch: w.ID, Client: w.Client, Key: owed.Obj.Name, Revision: owed.Rv,
				Message: fmt.Sprintf("watch %d (client %d) stayed open after fault %s (%d) healed at %.1fs, but it silently "+
					"stopped: it reached only RV %d, not the change of %s at RV %d (%s, acknowledged at %.1fs)", w.ID, w.Client,
					f.Name, f.ID, f.End.Seconds(), kw.Last, owed.Obj.Name, owed.Rv, m.ChangeText(owed), owed.Write.Op.Return.Seconds()),
				Want: fmt.Sprintf(">= %d", owed.Rv), Got: fmt.Sprint(kw.Last)}
			m.Evidence(&v, owed.Ref())
			col.Add(v)
			break
		}
	}
	figures := map[string]float64{"faults": float64(len(faults)), "watches_open_across_heals": float64(across),
		"watches_failed_near_faults": float64(ended)}
	if across == 0 && ended == 0 {
		return check.Skip(NameRecovery, "no watch was open across the heal of a fault or failed near one", figures)
	}
	return col.Result(NameRecovery, figures)
}

// recoveryFaults are the faults the watches of h lived through: h's, and
// in a segment, those of the segments before that its context holds (a
// watch that began there lived through them).
func recoveryFaults(h *history.History) []history.Fault {
	if h.Context == nil {
		return h.Faults
	}
	return append(slices.Clone(h.Context.Faults), h.Faults...)
}

// faultNear returns a fault under way at t, or healed less than
// recoveryGrace before it.
func faultNear(faults []history.Fault, t time.Duration) *history.Fault {
	for i := range faults {
		f := &faults[i]
		if f.Start <= t && t <= f.End+recoveryGrace {
			return f
		}
	}
	return nil
}
