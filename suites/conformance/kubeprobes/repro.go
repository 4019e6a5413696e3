package kubeprobes

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"text/template"

	"github.com/vigil-suite/vigil/suites/conformance"
)

// reproData is what a Kubernetes probe's reproduction is written
// from: its raw requests and answers, and its namespace.
type reproData struct {
	steps []rawStep
	ns    string
}

// reproStep is one step of the program: a request with the answer the
// probe got, a watch frame, or a note (what happened outside the API).
type reproStep struct {
	Call   string            `json:"call"`
	Method string            `json:"method,omitempty"`
	Path   string            `json:"path,omitempty"`
	Query  map[string]string `json:"query,omitempty"`
	Body   json.RawMessage   `json:"body,omitempty"`
	CType  string            `json:"ctype,omitempty"`
	Code   int               `json:"code,omitempty"`
	Got    json.RawMessage   `json:"got,omitempty"`
	Note   string            `json:"note,omitempty"`
}

// reproduction is a standalone Go program (package main, standard
// library only) that sends the probe's requests again, in order, to a
// Kubernetes API server in a fresh namespace, prints every answer and
// watch frame next to what the probe got, and ends with what vigil
// expected. Values the server chose (resourceVersions, uids, continue
// tokens) are learned from its answers as the probe's were and replace
// the probe's in later requests.
func (d *reproData) reproduction(r conformance.Result) string {
	var steps []reproStep
	for _, s := range d.steps {
		st := reproStep{Call: s.call, Method: s.method, Path: s.path, CType: s.ctype, Code: s.code, Note: s.note}
		if len(s.query) > 0 {
			st.Query = map[string]string{}
			for k, v := range s.query {
				st.Query[k] = strings.Join(v, ",")
			}
		}
		if s.body != nil {
			st.Body, _ = json.Marshal(s.body)
		}
		if json.Valid(s.answer) {
			st.Got = append(json.RawMessage(nil), s.answer...)
		}
		steps = append(steps, st)
	}
	b, err := json.Marshal(steps)
	if err != nil {
		return "// " + err.Error()
	}
	var out bytes.Buffer
	err = reproTemplate.Execute(&out, map[string]any{"Info": r.Info, "Failure": r.Failure + r.Reason,
		"NS": strconv.Quote(d.ns), "Steps": strconv.Quote(string(b))})
	if err != nil {
		return "// " + err.Error()
	}
	return out.String()
}

var reproTemplate = template.Must(template.New("repro").Funcs(template.FuncMap{
	"split": func(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") },
}).Parse(`// Reproduction of vigil conformance probe {{.Info.Name}}:
//   {{.Info.Title}}
//
// It replays the probe's requests against a Kubernetes API server, in a
// fresh namespace, printing each answer next to what the probe got.
// Values the server picks (resourceVersions, uids, continue tokens) are
// learned from its answers and used in later requests, as the probe did.
//
//   go run . -server https://HOST:PORT -token TOKEN -ca-file CA.pem
//   (or -insecure instead of -ca-file)
//
// What vigil expected and did not get:
{{- range (printf "%s" .Failure | split) }}
//   {{.}}
{{- end}}
package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

type step struct {
	Call   string            ` + "`json:\"call\"`" + `
	Method string            ` + "`json:\"method\"`" + `
	Path   string            ` + "`json:\"path\"`" + `
	Query  map[string]string ` + "`json:\"query\"`" + `
	Body   json.RawMessage   ` + "`json:\"body\"`" + `
	CType  string            ` + "`json:\"ctype\"`" + `
	Code   int               ` + "`json:\"code\"`" + `
	Got    json.RawMessage   ` + "`json:\"got\"`" + `
	Note   string            ` + "`json:\"note\"`" + `
}

// The probe ran in namespace probeNS; these are its steps as recorded.
const probeNS = {{.NS}}

var stepsJSON = {{.Steps}}

var (
	client  = &http.Client{}
	server  string
	token   string
	learned = map[string]string{} // the probe's value -> this server's
	names   = map[string]string{} // the probe's generated names -> this server's
)

func main() {
	flag.StringVar(&server, "server", "", "the API server's URL")
	flag.StringVar(&token, "token", "", "bearer token")
	caFile := flag.String("ca-file", "", "PEM file of the server's CA")
	insecure := flag.Bool("insecure", false, "do not verify the server's certificate")
	flag.Parse()
	if server == "" {
		fmt.Fprintln(os.Stderr, "give -server https://HOST:PORT")
		os.Exit(2)
	}
	tc := &tls.Config{InsecureSkipVerify: *insecure}
	if *caFile != "" {
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		tc.RootCAs = x509.NewCertPool()
		tc.RootCAs.AppendCertsFromPEM(pem)
	}
	client.Transport = &http.Transport{TLSClientConfig: tc, Proxy: nil}
	var steps []step
	if err := json.Unmarshal([]byte(stepsJSON), &steps); err != nil {
		panic(err)
	}
	// Unique per run: a namespace of an earlier run may still be terminating.
	ns := fmt.Sprintf("vigil-repro-%d-%d", time.Now().UnixNano()%1000000000, os.Getpid())
	learned[probeNS] = ns
	do("POST", "/api/v1/namespaces", nil, []byte(` + "`" + `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + "`" + `+ns+` + "`" + `"}}` + "`" + `))
	defer do("DELETE", "/api/v1/namespaces/"+ns, nil, nil)
	watches := map[string]*bufio.Reader{}
	for i, s := range steps {
		name, part, _ := strings.Cut(s.Call, ".")
		switch {
		case s.Note != "":
			fmt.Printf("\n#%d %s: %s\n", i+1, s.Call, s.Note)
			if s.Call == "COMPACT" {
				at := "$(etcdctl endpoint status -w json | jq '.[0].Status.header.revision')"
				if rv := s.Query["resourceVersion"]; rv != "" {
					at = subst(rv)
				}
				fmt.Printf("   do it now on the server's etcd: etcdctl compact %s; then press Enter\n", at)
				bufio.NewReader(os.Stdin).ReadString('\n')
			}
		case strings.HasSuffix(s.Call, " open"):
			fmt.Printf("\n#%d %s %s %s\n", i+1, s.Call, s.Method, subst(s.Path))
			resp, err := send(s)
			if err != nil {
				fmt.Println("   no answer:", err)
				continue
			}
			fmt.Printf("   -> HTTP %d (the probe got %d)\n", resp.StatusCode, s.Code)
			if resp.StatusCode != 200 {
				b, _ := io.ReadAll(resp.Body)
				fmt.Printf("   %s\n", b)
				continue
			}
			watches[strings.TrimSuffix(s.Call, " open")] = bufio.NewReader(resp.Body)
		case part == "event" || part == "end":
			r := watches[name]
			if r == nil {
				continue
			}
			line := make(chan []byte, 1)
			go func() { b, _ := r.ReadBytes('\n'); line <- b }()
			select {
			case b := <-line:
				fmt.Printf("\n#%d %s\n   this server: %s   the probe got: %s\n", i+1, s.Call, strings.TrimSpace(string(b)), s.Got)
				var f struct {
					Object json.RawMessage ` + "`json:\"object\"`" + `
				}
				if json.Unmarshal(b, &f) == nil {
					learn(s.Got, f.Object)
				}
			case <-time.After(10 * time.Second):
				fmt.Printf("\n#%d %s: nothing within 10 s; the probe got: %s\n", i+1, s.Call, s.Got)
			}
		default:
			fmt.Printf("\n#%d %s %s %s\n", i+1, s.Call, s.Method, substPath(s.Path))
			resp, err := send(s)
			if err != nil {
				fmt.Println("   no answer:", err)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Printf("   -> HTTP %d %s\n   the probe got HTTP %d %s\n", resp.StatusCode, b, s.Code, s.Got)
			learn(s.Got, b)
		}
	}
	fmt.Println("\nvigil's expectation is at the top of this file.")
}

// send makes a step's request with the learned values in place.
func send(s step) (*http.Response, error) {
	q := url.Values{}
	for k, v := range s.Query {
		q.Set(k, subst(v))
	}
	var body []byte
	if len(s.Body) > 0 {
		var v any
		json.Unmarshal(s.Body, &v)
		body, _ = json.Marshal(substAll(v))
	}
	return request(s.Method, substPath(s.Path), q, body, s.CType)
}

func do(method, path string, q url.Values, body []byte) {
	if resp, err := request(method, path, q, body, ""); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func request(method, path string, q url.Values, body []byte, ctype string) (*http.Response, error) {
	u := strings.TrimSuffix(server, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		if ctype == "" {
			ctype = "application/json"
		}
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return client.Do(req)
}

func subst(s string) string {
	if v, ok := learned[s]; ok {
		return v
	}
	return strings.ReplaceAll(s, probeNS, learned[probeNS])
}

// substPath is a path with the learned namespace and the names this
// server generated (from a generateName) in place of the probe's.
func substPath(p string) string {
	p = subst(p)
	parts := strings.Split(p, "/")
	for i, e := range parts {
		if v, ok := names[e]; ok {
			parts[i] = v
		}
	}
	return strings.Join(parts, "/")
}

func substAll(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = substAll(e)
		}
	case []any:
		for i, e := range x {
			x[i] = substAll(e)
		}
	case string:
		return subst(x)
	}
	return v
}

// learn walks the probe's answer and this server's side by side and maps
// the values the server picked.
func learn(probe, here json.RawMessage) {
	var a, b any
	if json.Unmarshal(probe, &a) != nil || json.Unmarshal(here, &b) != nil {
		return
	}
	walk("", a, b)
}

func walk(key string, a, b any) {
	switch x := a.(type) {
	case map[string]any:
		y, _ := b.(map[string]any)
		for k, e := range x {
			walk(k, e, y[k])
		}
	case []any:
		y, _ := b.([]any)
		for i, e := range x {
			if i < len(y) {
				walk(key, e, y[i])
			}
		}
	case string:
		y, ok := b.(string)
		if !ok || x == "" {
			return
		}
		switch key {
		case "name":
			if x != y {
				names[x] = y
			}
		case "resourceVersion", "uid", "continue":
			if _, seen := learned[x]; !seen {
				learned[x] = y
			}
		}
	}
}
`))
