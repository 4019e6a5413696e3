package reduce

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/protoadapt"

	"github.com/vigil-suite/vigil/history"
	etcdtarget "github.com/vigil-suite/vigil/targets/etcd"
)

// Finding names what a reproduction reproduces, for its comments.
type Finding struct {
	Check, Title string
	// Saw is what the replay that kept the steps saw.
	Saw string
	// Server is the server the steps were reduced against ("etcd v3.6.16,
	// 3 members").
	Server string
}

// DivergenceProgram writes the steps as a standalone Go program (package
// main) that replays them against a cluster given by -endpoints (one per
// member, in the steps' order), each to its member, then compares what
// every member holds. It exits 1 printing the members' disagreement while
// they disagree, 0 once they agree, 2 when it cannot run. Revisions are
// written relative to the store's revision when each step is sent
// ("@HEAD+N"), keys under a fresh prefix ("@P/"), leases as the ones the
// program's grants get ("@LEASE:id"); it needs only
// go.etcd.io/etcd/api/v3 and google.golang.org/grpc.
func DivergenceProgram(f Finding, steps []Step, prefix string) (string, error) {
	type progStep struct {
		Member       int
		Call, Msg    string
		Grant        int64
		Text, Source string
	}
	var ps []progStep
	for _, st := range steps {
		call, msg, err := etcdtarget.Message(relative(st.Req, st.Head))
		if err != nil {
			return "", err
		}
		js, err := symbolize(msg, prefix, st.Req)
		if err != nil {
			return "", err
		}
		ps = append(ps, progStep{Member: st.Member, Call: call, Msg: js, Grant: st.Granted, Text: Describe(st.Req, prefix)})
	}
	var b bytes.Buffer
	err := programTemplate.Execute(&b, map[string]any{"F": f, "Steps": ps})
	return b.String(), err
}

var revisionField = regexp.MustCompile(`"(revision|minModRevision|maxModRevision|minCreateRevision|maxCreateRevision|modRevision|createRevision)":"(-?\d+)"`)

// symbolize writes a request's protobuf JSON with the program's symbols:
// keys under "@P/", revisions (already relative to the head: Rebase with
// -Head) as "@HEAD+N", leases as "@LEASE:id".
func symbolize(msg protoadapt.MessageV1, prefix string, req history.Request) (string, error) {
	raw, err := protojson.MarshalOptions{UseProtoNames: false}.Marshal(protoadapt.MessageV2Of(msg))
	if err != nil {
		return "", err
	}
	var m any
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	m = walkJSON(m, "", prefix)
	out, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	s := revisionField.ReplaceAllStringFunc(string(out), func(f string) string {
		sub := revisionField.FindStringSubmatch(f)
		return fmt.Sprintf(`%q:"@HEAD%+d"`, sub[1], atoi(sub[2])-relOffset)
	})
	return s, nil
}

// relOffset keeps a revision relative to the head non-zero (protobuf
// JSON leaves zero out) until symbolize writes it as "@HEAD+N".
const relOffset = 1 << 40

// relative writes every revision a request names as its distance from
// head, plus relOffset.
func relative(r history.Request, head int64) history.Request {
	r = clone(r)
	var walk func(q *history.Request)
	walk = func(q *history.Request) {
		for _, v := range []*int64{&q.Revision, &q.MinModRevision, &q.MaxModRevision, &q.MinCreateRevision, &q.MaxCreateRevision} {
			if *v > 0 {
				*v += relOffset - head
			}
		}
		for i := range q.Compares {
			if c := &q.Compares[i]; (c.Target == history.CompareMod || c.Target == history.CompareCreate) && c.Int > 0 {
				c.Int += relOffset - head
			}
		}
		for i := range q.Success {
			walk(&q.Success[i])
		}
		for i := range q.Failure {
			walk(&q.Failure[i])
		}
	}
	walk(&r)
	return r
}

// walkJSON turns byte strings (base64 in protobuf JSON) back into text,
// marked "@B:", with the run's prefix as "@P/", and lease ids as
// "@LEASE:id".
func walkJSON(v any, field, prefix string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = walkJSON(e, k, prefix)
		}
		return x
	case []any:
		for i := range x {
			x[i] = walkJSON(x[i], field, prefix)
		}
		return x
	case string:
		switch field {
		case "key", "rangeEnd", "value":
			b := decodeB64(x)
			if prefix != "" && strings.HasPrefix(b, prefix) {
				b = "@P/" + strings.TrimPrefix(b, prefix)
			}
			return "@B:" + b
		case "lease", "ID":
			if x != "0" {
				return "@LEASE:" + x
			}
		}
	}
	return v
}

