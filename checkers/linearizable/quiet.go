package linearizable

import (
	"sort"

	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/history"
)

// Quiet spans keep the search from trying every write of unknown outcome
// at every free revision. A linearizable read at header revision r that
// shows key k with mod revision m, create revision c and version v proves,
// for every linearization in which that read fits:
//   - no write touched k at revisions m+1..r (else its mod would be later);
//   - exactly v puts and no delete touched k at revisions c..r; when the
//     acknowledged puts of k in c..r are already v, no other write did.
// A write of unknown outcome is therefore never applied to k inside such a
// span. This only removes placements that would fail later anyway, so it
// changes no verdict, only the time to reach it.
//
// Watches add spans and pins of their own (addWatches, pins); those trust
// the watches, as the comment on addWatches says.

// span is an inclusive range of absolute revisions.
type span struct{ lo, hi int64 }

// observation is one key as an acknowledged read saw it at revision rev.
type observation struct {
	rev int64
	kv  history.KV
	op  int64
}

// evidence is a raw quiet span with what proves it: a read (op) or a watch.
type evidence struct {
	span
	op, watch int64
}

// quietRecorder gathers, while the operations are classified, the
// observations and acknowledged puts quiet spans are made of.
type quietRecorder struct {
	obs       map[string][]observation
	ackedPuts map[string][]int64
	// raw holds the spans with their evidence, by key index; watches
	// counts the watches that vouched for something.
	raw     map[int32][]evidence
	watches int
}

func newQuietRecorder() *quietRecorder {
	return &quietRecorder{obs: map[string][]observation{}, ackedPuts: map[string][]int64{}, raw: map[int32][]evidence{}}
}

// add records an acknowledged operation: the keys its reads show at its
// header revision (reads at the current revision, and the reads of a txn
// branch that wrote nothing), and the keys it put.
func (q *quietRecorder) add(o *history.Operation) {
	resp := o.Response
	see := func(kvs []history.KV) {
		for _, kv := range kvs {
			q.obs[kv.Key] = append(q.obs[kv.Key], observation{resp.Revision, kv, o.ID})
		}
	}
	switch o.Request.Kind {
	case history.OpRange:
		if o.Request.Revision == 0 {
			see(resp.KVs)
		}
	case history.OpPut:
		q.ackedPuts[o.Request.Key] = append(q.ackedPuts[o.Request.Key], resp.Revision)
	case history.OpTxn:
		wrote := false
		var reads []*history.Response
		history.Executed(&o.Request, resp, func(r *history.Request, in *history.Response) {
			switch r.Kind {
			case history.OpPut:
				q.ackedPuts[r.Key] = append(q.ackedPuts[r.Key], resp.Revision)
				wrote = true
			case history.OpDelete:
				wrote = true
			case history.OpRange:
				if r.Revision == 0 {
					reads = append(reads, in)
				}
			}
		})
		if !wrote {
			for _, in := range reads {
				see(in.KVs)
			}
		}
	}
}

// addWatches adds what watches vouch for. A watch without filters that
// observed revisions first..last delivered, by its own guarantee
// (watch/reliable), every change of its keys in between; where it shows no
// event of key k, no write touched k. This trusts the watch: should a watch
// lose the event of a write whose outcome was unknown, that write finds no
// free revision and the search fails at the revision it left empty. The
// watch/* checks judge the watches themselves.
func (q *quietRecorder) addWatches(h *history.History, ks *keyspace) {
	for _, w := range h.Watches {
		if w.Request.NoPut || w.Request.NoDelete {
			continue
		}
		win := facts.ObservedWindow(w)
		if !win.Ok || win.Last < win.First {
			continue
		}
		lo, hi := ks.span(w.Request.Key, w.Request.End)
		if lo >= hi {
			continue
		}
		changed := map[string][]int64{}
		for _, r := range w.Responses {
			for _, ev := range r.Events {
				changed[ev.KV.Key] = append(changed[ev.KV.Key], ev.Revision())
			}
		}
		for i := lo; i < hi; i++ {
			revs := changed[ks.keys[i]]
			sort.Slice(revs, func(a, b int) bool { return revs[a] < revs[b] })
			from := win.First
			for _, r := range revs {
				if r > win.Last {
					break
				}
				if r > from {
					q.raw[i] = append(q.raw[i], evidence{span: span{from, r - 1}, watch: w.ID})
				}
				from = max(from, r+1)
			}
			if from <= win.Last {
				q.raw[i] = append(q.raw[i], evidence{span: span{from, win.Last}, watch: w.ID})
			}
		}
		q.watches++
	}
}

