package facts

import (
	"github.com/vigil-suite/vigil/history"
)

// Covers reports whether w would deliver a change of type typ to key.
func Covers(w *history.WatchStream, key string, typ history.EventType) bool {
	if !(KeyRange{w.Request.Key, w.Request.End}).Contains(key) {
		return false
	}
	if typ == history.EventPut {
		return !w.Request.NoPut
	}
	return !w.Request.NoDelete
}

// Window is the span of revisions a watch vouches for: from the first one
// it observed (its first event's revision, or one above its first progress
// notification, but never below the start revision it asked for) to the
// last (the highest event or progress revision).
type Window struct {
	First, Last int64
	Ok          bool
}

func ObservedWindow(w *history.WatchStream) Window {
	win := observedFrom(w)
	// A progress notification below the start revision (etcd #20221)
	// vouches for nothing the watch asked for.
	if s := w.Request.StartRevision; win.Ok && win.First < s {
		win.First = s
		if win.Last < s {
			win.Ok = false
		}
	}
	return win
}

func observedFrom(w *history.WatchStream) Window {
	var win Window
	for _, r := range w.Responses {
		if len(r.Events) > 0 {
			if !win.Ok {
				win.First, win.Ok = r.Events[0].Revision(), true
			}
			for _, ev := range r.Events {
				win.Last = max(win.Last, ev.Revision())
			}
		} else if r.Progress {
			if !win.Ok {
				win.First, win.Ok = r.Revision+1, true
			}
			win.Last = max(win.Last, r.Revision)
		}
	}
	return win
}

func GotProgress(w *history.WatchStream) bool {
	for _, r := range w.Responses {
		if r.Progress {
			return true
		}
	}
	return false
}
