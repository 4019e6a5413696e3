package kubeprobes

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/vigil-suite/vigil/suites/conformance"
)

// normalizer rewrites one Kubernetes probe's requests and answers so
// two servers compare: the namespace as {ns}; uids and continue tokens as
// tokens in order of appearance; resourceVersions as symbols — "w3" for
// the RV of the probe's third distinct object version, "w3+" for an RV
// between that and the next one (a bookmark's RV, which other writes on
// the server may move; a list's own RV is "w3+" from w3 on, see listRV),
// "w0+" below the first; creation times,
// managed fields and messages masked.
type normalizer struct {
	ns     string
	rvs    []int64 // the object RVs of the transcript, sorted
	tokens conformance.Tokens
	// generated are the names the server made up from a generateName,
	// each with its token, longest first.
	generated [][2]string
}

func newNormalizer(ns string, steps []rawStep) *normalizer {
	n := &normalizer{ns: ns, tokens: conformance.Tokens{}}
	seen := map[int64]bool{}
	var collect func(v any)
	collect = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if meta, ok := x["metadata"].(map[string]any); ok {
				gen, _ := meta["generateName"].(string)
				if name, _ := meta["name"].(string); gen != "" && strings.HasPrefix(name, gen) && len(name) > len(gen) && !slices.ContainsFunc(n.generated, func(g [2]string) bool { return g[0] == name }) {
					n.generated = append(n.generated, [2]string{name, n.tokens.Token("generated-name", name)})
				}
				if _, named := meta["name"]; named {
					if rv, ok := meta["resourceVersion"].(string); ok {
						if r, err := strconv.ParseInt(rv, 10, 64); err == nil {
							seen[r] = true
						}
					}
				}
			}
			for _, e := range x {
				collect(e)
			}
		case []any:
			for _, e := range x {
				collect(e)
			}
		}
	}
	for _, s := range steps {
		var v any
		if json.Unmarshal(s.answer, &v) == nil {
			collect(v)
		}
	}
	for r := range seen {
		n.rvs = append(n.rvs, r)
	}
	slices.SortFunc(n.generated, func(a, b [2]string) int { return len(b[0]) - len(a[0]) })
	slices.Sort(n.rvs)
	return n
}

// rv writes a resourceVersion as its symbol.
func (n *normalizer) rv(s string) string {
	r, err := strconv.ParseInt(s, 10, 64)
	if err != nil || s == "0" {
		return s
	}
	below := 0
	for i, w := range n.rvs {
		if w == r {
			return fmt.Sprintf("w%d", i+1)
		}
		if w < r {
			below = i + 1
		}
	}
	return fmt.Sprintf("w%d+", below)
}

// listRV writes a list's own resourceVersion: "wN+" for any RV from the
// probe's Nth object version up to the next. A list (or a page) answered
// from the current state carries the store's revision, which writes to
// other resources move: seen at w2 exactly on one run and above it on the
// next (kube-apiserver v1.36.3 with its watch cache, a NotOlderThan list),
// it says the same.
func (n *normalizer) listRV(s string) string {
	sym := n.rv(s)
	if strings.HasPrefix(sym, "w") && !strings.HasSuffix(sym, "+") {
		return sym + "+"
	}
	return sym
}

var maskedFields = map[string]bool{"creationTimestamp": true, "managedFields": true, "deletionTimestamp": true,
	"message": true, "selfLink": true}

func (n *normalizer) walk(field string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k == "retryAfterSeconds" {
				continue // a hint some servers add to a 504, others not
			}
			if maskedFields[k] {
				out[k] = "*"
				continue
			}
			if rv, ok := e.(string); ok && k == "resourceVersion" && field == "metadata" && x["name"] == nil {
				out[k] = n.listRV(rv)
				continue
			}
			out[k] = n.walk(k, e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = n.walk(field, e)
		}
		return out
	case string:
		switch field {
		case "resourceVersion":
			return n.rv(x)
		case "uid":
			return n.tokens.Token("uid", x)
		case "continue":
			if x == "" {
				return x
			}
			return n.tokens.Token("continue", x)
		case "namespace":
			if x == n.ns {
				return "{ns}"
			}
		}
		return n.names(strings.ReplaceAll(x, n.ns, "{ns}"))
	}
	return v
}

// names writes the names the server generated as their tokens.
func (n *normalizer) names(s string) string {
	for _, g := range n.generated {
		s = strings.ReplaceAll(s, g[0], g[1])
	}
	return s
}

func (n *normalizer) json(v any) json.RawMessage {
	b, err := json.Marshal(n.walk("", v))
	if err != nil {
		return json.RawMessage(strconv.Quote(err.Error()))
	}
	return b
}

func (n *normalizer) step(s rawStep) conformance.Step {
	out := conformance.Step{Call: s.call}
	if s.method != "" {
		req := map[string]any{"method": s.method, "path": strings.ReplaceAll(s.path, n.ns, "{ns}")}
		if s.ctype != "" {
			req["contentType"] = s.ctype
		}
		if len(s.query) > 0 {
			q := map[string]any{}
			for k, v := range s.query {
				q[k] = strings.Join(v, ",")
			}
			req["query"] = q
		}
		if s.body != nil {
			b, _ := json.Marshal(s.body)
			var v any
			_ = json.Unmarshal(b, &v)
			req["body"] = v
		}
		out.Request = n.json(req)
	}
	if len(s.answer) > 0 {
		var v any
		if json.Unmarshal(s.answer, &v) == nil {
			if s.event != "" {
				v = map[string]any{"type": s.event, "object": v}
			}
			out.Answer = n.json(v)
		} else {
			out.Answer = json.RawMessage(strconv.Quote(trimTo(string(s.answer), 200)))
		}
	} else if s.event != "" {
		out.Answer = n.json(map[string]any{"type": s.event})
	}
	if s.code != 0 && (s.code < 200 || s.code > 299) {
		out.Error = fmt.Sprintf("HTTP %d", s.code)
	}
	if s.note != "" {
		out.Answer = n.json(map[string]any{"note": s.note})
	}
	// Bookmarks come as the server's timers fire: whether one came is
	// timing, not behaviour.
	out.Unstable = s.event == "BOOKMARK" && !initialEventsEnd(s.answer) ||
		// resourceVersion=0 reads any state the server holds, however old.
		s.method == http.MethodGet && s.query.Get("resourceVersion") == "0" && s.query.Get("watch") == ""
	return out
}

func initialEventsEnd(raw []byte) bool {
	var o KObj
	return json.Unmarshal(raw, &o) == nil && o.Metadata.Annotations["k8s.io/initial-events-end"] == "true"
}
