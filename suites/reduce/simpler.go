package reduce

import (
	"slices"

	"github.com/vigil-suite/vigil/history"
)

// Simpler lists the steps one simplification away from s, most reducing
// first: a txn without one of its compares or one operation of a branch,
// a nested txn replaced by the branch it would take, a request without
// one of its options, a shorter value.
func Simpler(s Step) []Step {
	var out []Step
	for _, r := range simplerReqs(s.Req) {
		c := s
		c.Req = r
		out = append(out, c)
	}
	return out
}

func simplerReqs(r history.Request) []history.Request {
	var out []history.Request
	with := func(f func(*history.Request)) {
		c := clone(r)
		f(&c)
		out = append(out, normal(c))
	}
	switch r.Kind {
	case history.OpTxn:
		for i := range r.Compares {
			with(func(c *history.Request) { c.Compares = slices.Delete(c.Compares, i, i+1) })
		}
		for _, side := range []bool{true, false} {
			br := r.Branch(side)
			for i := range br {
				with(func(c *history.Request) { setBranch(c, side, slices.Delete(c.Branch(side), i, i+1)) })
				if br[i].Kind == history.OpTxn {
					// The nested txn's success branch, spliced in its place.
					with(func(c *history.Request) {
						b := c.Branch(side)
						inner := b[i].Success
						setBranch(c, side, slices.Concat(b[:i], inner, b[i+1:]))
					})
				}
				for _, sub := range simplerReqs(br[i]) {
					with(func(c *history.Request) { c.Branch(side)[i] = sub })
				}
			}
		}
	case history.OpRange:
		opts := []struct {
			set bool
			off func(*history.Request)
		}{
			{r.End != "", func(c *history.Request) { c.End = "" }},
			{r.Limit != 0, func(c *history.Request) { c.Limit = 0 }},
			{r.Serializable, func(c *history.Request) { c.Serializable = false }},
			{r.KeysOnly, func(c *history.Request) { c.KeysOnly = false }},
			{r.CountOnly, func(c *history.Request) { c.CountOnly = false }},
			{r.SortOrder != "" || r.SortTarget != "", func(c *history.Request) { c.SortOrder, c.SortTarget = "", "" }},
			{r.MinModRevision != 0, func(c *history.Request) { c.MinModRevision = 0 }},
			{r.MaxModRevision != 0, func(c *history.Request) { c.MaxModRevision = 0 }},
			{r.MinCreateRevision != 0, func(c *history.Request) { c.MinCreateRevision = 0 }},
			{r.MaxCreateRevision != 0, func(c *history.Request) { c.MaxCreateRevision = 0 }},
			{r.Revision != 0, func(c *history.Request) { c.Revision = 0 }},
		}
		for _, o := range opts {
			if o.set {
				with(o.off)
			}
		}
	case history.OpPut:
		if r.PrevKV {
			with(func(c *history.Request) { c.PrevKV = false })
		}
		if r.Lease != 0 {
			with(func(c *history.Request) { c.Lease = 0 })
		}
		if r.IgnoreLease {
			with(func(c *history.Request) { c.IgnoreLease = false })
		}
		if len(r.Value) > 1 {
			with(func(c *history.Request) { c.Value = "v" })
		}
	case history.OpDelete:
		if r.PrevKV {
			with(func(c *history.Request) { c.PrevKV = false })
		}
		if r.End != "" {
			with(func(c *history.Request) { c.End = "" })
		}
	}
	return out
}

func setBranch(r *history.Request, success bool, br []history.Request) {
	if success {
		r.Success = br
	} else {
		r.Failure = br
	}
}

// clone copies a request deeply, so that a candidate never shares a
// branch with the request it came from.
func clone(r history.Request) history.Request {
	r.Compares = slices.Clone(r.Compares)
	r.Success = cloneAll(r.Success)
	r.Failure = cloneAll(r.Failure)
	return r
}

func cloneAll(rs []history.Request) []history.Request {
	if rs == nil {
		return nil
	}
	out := make([]history.Request, len(rs))
	for i := range rs {
		out[i] = clone(rs[i])
	}
	return out
}

// normal leaves no empty list behind a removal (nil, as the request would
// be written from scratch).
func normal(r history.Request) history.Request {
	if len(r.Compares) == 0 {
		r.Compares = nil
	}
	if len(r.Success) == 0 {
		r.Success = nil
	}
	if len(r.Failure) == 0 {
		r.Failure = nil
	}
	for i := range r.Success {
		r.Success[i] = normal(r.Success[i])
	}
	for i := range r.Failure {
		r.Failure[i] = normal(r.Failure[i])
	}
	return r
}
