package facts

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/vigil-suite/vigil/history"
)

// How a stream-like request ended, by one rule for every check: an etcd
// watch (history.WatchStream) or a Kubernetes watch
// (history.KubeWatchStream). The rule reads only the history (the stream's
// own records, the faults and the marks), so a re-check gives the same
// classes. docs/checks.md ("How requests end") lists, per request kind,
// which classes the API allows and where it says so.

// EndingClass names how a stream ended.
type EndingClass string

const (
	// EndingAnswered: the server ended it with a definite answer. etcd: a
	// cancel response with a cancel reason, or an error; Kubernetes: an
	// ERROR event, or an HTTP error status other than those of the classes
	// below.
	EndingAnswered EndingClass = "answered"
	// EndingRefused: the server declined the request as invalid or
	// unsupported when it was made (gRPC Unimplemented or "not supported";
	// HTTP 400, 405, 422, 501).
	EndingRefused EndingClass = "refused"
	// EndingExpired: the start is no longer served (etcd: canceled with a
	// compact revision; Kubernetes: 410 Gone, as an ERROR event or a status).
	EndingExpired EndingClass = "expired"
	// EndingTimeout: Kubernetes only: a clean end at or after the watch's
	// timeoutSeconds (less TimeoutTolerance).
	EndingTimeout EndingClass = "timeout"
	// EndingFault: Kubernetes only: a clean end or a broken stream while a
	// fault that reaches the watch's API server was under way or had healed
	// less than FaultSettle before. A sabotage record never counts as such
	// a fault.
	EndingFault EndingClass = "fault"
	// EndingBroken: Kubernetes only: the stream broke with a transport
	// error the client saw (a reset, a GOAWAY, a refused connection), with
	// no fault around it. Not an answer, but not silent either.
	EndingBroken EndingClass = "broken"
	// EndingClient: vigil closed it.
	EndingClient EndingClass = "client"
	// EndingOpen: the history records no end: the run was cut short, or
	// the stream was still open when the history was written.
	EndingOpen EndingClass = "open"
	// EndingUnexplained: an end the API does not have: an etcd stream that
	// closed with neither a cancel response nor an error (or a cancel
	// without a reason), a Kubernetes watch closed cleanly before its
	// timeout with no ERROR event and no fault to explain it.
	EndingUnexplained EndingClass = "unexplained"
)

// EndingClasses lists every class, in the order figures list them.
var EndingClasses = []EndingClass{EndingAnswered, EndingRefused, EndingExpired, EndingTimeout, EndingFault,
	EndingBroken, EndingClient, EndingOpen, EndingUnexplained}

// Bounds of the rule.
const (
	// FaultSettle is how long after a fault heals an end is still the
	// fault's doing. kube-apiserver's watch cache re-initializes after its
	// etcd watch failed (a restarted or leaderless member): the cacher
	// retries once a second and closes every watcher when it starts
	// caching again, a moment after etcd answers. kube/recovery waits as
	// long before it expects delivery again.
	FaultSettle = 5 * time.Second
	// TimeoutTolerance is how much earlier than timeoutSeconds a clean
	// end still counts as the timeout. kube-apiserver starts its timer
	// after vigil stamped the call, so a correct end comes at or after
	// T; the tolerance only absorbs a server that rounds its deadline.
	TimeoutTolerance = 50 * time.Millisecond
	// ServerTimeoutFloor is the shortest timeout kube-apiserver picks
	// itself for a watch without timeoutSeconds on the API servers vigil
	// starts: --min-request-timeout (default 1800 s) times a jitter in
	// [1, 2). An external server's own choice is unknown.
	ServerTimeoutFloor = 1800 * time.Second
)

// Ending is the class of one stream's end and what decided it.
type Ending struct {
	Class EndingClass
	// At is when it ended (the end record), or the stream's call when it
	// has no end.
	At time.Duration
	// Elapsed is from the call to the end.
	Elapsed time.Duration
	// Timeout is the Kubernetes watch's timeoutSeconds (0: none asked).
	Timeout time.Duration
	// Index is the response (etcd) or event (Kubernetes) that carried the
	// answer: the cancel response, the ERROR event; -1 when none did.
	Index int
	// Fault is the fault that explains a fault-class end.
	Fault *history.Fault
	// Why says in words what decided the class.
	Why string
	// Note adds what was around the end without deciding it (a fault that
	// does not explain a quiet close). It is kept out of Why so that the
	// same breach reads the same, fault or not, and groups as one finding.
	Note string
}

