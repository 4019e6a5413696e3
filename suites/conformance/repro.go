package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// reproData is what a reproduction is written from: the probe's requests
// as protobuf JSON, and what turns its run-specific values into symbols.
type reproData struct {
	steps  []rawStep
	prefix string
	base   int64
}

// Reproduction is a standalone Go program (package main) that sends the
// probe's requests again, in order, to a server, checks every answer
// against what vigil expected, and exits 1 printing the expectation while
// the server still breaks it, 0 once it answers as expected (2 when it
// cannot run: the server unreachable). For a probe of another API it is
// the program its family attached (see SetReproduction; a Kubernetes
// probe's needs only the standard library and only replays).
//
// An etcd probe's expected answers are the reference server's (see
// CompareWithReference), or, with no reference, the tested server's own
// when the probe passed there; its requests are the ones the probe sent
// to the server whose answers are expected. Run-specific values are
// symbols the program resolves itself: a fresh key prefix, revisions
// relative to the revision it starts at, the lease and watch ids the
// server hands it. Answers are compared as vigil compares transcripts:
// the server's identity in headers, remaining TTLs and the fields a
// limitation masks left out, the keys of a lease in any order. The
// program needs only go.etcd.io/etcd/api/v3, grpc and protobuf. "" if
// the result holds no transcript to reproduce.
func (r Result) Reproduction() string { return r.reproduction(false) }

// ReproductionTest is Reproduction as a Go test file (package repro_test):
// TestRepro<Probe> fails with the expectation while the server breaks
// it. The server is $VIGIL_REPRO_ENDPOINT (default 127.0.0.1:2379).
func (r Result) ReproductionTest() string { return r.reproduction(true) }

// ReproductionTestName is the test ReproductionTest holds: TestRepro and
// the probe's name in camel case (TestReproWatchFilterNoput).
func (r Result) ReproductionTestName() string {
	name := "TestRepro"
	for _, w := range strings.FieldsFunc(r.Name, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) }) {
		name += strings.ToUpper(w[:1]) + w[1:]
	}
	return name
}

func (r Result) reproduction(test bool) string {
	if r.program != nil {
		return r.program(r)
	}
	if r.repro == nil {
		return ""
	}
	expected, from := r.ref, "a reference etcd's answers to the same requests, as vigil recorded them"
	if expected == nil && r.Verdict == Pass {
		expected, from = r.repro, "the answers this server gave vigil when the probe passed"
	}
	// The tested server's answers, shown beside the expected ones: per
	// lane (the unary calls, each stream), in order.
	tested := map[string][]string{}
	tg := newReproGen(r.repro)
	for _, s := range r.repro.replayed() {
		got := tg.answer(s)
		tested[lane(s.call)] = append(tested[lane(s.call)], got)
	}
	source := expected
	if source == nil {
		source = r.repro // nothing to check against: replay what was sent
	}
	g := newReproGen(source)
	var steps []reproStep
	seen := map[string]int{}
	for _, s := range source.replayed() {
		st := reproStep{Call: s.call}
		if s.reqPB != nil {
			st.Msg = g.symbolize(s.call, s.reqPB)
		}
		want := g.answer(s)
		if expected != nil {
			st.Want = want
		}
		l := lane(s.call)
		if i := seen[l]; i < len(tested[l]) {
			st.Got = tested[l][i]
		}
		seen[l]++
		steps = append(steps, st)
	}
	var mask []string
	for _, m := range r.mask {
		mask = append(mask, lowerCamel(m))
	}
	// A test file's names end in the probe's, so that several share a package.
	suffix := strings.TrimPrefix(r.ReproductionTestName(), "TestRepro")
	data := map[string]any{"Info": r.Info, "Verdict": r.Verdict, "Failure": strings.TrimSpace(r.Failure + "\n" + r.Reason),
		"Steps": steps, "Checked": expected != nil, "From": from, "Mask": mask, "Test": test, "Func": r.ReproductionTestName(), "S": ""}
	if test {
		data["S"] = suffix
	}
	var b bytes.Buffer
	err := reproTemplate.Execute(&b, data)
	if err != nil {
		return "// " + err.Error()
	}
	return b.String()
}

// replayed are the steps a reproduction sends or reads again: not the
// keep-alives (they follow the client's timer, not the probe, and vigil
// does not compare them) nor a stream's end.
func (d *reproData) replayed() []rawStep {
	var out []rawStep
	for _, s := range d.steps {
		if strings.HasPrefix(s.call, "LeaseKeepAlive") || s.err != nil && s.recvOnly {
			continue
		}
		out = append(out, s)
	}
	return out
}

