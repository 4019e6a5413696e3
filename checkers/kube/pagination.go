package kube

import (
	"fmt"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/checkers/facts"
	"github.com/vigil-suite/vigil/checkers/kube/model"
	"github.com/vigil-suite/vigil/history"
)

// pageChain is one paginated list: its first page (a list with a limit)
// and the pages its continue tokens fetched, in order.
type pageChain struct {
	pages []*history.KubeOperation
	// complete: the last page's continue is empty.
	complete bool
	// expired is the next-page request answered 410, if any.
	expired *history.KubeOperation
}

// pageChains follows every paginated list through its continue tokens. A
// token is followed by the first request that sent it after the page that
// carried it returned, by the same client (tokens are not unique: two
// lists at one RV resuming at one key get the same token).
func pageChains(h *history.History) []pageChain {
	byToken := map[string][]*history.KubeOperation{}
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Request.Verb == history.KubeList && o.Request.Continue != "" {
			byToken[o.Request.Continue] = append(byToken[o.Request.Continue], o)
		}
	}
	var out []pageChain
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Request.Verb != history.KubeList || o.Request.Limit <= 0 || o.Request.Continue != "" || o.Response == nil {
			continue
		}
		out = append(out, followChain(o, byToken, len(h.KubeOps)))
	}
	return out
}

func followChain(first *history.KubeOperation, byToken map[string][]*history.KubeOperation, bound int) pageChain {
	ch := pageChain{pages: []*history.KubeOperation{first}}
	cur := first
	for n := 0; n < bound; n++ {
		tok := cur.Response.Continue
		if tok == "" {
			ch.complete = true
			return ch
		}
		var next *history.KubeOperation
		for _, o := range byToken[tok] {
			if o.Client == cur.Client && o.Call >= cur.Return {
				next = o
				break
			}
		}
		switch {
		case next == nil:
			return ch
		case model.IsExpired(next.Status):
			ch.expired = next
			return ch
		case next.Response == nil:
			return ch
		}
		ch.pages = append(ch.pages, next)
		cur = next
	}
	return ch
}

// CheckPagination is kube/pagination: every page of a paginated list
// carries the first page's list RV; no page holds more items than its
// limit (lists at RV "0" may ignore the limit); the pages come in key order
// with no object twice; and the union of the pages is the collection's
// state at that RV — complete when the last page's continue is empty (a
// page may hold fewer items than the limit, even none), each item as of
// that RV when the client stopped early.
func CheckPagination(h *history.History, cfg check.Config) check.Result {
	return checkPagination(model.Build(h), cfg)
}

func checkPagination(m *model.Model, cfg check.Config) check.Result {
	h := m.History
	col := check.NewCollector(cfg)
	chains := pageChains(h)
	pages, complete := 0, 0
	for _, ch := range chains {
		first := ch.pages[0]
		pages += len(ch.pages)
		if ch.complete {
			complete++
		}
		rv0, ok := facts.ParseRV(first.Response.ListRV)
		var union []history.Object
		var pageOf []int
		lastName := ""
		for k, p := range ch.pages {
			r := p.Response
			if k > 0 && r.ListRV != first.Response.ListRV {
				col.Add(check.Violation{Guarantee: ErrPagination,
					Message: fmt.Sprintf("page %d of the list begun by %s (%s) carries RV %s, not the first page's %s",
						k+1, model.OpText(first), model.OpText(p), r.ListRV, first.Response.ListRV),
					Client: p.Client, Want: first.Response.ListRV, Got: r.ListRV, Operations: []int64{first.ID, p.ID}})
			}
			if lim := p.Request.Limit; first.Request.ResourceVersion != "0" && lim > 0 && int64(len(r.Items)) > lim {
				col.Add(check.Violation{Guarantee: ErrPagination,
					Message: fmt.Sprintf("page %d of the list begun by %s (%s) holds %d items, above the limit %d",
						k+1, model.OpText(first), model.OpText(p), len(r.Items), lim),
					Client: p.Client, Want: fmt.Sprintf("<= %d", lim), Got: fmt.Sprint(len(r.Items)),
					Operations: []int64{p.ID}})
			}
			for j := range r.Items {
				if name := r.Items[j].Name; lastName != "" && name <= lastName && k > 0 && j == 0 {
					col.Add(check.Violation{Guarantee: ErrPagination,
						Message: fmt.Sprintf("page %d of the list begun by %s (%s) starts at %s, not after %s, the last "+
							"object of the page before", k+1, model.OpText(first), model.OpText(p), name, lastName),
						Client: p.Client, Key: name, Want: "after " + lastName, Got: name, Operations: []int64{p.ID}})
				}
				lastName = r.Items[j].Name
				union = append(union, r.Items[j])
				pageOf = append(pageOf, k)
			}
		}
		if !ok {
			continue
		}
		sel, err := model.ParseSelectors(first.Request.LabelSelector, first.Request.FieldSelector)
		if err != nil {
			continue
		}
		sc := m.VerifyState(union, sel, rv0, rv0, ch.complete)
		for _, iss := range sc.Issues {
			text, refs := m.IssueText(iss, union, fmt.Sprint(rv0))
			where := ""
			ids := []int64{first.ID}
			if iss.Item >= 0 {
				p := ch.pages[pageOf[iss.Item]]
				where = fmt.Sprintf(" (page %d, %s)", pageOf[iss.Item]+1, model.OpText(p))
				if p != first {
					ids = append(ids, p.ID)
				}
			} else {
				ids = append(ids, ch.pages[len(ch.pages)-1].ID)
				where = fmt.Sprintf(" (%d pages, the last with an empty continue)", len(ch.pages))
			}
			v := check.Violation{Guarantee: ErrPagination,
				Message: fmt.Sprintf("the list begun by %s at RV %d%s: %s", model.OpText(first), rv0, where, text),
				Client:  first.Client, Key: iss.Name, Revision: iss.Rv, Operations: ids}
			m.Evidence(&v, refs...)
			col.Add(v)
		}
	}
	figures := map[string]float64{"lists": float64(len(chains)), "pages": float64(pages), "complete_lists": float64(complete)}
	if len(chains) == 0 {
		return check.Skip(NamePagination, kubeSkipReason(h, "no list asked for a limit"), figures)
	}
	return col.Result(NamePagination, figures)
}

