package conformance

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/status"
)

// normalizer rewrites one probe's messages so that two servers (or two
// runs) can be compared: keys without the probe's prefix, revisions
// relative to the revision the probe started at, server-chosen ids as
// tokens in order of appearance, and what legitimately differs between
// servers masked (remaining TTLs) or left out (member id, cluster id,
// raft term).
type normalizer struct {
	prefix, end string
	base        int64
	tokens      Tokens
}

func newNormalizer(prefix string, base int64) *normalizer {
	return &normalizer{prefix: prefix, end: clientv3.GetPrefixRangeEnd(prefix), base: base, tokens: Tokens{}}
}

// bytesFields hold []byte, which encoding/json wrote as base64.
var bytesFields = map[string]bool{"key": true, "keys": true, "range_end": true, "value": true, "Value": true, "Key": true, "RangeEnd": true, "prev_kv_key": true}

// revisionFields hold store revisions.
var revisionFields = map[string]bool{"revision": true, "mod_revision": true, "create_revision": true,
	"compact_revision": true, "start_revision": true, "min_mod_revision": true, "max_mod_revision": true,
	"min_create_revision": true, "max_create_revision": true, "ModRevision": true, "CreateRevision": true}

// unorderedFields are lists whose order the API leaves open: the keys a
// lease's time-to-live lists come from a map (etcd v3.4.25 and v3.7.3 were
// each seen answering [b a] where another run answered [a b]).
var unorderedFields = map[string]bool{"keys": true}

// tokenFields hold ids a server picks; maskedFields differ by server.
var tokenFields = map[string]string{"ID": "lease", "lease": "lease", "Lease": "lease", "watch_id": "watch", "IDs": "lease"}
var maskedFields = map[string]bool{"TTL": true}

// serverIdentity are the header fields that name the server (cluster,
// member, raft term): they differ by server by design, and a server that
// leaves them empty (kine) differs in nothing a client relies on for
// consistency, so transcripts leave them out.
var serverIdentity = map[string]bool{"cluster_id": true, "member_id": true, "raft_term": true}

func (n *normalizer) step(s rawStep) Step {
	out := Step{Call: s.call}
	if s.req != nil {
		out.Request = n.json(s.req, false)
	}
	if s.resp != nil {
		out.Answer = n.json(withWatchID(s.call, s.resp), true)
	}
	if s.err != nil {
		st := status.Convert(s.err)
		out.Error = fmt.Sprintf("%s: %s", st.Code(), st.Message())
	}
	// Keep-alives come as the client's timer fires: how many is timing.
	out.Unstable = strings.HasPrefix(s.call, "LeaseKeepAlive")
	return out
}

func (n *normalizer) json(v any, answer bool) json.RawMessage {
	b, err := json.Marshal(n.walk("", v, answer))
	if err != nil {
		return json.RawMessage(fmt.Sprintf("%q", err.Error()))
	}
	return b
}

func (n *normalizer) walk(field string, v any, answer bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if serverIdentity[k] {
				continue
			}
			out[k] = n.walk(k, e, answer)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = n.walk(field, e, answer)
		}
		if unorderedFields[field] {
			sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
		}
		return out
	case string:
		if bytesFields[field] {
			if b, err := base64.StdEncoding.DecodeString(x); err == nil {
				return n.key(string(b))
			}
		}
		return x
	case float64:
		switch {
		case maskedFields[field] && (answer || field != "TTL"):
			return "*"
		case revisionFields[field] && x > 0:
			return n.rev(int64(x))
		case tokenFields[field] != "" && (x != 0 || field == "watch_id"): // a watch id of 0 is an id (see withWatchID)
			return n.token(tokenFields[field], fmt.Sprint(int64(x)))
		}
		return x
	}
	return v
}

// key shows a key of the probe without its prefix ("$/" stands for it).
func (n *normalizer) key(k string) string {
	if k == n.end {
		return "$end"
	}
	if strings.HasPrefix(k, n.prefix) {
		return "$/" + strings.TrimPrefix(k, n.prefix)
	}
	if k == "\x00" {
		return "\\x00"
	}
	return k
}

// rev writes a revision relative to the probe's base: "base+3".
func (n *normalizer) rev(r int64) string {
	d := r - n.base
	if d >= 0 {
		return fmt.Sprintf("base+%d", d)
	}
	return fmt.Sprintf("base%d", d)
}

func (n *normalizer) token(kind, raw string) string { return n.tokens.Token(kind, raw) }

// Tokens names the ids a server picks ("lease#1", "uid#2") in order of
// appearance, per kind, so that two servers' transcripts compare; the
// zero value is not usable: start from Tokens{}.
type Tokens map[string]map[string]string

// Token is the name of the id raw of this kind: kind#N, N counting the
// distinct ids of the kind in the order Token first saw them.
func (ts Tokens) Token(kind, raw string) string {
	m := ts[kind]
	if m == nil {
		m = map[string]string{}
		ts[kind] = m
	}
	if t, ok := m[raw]; ok {
		return t
	}
	t := fmt.Sprintf("%s#%d", kind, len(m)+1)
	m[raw] = t
	return t
}

// diff lists where two transcripts differ, comparing the unary calls in
// order and each stream's messages in order (a stream message and a call
// may interleave differently from run to run). Unstable steps are left out.
func diff(got, want []Step) []string {
	split := func(ss []Step) map[string][]Step {
		m := map[string][]Step{}
		for _, s := range ss {
			if s.Unstable {
				continue
			}
			lane := "calls"
			if i := strings.IndexByte(s.Call, '.'); i > 0 {
				lane = s.Call[:i] + " stream"
			}
			m[lane] = append(m[lane], s)
		}
		return m
	}
	g, w := split(got), split(want)
	lanes := map[string]bool{}
	for k := range g {
		lanes[k] = true
	}
	for k := range w {
		lanes[k] = true
	}
	var names []string
	for k := range lanes {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, lane := range names {
		a, b := g[lane], w[lane]
		for i := 0; i < max(len(a), len(b)); i++ {
			switch {
			case i >= len(a):
				out = append(out, fmt.Sprintf("%s step %d: the target sent nothing; the reference: %s", lane, i+1, b[i].String()))
			case i >= len(b):
				out = append(out, fmt.Sprintf("%s step %d: the target: %s; the reference sent nothing", lane, i+1, a[i].String()))
			case a[i].String() != b[i].String():
				out = append(out, fmt.Sprintf("%s step %d: the target: %s; the reference: %s", lane, i+1, a[i].String(), b[i].String()))
			}
		}
	}
	return out
}

// String is the step on one line: the call, its request, and its answer or
// error ("Put {...} -> {...}").
func (s Step) String() string {
	t := s.Call
	if len(s.Request) > 0 {
		t += " " + string(s.Request)
	}
	if len(s.Answer) > 0 {
		t += " -> " + string(s.Answer)
	}
	if s.Error != "" {
		t += " -> error " + s.Error
	}
	return t
}

// withWatchID gives a watch response its watch_id when JSON left it out:
// etcd numbers a stream's watches from 0, and 0 is omitted, while another
// server may number them from 1. Both become the token watch#1.
func withWatchID(call string, resp any) any {
	m, ok := resp.(map[string]any)
	if !ok || !strings.HasPrefix(call, "Watch.") {
		return resp
	}
	if _, has := m["watch_id"]; has {
		return m
	}
	out := maps.Clone(m)
	out["watch_id"] = float64(0)
	return out
}
