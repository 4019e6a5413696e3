package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/template"

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
// probe's requests again, in order, to the server and prints every answer.
// For a probe of another API it is the program its family attached (see
// SetReproduction; a Kubernetes probe's needs only the standard library).
// For an etcd probe it sends them to an etcd-API server and prints every
// answer, ending with what vigil expected. Run-specific values are
// symbols the program resolves itself: a fresh key prefix, revisions
// relative to the revision it starts at, the lease and watch ids the
// server hands it. It needs only go.etcd.io/etcd/api/v3, grpc and
// protobuf. "" if the result holds no transcript to reproduce.
func (r Result) Reproduction() string {
	if r.program != nil {
		return r.program(r)
	}
	if r.repro == nil {
		return ""
	}
	g := reproGen{data: r.repro, leases: map[string]string{}, watches: map[string]string{}}
	var steps []reproStep
	for _, s := range r.repro.steps {
		if strings.HasPrefix(s.call, "LeaseKeepAlive") || s.err != nil && s.recvOnly {
			continue // keep-alives follow the client's timer, not the probe
		}
		st := reproStep{Call: s.call}
		if s.reqPB != nil {
			st.Msg = g.symbolize(s.reqPB)
		}
		if s.respPB != nil {
			g.learn(s.call, s.respPB)
			st.Got = string(g.symbolize(s.respPB))
		}
		if s.err != nil {
			st.Got = "error: " + Code(s.err)
		}
		steps = append(steps, st)
	}
	var b bytes.Buffer
	err := reproTemplate.Execute(&b, map[string]any{"Info": r.Info, "Failure": r.Failure + r.Reason, "Steps": steps})
	if err != nil {
		return "// " + err.Error()
	}
	return b.String()
}

type reproStep struct {
	Call string
	Msg  json.RawMessage
	Got  string
}

// reproGen turns values of one run into the program's symbols.
type reproGen struct {
	data            *reproData
	leases, watches map[string]string
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
		id, _ := m["watchId"].(string)
		if _, seen := g.watches[id]; !seen {
			g.watches[id] = fmt.Sprintf("@WATCH#%d", len(g.watches)+1)
		}
	}
}