// CheckContinueExpired is kube/continue-expired: a next-page request
// whose continue token expired is answered 410 with reason Expired and a
// fresh continue token (the Status's metadata.continue); the pages that
// token fetches hold only objects after the last one the list had
// returned, and none it returned already.
func CheckContinueExpired(h *history.History, cfg check.Config) check.Result {
	col := check.NewCollector(cfg)
	byToken := map[string][]*history.KubeOperation{}
	for i := range h.KubeOps {
		o := &h.KubeOps[i]
		if o.Request.Verb == history.KubeList && o.Request.Continue != "" {
			byToken[o.Request.Continue] = append(byToken[o.Request.Continue], o)
		}
	}
	judged, followed := 0, 0
	for _, ch := range pageChains(h) {
		x := ch.expired
		if x == nil {
			continue
		}
		judged++
		base := check.Violation{Guarantee: ErrContinueExpired, Client: x.Client, Operations: []int64{ch.pages[0].ID, x.ID}}
		if x.Status.Reason != "Expired" {
			v := base
			v.Message = fmt.Sprintf("%s with an expired continue token was answered %s, not 410 Expired", model.OpText(x),
				model.StatusText(x.Status))
			v.Want, v.Got = "410 Expired", model.StatusText(x.Status)
			col.Add(v)
		}
		if x.Status.Continue == "" {
			v := base
			v.Message = fmt.Sprintf("%s with an expired continue token was answered 410 without a fresh continue token",
				model.OpText(x))
			v.Want, v.Got = "a fresh inconsistent token", "none"
			col.Add(v)
			continue
		}
		returned := map[string]int64{}
		last := ""
		for _, p := range ch.pages {
			for _, it := range p.Response.Items {
				returned[it.Name] = p.ID
				last = max(last, it.Name)
			}
		}
		var next *history.KubeOperation
		for _, o := range byToken[x.Status.Continue] {
			if o.Client == x.Client && o.Call >= x.Return && o.Response != nil {
				next = o
				break
			}
		}
		if next == nil {
			continue
		}
		followed++
		rest := followChain(next, byToken, len(h.KubeOps))
		for _, p := range append([]*history.KubeOperation{next}, rest.pages[1:]...) {
			for _, it := range p.Response.Items {
				if it.Name > last {
					if _, again := returned[it.Name]; !again {
						continue
					}
				}
				v := base
				v.Key = it.Name
				v.Operations = append(v.Operations, p.ID)
				v.Message = fmt.Sprintf("%s, fetched with the fresh token of %s, returned %s, not after %s, the last object "+
					"the list had returned", model.OpText(p), model.OpText(x), it.Name, last)
				v.Want, v.Got = "after "+last, it.Name
				col.Add(v)
			}
		}
	}
	figures := map[string]float64{"expired_continues": float64(judged), "fresh_tokens_followed": float64(followed)}
	if judged == 0 {
		return check.Skip(NameContinueExpired, kubeSkipReason(h, "no continue token expired (no next page was answered 410)"), figures)
	}
	return col.Result(NameContinueExpired, figures)
}