// Endings applies the rule to the streams of one history. Build it once
// (NewEndings) and ask it per stream.
type Endings struct {
	h *history.History
	// apiServers are the Kubernetes API servers the history names; a
	// fault aimed at none of them (an etcd member, a link) reaches all.
	apiServers map[string]bool
	faults     []*history.Fault // not sabotage
}

// NewEndings prepares the rule for h.
func NewEndings(h *history.History) *Endings {
	e := &Endings{h: h, apiServers: map[string]bool{}}
	for _, w := range h.KubeWatches {
		if w.Server != "" {
			e.apiServers[w.Server] = true
		}
	}
	for i := range h.KubeOps {
		if s := h.KubeOps[i].Server; s != "" {
			e.apiServers[s] = true
		}
	}
	for i := range h.Faults {
		if !IsSabotage(&h.Faults[i]) {
			e.faults = append(e.faults, &h.Faults[i])
		}
	}
	return e
}

// SabotagePrefix starts the name of every fault record a saboteur wrote
// (targets/sabotage.FaultPrefix): the injected bug, not a fault of the
// system, so it excuses nothing.
const SabotagePrefix = "sabotage:"

// IsSabotage reports whether f records a sabotage.
func IsSabotage(f *history.Fault) bool { return strings.HasPrefix(f.Name, SabotagePrefix) }

// FaultAt returns a fault that reaches API server server ("" for any)
// and overlaps [from, to], stretched by settle after its heal; nil if
// none. Sabotage records never count.
func (e *Endings) FaultAt(server string, from, to, settle time.Duration) *history.Fault {
	for _, f := range e.faults {
		if f.Start > to || f.End+settle < from {
			continue
		}
		if e.reaches(f, server) {
			return f
		}
	}
	return nil
}

// reaches reports whether fault f can end a stream of API server server:
// it names no target, names that server, or aims at no API server at all
// (it hits what every API server stands on: an etcd member, a link).
func (e *Endings) reaches(f *history.Fault, server string) bool {
	if server == "" || len(f.Targets) == 0 {
		return true
	}
	// chaos marks the faults it aims at an API server with layer
	// "apiserver"; a history may also name that server in its requests.
	other := f.Details["layer"] == "apiserver"
	for _, t := range f.Targets {
		if t == server {
			return true
		}
		other = other || e.apiServers[t]
	}
	return !other
}

// refusalRe matches an error that declines a request as unsupported (the
// words targets/etcd classifies as history.ErrRefused).
var refusalRe = regexp.MustCompile(`(?i)(code = Unimplemented|\bnot supported\b|\bunsupported\b|\bnot implemented\b)`)

// WatchEnding classifies how etcd watch w ended (Endings.Watch).
func WatchEnding(h *history.History, w *history.WatchStream) Ending { return NewEndings(h).Watch(w) }

// Watch classifies how etcd watch w ended. etcd's Watch RPC ends a watch
// with a cancel response (canceled, with a cancel reason or a compact
// revision) or the stream's gRPC status; clientv3 resumes broken streams
// by itself. A stream that closed with neither is unexplained, during a
// fault or not: the API has no quiet end.
func (e *Endings) Watch(w *history.WatchStream) Ending {
	out := Ending{At: w.Call, Index: -1}
	if w.End == nil {
		out.Class, out.Why = EndingOpen, "no end recorded"
		return out
	}
	out.At, out.Elapsed = w.End.Time, w.End.Time-w.Call
	if w.End.Reason == history.EndClient {
		out.Class, out.Why = EndingClient, "vigil closed it"
		return out
	}
	cancel, errAt, events := -1, -1, false
	for ri := range w.Responses {
		r := &w.Responses[ri]
		if r.Canceled && cancel < 0 {
			cancel = ri
		}
		if r.Error != "" && errAt < 0 {
			errAt = ri
		}
		events = events || len(r.Events) > 0
	}
	switch {
	case cancel >= 0:
		r := &w.Responses[cancel]
		out.Index = cancel
		switch {
		case r.CompactRevision > 0:
			out.Class = EndingExpired
			out.Why = fmt.Sprintf("canceled (response %d) with compact revision %d", cancel, r.CompactRevision)
		case r.CancelReason != "" && !events && refusalRe.MatchString(r.CancelReason):
			out.Class, out.Why = EndingRefused, fmt.Sprintf("canceled at creation as unsupported: %s", r.CancelReason)
		case r.CancelReason != "" || r.Error != "":
			out.Class = EndingAnswered
			out.Why = fmt.Sprintf("canceled (response %d): %s", cancel, r.CancelReason+r.Error)
		default:
			out.Class = EndingUnexplained
			out.Why = fmt.Sprintf("canceled by the server (response %d, header revision %d) with no cancel reason, "+
				"compact revision or error", cancel, r.Revision)
		}
	case w.End.Error != "" && w.End.Error != history.QuietClose:
		out.Index = errAt
		out.Class, out.Why = EndingAnswered, "broke with an error: "+w.End.Error
		if !events && refusalRe.MatchString(w.End.Error) {
			out.Class, out.Why = EndingRefused, "refused at creation as unsupported: "+w.End.Error
		}
	default:
		out.Class = EndingUnexplained
		out.Why = fmt.Sprintf("its stream closed at %s without a cancel reason or an error, after %d responses",
			seconds(out.At), len(w.Responses))
		if f := e.FaultAt("", out.At, out.At, FaultSettle); f != nil {
			out.Note = fmt.Sprintf("during fault %s (%d), which does not explain it: a broken gRPC stream ends with a status",
				f.Name, f.ID)
		}
	}
	return out
}