// Describe renders a request for a reproduction's comments.
func Describe(r history.Request, prefix string) string {
	short := func(k string) string { return strings.TrimPrefix(k, prefix) }
	switch r.Kind {
	case history.OpTxn:
		var cs, ss, fs []string
		for _, c := range r.Compares {
			operand := fmt.Sprint(c.Int)
			if c.Target == history.CompareValue {
				operand = fmt.Sprintf("%q", c.Value)
			}
			cs = append(cs, fmt.Sprintf("%s(%s) %s %s", c.Target, short(c.Key), c.Result, operand))
		}
		for _, q := range r.Success {
			ss = append(ss, Describe(q, prefix))
		}
		for _, q := range r.Failure {
			fs = append(fs, Describe(q, prefix))
		}
		return fmt.Sprintf("txn(if [%s] then [%s] else [%s])", strings.Join(cs, ", "), strings.Join(ss, "; "), strings.Join(fs, "; "))
	case history.OpRange:
		s := "range " + short(r.Key)
		if r.End != "" {
			s += ".." + short(r.End)
		}
		if r.Revision != 0 {
			s += fmt.Sprintf(" at revision %d", r.Revision)
		}
		return s
	case history.OpPut:
		return fmt.Sprintf("put %s = %q", short(r.Key), r.Value)
	case history.OpDelete:
		return "delete " + short(r.Key)
	}
	return string(r.Kind)
}

func decodeB64(s string) string {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return s
	}
	return string(b)
}

func atoi(s string) int64 {
	var n int64
	fmt.Sscan(s, &n)
	return n
}