// pins records what watches saw written: at (revision, key), the value of
// a PUT event, or -1 for a DELETE. A write of unknown outcome applied there
// must match it. by names the watch each pin was taken from, so that an
// explanation can say which watch it trusts.
func (q *quietRecorder) pins(h *history.History, ks *keyspace) (out map[revKeyIdx]int32, by map[revKeyIdx]int64) {
	out, by = map[revKeyIdx]int32{}, map[revKeyIdx]int64{}
	for _, w := range h.Watches {
		for _, r := range w.Responses {
			for _, ev := range r.Events {
				i, ok := ks.index[ev.KV.Key]
				if !ok {
					continue
				}
				v := int32(-1)
				if ev.Type == history.EventPut {
					if v, ok = ks.valueIdx[ev.KV.Value]; !ok {
						v = -2 // a value no put of this history writes
					}
				}
				k := revKeyIdx{ev.Revision(), i}
				if _, dup := out[k]; !dup {
					out[k], by[k] = v, w.ID
				}
			}
		}
	}
	return out, by
}

type revKeyIdx struct {
	rev int64
	key int32
}

// spans sets, for each key of the keyspace, its quiet spans (sorted and
// merged) and the evidence behind them.
func (q *quietRecorder) spans(ks *keyspace) {
	for key, obs := range q.obs {
		i, ok := ks.index[key]
		if !ok {
			continue
		}
		puts := q.ackedPuts[key]
		sort.Slice(puts, func(a, b int) bool { return puts[a] < puts[b] })
		for _, o := range obs {
			if o.kv.ModRevision < o.rev {
				q.raw[i] = append(q.raw[i], evidence{span: span{o.kv.ModRevision + 1, o.rev}, op: o.op})
			}
			c := o.kv.CreateRevision
			if c <= 0 || c > o.rev {
				continue
			}
			lo := sort.Search(len(puts), func(j int) bool { return puts[j] >= c })
			hi := sort.Search(len(puts), func(j int) bool { return puts[j] > o.rev })
			if int64(hi-lo) == o.kv.Version {
				q.raw[i] = append(q.raw[i], evidence{span: span{c, o.rev}, op: o.op})
			}
		}
	}
	ks.quiet = make([][]span, len(ks.keys))
	for i, ev := range q.raw {
		sp := make([]span, len(ev))
		for j := range ev {
			sp[j] = ev[j].span
		}
		ks.quiet[i] = mergeSpans(sp)
	}
	ks.evidence = q.raw
}

func mergeSpans(raw []span) []span {
	sort.Slice(raw, func(a, b int) bool { return raw[a].lo < raw[b].lo })
	var out []span
	for _, s := range raw {
		if n := len(out); n > 0 && s.lo <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, s.hi)
			continue
		}
		out = append(out, s)
	}
	return out
}

// branchExcluded reports whether a branch about to be applied at revision
// rev writes a key that is quiet there, or writes it otherwise than a
// watch saw.
func (m kvModel) branchExcluded(s *kvState, br []history.Request, rev int64) bool {
	deleted := func(k int32) bool {
		if m.ks.quietAt(k, rev) {
			return true
		}
		v, ok := m.ks.pins[revKeyIdx{rev, k}]
		return ok && v != -1
	}
	for i := range br {
		switch br[i].Kind {
		case history.OpPut:
			k := m.ks.index[br[i].Key]
			if m.ks.quietAt(k, rev) {
				return true
			}
			value := m.ks.valueIdx[br[i].Value]
			if br[i].IgnoreValue {
				value = s.get(k).value
			}
			if v, ok := m.ks.pins[revKeyIdx{rev, k}]; ok && v != value {
				return true
			}
		case history.OpDelete:
			lo, hi := m.ks.span(br[i].Key, br[i].End)
			for k := lo; k < hi; k++ {
				if s.get(k).create != 0 && deleted(k) {
					return true
				}
			}
		case history.OpLeaseRevoke:
			for _, k := range m.attached(s, br[i].Lease) {
				if deleted(k) {
					return true
				}
			}
		}
	}
	return false
}

// quietAt reports whether key i is proven untouched by unacknowledged
// writes at revision rev.
func (ks *keyspace) quietAt(i int32, rev int64) bool {
	sp := ks.quiet[i]
	j := sort.Search(len(sp), func(j int) bool { return sp[j].hi >= rev })
	return j < len(sp) && sp[j].lo <= rev
}