// KubeWatchEnding classifies how Kubernetes watch w ended.
func KubeWatchEnding(h *history.History, w *history.KubeWatchStream) Ending {
	return NewEndings(h).KubeWatch(w)
}

// KubeWatch classifies how Kubernetes watch w ended. The API answers a
// watch with HTTP 200 and a stream of events; the server ends it with an
// ERROR event (410 Gone when its start expired), at its timeoutSeconds,
// or refuses it with an HTTP status. A clean close before the timeout, with
// no ERROR event, tells the client nothing: only a fault reaching its
// server explains it.
func (e *Endings) KubeWatch(w *history.KubeWatchStream) Ending {
	out := Ending{At: w.Call, Index: -1, Timeout: time.Duration(w.Request.TimeoutSeconds) * time.Second}
	for i := range w.Events {
		ev := &w.Events[i]
		if ev.Type != history.KubeError {
			continue
		}
		out.Index = i
		if w.End != nil {
			out.At, out.Elapsed = w.End.Time, w.End.Time-w.Call
		}
		if ev.Status != nil && ev.Status.Code == 410 {
			out.Class, out.Why = EndingExpired, fmt.Sprintf("ERROR event %d: %s", i, statusWords(ev.Status))
		} else {
			out.Class, out.Why = EndingAnswered, fmt.Sprintf("ERROR event %d: %s", i, statusWords(ev.Status))
		}
		return out
	}
	if w.End == nil {
		out.Class, out.Why = EndingOpen, "no end recorded"
		return out
	}
	out.At, out.Elapsed = w.End.Time, w.End.Time-w.Call
	if st := w.End.Status; st != nil {
		switch st.Code {
		case 410:
			out.Class = EndingExpired
		case 400, 405, 422, 501:
			out.Class = EndingRefused
		default:
			out.Class = EndingAnswered
		}
		out.Why = "HTTP " + statusWords(st)
		return out
	}
	if w.End.Reason == history.EndClient {
		out.Class, out.Why = EndingClient, "vigil closed it"
		return out
	}
	T := out.Timeout
	clean := w.End.Reason == history.EndServer
	switch {
	case clean && T > 0 && out.Elapsed >= T:
		// The timeout explains it by itself, fault or not; lateness is
		// kube/watch-timeout's to judge.
		out.Class, out.Why = EndingTimeout, fmt.Sprintf("closed cleanly %s after its call, at or after timeoutSeconds=%d",
			seconds(out.Elapsed), w.Request.TimeoutSeconds)
		return out
	case clean && T > 0 && out.Elapsed >= T-TimeoutTolerance:
		out.Class, out.Why = EndingTimeout, fmt.Sprintf("closed cleanly %s after its call, within the tolerance of %s "+
			"before timeoutSeconds=%d", seconds(out.Elapsed), TimeoutTolerance, w.Request.TimeoutSeconds)
		return out
	}
	if f := e.FaultAt(w.Server, out.At, out.At, FaultSettle); f != nil {
		out.Class, out.Fault = EndingFault, f
		out.Why = fmt.Sprintf("ended at %s, during fault %s (%d, %s to %s, settle %s)", seconds(out.At), f.Name, f.ID,
			seconds(f.Start), seconds(f.End), FaultSettle)
		return out
	}
	switch {
	case !clean:
		out.Class, out.Why = EndingBroken, "the stream broke: "+w.End.Error
	case T > 0:
		out.Class = EndingUnexplained
		out.Why = fmt.Sprintf("closed cleanly %s after its call, %s before its timeoutSeconds=%d, with no ERROR event "+
			"and no fault reaching its API server", seconds(out.Elapsed), seconds(T-out.Elapsed), w.Request.TimeoutSeconds)
	case e.h.Meta.Target.Fixture == "external":
		// The timeout an external server picks itself is not known, but
		// the run bounds it when the server says it is kube-apiserver.
		if floor, w2 := e.selfTimeoutFloor(w); out.Elapsed < floor {
			out.Class = EndingUnexplained
			out.Why = fmt.Sprintf("closed cleanly %s after its call, with no timeoutSeconds, no ERROR event and no fault "+
				"reaching its API server; the server says it is kube-apiserver %s, whose own timeout is --min-request-timeout "+
				"times a jitter in [1, 2), and watch %d of this run stayed open %s on it, so that timeout is at least %s",
				seconds(out.Elapsed), e.h.Meta.Target.Version, w2.ID, seconds(watchLife(w2)), seconds(floor))
			return out
		}
		out.Class = EndingTimeout
		out.Why = fmt.Sprintf("closed cleanly %s after its call; it asked no timeoutSeconds, and the timeout an external "+
			"server picks itself is not known beyond what the run observed", seconds(out.Elapsed))
	case out.Elapsed >= ServerTimeoutFloor:
		out.Class = EndingTimeout
		out.Why = fmt.Sprintf("closed cleanly %s after its call, past the %s kube-apiserver waits at least without "+
			"timeoutSeconds", seconds(out.Elapsed), ServerTimeoutFloor)
	default:
		out.Class = EndingUnexplained
		out.Why = fmt.Sprintf("closed cleanly %s after its call, with no timeoutSeconds (kube-apiserver's own timeout is "+
			"at least %s), no ERROR event and no fault reaching its API server", seconds(out.Elapsed), ServerTimeoutFloor)
	}
	return out
}

