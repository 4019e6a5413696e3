package history

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sample() *History {
	h := New(Meta{Vigil: "test", Seed: 7, Prefix: "/p/", Target: Target{Kind: "etcd", Fixture: "process", Members: 3}})
	h.Add(Record{Op: &Operation{ID: 1, Client: 0, Call: 1, Return: 5,
		Request:  Request{Kind: OpPut, Key: "/p/a", Value: "0.1"},
		Response: &Response{Revision: 2}}})
	h.Add(Record{Op: &Operation{ID: 2, Client: 1, Call: 2, Return: 9,
		Request: Request{Kind: OpTxn, Compares: []Compare{{Key: "/p/a", Target: "mod", Result: "=", Int: 2}},
			Success: []Request{{Kind: OpPut, Key: "/p/a", Value: "1.1"}}, Failure: []Request{{Kind: OpRange, Key: "/p/a"}}},
		Error: "context deadline exceeded", Code: ErrUnknown}})
	h.Add(Record{Watch: &Watch{ID: 1, Client: 2, Call: 3, Request: WatchRequest{Key: "/p/", End: "/p0", PrevKV: true}}})
	h.Add(Record{WatchResponse: &WatchResponse{Watch: 1, Time: 4, Revision: 1, Created: true}})
	h.Add(Record{WatchResponse: &WatchResponse{Watch: 1, Time: 6, Revision: 2,
		Events: []Event{{Type: EventPut, KV: KV{Key: "/p/a", Value: "0.1", CreateRevision: 2, ModRevision: 2, Version: 1}, IsCreate: true}}}})
	h.Add(Record{WatchEnd: &WatchEnd{Watch: 1, Time: 10, Reason: EndClient}})
	h.Add(Record{Fault: &Fault{ID: 1, Name: "kill-leader", Targets: []string{"m0"}, Start: 2, End: 8}})
	h.Add(Record{ServerExit: &ServerExit{Process: "m1", Role: RoleMember, Time: 9, PID: 42, Status: "exit status 2", Code: 2,
		LogFile: "members/m1/etcd.log", Log: []string{"panic: boom", "", "goroutine 1 [running]:"},
		Crash: &Crash{Message: "panic: boom", Goroutine: "goroutine 1 [running]", Frames: []Frame{{Func: "main.main()", File: "/m.go:3"}}, Goroutines: 1}}})
	h.Add(Record{Mark: &Mark{Name: MarkEnd, Time: 11}})
	return h
}

// Every format a run writes loads back the same history.
func TestSaveLoadRoundTrip(t *testing.T) {
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			h := sample()
			path := filepath.Join(t.TempDir(), FileFor(f))
			if err := Save(path, h); err != nil {
				t.Fatal(err)
			}
			got, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			h.watchIndex, got.watchIndex = nil, nil
			if !reflect.DeepEqual(h, got) {
				t.Fatalf("round trip changed the history:\nwant %+v\ngot  %+v", h, got)
			}
			if got.WatchByID(1) == nil || len(got.WatchByID(1).Events()) != 1 {
				t.Fatal("watch 1 or its event lost")
			}
		})
	}
}

// TestLoadGzipped: a saved history compressed with gzip loads as is.
func TestLoadGzipped(t *testing.T) {
	h := sample()
	plain := filepath.Join(t.TempDir(), FileName)
	if err := Save(plain, h); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(plain)
	var zb bytes.Buffer
	z := gzip.NewWriter(&zb)
	z.Write(raw)
	z.Close()
	gz := plain + ".gz"
	if err := os.WriteFile(gz, zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Load(gz)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Operations) != len(h.Operations) || len(got.Watches) != len(h.Watches) {
		t.Fatalf("loaded %d operations and %d watches, want %d and %d", len(got.Operations), len(got.Watches), len(h.Operations), len(h.Watches))
	}
}

func TestLoadErrorsNameTheLine(t *testing.T) {
	var buf bytes.Buffer
	for _, r := range sample().Records() {
		b, _ := jsonLine(r)
		buf.Write(b)
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	cases := []struct {
		name, text, want string
	}{
		{"garbage line", strings.Join(lines[:2], "") + "{not json}\n" + strings.Join(lines[2:], ""), "line 3: not a history record"},
		{"unknown field", strings.Join(lines[:2], "") + `{"bogus":{}}` + "\n", "line 3: not a history record"},
		{"two kinds in one record", lines[0] + `{"mark":{"name":"x","time_ns":1},"fault":{"id":1,"name":"y","start_ns":0,"end_ns":1}}` + "\n", "line 2: a record must have exactly one"},
		{"response before its watch", lines[0] + `{"wresp":{"watch":9,"time_ns":1,"revision":1}}` + "\n", "line 2: response for watch 9"},
		{"no meta first", strings.Join(lines[1:], ""), "line 1: the first record must be meta"},
		{"empty", "", "empty history"},
		{"newer format", `{"meta":{"format":99,"vigil":"x","target":{"kind":"etcd","fixture":"x"},"seed":1,"started":"2026-01-01T00:00:00Z","prefix":"/"}}` + "\n", "newer than this vigil"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error containing %q, got %v", c.want, err)
			}
		})
	}
}

// A writer killed mid-run leaves whole lines only: what was flushed loads.
func TestWriterFlushesWholeLinesWhileRunning(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(Meta{Vigil: "t"}, NewClock(), w)
	for i := 0; i < 100; i++ {
		rec.Add(Record{Op: &Operation{ID: int64(i + 1), Request: Request{Kind: OpRange, Key: "k"}, Response: &Response{Revision: 1}}})
	}
	// Without Close: only the periodic flush can have written them.
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if bytes.Count(b, []byte("\n")) == 101 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("records not flushed within 5s of being written (%d lines)", bytes.Count(b, []byte("\n")))
		}
		time.Sleep(20 * time.Millisecond)
	}
	h, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Operations) != 100 {
		t.Fatalf("loaded %d operations, want 100", len(h.Operations))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(Record{Mark: &Mark{Name: "late"}}); err == nil {
		t.Fatal("write after close must fail")
	}
}

// A plain file whose last line was cut loads the lines before it and says
// where it was cut (it used to be an error asking to delete the line).
func TestReadCutLastLine(t *testing.T) {
	var buf bytes.Buffer
	for _, r := range sample().Records() {
		b, _ := jsonLine(r)
		buf.Write(b)
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	h, err := Read(strings.NewReader(strings.Join(lines[:4], "") + lines[4][:10]))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Records()) != 4 || !strings.Contains(h.Cut, "ends inside line 5: loaded the 4 complete records") {
		t.Errorf("%d records, cut %q", len(h.Records()), h.Cut)
	}
	if _, err := Read(strings.NewReader(lines[0][:10])); err == nil || !strings.Contains(err.Error(), "empty history: no complete record") {
		t.Errorf("a file cut inside its first line: %v", err)
	}
}
