package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-suite/vigil/checkers"
	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/history"
)

// failed is a failed check's result with the given violations.
func failed(name string, sev check.Severity, should bool, vs ...check.Violation) check.Result {
	return check.Result{Name: name, Verdict: check.Fail, Severity: sev, Should: should, Violations: vs}
}

func ev(watch int64, resp, idx int, typ history.EventType, key, value string, rev int64) history.EventAt {
	return history.EventAt{Watch: watch, Response: resp, Index: idx,
		Event: history.Event{Type: typ, KV: history.KV{Key: key, Value: value, ModRevision: rev}}}
}

func kev(watch int64, idx int, typ, name, value, rv string) history.KubeEventAt {
	return history.KubeEventAt{Index: idx, Event: history.KubeEvent{Watch: watch, Type: typ,
		Object: &history.Object{Name: name, Value: value, ResourceVersion: rv}}}
}

// shape renders findings as "lead+also...^resting..." per finding, to
// compare with what a case wants.
func shape(fs []Finding) string {
	var out []string
	for _, f := range fs {
		s := f.Check
		for _, p := range f.Also {
			s += "+" + p.Check
		}
		for _, p := range f.RestingOnIt {
			s += "^" + p.Check
		}
		out = append(out, s)
	}
	return strings.Join(out, " | ")
}

// kineLike is a history with the records the cases below cite: creates
// of k000 and k002, a read of k000 and, on the Kubernetes side, a create
// of object o1 acknowledged at one RV and a get that shows it at another.
func kineLike() *history.History {
	h := history.New(history.Meta{})
	put := func(id int64, key, value string, rev int64) history.Operation {
		return history.Operation{ID: id, Request: history.Request{Kind: history.OpTxn,
			Compares: []history.Compare{{Key: key, Target: "mod", Result: "=", Int: 0}},
			Success:  []history.Request{{Kind: history.OpPut, Key: key, Value: value}}},
			Response: &history.Response{Revision: rev, Succeeded: true}}
	}
	h.Operations = append(h.Operations, put(153, "k002", "2.24", 34), put(154, "k000", "3.25", 34),
		history.Operation{ID: 160, Request: history.Request{Kind: history.OpRange, Key: "k000"},
			Response: &history.Response{Revision: 40, KVs: []history.KV{{Key: "k000", Value: "3.25", ModRevision: 35}}}},
		history.Operation{ID: 170, Request: history.Request{Kind: history.OpDelete, Key: "k005"},
			Response: &history.Response{Revision: 41, Deleted: 1}})
	h.KubeOps = append(h.KubeOps,
		history.KubeOperation{ID: 1, Request: history.KubeRequest{Verb: history.KubeCreate, Object: &history.Object{Name: "o1", Value: "c1.1"}},
			Response: &history.KubeResponse{Code: 201, Object: &history.Object{Name: "o1", Value: "c1.1", ResourceVersion: "100"}}},
		history.KubeOperation{ID: 2, Request: history.KubeRequest{Verb: history.KubeGet, Name: "o1"},
			Response: &history.KubeResponse{Code: 200, Object: &history.Object{Name: "o1", Value: "c1.1", ResourceVersion: "105"}}},
		history.KubeOperation{ID: 3, Request: history.KubeRequest{Verb: history.KubeCreate, Object: &history.Object{Name: "o2", Value: "c2.1"}},
			Response: &history.KubeResponse{Code: 201, Object: &history.Object{Name: "o2", Value: "c2.1", ResourceVersion: "110"}}},
		history.KubeOperation{ID: 4, Request: history.KubeRequest{Verb: history.KubeList},
			Response: &history.KubeResponse{Code: 200, ListRV: "120", Items: []history.Object{
				{Name: "o1", Value: "c1.1", ResourceVersion: "105"}, {Name: "o2", Value: "c2.1", ResourceVersion: "110"}}}})
	return h
}

