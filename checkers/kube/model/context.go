package model

import "github.com/vigil-suite/vigil/history"

// A segment of a long run (history.Segment) holds, besides its own
// records, a context: the writes before it that its watches and reads may
// show, and each client's last watch of the segment before. The model
// reads them as facts, so that a watch that began in an earlier segment,
// or resumed one of its watches, is judged against every change it owes;
// no check judges a context record itself. Each object's changes are
// known from its Floor (the oldest change the context holds) on: below,
// its states and events are not judged, and its state there counts as
// unknown (not Settled).

// writeOp is a Kubernetes call whose write the model reads.
type writeOp struct {
	op      *history.KubeOperation
	context bool
}

// writeOps are the Kubernetes calls whose writes the model reads: the
// context's first (they come before), then the history's own.
func (m *Model) writeOps() []writeOp {
	var out []writeOp
	if c := m.History.Context; c != nil {
		for i := range c.KubeOps {
			out = append(out, writeOp{&c.KubeOps[i], true})
		}
	}
	for i := range m.History.KubeOps {
		out = append(out, writeOp{&m.History.KubeOps[i], false})
	}
	return out
}

// kubeWatches are the watches whose events are facts: the history's own
// and its context's.
func (m *Model) kubeWatches() []*history.KubeWatchStream {
	c := m.History.Context
	if c == nil || len(c.KubeWatches) == 0 {
		return m.History.KubeWatches
	}
	return append(append([]*history.KubeWatchStream{}, m.History.KubeWatches...), c.KubeWatches...)
}

// kubeWatchByID finds a watch of the history or of its context.
func (m *Model) kubeWatchByID(id int64) *history.KubeWatchStream {
	if w := m.History.KubeWatchByID(id); w != nil {
		return w
	}
	if c := m.History.Context; c != nil {
		for _, w := range c.KubeWatches {
			if w.ID == id {
				return w
			}
		}
	}
	return nil
}

// setFloors sets each object's Floor: the lowest RV of a change that a
// context write of the segments before made. The writes a segment sent
// that the next one answered are in its context too (its answers may show
// them), but they come after its own: they set no Floor.
func (m *Model) setFloors() {
	seg := m.History.Meta.Segment
	if seg == nil {
		return
	}
	for _, w := range m.Writes {
		if !w.Context || w.Rv == 0 || w.Op.Call >= seg.Start {
			continue
		}
		if o := m.Objs[w.Name]; o.Floor == 0 || w.Rv < o.Floor {
			o.Floor = w.Rv
		}
	}
}

// Unknown reports whether the history cannot know the object's state at
// rv: it lies below the object's Floor.
func (o *Object) Unknown(rv int64) bool { return o != nil && rv < o.Floor }
