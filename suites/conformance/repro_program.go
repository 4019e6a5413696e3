package conformance

import (
	"fmt"
	"strings"
	"text/template"
)

// reproTemplate is an etcd probe's reproduction: a program (package main)
// or, with .Test, a test file. In a test file every top-level name ends in
// .S, the probe's name, so that several reproductions share a package.
var reproTemplate = template.Must(template.New("repro").Funcs(template.FuncMap{
	"comment": func(s string) string { return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n// ") },
	"q":       func(s string) string { return fmt.Sprintf("%q", s) },
}).Parse(`{{if .Test}}// Regression test from vigil conformance probe {{.Info.Name}}:
{{else}}// Reproduction of vigil conformance probe {{.Info.Name}}:
{{end}}// {{.Info.Title}}.
//
{{if .Checked}}// It sends the probe's requests to an etcd-API server and compares every
// answer with {{.From}}.
// {{if .Test}}{{.Func}} fails{{else}}The program exits 1{{end}}, printing what vigil expected and each answer
// that differs, while the server answers otherwise, and {{if .Test}}passes{{else}}exits 0{{end}} once
// it answers as expected{{if not .Test}} (2: it could not run, e.g. the server is unreachable){{end}}.
{{else}}// vigil recorded no correct answers for this probe (it did not pass on the
// tested server, and no reference server ran: --reference none), so this
// only replays the requests and prints the answers{{if not .Test}}, and exits 2{{end}}.
{{end}}{{if .Failure}}//
// On the tested server the probe's verdict was {{.Verdict}}; vigil expected:
//
// {{comment .Failure}}
{{end}}//
// Run it against an otherwise idle etcd-API server:
//
{{if .Test}}//	VIGIL_REPRO_ENDPOINT=127.0.0.1:2379 go test -run {{.Func}}
{{else}}//	go run . -endpoint 127.0.0.1:2379
{{end}}//
// in a module that requires go.etcd.io/etcd/api/v3, google.golang.org/grpc
// and google.golang.org/protobuf. The requests are the probe's, as sent; in
// them and in the expected answers "@B:" marks a byte string, "@P/" a fresh
// key prefix, "@END" the end of that prefix, "@REV+N" the N-th revision
// after the one the program starts at, "@LEASE#k" and "@WATCH#k" the k-th
// lease and watch id the server hands out. Not compared: the server's
// identity in headers (cluster, member, raft term), remaining TTLs, lease
// ids the program was not handed{{range .Mask}}, {{.}}{{end}}, and the count and
// more of a range from a key on (they count every key past the prefix); a
// lease's keys in any order. After each step the answer the tested server gave vigil
// is shown too.
package {{if .Test}}repro_test{{else}}main{{end}}

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
{{- if not .Test}}
	"flag"
{{- end}}
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
{{- if .Test}}
	"testing"
{{- end}}
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/protoadapt"
)

const (
	probe{{.S}}       = {{q .Info.Name}}
	title{{.S}}       = {{q .Info.Title}}
	expectation{{.S}} = {{q .Failure}}
	checked{{.S}}     = {{.Checked}}
)

// steps{{.S}}: call, request, expected answer ("" unchecked), the tested server's answer.
var steps{{.S}} = []struct{ call, msg, want, got string }{
{{- range .Steps}}
	{ {{q .Call}}, {{q (printf "%s" .Msg)}}, {{q .Want}}, {{q .Got}} },
{{- end}}
}

// ignored{{.S}} are answer fields not compared.
var ignored{{.S}} = map[string]bool{"clusterId": true, "memberId": true, "raftTerm": true{{range .Mask}}, {{q .}}: true{{end}}}
{{if .Test}}
func {{.Func}}(t *testing.T) {
	endpoint := os.Getenv("VIGIL_REPRO_ENDPOINT")
	if endpoint == "" {
		endpoint = "127.0.0.1:2379"
	}
	var log strings.Builder
	diffs, err := replay{{.S}}(endpoint, &log)
	if err != nil {
		t.Fatalf("%s against %s: %v\n%s", probe{{.S}}, endpoint, err, log.String())
	}
	if !checked{{.S}} {
		t.Fatalf("%s: no expected answers were recorded; the answers:\n%s", probe{{.S}}, log.String())
	}
	if len(diffs) > 0 {
		t.Fatalf("%s: %s\nvigil expected:\n%s\n%d answer(s) differ:\n%s\nthe whole replay:\n%s", probe{{.S}}, title{{.S}}, expectation{{.S}}, len(diffs), strings.Join(diffs, "\n"), log.String())
	}
}
{{else}}
func main() {
	endpoint := flag.String("endpoint", "127.0.0.1:2379", "the server's client endpoint")
	flag.Parse()
	diffs, err := replay(*endpoint, os.Stdout)
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, "repro:", err)
		os.Exit(2)
	case !checked:
		fmt.Println("\nno expected answers were recorded: compare the answers above by eye")
		os.Exit(2)
	case len(diffs) > 0:
		fmt.Printf("\nFAIL %s: %s\n", probe, title)
		if expectation != "" {
			fmt.Printf("vigil expected:\n  %s\n", strings.ReplaceAll(expectation, "\n", "\n  "))
		}
		fmt.Printf("%d answer(s) differ from the expected ones:\n%s\n", len(diffs), strings.Join(diffs, "\n"))
		os.Exit(1)
	}
	fmt.Printf("\nPASS %s: every answer is the expected one\n", probe)
}
{{end}}
// replay{{.S}} sends the steps to the server at endpoint, writes each answer
// to out and returns where the answers differ from the expected ones.
func replay{{.S}}(endpoint string, out io.Writer) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	kv, lease := pb.NewKVClient(conn), pb.NewLeaseClient(conn)
	s := &symbols{{.S}}{prefix: fmt.Sprintf("/vigil-repro/%d/", time.Now().UnixNano())}
	hctx, hcancel := context.WithTimeout(ctx, 5*time.Second)
	head, err := kv.Range(hctx, &pb.RangeRequest{Key: []byte(s.prefix)})
	hcancel()
	if err != nil {
		return nil, fmt.Errorf("reading the store revision: %w", err)
	}
	s.base = head.Header.Revision
	var watch *stream{{.S}}
	var diffs []string
	for i, st := range steps{{.S}} {
		in, err := s.resolve(st.msg)
		if err != nil {
			return nil, err
		}
		var res protoadapt.MessageV1
		var callErr error
		switch st.call {
		case "Range":
			r := &pb.RangeRequest{}
			if callErr = decode{{.S}}(in, r); callErr == nil {
				res, callErr = kv.Range(ctx, r)
			}
		case "Put":
			r := &pb.PutRequest{}
			if callErr = decode{{.S}}(in, r); callErr == nil {
				res, callErr = kv.Put(ctx, r)
			}
		case "DeleteRange":
			r := &pb.DeleteRangeRequest{}
			if callErr = decode{{.S}}(in, r); callErr == nil {
				res, callErr = kv.DeleteRange(ctx, r)
			}
		case "Txn":
			r := &pb.TxnRequest{}
			if callErr = decode{{.S}}(in, r); callErr == nil {
				res, callErr = kv.Txn(ctx, r)
			}
		case "Compact":
			r := &pb.CompactionRequest{}
			if callErr = decode{{.S}}(in, r); callErr == nil {
				res, callErr = kv.Compact(ctx, r)
			}
		case "LeaseGrant":
			r := &pb.LeaseGrantRequest{}
			if callErr = decode{{.S}}(in, r); callErr == nil {
				var g *pb.LeaseGrantResponse
				if g, callErr = lease.LeaseGrant(ctx, r); callErr == nil {
					s.leases = append(s.leases, g.ID)
					res = g
				}
			}
		case "LeaseRevoke":
			r := &pb.LeaseRevokeRequest{}
			if callErr = decode{{.S}}(in, r); callErr == nil {
				res, callErr = lease.LeaseRevoke(ctx, r)
			}
		case "LeaseTimeToLive":
			r := &pb.LeaseTimeToLiveRequest{}
			if callErr = decode{{.S}}(in, r); callErr == nil {
				res, callErr = lease.LeaseTimeToLive(ctx, r)
			}
		case "LeaseLeases":
			res, callErr = lease.LeaseLeases(ctx, &pb.LeaseLeasesRequest{})
		case "Watch.Send":
			if watch == nil {
				watch, callErr = openWatch{{.S}}(ctx, conn)
			}
			r := &pb.WatchRequest{}
			if callErr == nil {
				if callErr = decode{{.S}}(in, r); callErr == nil {
					callErr = watch.c.Send(r)
				}
			}
		case "Watch.Recv":
			if watch == nil {
				callErr = errors.New("no watch stream is open")
				break
			}
			var w *pb.WatchResponse
			if w, callErr = watch.recv(5 * time.Second); callErr == nil {
				if w.Created {
					s.watches = append(s.watches, w.WatchId)
				}
				res = w
			}
		default:
			fmt.Fprintf(out, "step %d: %s is not replayed\n", i+1, st.call)
			continue
		}
		answer := ""
		switch {
		case errors.Is(callErr, errNothing{{.S}}):
			answer = callErr.Error()
		case callErr != nil:
			e := status.Convert(callErr)
			answer = "error: " + e.Code().String() + ": " + e.Message()
		case res != nil:
			b, _ := protojson.Marshal(protoadapt.MessageV2Of(res))
			answer = string(b)
		}
		fmt.Fprintf(out, "step %d: %s %s\n", i+1, st.call, in)
		if answer != "" {
			fmt.Fprintf(out, "  -> %s\n", answer)
		}
		if st.got != "" {
			fmt.Fprintf(out, "  (the tested server answered vigil: %s)\n", st.got)
		}
		if !checked{{.S}} {
			continue
		}
		// A range from a key on counts (count, more) the keys past the
		// probe's prefix too: whatever else the server holds.
		open := st.call == "Range" && strings.Contains(st.msg, "\"rangeEnd\":\"@B:\\u0000\"")
		if got, want := s.canon(st.call, answer, true, open), s.canon(st.call, st.want, false, open); got != want {
			diffs = append(diffs, fmt.Sprintf("step %d, %s %s:\n  want %s\n  got  %s", i+1, st.call, st.msg, want, got))
			fmt.Fprintf(out, "  DIFFERS from the expected %s\n", want)
		}
	}
	return diffs, nil
}

// errNothing{{.S}}: a watch response the server owed did not come.
var errNothing{{.S}} = errors.New("no watch response within 5 s")

// stream{{.S}} is the watch stream, read by one goroutine so that a
// response that never comes can be waited for with a timeout.
type stream{{.S}} struct {
	c  pb.Watch_WatchClient
	ch chan recvd{{.S}}
}

type recvd{{.S}} struct {
	r   *pb.WatchResponse
	err error
}

func openWatch{{.S}}(ctx context.Context, conn *grpc.ClientConn) (*stream{{.S}}, error) {
	c, err := pb.NewWatchClient(conn).Watch(ctx)
	if err != nil {
		return nil, err
	}
	s := &stream{{.S}}{c: c, ch: make(chan recvd{{.S}}, 64)}
	go func() {
		for {
			r, err := c.Recv()
			s.ch <- recvd{{.S}}{r, err}
			if err != nil {
				return
			}
		}
	}()
	return s, nil
}

func (s *stream{{.S}}) recv(d time.Duration) (*pb.WatchResponse, error) {
	select {
	case g := <-s.ch:
		return g.r, g.err
	case <-time.After(d):
		return nil, errNothing{{.S}}
	}
}

// symbols{{.S}} are this run's values of the symbols.
type symbols{{.S}} struct {
	prefix          string
	base            int64
	leases, watches []int64
}

// resolve writes a request's symbols as this run's values.
func (s *symbols{{.S}}) resolve(msg string) (string, error) {
	if msg == "" {
		return "{}", nil
	}
	var v any
	if err := json.Unmarshal([]byte(msg), &v); err != nil {
		return "", err
	}
	b, err := json.Marshal(s.values(v))
	return string(b), err
}

func (s *symbols{{.S}}) values(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = s.values(e)
		}
	case []any:
		for i, e := range x {
			x[i] = s.values(e)
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
			n, _ := strconv.ParseInt(strings.TrimPrefix(x, "@REV"), 10, 64)
			return strconv.FormatInt(s.base+n, 10)
		case strings.HasPrefix(x, "@LEASE#"):
			return strconv.FormatInt(nth{{.S}}(s.leases, x), 10)
		case strings.HasPrefix(x, "@WATCH#"):
			return strconv.FormatInt(nth{{.S}}(s.watches, x), 10)
		}
	}
	return v
}

// nth{{.S}} is the id a symbol "@KIND#k" names; 0 if the server handed out fewer.
func nth{{.S}}(ids []int64, sym string) int64 {
	k, _ := strconv.Atoi(sym[strings.IndexByte(sym, '#')+1:])
	if k < 1 || k > len(ids) {
		return 0
	}
	return ids[k-1]
}

var bytesFields{{.S}} = map[string]bool{"key": true, "rangeEnd": true, "value": true, "keys": true}
var revisionFields{{.S}} = map[string]bool{"revision": true, "modRevision": true, "createRevision": true,
	"startRevision": true, "minModRevision": true, "maxModRevision": true, "minCreateRevision": true,
	"maxCreateRevision": true, "compactRevision": true}

// canon is an answer as compared: in symbols (actual: it holds this run's
// values), without the fields not compared. An error or a missing
// response is compared as its text.
func (s *symbols{{.S}}) canon(call, answer string, actual, open bool) string {
	var v any
	if !strings.HasPrefix(answer, "{") || json.Unmarshal([]byte(answer), &v) != nil {
		return answer
	}
	if m, ok := v.(map[string]any); ok && open {
		delete(m, "count")
		delete(m, "more")
	}
	if m, ok := v.(map[string]any); ok && call == "Watch.Recv" {
		if _, has := m["watchId"]; !has {
			m["watchId"] = "0" // protobuf JSON leaves out a watch id of 0
		}
	}
	if actual {
		v = s.symbolize("", v)
	}
	b, _ := json.Marshal(mask{{.S}}("", v))
	return string(b)
}

func (s *symbols{{.S}}) symbolize(field string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = s.symbolize(k, e)
		}
	case []any:
		for i, e := range x {
			x[i] = s.symbolize(field, e)
		}
	case string:
		switch {
		case bytesFields{{.S}}[field]:
			if b, err := base64.StdEncoding.DecodeString(x); err == nil {
				k := string(b)
				switch {
				case k == s.prefix[:len(s.prefix)-1]+"0":
					k = "@END"
				case strings.HasPrefix(k, s.prefix):
					k = "@P/" + strings.TrimPrefix(k, s.prefix)
				}
				return "@B:" + k
			}
		case revisionFields{{.S}}[field]:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil && n > 0 {
				return fmt.Sprintf("@REV%+d", n-s.base)
			}
		case field == "ID" || field == "lease":
			if i := index{{.S}}(s.leases, x); i > 0 {
				return fmt.Sprintf("@LEASE#%d", i)
			}
		case field == "watchId":
			if i := index{{.S}}(s.watches, x); i > 0 {
				return fmt.Sprintf("@WATCH#%d", i)
			}
		}
	}
	return v
}

// index{{.S}} is the 1-based place of the id x among ids, 0 if absent.
func index{{.S}}(ids []int64, x string) int {
	n, err := strconv.ParseInt(x, 10, 64)
	if err != nil {
		return 0
	}
	for i, id := range ids {
		if id == n {
			return i + 1
		}
	}
	return 0
}

// mask{{.S}} leaves out what is not compared.
func mask{{.S}}(field string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch {
			case ignored{{.S}}[k]:
			case k == "TTL":
				out[k] = "*" // the remaining time to live is timing
			default:
				out[k] = mask{{.S}}(k, e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mask{{.S}}(field, e)
		}
		if field == "keys" { // a lease's keys: etcd lists them in map order
			sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
		}
		return out
	case string:
		if (field == "ID" || field == "lease") && !strings.HasPrefix(x, "@LEASE#") {
			return "@LEASE?" // an id the program was not handed: another client's
		}
	}
	return v
}

func decode{{.S}}(msg string, m protoadapt.MessageV1) error {
	return protojson.Unmarshal([]byte(msg), protoadapt.MessageV2Of(m))
}
`))