// lane is where a step is ordered: the unary calls, or one stream.
func lane(call string) string {
	if i := strings.IndexByte(call, '.'); i > 0 {
		return call[:i]
	}
	return "calls"
}

// lowerCamel is a protobuf field's JSON name ("mod_revision" ->
// "modRevision"), as the program's answers spell it.
func lowerCamel(f string) string {
	parts := strings.Split(f, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

type reproStep struct {
	Call string
	Msg  json.RawMessage
	// Want is the expected answer, symbolized ("" when unchecked); Got is
	// the tested server's, for comparison.
	Want, Got string
}

// reproGen turns values of one run into the program's symbols.
type reproGen struct {
	data            *reproData
	leases, watches map[string]string
}

func newReproGen(d *reproData) *reproGen {
	return &reproGen{data: d, leases: map[string]string{}, watches: map[string]string{}}
}

// answer is a step's answer as symbols (learning the ids it hands out),
// or its error as "error: CODE: message".
func (g *reproGen) answer(s rawStep) string {
	switch {
	case s.err != nil:
		return "error: " + Code(s.err)
	case s.respPB != nil:
		g.learn(s.call, s.respPB)
		return string(g.symbolize(s.call, s.respPB))
	}
	return ""
}

var reproBytesFields = map[string]bool{"key": true, "rangeEnd": true, "value": true, "keys": true}
var reproRevisionFields = map[string]bool{"revision": true, "modRevision": true, "createRevision": true,
	"startRevision": true, "minModRevision": true, "maxModRevision": true, "minCreateRevision": true,
	"maxCreateRevision": true, "compactRevision": true}

// learn notes the ids a server handed out, in order.
func (g *reproGen) learn(call string, answer json.RawMessage) {
	var m map[string]any
	if json.Unmarshal(answer, &m) != nil {
		return
	}
	if id, ok := m["ID"].(string); ok && call == "LeaseGrant" {
		if _, seen := g.leases[id]; !seen {
			g.leases[id] = fmt.Sprintf("@LEASE#%d", len(g.leases)+1)
		}
	}
	if created, _ := m["created"].(bool); created {
		id, ok := m["watchId"].(string)
		if !ok {
			id = "0" // protobuf JSON leaves out a watch id of 0, which etcd hands out first
		}
		if _, seen := g.watches[id]; !seen {
			g.watches[id] = fmt.Sprintf("@WATCH#%d", len(g.watches)+1)
		}
	}
}

// symbolize writes one message with symbols. A watch response, and a
// cancel request, that name watch 0 get its id written out, since
// protobuf JSON leaves zero out and another server numbers from 1.
func (g *reproGen) symbolize(call string, msg json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(msg, &v) != nil {
		return msg
	}
	if m, ok := v.(map[string]any); ok {
		if _, has := m["watchId"]; !has && call == "Watch.Recv" {
			m["watchId"] = "0"
		}
		if c, ok := m["cancelRequest"].(map[string]any); ok {
			if _, has := c["watchId"]; !has {
				c["watchId"] = "0"
			}
		}
	}
	b, err := json.Marshal(g.walk("", v))
	if err != nil {
		return msg
	}
	return b
}

func (g *reproGen) walk(field string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = g.walk(k, e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = g.walk(field, e)
		}
		return x
	case string:
		switch {
		case reproBytesFields[field]:
			if b, err := base64.StdEncoding.DecodeString(x); err == nil {
				return "@B:" + g.key(string(b))
			}
		case reproRevisionFields[field]:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil && n > 0 {
				return fmt.Sprintf("@REV%+d", n-g.data.base)
			}
		case field == "ID" || field == "lease":
			if s, ok := g.leases[x]; ok {
				return s
			}
		case field == "watchId":
			if s, ok := g.watches[x]; ok {
				return s
			}
		}
	}
	return v
}

// key writes a key with the probe's prefix as the symbol @P/.
func (g *reproGen) key(k string) string {
	if end := clientv3.GetPrefixRangeEnd(g.data.prefix); k == end {
		return "@END"
	}
	if strings.HasPrefix(k, g.data.prefix) {
		return "@P/" + k[len(g.data.prefix):]
	}
	return k
}