// TestFindingsGrouping: which violations of different checks are one
// finding, which rest on another check's finding, and which stay apart.
func TestFindingsGrouping(t *testing.T) {
	vouch := check.Violation{Message: "operation 900 (client 1, put(k001)) cannot be linearized: watch 10 vouches that k001 did not change at revision 5434",
		Operations: []int64{900}, Key: "k001", Revision: 5434, RestsOn: []int64{10}}
	bookmark := func(watch int64) check.Violation {
		return check.Violation{Message: fmt.Sprintf("watch %d (client 3) delivered PUT k001 at revision 5434 after a progress notification at 5440", watch),
			Watch: watch, Key: "k001", Revision: 5434, Events: []history.EventAt{ev(watch, 7, 0, history.EventPut, "k001", "1.77", 5434)}}
	}
	cases := []struct {
		name    string
		results []check.Result
		want    string
	}{
		{"a linearizability violation whose proof is a watch bookmarkable convicts - merge",
			[]check.Result{failed("kv/linearizable", check.Data, false, vouch), failed("watch/bookmarkable", check.Order, false, bookmark(10))},
			"watch/bookmarkable^kv/linearizable"},
		{"a linearizability violation whose proof is a watch no check convicts - separate",
			[]check.Result{failed("kv/linearizable", check.Data, false, vouch), failed("watch/bookmarkable", check.Order, false, bookmark(11))},
			"kv/linearizable | watch/bookmarkable"},
		{"a watch only a SHOULD check warns about is no conviction - separate",
			[]check.Result{failed("kv/linearizable", check.Data, false, vouch),
				failed("watch/liveness", check.Liveness, true, check.Violation{Message: "watch 10 (client 3) was open when the final write was acknowledged at revision 6000, but it reached only revision 5500", Watch: 10})},
			"kv/linearizable | watch/liveness"},
		{"a watch only a Kubernetes check convicts is another watch - separate",
			[]check.Result{failed("kv/linearizable", check.Data, false, vouch), failed("kube/watch-ordered", check.Order, false, check.Violation{Message: "watch 10 delivered RV 7 after RV 9", Watch: 10})},
			"kv/linearizable | kube/watch-ordered"},
		{"agreement whose other watch reliable convicts - merge",
			[]check.Result{
				failed("watch/reliable", check.Data, false, check.Violation{Message: "watch 3 (client 2) delivered DELETE k012 at revision 1158 (response 915), but operation 2880 committed PUT k012 = \"4.1\" there",
					Watch: 3, Key: "k012", Revision: 1158, Operations: []int64{2880}, Events: []history.EventAt{ev(3, 915, 0, history.EventDelete, "k012", "", 1158)}}),
				failed("watch/agreement", check.Data, false, check.Violation{Message: "watch 1 (client 9) disagrees with watch 3 at revision 1158 on k012: it delivered PUT \"4.1\" where watch 3 delivered DELETE \"\"",
					Watch: 1, Key: "k012", Revision: 1158, RestsOn: []int64{3}, Events: []history.EventAt{ev(1, 30, 0, history.EventPut, "k012", "4.1", 1158)}})},
			"watch/reliable^watch/agreement"},
		{"two checks cite one operation - merge",
			[]check.Result{
				failed("kv/revision-monotonic", check.Order, false, check.Violation{Message: "operations 153 (client 2, txn) and 154 (client 3, txn) were both acknowledged as creating revision 34", Operations: []int64{153, 154}}),
				failed("watch/reliable", check.Data, false, check.Violation{Message: "watch 1 (client 7) missed the PUT of k000 at revision 34, committed by operation 154", Watch: 1, Key: "k000", Revision: 34, Operations: []int64{154}})},
			"watch/reliable+kv/revision-monotonic"},
		{"members that disagree lead the finding of what their disagreement broke",
			[]check.Result{
				failed("watch/reliable", check.Data, false, check.Violation{Message: "watch 1 (client 9) missed the PUT of k001 at revision 87, committed by operation 92", Watch: 1, Key: "k001", Revision: 87, Operations: []int64{92}},
					check.Violation{Message: "watch 1 (client 9) missed the PUT of k002 at revision 88, committed by operation 93", Watch: 1, Key: "k002", Revision: 88, Operations: []int64{93}}),
				failed("kv/member-agreement", check.Data, false, check.Violation{Message: "members a and b agree at revision 85 and differ from revision 86; revision 86 was taken by operation 92", Operations: []int64{92}})},
			"kv/member-agreement+watch/reliable"},
		{"two checks cite one watch event - merge",
			[]check.Result{
				failed("watch/is-create", check.Order, false, check.Violation{Message: "watch 1 (client 7) delivered PUT k000 at revision 35 (response 29) as a create", Watch: 1, Key: "k000", Revision: 35,
					Events: []history.EventAt{ev(1, 29, 0, history.EventPut, "k000", "3.25", 35)}}),
				failed("watch/prev-kv", check.Data, false, check.Violation{Message: "watch 1 (client 7) delivered PUT k000 at revision 35 (response 29) with prev_kv absent", Watch: 1, Key: "k000", Revision: 35,
					Events: []history.EventAt{ev(1, 29, 0, history.EventPut, "k000", "3.25", 35)}})},
			"watch/prev-kv+watch/is-create"},
		{"a watch event and the operation that wrote its value - merge",
			[]check.Result{
				failed("watch/is-create", check.Order, false, check.Violation{Message: "watch 2 (client 8) delivered PUT k000 at revision 35 (response 1) as a create", Watch: 2, Key: "k000", Revision: 35,
					Events: []history.EventAt{ev(2, 1, 3, history.EventPut, "k000", "3.25", 35)}}),
				failed("kv/revision-monotonic", check.Order, false, check.Violation{Message: "operations 153 (client 2, txn) and 154 (client 3, txn) were both acknowledged as creating revision 34", Operations: []int64{153, 154}})},
			"watch/is-create+kv/revision-monotonic"},
		{"a read and a watch event that show one write - merge",
			[]check.Result{
				failed("kv/linearizable", check.Data, false, check.Violation{Message: "operation 160 (client 4, get(k000)) cannot be linearized", Operations: []int64{160}}),
				failed("watch/is-create", check.Order, false, check.Violation{Message: "watch 2 (client 8) delivered PUT k000 at revision 35 (response 1) as a create", Watch: 2, Key: "k000", Revision: 35,
					Events: []history.EventAt{ev(2, 1, 3, history.EventPut, "k000", "3.25", 35)}})},
			"kv/linearizable+watch/is-create"},
		{"a delete and the DELETE event at its revision - merge",
			[]check.Result{
				failed("kv/linearizable", check.Data, false, check.Violation{Message: "operation 170 (client 4, delete(k005)) cannot be linearized", Operations: []int64{170}}),
				failed("watch/prev-kv", check.Data, false, check.Violation{Message: "watch 1 (client 7) delivered DELETE k005 at revision 41 (response 50) with prev_kv absent", Watch: 1, Key: "k005", Revision: 41,
					Events: []history.EventAt{ev(1, 50, 0, history.EventDelete, "k005", "", 41)}})},
			"kv/linearizable+watch/prev-kv"},
		{"the events around a missed one are context - separate",
			[]check.Result{
				failed("watch/reliable", check.Data, false, check.Violation{Message: "watch 2 (client 8) missed the PUT of k000 at revision 34, committed by operation 154; before it DELETE k015 at 33", Watch: 2, Key: "k000", Revision: 34,
					Operations: []int64{154}, Events: []history.EventAt{ev(2, 1, 0, history.EventDelete, "k015", "", 33)}}),
				failed("watch/filter", check.Data, false, check.Violation{Message: "watch 2 (client 8) delivered DELETE k015 at revision 33 (response 1), although the watch asked for no DELETE events (NoDelete)", Watch: 2, Key: "k015", Revision: 33,
					Events: []history.EventAt{ev(2, 1, 0, history.EventDelete, "k015", "", 33)}})},
			"watch/reliable | watch/filter"},
		{"one watch, two events - separate",
			[]check.Result{
				failed("watch/filter", check.Data, false, check.Violation{Message: "watch 2 (client 8) delivered DELETE k015 at revision 21 (response 1), although the watch asked for no DELETE events (NoDelete)", Watch: 2, Key: "k015", Revision: 21,
					Events: []history.EventAt{ev(2, 1, 0, history.EventDelete, "k015", "", 21)}}),
				failed("watch/cancel-reason", check.Liveness, false, check.Violation{Message: "watch 2 (client 8) stream closed at 3.0s without a cancel reason or an error, after 1 responses", Watch: 2})},
			"watch/filter | watch/cancel-reason"},
		{"a create acknowledged at one RV, a get and a watch show it at another - merge",
			[]check.Result{
				failed("kube/rv-order", check.Order, false, check.Violation{Message: "create 1 of o1 acknowledged at RV 100, but the object was stored at RV 105", Key: "o1", Revision: 100, Operations: []int64{1}}),
				failed("kube/consistent-read", check.Data, false, check.Violation{Message: "get 2 of o1 returned RV 105, above what create 1 acknowledged", Key: "o1", Revision: 105, Operations: []int64{2}}),
				failed("kube/watch-from-rv", check.Data, false, check.Violation{Message: "watch 5 (client 2) delivered ADDED o1 at RV 105", Watch: 5, Key: "o1", Revision: 105,
					KubeEvents: []history.KubeEventAt{kev(5, 0, history.KubeAdded, "o1", "c1.1", "105")}})},
			"kube/consistent-read+kube/watch-from-rv+kube/rv-order"},
		{"writes of two objects, a list showing both - separate",
			[]check.Result{
				failed("kube/rv-order", check.Order, false, check.Violation{Message: "create 1 of o1 acknowledged at RV 100, but the object was stored at RV 105", Key: "o1", Revision: 100, Operations: []int64{1}}),
				failed("kube/list-exact", check.Data, false, check.Violation{Message: "list 4 at RV 120 returned o1 at RV 105", Operations: []int64{4}}),
				failed("kube/linearizable", check.Data, false, check.Violation{Message: "create 3 of o2 cannot be linearized", Key: "o2", Operations: []int64{3}})},
			"kube/list-exact | kube/linearizable | kube/rv-order"},
		{"a SHOULD warning and a MUST violation on one operation - merge",
			[]check.Result{
				failed("watch/liveness", check.Liveness, true, check.Violation{Message: "watch 4 (client 1) was open when the final write was acknowledged at revision 50", Watch: 4, Operations: []int64{154}}),
				failed("kv/revision-monotonic", check.Order, false, check.Violation{Message: "operations 153 (client 2, txn) and 154 (client 3, txn) were both acknowledged as creating revision 34", Operations: []int64{153, 154}})},
			"kv/revision-monotonic+watch/liveness"},
	}
	h := kineLike()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := Findings(h, c.results)
			if got := shape(fs); got != c.want {
				t.Fatalf("findings %q, want %q", got, c.want)
			}
			n := 0
			for _, f := range fs {
				n += f.Total()
			}
			want := 0
			for _, r := range c.results {
				want += len(r.Violations)
			}
			if n != want {
				t.Errorf("the findings hold %d violations, the checks found %d", n, want)
			}
			if strings.HasSuffix(c.name, "- merge") && fs[0].Should {
				t.Errorf("a finding with a MUST part is marked SHOULD")
			}
		})
	}
}