var programTemplate = template.Must(template.New("divergence").Funcs(template.FuncMap{
	"q":       func(s string) string { return fmt.Sprintf("%q", s) },
	"comment": func(s string) string { return strings.ReplaceAll(s, "\n", "\n// ") },
}).Parse(`// Reproduction of a vigil finding: {{.F.Check}}: {{.F.Title}}.
//
// Reduced by vigil against {{.F.Server}}: it sends these requests, one
// after another, each to its member of the cluster, then compares what
// every member holds. The program exits 1 while the members disagree and
// 0 once they agree (2: it could not run, e.g. a member is unreachable).
//
{{- range $i, $s := .Steps}}
//   {{$i}}. to member {{$s.Member}}: {{comment $s.Text}}
{{- end}}
//
// When vigil reduced it, the members held:
//
// {{comment .F.Saw}}
//
// Run it against a fresh cluster, one endpoint per member:
//
//	go run . -endpoints 127.0.0.1:2379,127.0.0.1:22379,127.0.0.1:32379
//
// in a module that requires go.etcd.io/etcd/api/v3 and google.golang.org/grpc.
// In the requests "@B:" marks a byte string, "@P/" a fresh key prefix,
// "@HEAD+N" the store's revision when the step is sent plus N, "@LEASE:id"
// the lease the program's grant of that id got.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/protoadapt"
)

// steps: the member it goes to, the call, the request, the lease id a grant stands for.
var steps = []struct {
	member    int
	call, msg string
	grant     int64
}{
{{- range .Steps}}
	{ {{.Member}}, {{q .Call}}, {{q .Msg}}, {{.Grant}} },
{{- end}}
}

func main() {
	endpoints := flag.String("endpoints", "127.0.0.1:2379", "the members' client endpoints, comma-separated, in the steps' order")
	flag.Parse()
	differ, err := run(strings.Split(*endpoints, ","))
	if err != nil {
		fmt.Fprintln(os.Stderr, "repro:", err)
		os.Exit(2)
	}
	if differ {
		fmt.Println("\nFAIL: the members disagree")
		os.Exit(1)
	}
	fmt.Println("\nPASS: every member holds the same")
}

type member struct {
	kv    pb.KVClient
	lease pb.LeaseClient
	mt    pb.MaintenanceClient
}

func run(endpoints []string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var members []member
	for _, ep := range endpoints {
		conn, err := grpc.NewClient(strings.TrimPrefix(strings.TrimPrefix(ep, "http://"), "https://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return false, err
		}
		defer conn.Close()
		members = append(members, member{pb.NewKVClient(conn), pb.NewLeaseClient(conn), pb.NewMaintenanceClient(conn)})
	}
	prefix := fmt.Sprintf("/vigil-repro/%d/", time.Now().UnixNano())
	leases := map[string]string{}
	for i, st := range steps {
		m := members[st.member%len(members)]
		head, err := m.kv.Range(ctx, &pb.RangeRequest{Key: []byte(prefix), CountOnly: true})
		if err != nil {
			return false, fmt.Errorf("step %d: reading the revision: %w", i, err)
		}
		msg := resolve(st.msg, prefix, head.Header.Revision, leases)
		var res protoadapt.MessageV1
		var callErr error
		switch st.call {
		case "Range":
			r := &pb.RangeRequest{}
			if callErr = decode(msg, r); callErr == nil {
				res, callErr = m.kv.Range(ctx, r)
			}
		case "Put":
			r := &pb.PutRequest{}
			if callErr = decode(msg, r); callErr == nil {
				res, callErr = m.kv.Put(ctx, r)
			}
		case "DeleteRange":
			r := &pb.DeleteRangeRequest{}
			if callErr = decode(msg, r); callErr == nil {
				res, callErr = m.kv.DeleteRange(ctx, r)
			}
		case "Txn":
			r := &pb.TxnRequest{}
			if callErr = decode(msg, r); callErr == nil {
				res, callErr = m.kv.Txn(ctx, r)
			}
		case "Compact":
			r := &pb.CompactionRequest{}
			if callErr = decode(msg, r); callErr == nil {
				res, callErr = m.kv.Compact(ctx, r)
			}
		case "LeaseGrant":
			r := &pb.LeaseGrantRequest{}
			if callErr = decode(msg, r); callErr == nil {
				var g *pb.LeaseGrantResponse
				if g, callErr = m.lease.LeaseGrant(ctx, r); callErr == nil {
					leases[strconv.FormatInt(st.grant, 10)] = strconv.FormatInt(g.ID, 10)
					res = g
				}
			}
		case "LeaseRevoke":
			r := &pb.LeaseRevokeRequest{}
			if callErr = decode(msg, r); callErr == nil {
				res, callErr = m.lease.LeaseRevoke(ctx, r)
			}
		}
		if callErr != nil {
			fmt.Printf("step %d (member %d, %s): error: %v\n", i, st.member, st.call, callErr)
			continue
		}
		out, _ := protojson.Marshal(protoadapt.MessageV2Of(res))
		fmt.Printf("step %d (member %d, %s): %s\n", i, st.member, st.call, out)
	}
	return compare(ctx, members, prefix)
}

// compare waits until every member has applied as much as the others
// (or 5 s pass), then compares what each holds under the prefix.
func compare(ctx context.Context, members []member, prefix string) (bool, error) {
	var views []string
	for deadline := time.Now().Add(5 * time.Second); ; {
		views = views[:0]
		var applied []uint64
		for i, m := range members {
			r, err := m.kv.Range(ctx, &pb.RangeRequest{Key: []byte(prefix), RangeEnd: end(prefix), Serializable: true})
			if err != nil {
				return false, fmt.Errorf("reading member %d: %w", i, err)
			}
			v := fmt.Sprintf("revision %d", r.Header.Revision)
			for _, kv := range r.Kvs {
				v += fmt.Sprintf(", %s=%q@%d", strings.TrimPrefix(string(kv.Key), prefix), kv.Value, kv.ModRevision)
			}
			views = append(views, v)
			st, err := m.mt.Status(ctx, &pb.StatusRequest{})
			if err != nil {
				return false, fmt.Errorf("member %d's status: %w", i, err)
			}
			applied = append(applied, st.RaftAppliedIndex)
		}
		same := true
		for _, a := range applied[1:] {
			same = same && a == applied[0]
		}
		if same || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	differ := false
	for i, v := range views {
		fmt.Printf("member %d: %s\n", i, v)
		differ = differ || v != views[0]
	}
	return differ, nil
}

func end(prefix string) []byte {
	b := []byte(prefix)
	b[len(b)-1]++
	return b
}

// resolve turns the symbols of a request into this run's values.
func resolve(msg, prefix string, head int64, leases map[string]string) string {
	var m any
	json.Unmarshal([]byte(msg), &m)
	m = values(m, prefix, head, leases)
	out, _ := json.Marshal(m)
	return string(out)
}

func values(v any, prefix string, head int64, leases map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = values(e, prefix, head, leases)
		}
	case []any:
		for i := range x {
			x[i] = values(x[i], prefix, head, leases)
		}
	case string:
		switch {
		case strings.HasPrefix(x, "@B:"):
			s := strings.Replace(strings.TrimPrefix(x, "@B:"), "@P/", prefix, 1)
			return []byte(s)
		case strings.HasPrefix(x, "@HEAD"):
			n, _ := strconv.ParseInt(strings.TrimPrefix(x, "@HEAD"), 10, 64)
			return strconv.FormatInt(max(1, head+n), 10)
		case strings.HasPrefix(x, "@LEASE:"):
			id := strings.TrimPrefix(x, "@LEASE:")
			if l, ok := leases[id]; ok {
				return l
			}
			return id
		}
	}
	return v
}

func decode(msg string, m protoadapt.MessageV1) error {
	return protojson.Unmarshal([]byte(msg), protoadapt.MessageV2Of(m))
}
`))