func (g *reproGen) symbolize(msg json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(msg, &v) != nil {
		return msg
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

var reproTemplate = template.Must(template.New("repro").Funcs(template.FuncMap{
	"comment": func(s string) string { return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n// ") },
}).Parse(`// Reproduction of vigil conformance probe {{.Info.Name}}:
// {{.Info.Title}}.
//
{{if .Failure}}// What vigil expected and did not get:
// {{comment .Failure}}
{{else}}// The probe passed on the server it was recorded against.
{{end}}//
// Run against an otherwise idle etcd-API server:
//
//	go run . -endpoint 127.0.0.1:2379
//
// in a module that requires go.etcd.io/etcd/api/v3, google.golang.org/grpc
// and google.golang.org/protobuf. The requests are the probe's, as sent; in
// them "@B:" marks a byte string, "@P/" a fresh key prefix, "@END" the end
// of that prefix, "@REV+N" the N-th revision after the one the program
// starts at, "@LEASE#k" and "@WATCH#k" the k-th lease and watch id the
// server handed out. After each step, the answer the tested server gave
// vigil is shown for comparison.
package main

import (
	"context"
	"encoding/base64"
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

var steps = []struct{ call, msg, got string }{
{{- range .Steps}}
	{ {{printf "%q" .Call}}, {{printf "%q" (printf "%s" .Msg)}}, {{printf "%q" .Got}} },
{{- end}}
}

func main() {
	endpoint := flag.String("endpoint", "127.0.0.1:2379", "the server's client endpoint")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := grpc.NewClient(*endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	must(err)
	defer conn.Close()
	kv, lease := pb.NewKVClient(conn), pb.NewLeaseClient(conn)
	s := &symbols{prefix: fmt.Sprintf("/vigil-repro/%d/", time.Now().UnixNano())}
	head, err := kv.Range(ctx, &pb.RangeRequest{Key: []byte(s.prefix)})
	must(err)
	s.base = head.Header.Revision
	var watch pb.Watch_WatchClient
	for i, st := range steps {
		in := s.resolve(st.msg)
		var out protoadapt.MessageV1
		switch st.call {
		case "Range":
			r := &pb.RangeRequest{}
			decode(in, r)
			out, err = kv.Range(ctx, r)
		case "Put":
			r := &pb.PutRequest{}
			decode(in, r)
			out, err = kv.Put(ctx, r)
		case "DeleteRange":
			r := &pb.DeleteRangeRequest{}
			decode(in, r)
			out, err = kv.DeleteRange(ctx, r)
		case "Txn":
			r := &pb.TxnRequest{}
			decode(in, r)
			out, err = kv.Txn(ctx, r)
		case "Compact":
			r := &pb.CompactionRequest{}
			decode(in, r)
			out, err = kv.Compact(ctx, r)
		case "LeaseGrant":
			r := &pb.LeaseGrantRequest{}
			decode(in, r)
			var g *pb.LeaseGrantResponse
			g, err = lease.LeaseGrant(ctx, r)
			if err == nil {
				s.leases = append(s.leases, g.ID)
			}
			out = g
		case "LeaseRevoke":
			r := &pb.LeaseRevokeRequest{}
			decode(in, r)
			out, err = lease.LeaseRevoke(ctx, r)
		case "LeaseTimeToLive":
			r := &pb.LeaseTimeToLiveRequest{}
			decode(in, r)
			out, err = lease.LeaseTimeToLive(ctx, r)
		case "LeaseLeases":
			out, err = lease.LeaseLeases(ctx, &pb.LeaseLeasesRequest{})
		case "Watch.Send":
			if watch == nil {
				watch, err = pb.NewWatchClient(conn).Watch(ctx)
				must(err)
			}
			r := &pb.WatchRequest{}
			decode(in, r)
			err = watch.Send(r)
		case "Watch.Recv":
			var w *pb.WatchResponse
			w, err = watch.Recv()
			if err == nil && w.Created {
				s.watches = append(s.watches, w.WatchId)
			}
			out = w
		default:
			fmt.Printf("step %d: %s is not replayed\n", i+1, st.call)
			continue
		}
		fmt.Printf("step %d: %s %s\n", i+1, st.call, in)
		if err != nil {
			fmt.Printf("  -> error: %v\n", err)
		} else if out != nil {
			b, _ := protojson.Marshal(protoadapt.MessageV2Of(out))
			fmt.Printf("  -> %s\n", b)
		}
		if st.got != "" {
			fmt.Printf("  (the tested server answered vigil: %s)\n", st.got)
		}
	}
}

// symbols resolves the program's symbols for this run.
type symbols struct {
	prefix          string
	base            int64
	leases, watches []int64
}

func (s *symbols) resolve(msg string) string {
	if msg == "" {
		return "{}"
	}
	var v any
	must(json.Unmarshal([]byte(msg), &v))
	b, err := json.Marshal(s.walk(v))
	must(err)
	return string(b)
}

func (s *symbols) walk(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = s.walk(e)
		}
	case []any:
		for i, e := range x {
			x[i] = s.walk(e)
		}
	case string:
		switch {
		case strings.HasPrefix(x, "@B:"):
			k := strings.TrimPrefix(x, "@B:")
			if k == "@END" {
				k = s.prefix[:len(s.prefix)-1] + "0"
			} else if strings.HasPrefix(k, "@P/") {
				k = s.prefix + strings.TrimPrefix(k, "@P/")
			}
			return base64.StdEncoding.EncodeToString([]byte(k))
		case strings.HasPrefix(x, "@REV"):
			n, err := strconv.ParseInt(strings.TrimPrefix(x, "@REV"), 10, 64)
			must(err)
			return strconv.FormatInt(s.base+n, 10)
		case strings.HasPrefix(x, "@LEASE#"):
			return strconv.FormatInt(s.leases[index(x)], 10)
		case strings.HasPrefix(x, "@WATCH#"):
			return strconv.FormatInt(s.watches[index(x)], 10)
		}
	}
	return v
}

func index(sym string) int {
	n, err := strconv.Atoi(sym[strings.IndexByte(sym, '#')+1:])
	must(err)
	return n - 1
}

func decode(msg string, m protoadapt.MessageV1) {
	must(protojson.Unmarshal([]byte(msg), protoadapt.MessageV2Of(m)))
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "repro:", err)
		os.Exit(2)
	}
}
`))