// TestRestingIsShown: a violation resting on a convicted watch is shown
// under that finding in the table, report.html's text and result.json,
// the per-check table still lists its check as failed, and the run's
// verdict and exit code are what the checks say.
func TestRestingIsShown(t *testing.T) {
	results := []check.Result{
		failed("kv/linearizable", check.Data, false, check.Violation{
			Message:    "operation 900 (client 1, put(k001)) cannot be linearized: watch 10 vouches that k001 did not change at revision 5434",
			Operations: []int64{900}, RestsOn: []int64{10}}),
		failed("watch/bookmarkable", check.Order, false, check.Violation{
			Message: "watch 10 (client 3) delivered PUT k001 at revision 5434 after a progress notification at 5440", Watch: 10, Key: "k001", Revision: 5434,
			Events: []history.EventAt{ev(10, 7, 0, history.EventPut, "k001", "1.77", 5434)}}),
	}
	r := Summarize(history.New(history.Meta{}), results, 1)
	if r.Verdict != string(check.Fail) || ExitCode(r.Verdict) != 1 {
		t.Errorf("verdict %s (exit %d), want fail (exit 1)", r.Verdict, ExitCode(r.Verdict))
	}
	for _, c := range r.Checks {
		if c.Verdict != check.Fail {
			t.Errorf("%s: %s, want its own verdict, fail", c.Name, c.Verdict)
		}
	}
	var b bytes.Buffer
	Table(&b, r)
	out := b.String()
	for _, s := range []string{
		"1 finding(s) (2 violation(s)), worst first",
		"1. watch/bookmarkable [order]: 1 violation(s) like",
		"resting on it (their proof is a watch this finding shows unreliable",
		"^ kv/linearizable [data]: 1 violation(s) like",
		"smallest witness, resting on watch 10:",
		"taken as proof: watch 10",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
	// Each check keeps its line, its verdict and its count.
	if n := strings.Count(out, "FAIL        0.00s  1 violation(s) in 1 finding(s)"); n != 2 {
		t.Errorf("%d check lines say FAIL with 1 violation in 1 finding, want 2:\n%s", n, out)
	}
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"resting_on_it":[{"check":"kv/linearizable"`, `"rests_on":[10]`} {
		if !bytes.Contains(js, []byte(s)) {
			t.Errorf("result.json lacks %s", s)
		}
	}
	var back Result
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if f := back.Findings[0]; f.Check != "watch/bookmarkable" || len(f.RestingOnIt) != 1 || f.RestingOnIt[0].RestsOn[0] != 10 {
		t.Errorf("result.json read back as %+v", f)
	}
	saved, err := history.Load(savedRun) // a page needs a run to plot
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WritePage(dir, saved, r); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, PageFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("resting on it: <code>kv/linearizable</code>")) {
		t.Errorf("report.html does not show kv/linearizable resting on the finding")
	}
	if msg := failureMessage(r.Checks[0], r.Findings); !strings.Contains(msg, "resting on watch/bookmarkable's finding") {
		t.Errorf("junit failure message %q does not say where it rests", msg)
	}
}

// TestFindingsOfCorpora counts findings on the saved runs: the kine run
// (docs/findings/kine.md) had 12 findings when each check's signatures
// were findings of their own; its records show 4 causes: F1 (a create
// acknowledged at another revision: watch/reliable, kv/revision-monotonic,
// watch/prev-kv, watch/is-create), F5 (filters ignored), F2 (a guarded
// delete of a missing key takes a revision) and F4 (a silent close). The
// passing runs have none.
func TestFindingsOfCorpora(t *testing.T) {
	for _, c := range []struct {
		path            string
		parts, findings int
	}{
		{"../checkers/testdata/kine-v0.17.5-sqlite-faults.jsonl.gz", 12, 4},
		{"../checkers/kube/testdata/kube-v1.36.3-faults.jsonl.gz", 0, 0},
		{"../checkers/testdata/etcd-v3.6.16-faults.jsonl.gz", 0, 0},
	} {
		h, err := history.Load(c.path)
		if err != nil {
			t.Fatal(err)
		}
		fs := Findings(h, checkers.Run(h, check.DefaultConfig()))
		parts := 0
		for _, f := range fs {
			parts += 1 + len(f.Also) + len(f.RestingOnIt)
		}
		t.Logf("%s: %d (check, signature) parts, %d findings: %s", c.path, parts, len(fs), shape(fs))
		if parts != c.parts || len(fs) != c.findings {
			t.Errorf("%s: %d parts in %d findings, want %d in %d", c.path, parts, len(fs), c.parts, c.findings)
		}
		if c.findings == 0 {
			continue
		}
		f1 := fs[0].Checks()
		for _, name := range []string{"watch/reliable", "kv/revision-monotonic", "watch/prev-kv", "watch/is-create"} {
			if !slices.Contains(f1, name) {
				t.Errorf("the first finding %v lacks %s", f1, name)
			}
		}
		var leads []string
		for _, f := range fs[1:] {
			leads = append(leads, f.Check)
		}
		if want := []string{"watch/filter", "kv/linearizable", "watch/cancel-reason"}; !slices.Equal(leads, want) {
			t.Errorf("the other findings are led by %v, want %v", leads, want)
		}
	}
}

// TestDroppedEventIsOneFinding: one DELETE event taken out of a watch of a
// saved passing run (as --sabotage drop-event does in a live one) fails
// watch/reliable and watch/agreement; both cite the same write, so the
// report shows one finding, led by watch/reliable.
func TestDroppedEventIsOneFinding(t *testing.T) {
	h, err := history.Load(savedRun)
	if err != nil {
		t.Fatal(err)
	}
	dropped := false
	for _, w := range h.Watches {
		if dropped || w.Request.NoDelete || w.Request.NoPut {
			continue
		}
		for ri := len(w.Responses) / 2; ri < len(w.Responses) && !dropped; ri++ {
			r := &w.Responses[ri]
			for ei := range r.Events {
				if r.Events[ei].Type == history.EventDelete {
					r.Events = append(r.Events[:ei:ei], r.Events[ei+1:]...)
					dropped = true
					break
				}
			}
		}
	}
	if !dropped {
		t.Fatal("the saved run has no DELETE event to drop")
	}
	results := checkers.Run(h, check.DefaultConfig())
	failing := map[string]bool{}
	for _, r := range results {
		if r.Verdict == check.Fail {
			failing[r.Name] = true
		}
	}
	if !failing["watch/reliable"] || !failing["watch/agreement"] || len(failing) != 2 {
		t.Fatalf("failing checks %v, want watch/reliable and watch/agreement", failing)
	}
	if got := shape(Findings(h, results)); got != "watch/reliable+watch/agreement" {
		t.Errorf("findings %q, want one: watch/reliable+watch/agreement", got)
	}
}

// TestFindingsRestOnServerExit: violations about nothing but the time a
// process was dead (an outage over it, a call it left unanswered) go
// under its run/server-exit finding; one with an answer of its own, or
// an outage before the death, stays a finding of its own, and the
// requests the exit names in flight tie nothing to it.
func TestFindingsRestOnServerExit(t *testing.T) {
	s := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	h := history.New(history.Meta{})
	h.Operations = []history.Operation{
		{ID: 1, Call: s(1), Return: s(1.1), Request: history.Request{Kind: history.OpPut, Key: "k", Value: "1"}, Response: &history.Response{Revision: 2}},
		{ID: 2, Call: s(4.9), Return: s(6), Request: history.Request{Kind: history.OpPut, Key: "k", Value: "2"}, Code: history.ErrUnknown},
	}
	h.Calls = []history.Call{{ID: 7, Kind: history.CallProgress, Call: s(6), Return: s(7), Code: history.ErrUnknown, Error: "unavailable"}}
	exit := check.Violation{Message: "server-0 exited with code 2 at t=5.0s, and vigil did not stop it: panic: boom; 1 request(s) were in flight",
		Operations: []int64{2}, Span: &check.Span{From: s(5), To: s(8)}, Log: []string{"panic: boom", "goroutine 1 [running]:", "  main.main()"}}
	results := []check.Result{
		failed("kv/linearizable", check.Data, false, check.Violation{Message: "operation 2 wrote 2 over 1", Operations: []int64{1, 2}}),
		failed("watch/bookmarkable", check.Order, false, check.Violation{Message: "progress request 7 went unanswered", Calls: []int64{7}}),
		failed("run/availability", check.Liveness, false,
			check.Violation{Message: "unavailable from t=1.2s to t=2.5s (1.3s, 3 calls unanswered) with no fault injected", Span: &check.Span{From: s(1.2), To: s(2.5)}},
			check.Violation{Message: "unavailable since t=4.9s: the 9 calls after the last answer went unanswered", Span: &check.Span{From: s(4.9), To: s(9)}}),
		failed("run/server-exit", check.Liveness, false, exit),
	}
	fs := Findings(h, results)
	if got, want := shape(fs), "kv/linearizable | run/server-exit^watch/bookmarkable^run/availability | run/availability"; got != want {
		t.Fatalf("findings %s, want %s", got, want)
	}
	for _, p := range fs[1].RestingOnIt {
		if p.RestsOnExit != "server-0 exited with code 2 at t=5.0s" {
			t.Errorf("%s rests on %q", p.Check, p.RestsOnExit)
		}
	}
	var b bytes.Buffer
	writeFindings(&b, Result{Findings: fs})
	for _, want := range []string{"resting on it (only about the time the process was down; not findings of their own):",
		"^ run/availability [liveness]: 1 violation(s) like", "smallest witness, resting on: server-0 exited with code 2 at t=5.0s:",
		"    log:\n", "    | panic: boom\n", "    |   main.main()\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the findings' text lacks %q:\n%s", want, b.String())
		}
	}
}
