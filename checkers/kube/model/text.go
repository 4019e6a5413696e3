package model

import (
	"fmt"
	"strings"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// ObjRV is an object's RV, 0 when absent or not well-formed.
func ObjRV(o *history.Object) int64 {
	if o == nil {
		return 0
	}
	n, _ := facts.ParseRV(o.ResourceVersion)
	return n
}

// EventAt returns the evidence form of event i of watch w.
func EventAt(w *history.KubeWatchStream, i int) history.KubeEventAt {
	return history.KubeEventAt{Index: i, Event: w.Events[i]}
}

// EventText describes an event for messages: type, name, RV, value.
func EventText(e history.KubeEvent) string {
	switch {
	case e.Type == history.KubeError && e.Status != nil:
		return fmt.Sprintf("ERROR %d %s", e.Status.Code, e.Status.Reason)
	case e.Object == nil:
		return e.Type
	case e.Type == history.KubeBookmark:
		return fmt.Sprintf("BOOKMARK rv=%s", e.Object.ResourceVersion)
	}
	s := fmt.Sprintf("%s %s rv=%s", e.Type, e.Object.Name, e.Object.ResourceVersion)
	if e.Object.Value != "" {
		s += fmt.Sprintf(" value=%q", e.Object.Value)
	}
	return s
}

// StatusText describes a Status answer.
func StatusText(s *history.KubeStatus) string {
	if s == nil {
		return "no status"
	}
	if s.Reason != "" {
		return fmt.Sprintf("%d %s", s.Code, s.Reason)
	}
	return fmt.Sprint(s.Code)
}

// OpText describes an operation briefly: id, client, verb and name.
func OpText(o *history.KubeOperation) string {
	s := fmt.Sprintf("operation %d (client %d, %s", o.ID, o.Client, o.Request.Verb)
	if n := OpName(o); n != "" {
		s += " " + n
	}
	return s + ")"
}

// OpName is the object an operation is about ("" for a list).
func OpName(o *history.KubeOperation) string {
	if o.Request.Name != "" {
		return o.Request.Name
	}
	if o.Request.Object != nil && o.Request.Object.Name != "" {
		return o.Request.Object.Name
	}
	// A create with generateName: the name the server chose, if it answered.
	if o.Request.Verb == history.KubeCreate && o.Response != nil && o.Response.Object != nil {
		return o.Response.Object.Name
	}
	return ""
}

// IsExpired reports a 410 answer.
func IsExpired(s *history.KubeStatus) bool { return s != nil && s.Code == 410 }

// joinWords joins with commas, for messages.
func joinWords(parts []string) string { return strings.Join(parts, ", ") }