// selfTimeoutLatency is how much of a watch's life as vigil measured it
// (from the call to the end it saw) the server may not have counted: the
// way there and back.
const selfTimeoutLatency = time.Second

// selfTimeoutFloor bounds from below the timeout an external server picks
// itself for a watch without timeoutSeconds, from what the run observed,
// when the server says (its /version) it is a kube-apiserver: that one
// picks --min-request-timeout times a jitter in [1, 2) per watch
// (k8s.io/apiserver/pkg/endpoints/handlers/get.go), so a watch without
// timeoutSeconds it kept open for d proves --min-request-timeout above d/2,
// and every watch's own timeout at least that. It returns 0 when the run
// shows nothing (or the server does not say it is a kube-apiserver), and
// the watch that sets the floor.
func (e *Endings) selfTimeoutFloor(w *history.KubeWatchStream) (time.Duration, *history.KubeWatchStream) {
	if !strings.HasPrefix(e.h.Meta.Target.Version, "v1.") {
		return 0, nil
	}
	var best *history.KubeWatchStream
	for _, x := range e.h.KubeWatches {
		if x == w || x.Server != w.Server || x.Request.TimeoutSeconds != 0 || x.End != nil && x.End.Status != nil {
			continue
		}
		if best == nil || watchLife(x) > watchLife(best) {
			best = x
		}
	}
	if best == nil {
		return 0, nil
	}
	return max(0, watchLife(best)-selfTimeoutLatency) / 2, best
}

// watchLife is how long a watch was open as far as the history shows.
func watchLife(w *history.KubeWatchStream) time.Duration {
	if w.End != nil {
		return w.End.Time - w.Call
	}
	if n := len(w.Events); n > 0 {
		return w.Events[n-1].Time - w.Call
	}
	return 0
}

// EndingFigures are the counts of classes, as "ending_<class>" figures,
// every class present.
func EndingFigures(ends []Ending) map[string]float64 {
	out := map[string]float64{}
	for _, c := range EndingClasses {
		out["ending_"+string(c)] = 0
	}
	for _, e := range ends {
		out["ending_"+string(e.Class)]++
	}
	return out
}

func statusWords(st *history.KubeStatus) string {
	if st == nil {
		return "no status"
	}
	s := fmt.Sprint(st.Code)
	if st.Reason != "" {
		s += " " + st.Reason
	}
	return s
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }
