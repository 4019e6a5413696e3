package docs

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vigil-suite/vigil/history"
)

// historySchema compiles history.schema.json.
func historySchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("history.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("history.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("history.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestHistorySchemaValidatesRecordedRuns: every line of the recorded runs
// (a 3-member etcd with faults, kine, a kube-apiserver with faults, a
// short format-2 etcd run with every request form, lease and progress
// calls, and an etcd member started by --command that was sent SIGSEGV
// mid-run) is valid under the schema, and every kind of record occurs.
func TestHistorySchemaValidatesRecordedRuns(t *testing.T) {
	s := historySchema(t)
	kinds := map[string]int{}
	for _, path := range []string{"../checkers/testdata/etcd-v3.6.16-faults.jsonl.gz", "../checkers/testdata/etcd-v3.6.16-faults-v2.jsonl.gz",
		"../checkers/testdata/kine-v0.17.5-sqlite-faults.jsonl.gz", "../checkers/kube/testdata/kube-v1.36.3-faults.jsonl.gz", "testdata/etcd-v3.6.16-forms.jsonl.gz",
		"testdata/etcd-v3.6.16-server-exit.jsonl.gz"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(z)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		line, bad := 0, 0
		for sc.Scan() {
			line++
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(sc.Text()))
			if err != nil {
				t.Fatalf("%s:%d: %v", path, line, err)
			}
			if err := s.Validate(v); err != nil {
				if bad++; bad <= 3 {
					t.Errorf("%s:%d does not validate: %v\n%s", path, line, err, sc.Text())
				}
			}
			for k := range v.(map[string]any) {
				kinds[k]++
			}
		}
		if err := sc.Err(); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		f.Close()
	}
	for _, k := range recordKeys() {
		if kinds[k] == 0 {
			t.Errorf("no recorded run has a %q record", k)
		}
	}
}

// TestHistorySchemaRefuses: what is not a history line is refused.
func TestHistorySchemaRefuses(t *testing.T) {
	s := historySchema(t)
	for name, line := range map[string]string{
		"two kinds":     `{"mark":{"name":"end","time_ns":1},"fault":{"id":1,"name":"x","start_ns":0,"end_ns":1}}`,
		"unknown kind":  `{"note":{}}`,
		"unknown field": `{"mark":{"name":"end","time_ns":1,"colour":"red"}}`,
		"bad enum":      `{"op":{"id":1,"client":0,"call_ns":0,"return_ns":1,"request":{"kind":"upsert"}}}`,
		"missing field": `{"wend":{"watch":1,"time_ns":5}}`,
		"negative time": `{"mark":{"name":"end","time_ns":-1}}`,
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			t.Fatal(err)
		}
		if s.Validate(v) == nil {
			t.Errorf("%s: the schema accepts %s", name, line)
		}
	}
}

// TestHistorySchemaCoversTheTypes: every field the history types write is
// in the schema, under its record, and the schema names no field they do
// not write: a new field must be written into the schema too.
func TestHistorySchemaCoversTheTypes(t *testing.T) {
	b, err := os.ReadFile("history.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs map[string]map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	props := func(def map[string]any) map[string]any {
		p, _ := def["properties"].(map[string]any)
		return p
	}
	done := map[reflect.Type]bool{} // Request and Response hold themselves
	var compare func(path string, typ reflect.Type, def map[string]any)
	compare = func(path string, typ reflect.Type, def map[string]any) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if done[typ] {
			return
		}
		if def == nil {
			t.Errorf("%s: no schema", path)
			return
		}
		if ref, ok := def["$ref"].(string); ok {
			def = doc.Defs[strings.TrimPrefix(ref, "#/$defs/")]
		}
		if items, ok := def["items"].(map[string]any); ok {
			compare(path, typ, items)
			return
		}
		if typ.Kind() != reflect.Struct || typ.String() == "time.Time" {
			return
		}
		done[typ] = true
		p := props(def)
		seen := map[string]bool{}
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			if f.Anonymous {
				compare(path, f.Type, def)
				for j := 0; j < f.Type.NumField(); j++ {
					seen[strings.Split(f.Type.Field(j).Tag.Get("json"), ",")[0]] = true
				}
				continue
			}
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			seen[name] = true
			sub, ok := p[name].(map[string]any)
			if !ok {
				t.Errorf("%s.%s (%s) is not in the schema", path, name, f.Name)
				continue
			}
			compare(path+"."+name, f.Type, sub)
		}
		for name := range p {
			if !seen[name] {
				t.Errorf("%s.%s is in the schema but no type writes it", path, name)
			}
		}
	}
	rt := reflect.TypeOf(history.Record{})
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		key := strings.Split(f.Tag.Get("json"), ",")[0]
		compare(key, f.Type, doc.Defs[key])
	}
}

// recordKeys are the keys of history.Record.
func recordKeys() []string {
	var out []string
	rt := reflect.TypeOf(history.Record{})
	for i := 0; i < rt.NumField(); i++ {
		out = append(out, strings.Split(rt.Field(i).Tag.Get("json"), ",")[0])
	}
	return out
}
